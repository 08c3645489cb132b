//! Kusion's contract on a [`Chain`]: the four calls of `runtime` on link
//! `at` (model values in, checked model values out), the logic calls through
//! the first link that exports `logic` (or krt's built-in logic when none
//! does), and [`Runtime`] for [`ComponentRuntime`], which enters its chain at
//! the outermost link.

use super::ComponentRuntime;
use super::chain::{Chain, Observed};
use super::failure::{invalid_result, resource_size, returned_resource, status_size};
use crate::bindings::{logic as l, observed as o, runtime as rt, types as t};
use crate::convert::{
    action_from_wit, apply_options_to_wit, delete_request_to_wit, health_from_wit,
    observation_from_wit, observation_to_wit, resource_to_wit, status_from_wit,
};
use crate::link::BoxFuture;
use krt_guest::model::{
    ApplyOptions, ApplyResponse, DeleteRequest, Health, ObjectDiff, Observation, ObservedResponse,
    ReadOptions, ReadResponse, Resource, Status, WatchRequest, WatchResponse,
};
use krt_stack::Runtime;
use serde_json::Value;
use std::sync::Arc;

fn opt_status_size(s: &Option<t::Status>) -> usize {
    s.as_ref().map_or(0, status_size)
}

fn opt_resource_size(r: &Option<t::Resource>) -> usize {
    r.as_ref().map_or(0, resource_size)
}

/// Bytes of an apply's answer.
fn apply_size(r: &rt::ApplyResponse) -> usize {
    opt_resource_size(&r.resource)
        + r.live.as_ref().map_or(0, String::len)
        + opt_status_size(&r.status)
}

