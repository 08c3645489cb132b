//! [`Runtime`] for [`ComponentRuntime`]: the four calls of Kusion's contract
//! through the component's `runtime` export, and the logic calls through its
//! `logic` export (or krt's built-in logic when it has none).

use super::ComponentRuntime;
use super::failure::{invalid_result, resource_size, returned_resource, status_size};
use crate::bindings::{runtime as rt, types as t};
use crate::convert::{
    action_from_wit, apply_options_to_wit, delete_request_to_wit, health_from_wit, resource_to_wit,
    status_from_wit,
};
use krt_guest::model::{
    ApplyOptions, ApplyResponse, DeleteRequest, Health, ObjectDiff, ReadOptions, ReadResponse,
    Resource, Status, WatchRequest, WatchResponse,
};
use krt_stack::Runtime;
use serde_json::Value;

fn opt_status_size(s: &Option<t::Status>) -> usize {
    s.as_ref().map_or(0, status_size)
}

fn opt_resource_size(r: &Option<t::Resource>) -> usize {
    r.as_ref().map_or(0, resource_size)
}

impl Runtime for ComponentRuntime {
    async fn apply(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ApplyOptions,
    ) -> ApplyResponse {
        let prior_w = prior.map(resource_to_wit);
        let plan_w = plan.map(resource_to_wit);
        let mut opts = apply_options_to_wit(options);
        opts.default_namespace = self.default_namespace(&opts.default_namespace);
        let size = |r: &rt::ApplyResponse| {
            opt_resource_size(&r.resource)
                + r.live.as_ref().map_or(0, String::len)
                + opt_status_size(&r.status)
        };
        let answer = self
            .call("apply", size, move |g, store| {
                Box::pin(async move {
                    g.call_apply(store, prior_w.as_ref(), plan_w.as_ref(), &opts)
                        .await
                })
            })
            .await;
        let failed = |status: Status| ApplyResponse::failed(status, plan.is_none());
        let r = match answer {
            Ok(r) => r,
            Err(status) => return failed(status),
        };
        let resource = match r
            .resource
            .map(|r| returned_resource("runtime.apply", r))
            .transpose()
        {
            Ok(resource) => resource,
            Err(status) => return failed(status),
        };
        let live = match r.live.map(|l| serde_json::from_str(&l)).transpose() {
            Ok(live) => live,
            Err(e) => {
                return failed(invalid_result(
                    "runtime.apply",
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

    async fn read(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ReadOptions,
    ) -> ReadResponse {
        let prior_w = prior.map(resource_to_wit);
        let plan_w = plan.map(resource_to_wit);
        let opts = rt::ReadOptions {
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        let size =
            |r: &rt::ReadResponse| opt_resource_size(&r.resource) + opt_status_size(&r.status);
        let answer = self
            .call("read", size, move |g, store| {
                Box::pin(async move {
                    g.call_read(store, prior_w.as_ref(), plan_w.as_ref(), &opts)
                        .await
                })
            })
            .await;
        let failed = ReadResponse::failed;
        match answer {
            Ok(r) => match r
                .resource
                .map(|r| returned_resource("runtime.read", r))
                .transpose()
            {
                Ok(resource) => ReadResponse {
                    resource,
                    status: r.status.map(status_from_wit),
                },
                Err(status) => failed(status),
            },
            Err(status) => failed(status),
        }
    }

    async fn delete(&self, resource: &Resource, options: &DeleteRequest) -> Option<Status> {
        let res = resource_to_wit(resource);
        let mut opts = delete_request_to_wit(options);
        opts.default_namespace = self.default_namespace(&opts.default_namespace);
        let size = |r: &rt::DeleteResponse| opt_status_size(&r.status);
        let answer = self
            .call("delete", size, move |g, store| {
                Box::pin(async move { g.call_delete(store, &res, &opts).await })
            })
            .await;
        match answer {
            Ok(r) => r.status.map(status_from_wit),
            Err(status) => Some(status),
        }
    }

    async fn watch(&self, resource: &Resource, options: &WatchRequest) -> WatchResponse {
        let res = resource_to_wit(resource);
        let opts = rt::WatchOptions {
            timeout_ms: options.timeout_ms,
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        let size = |r: &rt::WatchResponse| {
            opt_resource_size(&r.resource)
                + r.health.reason.len()
                + r.health.message.len()
                + opt_status_size(&r.status)
        };
        let answer = self
            .call("watch", size, move |g, store| {
                Box::pin(async move { g.call_watch(store, &res, &opts).await })
            })
            .await;
        let unknown = WatchResponse::failed;
        match answer {
            Ok(r) => match r
                .resource
                .map(|r| returned_resource("runtime.watch", r))
                .transpose()
            {
                Ok(resource) => WatchResponse {
                    resource,
                    health: health_from_wit(r.health),
                    status: r.status.map(status_from_wit),
                },
                Err(status) => unknown(status),
            },
            Err(status) => unknown(status),
        }
    }

    async fn diff(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        ignore_paths: &[String],
    ) -> Result<ObjectDiff, Status> {
        let (b, a) = (before.map(Value::to_string), after.map(Value::to_string));
        let paths = ignore_paths.to_vec();
        let answer = self
            .call_logic("diff", diff_size, move |g, store| {
                Box::pin(
                    async move { g.call_diff(store, b.as_deref(), a.as_deref(), &paths).await },
                )
            })
            .await;
        match answer {
            Some(result) => logic_result(result, crate::convert::diff_from_wit),
            None => Ok(krt_guest::diff::diff(before, after, ignore_paths)),
        }
    }

    async fn drift(
        &self,
        prior: &Value,
        live: Option<&Value>,
        ignore_paths: &[String],
    ) -> Result<ObjectDiff, Status> {
        let (p, l) = (prior.to_string(), live.map(Value::to_string));
        let paths = ignore_paths.to_vec();
        let answer = self
            .call_logic("drift", diff_size, move |g, store| {
                Box::pin(async move { g.call_drift(store, &p, l.as_deref(), &paths).await })
            })
            .await;
        match answer {
            Some(result) => logic_result(result, crate::convert::diff_from_wit),
            None => Ok(krt_guest::diff::drift(prior, live, ignore_paths)),
        }
    }

    async fn health(&self, object: &Value) -> Result<Health, Status> {
        let text = object.to_string();
        let size = |r: &Result<t::Health, t::Status>| match r {
            Ok(h) => h.reason.len() + h.message.len(),
            Err(s) => status_size(s),
        };
        let answer = self
            .call_logic("health", size, move |g, store| {
                Box::pin(async move { g.call_health(store, &text).await })
            })
            .await;
        match answer {
            Some(result) => logic_result(result, health_from_wit),
            None => Ok(krt_guest::health::compute(
                object,
                krt_guest::runtime::now_unix_secs(),
            )),
        }
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
