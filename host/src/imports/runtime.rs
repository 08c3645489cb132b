//! `kusion:runtime/runtime` as a middleware imports it: the next link of the
//! chain. What the middleware hands on goes to the next link (a middleware or
//! the runtime, in its own store with its own limits and policy) as the WIT
//! values it is, checked but never converted: a pass-through link parses and
//! prints nothing. An apply carries on the observation of the call it is part
//! of, for the runtime link ([`NextLink`](crate::link::NextLink)).
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
    apply_response_to_next, check_resource, read_response_to_next, status_to_wit,
    watch_response_to_next,
};
use crate::link::{BoxFuture, NextLink};
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

    /// Checks the resources a middleware hands on: JSON that does not parse is
    /// a status naming the middleware.
    fn handed_on<'r>(
        &self,
        function: &str,
        resources: impl IntoIterator<Item = &'r t::Resource>,
    ) -> Result<(), m::Status> {
        resources.into_iter().try_for_each(|r| {
            check_resource(r).map_err(|problem| {
                m::Status::error(
                    m::StatusCode::InvalidArgument,
                    "MiddlewareInvalidRequest",
                    format!(
                        "{} handed an invalid request to the next link's runtime.{function}: {problem}",
                        self.ctx.link.role
                    ),
                )
            })
        })
    }

    /// Counts the call and runs `call` on the next link when what the
    /// middleware handed on passed `handed`, its time counted as host time;
    /// otherwise answers with `failed` and never reaches the next link.
    async fn on_next<R>(
        &mut self,
        handed: Result<(), m::Status>,
        failed: impl FnOnce(m::Status) -> R,
        call: impl FnOnce(&dyn NextLink) -> BoxFuture<'_, R>,
    ) -> wasmtime::Result<R> {
        let next = self.next_link()?;
        let started = Instant::now();
        let response = match handed {
            Ok(()) => call(next.as_ref()).await,
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
        let handed = self.handed_on("apply", prior.iter().chain(&plan));
        let failed = |status| apply_response_to_next(m::ApplyResponse::failed(status, deleting));
        self.on_next(handed, failed, |next| next.apply(prior, plan, options))
            .await
    }

    async fn read(
        &mut self,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: ReadOptions,
    ) -> wasmtime::Result<ReadResponse> {
        let handed = self.handed_on("read", prior.iter().chain(&plan));
        let failed = |status| read_response_to_next(m::ReadResponse::failed(status));
        self.on_next(handed, failed, |next| next.read(prior, plan, options))
            .await
    }

    async fn delete(
        &mut self,
        resource: t::Resource,
        options: DeleteOptions,
    ) -> wasmtime::Result<DeleteResponse> {
        let handed = self.handed_on("delete", [&resource]);
        let failed = |status| DeleteResponse {
            status: Some(status_to_wit(status)),
        };
        self.on_next(handed, failed, |next| next.delete(resource, options))
            .await
    }

    async fn watch(
        &mut self,
        resource: t::Resource,
        options: WatchOptions,
    ) -> wasmtime::Result<WatchResponse> {
        let handed = self.handed_on("watch", [&resource]);
        let failed = |status| watch_response_to_next(m::WatchResponse::failed(status));
        self.on_next(handed, failed, |next| next.watch(resource, options))
            .await
    }
}