impl Chain {
    /// `runtime.apply` of link `at`, within the apply `observed` stands for:
    /// the runtime link, when it exports `observed-apply`, starts from the
    /// caller's observation and leaves what it saw there.
    pub(crate) fn apply<'a>(
        self: &'a Arc<Self>,
        at: usize,
        prior: Option<&'a Resource>,
        plan: Option<&'a Resource>,
        options: &'a ApplyOptions,
        observed: Option<Arc<Observed>>,
    ) -> BoxFuture<'a, ApplyResponse> {
        Box::pin(async move {
            if let Some(observed) = observed.as_ref().filter(|_| self.observes(at)) {
                let given = observed.take_given();
                let r = self
                    .apply_observed(at, prior, plan, given.as_ref(), options)
                    .await;
                observed.set_seen(r.observation);
                return r.response;
            }
            let prior_w = prior.map(resource_to_wit);
            let plan_w = plan.map(resource_to_wit);
            let opts = apply_options_to_wit(options);
            let answer = self
                .call::<rt::GuestIndices, _>(at, observed, "apply", apply_size, move |g, store| {
                    Box::pin(async move {
                        g.call_apply(store, prior_w.as_ref(), plan_w.as_ref(), &opts)
                            .await
                    })
                })
                .await;
            match answer {
                Ok(r) => self.apply_response(at, "runtime.apply", r, plan.is_none()),
                Err(status) => ApplyResponse::failed(status, plan.is_none()),
            }
        })
    }

    /// `observed-apply.apply-observed` of link `at`, which exports it.
    async fn apply_observed(
        self: &Arc<Self>,
        at: usize,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        observation: Option<&Observation>,
        options: &ApplyOptions,
    ) -> ObservedResponse {
        let prior_w = prior.map(resource_to_wit);
        let plan_w = plan.map(resource_to_wit);
        let observation_w = observation.map(observation_to_wit);
        let opts = apply_options_to_wit(options);
        let size = |r: &o::ObservedResponse| {
            apply_size(&r.response)
                + match &r.observation {
                    Some(o::Observation::Seen(text)) => text.len(),
                    _ => 0,
                }
        };
        let answer = self
            .call::<o::GuestIndices, _>(at, None, "apply-observed", size, move |g, store| {
                Box::pin(async move {
                    g.call_apply_observed(
                        store,
                        prior_w.as_ref(),
                        plan_w.as_ref(),
                        observation_w.as_ref(),
                        &opts,
                    )
                    .await
                })
            })
            .await;
        let deleting = plan.is_none();
        match answer {
            Ok(r) => ObservedResponse {
                response: self.apply_response(
                    at,
                    "observed-apply.apply-observed",
                    r.response,
                    deleting,
                ),
                observation: r.observation.map(observation_from_wit),
            },
            Err(status) => ObservedResponse {
                response: ApplyResponse::failed(status, deleting),
                observation: None,
            },
        }
    }

    /// An apply's answer from link `at`'s `export`, checked: a returned
    /// resource that is not the plan's, or `live` that is not JSON, fails it.
    fn apply_response(
        &self,
        at: usize,
        export: &str,
        r: rt::ApplyResponse,
        deleting: bool,
    ) -> ApplyResponse {
        let failed = |status: Status| ApplyResponse::failed(status, deleting);
        let resource = match self.returned(at, export, r.resource) {
            Ok(resource) => resource,
            Err(status) => return failed(status),
        };
        let live = match r.live.map(|l| serde_json::from_str(&l)).transpose() {
            Ok(live) => live,
            Err(e) => {
                let who = self.settings(at).role.to_string();
                return failed(invalid_result(
                    &who,
                    export,
                    format!("invalid live JSON: {e}"),
                ));
            }
        };
        ApplyResponse {
            resource,
            live,
            action: action_from_wit(r.action),
            status: r.status.map(status_from_wit),
            retries: r.retries,
        }
    }

    /// The resource link `at` returned from `export`, checked: one that is not
    /// the plan's is a status naming the link.
    fn returned(
        &self,
        at: usize,
        export: &str,
        resource: Option<t::Resource>,
    ) -> Result<Option<Resource>, Status> {
        let who = self.settings(at).role.to_string();
        resource
            .map(|r| returned_resource(&who, export, r))
            .transpose()
    }

    /// `runtime.read` of link `at`.
    pub(crate) fn read<'a>(
        self: &'a Arc<Self>,
        at: usize,
        prior: Option<&'a Resource>,
        plan: Option<&'a Resource>,
        options: &'a ReadOptions,
    ) -> BoxFuture<'a, ReadResponse> {
        Box::pin(async move {
            let prior_w = prior.map(resource_to_wit);
            let plan_w = plan.map(resource_to_wit);
            let opts = rt::ReadOptions {
                default_namespace: options.default_namespace.clone(),
            };
            let size =
                |r: &rt::ReadResponse| opt_resource_size(&r.resource) + opt_status_size(&r.status);
            let answer = self
                .call::<rt::GuestIndices, _>(at, None, "read", size, move |g, store| {
                    Box::pin(async move {
                        g.call_read(store, prior_w.as_ref(), plan_w.as_ref(), &opts)
                            .await
                    })
                })
                .await;
            answer
                .and_then(|r| {
                    Ok(ReadResponse {
                        resource: self.returned(at, "runtime.read", r.resource)?,
                        status: r.status.map(status_from_wit),
                    })
                })
                .unwrap_or_else(ReadResponse::failed)
        })
    }

    /// `runtime.delete` of link `at`.
    pub(crate) fn delete<'a>(
        self: &'a Arc<Self>,
        at: usize,
        resource: &'a Resource,
        options: &'a DeleteRequest,
    ) -> BoxFuture<'a, Option<Status>> {
        Box::pin(async move {
            let res = resource_to_wit(resource);
            let opts = delete_request_to_wit(options);
            let size = |r: &rt::DeleteResponse| opt_status_size(&r.status);
            let answer = self
                .call::<rt::GuestIndices, _>(at, None, "delete", size, move |g, store| {
                    Box::pin(async move { g.call_delete(store, &res, &opts).await })
                })
                .await;
            match answer {
                Ok(r) => r.status.map(status_from_wit),
                Err(status) => Some(status),
            }
        })
    }

    /// `runtime.watch` of link `at`.
    pub(crate) fn watch<'a>(
        self: &'a Arc<Self>,
        at: usize,
        resource: &'a Resource,
        options: &'a WatchRequest,
    ) -> BoxFuture<'a, WatchResponse> {
        Box::pin(async move {
            let res = resource_to_wit(resource);
            let opts = rt::WatchOptions {
                timeout_ms: options.timeout_ms,
                default_namespace: options.default_namespace.clone(),
            };
            let size = |r: &rt::WatchResponse| {
                opt_resource_size(&r.resource)
                    + r.health.reason.len()
                    + r.health.message.len()
                    + opt_status_size(&r.status)
            };
            let answer = self
                .call::<rt::GuestIndices, _>(at, None, "watch", size, move |g, store| {
                    Box::pin(async move { g.call_watch(store, &res, &opts).await })
                })
                .await;
            answer
                .and_then(|r| {
                    Ok(WatchResponse {
                        resource: self.returned(at, "runtime.watch", r.resource)?,
                        health: health_from_wit(r.health),
                        status: r.status.map(status_from_wit),
                    })
                })
                .unwrap_or_else(WatchResponse::failed)
        })
    }
}

