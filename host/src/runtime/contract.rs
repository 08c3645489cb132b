//! Kusion's contract on a [`Chain`]: the four calls of `runtime` on one link
//! in WIT values, as a middleware hands them on (checked answers back, never
//! converted) and as the host makes them at the outermost link (model values
//! in, converted once, checked model values out), the logic calls through
//! the first link that exports `logic` (or krt's built-in logic when none
//! does), and [`Runtime`] for [`ComponentRuntime`], which enters its chain at
//! the outermost link.

use super::ComponentRuntime;
use super::chain::{Chain, Observed};
use super::failure::{
    check_returned_resource, invalid_result, resource_size, returned_resource, status_size,
};
use crate::bindings::{logic as l, next as n, observed as o, runtime as rt, types as t};
use crate::convert::{
    action_from_wit, apply_answer_to_next, apply_options_from_next, apply_options_to_wit,
    apply_response_to_next, delete_options_from_next, delete_request_to_wit, health_from_wit,
    observation_from_wit, observation_to_wit, read_answer_to_next, read_options_from_next,
    read_response_to_next, resource_to_wit, status_from_wit, status_to_wit, watch_answer_to_next,
    watch_options_from_next, watch_response_to_next,
};
use krt_guest::model::{
    ApplyOptions, ApplyResponse, DeleteRequest, Health, ObjectDiff, Observation, ObservedResponse,
    ReadOptions, ReadResponse, Resource, Status, WatchRequest, WatchResponse,
};
use krt_stack::Runtime;
use serde::de::IgnoredAny;
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

/// Bytes of an observed apply's answer.
fn observed_size(r: &o::ObservedResponse) -> usize {
    apply_size(&r.response)
        + match &r.observation {
            Some(o::Observation::Seen(text)) => text.len(),
            _ => 0,
        }
}

/// Bytes of a read's answer.
fn read_size(r: &rt::ReadResponse) -> usize {
    opt_resource_size(&r.resource) + opt_status_size(&r.status)
}

/// Bytes of a watch's answer.
fn watch_size(r: &rt::WatchResponse) -> usize {
    opt_resource_size(&r.resource)
        + r.health.reason.len()
        + r.health.message.len()
        + opt_status_size(&r.status)
}

