//! `kusion:runtime/runtime` as a middleware imports it: the next link of the
//! chain. Each call converts what the middleware hands on into model values
//! once, runs the next link (a middleware or the runtime, in its own store
//! with its own limits and policy), and converts its checked answer back. An
//! apply carries on the observation of the call it is part of, for the
//! runtime link ([`NextLink`](crate::link::NextLink)).
//!
//! A call counts against the middleware's host-call limit, and the time the
//! next link takes is host time, not the middleware's CPU time (its wall-clock
//! limit covers it). A plan that is not valid JSON is answered with a status
//! naming the middleware; it never reaches the next link.

use crate::bindings::next::{
    ApplyOptions, ApplyResponse, DeleteOptions, DeleteResponse, Host, ReadOptions, ReadResponse,
    WatchOptions, WatchResponse,
};
use crate::bindings::types as t;
use crate::convert::{
    apply_options_from_next, apply_response_to_next, delete_options_from_next,
    read_response_to_next, resource_from_wit, status_to_wit, watch_response_to_next,
};
use crate::link::NextLink;
use crate::state::KrtView;
use krt_guest::model as m;
use std::sync::Arc;
use std::time::Instant;

impl KrtView<'_> {
    /// Counts the call and returns the next link; a store without one (the
    /// runtime's, which cannot import `runtime`: loading refuses it) traps.
    fn next_link(&mut self) -> wasmtime::Result<Arc<dyn NextLink>> {
        self.ctx.enter()?;
        self.ctx
            .next
            .clone()
            .ok_or_else(|| wasmtime::Error::msg("the runtime component has no next link"))
    }

    /// A resource the middleware hands on, as a model value; invalid JSON is
    /// a status naming the middleware.
    fn handed_on(&self, function: &str, r: t::Resource) -> Result<m::Resource, m::Status> {
        resource_from_wit(r).map_err(|problem| {
            m::Status::error(
                m::StatusCode::InvalidArgument,
                "MiddlewareInvalidRequest",
                format!(
                    "{} handed an invalid request to the next link's runtime.{function}: {problem}",
                    self.ctx.link.role
                ),
            )
        })
    }

    /// Both resources of a call, as model values.
    fn handed_on_pair(
        &self,
        function: &str,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
    ) -> Result<(Option<m::Resource>, Option<m::Resource>), m::Status> {
        let prior = prior.map(|r| self.handed_on(function, r)).transpose()?;
        let plan = plan.map(|r| self.handed_on(function, r)).transpose()?;
        Ok((prior, plan))
    }

    /// Counts the call and runs `call` on the next link with what the
    /// middleware handed on, its time counted as host time; what could not be
    /// handed on is answered with `failed` and never reaches the next link.
    async fn on_next<T, R, F: Future<Output = R>>(
        &mut self,
        handed: Result<T, m::Status>,
        failed: impl FnOnce(m::Status) -> R,
        call: impl FnOnce(Arc<dyn NextLink>, T) -> F,
    ) -> wasmtime::Result<R> {
        let next = self.next_link()?;
        let started = Instant::now();
        let response = match handed {
            Ok(handed) => call(next, handed).await,
            Err(status) => failed(status),
        };
        self.ctx.host_time += started.elapsed();
        Ok(response)
    }
}

impl Host for KrtView<'_> {
    async fn apply(
        &mut self,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: ApplyOptions,
    ) -> wasmtime::Result<ApplyResponse> {
        let deleting = plan.is_none();
        let handed = self.handed_on_pair("apply", prior, plan);
        let failed = |status| m::ApplyResponse::failed(status, deleting);
        let response = self
            .on_next(handed, failed, |next, (prior, plan)| async move {
                let options = apply_options_from_next(options);
                next.apply(prior.as_ref(), plan.as_ref(), &options).await
            })
            .await?;
        Ok(apply_response_to_next(response))
    }

    async fn read(
        &mut self,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: ReadOptions,
    ) -> wasmtime::Result<ReadResponse> {
        let handed = self.handed_on_pair("read", prior, plan);
        let response = self
            .on_next(
                handed,
                m::ReadResponse::failed,
                |next, (prior, plan)| async move {
                    let options = m::ReadOptions {
                        default_namespace: options.default_namespace,
                    };
                    next.read(prior.as_ref(), plan.as_ref(), &options).await
                },
            )
            .await?;
        Ok(read_response_to_next(response))
    }

    async fn delete(
        &mut self,
        resource: t::Resource,
        options: DeleteOptions,
    ) -> wasmtime::Result<DeleteResponse> {
        let handed = self.handed_on("delete", resource);
        let status = self
            .on_next(handed, Some, |next, resource| async move {
                let options = delete_options_from_next(options);
                next.delete(&resource, &options).await
            })
            .await?;
        Ok(DeleteResponse {
            status: status.map(status_to_wit),
        })
    }

    async fn watch(
        &mut self,
        resource: t::Resource,
        options: WatchOptions,
    ) -> wasmtime::Result<WatchResponse> {
        let handed = self.handed_on("watch", resource);
        let response = self
            .on_next(
                handed,
                m::WatchResponse::failed,
                |next, resource| async move {
                    let options = m::WatchRequest {
                        timeout_ms: options.timeout_ms,
                        default_namespace: options.default_namespace,
                    };
                    next.watch(&resource, &options).await
                },
            )
            .await?;
        Ok(watch_response_to_next(response))
    }
}