impl Runtime for ComponentRuntime {
    async fn apply(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ApplyOptions,
    ) -> ApplyResponse {
        let options = ApplyOptions {
            default_namespace: self.default_namespace(&options.default_namespace),
            ..options.clone()
        };
        self.chain().apply(0, prior, plan, &options, None).await
    }

    async fn apply_observed(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        observation: Option<&Observation>,
        options: &ApplyOptions,
    ) -> ObservedResponse {
        let options = ApplyOptions {
            default_namespace: self.default_namespace(&options.default_namespace),
            ..options.clone()
        };
        let observed = Observed::new(observation.cloned());
        let response = self
            .chain()
            .apply(0, prior, plan, &options, Some(observed.clone()))
            .await;
        ObservedResponse {
            response,
            observation: observed.take_seen(),
        }
    }

    async fn read(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ReadOptions,
    ) -> ReadResponse {
        let options = ReadOptions {
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        self.chain().read(0, prior, plan, &options).await
    }

    async fn delete(&self, resource: &Resource, options: &DeleteRequest) -> Option<Status> {
        let options = DeleteRequest {
            default_namespace: self.default_namespace(&options.default_namespace),
            ..options.clone()
        };
        self.chain().delete(0, resource, &options).await
    }

    async fn watch(&self, resource: &Resource, options: &WatchRequest) -> WatchResponse {
        let options = WatchRequest {
            default_namespace: self.default_namespace(&options.default_namespace),
            ..options.clone()
        };
        self.chain().watch(0, resource, &options).await
    }

    async fn diff(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        ignore_paths: &[String],
    ) -> Result<ObjectDiff, Status> {
        let chain = self.chain();
        let Some(at) = self.logic_link(&chain) else {
            return Ok(krt_guest::diff::diff(before, after, ignore_paths));
        };
        let (b, a) = (before.map(Value::to_string), after.map(Value::to_string));
        let paths = ignore_paths.to_vec();
        let answer = chain
            .call::<l::GuestIndices, _>(at, None, "diff", diff_size, move |g, store| {
                Box::pin(
                    async move { g.call_diff(store, b.as_deref(), a.as_deref(), &paths).await },
                )
            })
            .await;
        logic_result(answer, crate::convert::diff_from_wit)
    }

    async fn drift(
        &self,
        prior: &Value,
        live: Option<&Value>,
        ignore_paths: &[String],
    ) -> Result<ObjectDiff, Status> {
        let chain = self.chain();
        let Some(at) = self.logic_link(&chain) else {
            return Ok(krt_guest::diff::drift(prior, live, ignore_paths));
        };
        let (p, l) = (prior.to_string(), live.map(Value::to_string));
        let paths = ignore_paths.to_vec();
        let answer = chain
            .call::<l::GuestIndices, _>(at, None, "drift", diff_size, move |g, store| {
                Box::pin(async move { g.call_drift(store, &p, l.as_deref(), &paths).await })
            })
            .await;
        logic_result(answer, crate::convert::diff_from_wit)
    }

    async fn health(&self, object: &Value) -> Result<Health, Status> {
        let chain = self.chain();
        let Some(at) = self.logic_link(&chain) else {
            return Ok(krt_guest::health::compute(
                object,
                krt_guest::runtime::now_unix_secs(),
            ));
        };
        let text = object.to_string();
        let size = |r: &Result<t::Health, t::Status>| match r {
            Ok(h) => h.reason.len() + h.message.len(),
            Err(s) => status_size(s),
        };
        let answer = chain
            .call::<l::GuestIndices, _>(at, None, "health", size, move |g, store| {
                Box::pin(async move { g.call_health(store, &text).await })
            })
            .await;
        logic_result(answer, health_from_wit)
    }
}

/// Bytes of a returned diff (or its failure).
fn diff_size(r: &Result<crate::bindings::logic::ObjectDiff, t::Status>) -> usize {
    match r {
        Ok(d) => {
            d.unified.len()
                + d.changes
                    .iter()
                    .map(|c| {
                        c.path.len()
                            + c.before.as_ref().map_or(0, String::len)
                            + c.after.as_ref().map_or(0, String::len)
                    })
                    .sum::<usize>()
        }
        Err(s) => status_size(s),
    }
}

/// A logic call's answer: the call's own failure (a trap, a limit), or the
/// function's `result`.
fn logic_result<W, M>(
    answer: Result<Result<W, t::Status>, Status>,
    convert: impl FnOnce(W) -> M,
) -> Result<M, Status> {
    match answer {
        Ok(Ok(value)) => Ok(convert(value)),
        Ok(Err(status)) => Err(status_from_wit(status)),
        Err(status) => Err(status),
    }
}