/// What one link answered, in WIT values, and the export that answered it; a
/// failure of the call itself (a trap, a limit) is a status naming the link.
type Answer<T> = (&'static str, Result<T, Status>);

/// The four calls of `runtime` on one link, in WIT values: what the caller
/// (the host, or a middleware handing on) passes goes to the guest as it is.
impl Chain {
    /// `runtime.apply` of link `at`, within the apply `observed` stands for:
    /// the runtime link, when it exports `observed-apply`, starts from the
    /// caller's observation and leaves what it saw there.
    async fn apply_link(
        self: &Arc<Self>,
        at: usize,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: rt::ApplyOptions,
        observed: Option<Arc<Observed>>,
    ) -> Answer<rt::ApplyResponse> {
        if let Some(observed) = observed.as_ref().filter(|_| self.observes(at)) {
            let given = observed.take_given().as_ref().map(observation_to_wit);
            let answer = self
                .call::<o::GuestIndices, _>(
                    at,
                    None,
                    "apply-observed",
                    observed_size,
                    move |g, store| {
                        Box::pin(async move {
                            g.call_apply_observed(
                                store,
                                prior.as_ref(),
                                plan.as_ref(),
                                given.as_ref(),
                                &options,
                            )
                            .await
                        })
                    },
                )
                .await;
            let (answer, seen) = match answer {
                Ok(r) => (Ok(r.response), r.observation.map(observation_from_wit)),
                Err(status) => (Err(status), None),
            };
            observed.set_seen(seen);
            return ("observed-apply.apply-observed", answer);
        }
        let answer = self
            .call::<rt::GuestIndices, _>(at, observed, "apply", apply_size, move |g, store| {
                Box::pin(async move {
                    g.call_apply(store, prior.as_ref(), plan.as_ref(), &options)
                        .await
                })
            })
            .await;
        ("runtime.apply", answer)
    }

    /// `runtime.read` of link `at`.
    async fn read_link(
        self: &Arc<Self>,
        at: usize,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: rt::ReadOptions,
    ) -> Answer<rt::ReadResponse> {
        let answer = self
            .call::<rt::GuestIndices, _>(at, None, "read", read_size, move |g, store| {
                Box::pin(async move {
                    g.call_read(store, prior.as_ref(), plan.as_ref(), &options)
                        .await
                })
            })
            .await;
        ("runtime.read", answer)
    }

    /// `runtime.delete` of link `at`.
    async fn delete_link(
        self: &Arc<Self>,
        at: usize,
        resource: t::Resource,
        options: rt::DeleteOptions,
    ) -> Answer<rt::DeleteResponse> {
        let size = |r: &rt::DeleteResponse| opt_status_size(&r.status);
        let answer = self
            .call::<rt::GuestIndices, _>(at, None, "delete", size, move |g, store| {
                Box::pin(async move { g.call_delete(store, &resource, &options).await })
            })
            .await;
        ("runtime.delete", answer)
    }

    /// `runtime.watch` of link `at`.
    async fn watch_link(
        self: &Arc<Self>,
        at: usize,
        resource: t::Resource,
        options: rt::WatchOptions,
    ) -> Answer<rt::WatchResponse> {
        let answer = self
            .call::<rt::GuestIndices, _>(at, None, "watch", watch_size, move |g, store| {
                Box::pin(async move { g.call_watch(store, &resource, &options).await })
            })
            .await;
        ("runtime.watch", answer)
    }
}

/// The calls a middleware's `runtime` import makes on link `at`: the answer
/// goes back as it is, checked as the model answer is (a resource that is not
/// a Kubernetes object, or `live` that is not JSON, fails the call, naming
/// the link), but never converted.
impl Chain {
    /// `runtime.apply` of link `at` for the middleware in front of it.
    pub(crate) async fn apply_next(
        self: &Arc<Self>,
        at: usize,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: n::ApplyOptions,
        observed: Option<Arc<Observed>>,
    ) -> n::ApplyResponse {
        let deleting = plan.is_none();
        let options = apply_options_from_next(options);
        let (export, answer) = self.apply_link(at, prior, plan, options, observed).await;
        let checked = answer.and_then(|r| {
            self.check_returned(at, export, &r.resource)?;
            let checked_as_resource = |live: &String| {
                r.resource
                    .as_ref()
                    .is_some_and(|res| res.attributes == *live)
            };
            if let Some(live) = r.live.as_ref().filter(|l| !checked_as_resource(l)) {
                serde_json::from_str::<IgnoredAny>(live)
                    .map_err(|e| self.invalid_live(at, export, e))?;
            }
            Ok(r)
        });
        match checked {
            Ok(r) => apply_answer_to_next(r),
            Err(status) => apply_response_to_next(ApplyResponse::failed(status, deleting)),
        }
    }

    /// `runtime.read` of link `at` for the middleware in front of it.
    pub(crate) async fn read_next(
        self: &Arc<Self>,
        at: usize,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: n::ReadOptions,
    ) -> n::ReadResponse {
        let options = read_options_from_next(options);
        let (export, answer) = self.read_link(at, prior, plan, options).await;
        let checked = answer.and_then(|r| self.check_returned(at, export, &r.resource).map(|()| r));
        match checked {
            Ok(r) => read_answer_to_next(r),
            Err(status) => read_response_to_next(ReadResponse::failed(status)),
        }
    }

    /// `runtime.delete` of link `at` for the middleware in front of it.
    pub(crate) async fn delete_next(
        self: &Arc<Self>,
        at: usize,
        resource: t::Resource,
        options: n::DeleteOptions,
    ) -> n::DeleteResponse {
        let options = delete_options_from_next(options);
        let (_, answer) = self.delete_link(at, resource, options).await;
        n::DeleteResponse {
            status: answer.map_or_else(|status| Some(status_to_wit(status)), |r| r.status),
        }
    }

    /// `runtime.watch` of link `at` for the middleware in front of it.
    pub(crate) async fn watch_next(
        self: &Arc<Self>,
        at: usize,
        resource: t::Resource,
        options: n::WatchOptions,
    ) -> n::WatchResponse {
        let options = watch_options_from_next(options);
        let (export, answer) = self.watch_link(at, resource, options).await;
        let checked = answer.and_then(|r| self.check_returned(at, export, &r.resource).map(|()| r));
        match checked {
            Ok(r) => watch_answer_to_next(r),
            Err(status) => watch_response_to_next(WatchResponse::failed(status)),
        }
    }

    /// The resource link `at` returned from `export`, checked in place.
    fn check_returned(
        &self,
        at: usize,
        export: &str,
        resource: &Option<t::Resource>,
    ) -> Result<(), Status> {
        let who = self.settings(at).role.to_string();
        resource
            .as_ref()
            .map_or(Ok(()), |r| check_returned_resource(&who, export, r))
    }

    /// `live` from link `at`'s `export` that is not JSON.
    fn invalid_live(&self, at: usize, export: &str, e: serde_json::Error) -> Status {
        let who = self.settings(at).role.to_string();
        invalid_result(&who, export, format!("invalid live JSON: {e}"))
    }
}

/// Kusion's contract on the chain, in model values: the host's calls enter at
/// the outermost link, and only there are values converted, once each way.
impl Chain {
    /// `runtime.apply` through the chain, within the apply `observed` stands
    /// for, if any.
    async fn apply(
        self: &Arc<Self>,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ApplyOptions,
        observed: Option<Arc<Observed>>,
    ) -> ApplyResponse {
        let deleting = plan.is_none();
        let (export, answer) = self
            .apply_link(
                0,
                prior.map(resource_to_wit),
                plan.map(resource_to_wit),
                apply_options_to_wit(options),
                observed,
            )
            .await;
        let failed = |status: Status| ApplyResponse::failed(status, deleting);
        let r = match answer {
            Ok(r) => r,
            Err(status) => return failed(status),
        };
        // The live object as the same text as the result (an unchanged object's): parsed once.
        let same =
            matches!((&r.resource, &r.live), (Some(res), Some(live)) if res.attributes == *live);
        let resource = match self.returned(export, r.resource) {
            Ok(resource) => resource,
            Err(status) => return failed(status),
        };
        let live = match (&resource, r.live) {
            (Some(res), Some(_)) if same => Some(res.attributes.clone()),
            (_, live) => match live.map(|l| serde_json::from_str(&l)).transpose() {
                Ok(live) => live,
                Err(e) => return failed(self.invalid_live(0, export, e)),
            },
        };
        ApplyResponse {
            resource,
            live,
            action: action_from_wit(r.action),
            status: r.status.map(status_from_wit),
            retries: r.retries,
        }
    }

    /// The resource the outermost link returned from `export`, checked: one
    /// that is not a Kubernetes object is a status naming the link.
    fn returned(
        &self,
        export: &str,
        resource: Option<t::Resource>,
    ) -> Result<Option<Resource>, Status> {
        let who = self.settings(0).role.to_string();
        resource
            .map(|r| returned_resource(&who, export, r))
            .transpose()
    }

    /// `runtime.read` through the chain.
    async fn read(
        self: &Arc<Self>,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ReadOptions,
    ) -> ReadResponse {
        let options = rt::ReadOptions {
            default_namespace: options.default_namespace.clone(),
        };
        let (export, answer) = self
            .read_link(
                0,
                prior.map(resource_to_wit),
                plan.map(resource_to_wit),
                options,
            )
            .await;
        answer
            .and_then(|r| {
                Ok(ReadResponse {
                    resource: self.returned(export, r.resource)?,
                    status: r.status.map(status_from_wit),
                })
            })
            .unwrap_or_else(ReadResponse::failed)
    }

    /// `runtime.delete` through the chain.
    async fn delete(
        self: &Arc<Self>,
        resource: &Resource,
        options: &DeleteRequest,
    ) -> Option<Status> {
        let (_, answer) = self
            .delete_link(0, resource_to_wit(resource), delete_request_to_wit(options))
            .await;
        match answer {
            Ok(r) => r.status.map(status_from_wit),
            Err(status) => Some(status),
        }
    }

    /// `runtime.watch` through the chain.
    async fn watch(self: &Arc<Self>, resource: &Resource, options: &WatchRequest) -> WatchResponse {
        let options = rt::WatchOptions {
            timeout_ms: options.timeout_ms,
            default_namespace: options.default_namespace.clone(),
        };
        let (export, answer) = self.watch_link(0, resource_to_wit(resource), options).await;
        answer
            .and_then(|r| {
                Ok(WatchResponse {
                    resource: self.returned(export, r.resource)?,
                    health: health_from_wit(r.health),
                    status: r.status.map(status_from_wit),
                })
            })
            .unwrap_or_else(WatchResponse::failed)
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
        self.chain().apply(prior, plan, &options, None).await
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
            .apply(prior, plan, &options, Some(observed.clone()))
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
        self.chain().read(prior, plan, &options).await
    }

    async fn delete(&self, resource: &Resource, options: &DeleteRequest) -> Option<Status> {
        let options = DeleteRequest {
            default_namespace: self.default_namespace(&options.default_namespace),
            ..options.clone()
        };
        self.chain().delete(resource, &options).await
    }

    async fn watch(&self, resource: &Resource, options: &WatchRequest) -> WatchResponse {
        let options = WatchRequest {
            default_namespace: self.default_namespace(&options.default_namespace),
            ..options.clone()
        };
        self.chain().watch(resource, &options).await
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
