//! The Rust `Runtime` API (Kusion's contract) and its component-backed
//! implementation: one fresh, limited instance per call.

use crate::bindings::exports::kusion::runtime::runtime::Guest;
use crate::bindings::{KubernetesRuntime, KubernetesRuntimePre};
use crate::cluster::KubeCluster;
use crate::convert::{
    action_from_wit, apply_options_to_wit, delete_request_to_wit, health_from_wit,
    resource_from_wit, resource_to_wit, status_from_wit,
};
use crate::engine::{ComponentSource, EPOCH_TICK, EngineOptions, build_engine, load_component};
use crate::error::Error;
use crate::events::{EventSink, TracingSink};
use crate::state::{HostState, Limits};
use guest::model::{
    Action, ApplyOptions, ApplyResponse, DeleteRequest, Health, HealthState, ReadOptions,
    ReadResponse, Resource, Status, StatusCode, WatchRequest, WatchResponse,
};
use std::pin::Pin;
use std::sync::Arc;
use wasmtime::{Engine, Store, Trap};

/// Kusion's `Runtime` contract: one resource per call, each answer carrying a
/// status (`None` = success).
pub trait Runtime: Send + Sync {
    /// Makes the cluster match `plan` (`None` deletes `prior`).
    fn apply(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ApplyOptions,
    ) -> impl Future<Output = ApplyResponse> + Send;

    /// Reads the live object of `plan` (or `prior`).
    fn read(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ReadOptions,
    ) -> impl Future<Output = ReadResponse> + Send;

    /// Deletes the object; already gone is a success.
    fn delete(
        &self,
        resource: &Resource,
        options: &DeleteRequest,
    ) -> impl Future<Output = Option<Status>> + Send;

    /// Waits until the object is current, failed or the timeout passes.
    fn watch(
        &self,
        resource: &Resource,
        options: &WatchRequest,
    ) -> impl Future<Output = WatchResponse> + Send;
}

/// A [`Runtime`] backed by a sandboxed component.
#[derive(Clone)]
pub struct ComponentRuntime {
    pre: KubernetesRuntimePre<HostState>,
    cluster: Arc<KubeCluster>,
    events: Arc<dyn EventSink>,
    limits: Limits,
}

impl ComponentRuntime {
    /// Builds an engine with `options`, compiles and links `source`, and binds
    /// it to `cluster`.
    ///
    /// # Errors
    /// Engine setup, an unreadable or invalid component, or a world mismatch.
    pub async fn new(
        source: &ComponentSource,
        cluster: Arc<KubeCluster>,
        options: &EngineOptions,
    ) -> Result<Self, Error> {
        let engine = build_engine(options)?;
        Self::with_engine(&engine, source, cluster, options.limits.clone()).await
    }

    /// Like [`ComponentRuntime::new`] on an existing engine (built by
    /// [`build_engine`](crate::build_engine)), so several components share it.
    ///
    /// # Errors
    /// An unreadable or invalid component, or a world mismatch.
    pub async fn with_engine(
        engine: &Engine,
        source: &ComponentSource,
        cluster: Arc<KubeCluster>,
        limits: Limits,
    ) -> Result<Self, Error> {
        let pre = load_component(engine, source).await?;
        Ok(ComponentRuntime {
            pre,
            cluster,
            events: Arc::new(TracingSink),
            limits,
        })
    }

    /// Sends the guest's logs and progress events to `events`.
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    /// The cluster this runtime talks to.
    pub fn cluster(&self) -> &Arc<KubeCluster> {
        &self.cluster
    }

    fn default_namespace(&self, given: &Option<String>) -> Option<String> {
        given
            .clone()
            .or_else(|| Some(self.cluster.default_namespace().to_string()))
    }

    /// A fresh store with the limits applied and a new instance in it.
    async fn instantiate(
        &self,
        export: &str,
    ) -> Result<(Store<HostState>, KubernetesRuntime), Status> {
        let engine = self.pre.engine();
        let state = HostState::new(self.cluster.clone(), self.events.clone(), &self.limits);
        let mut store = Store::new(engine, state);
        store.limiter(|s| &mut s.store_limits);
        let ticks = (self.limits.call_timeout.as_millis() / EPOCH_TICK.as_millis()).max(1);
        store.set_epoch_deadline(ticks as u64);
        store.epoch_deadline_trap();
        match self.pre.instantiate_async(&mut store).await {
            Ok(instance) => Ok((store, instance)),
            Err(err) => Err(classify_failure(export, &err, &store.data().stderr())),
        }
    }

    /// Bounds one export call by the wall-clock limit; traps, limit hits and
    /// deadlines come back as a [`Status`] naming the export.
    async fn bounded<T>(
        &self,
        export: &str,
        call: impl Future<Output = wasmtime::Result<T>>,
    ) -> Result<T, (Option<wasmtime::Error>, Status)> {
        match tokio::time::timeout(self.limits.call_timeout, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err((Some(err), Status::error(StatusCode::Internal, "", ""))),
            Err(_) => Err((
                None,
                Status {
                    retryable: true,
                    ..Status::error(
                        StatusCode::Timeout,
                        "HostCallTimeout",
                        format!(
                            "runtime.{export} did not finish within {:?}",
                            self.limits.call_timeout
                        ),
                    )
                },
            )),
        }
    }

    /// Runs `export` through `call` on a fresh instance.
    async fn call<T>(
        &self,
        export: &str,
        call: impl for<'a> FnOnce(
            &'a Guest,
            &'a mut Store<HostState>,
        )
            -> Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 'a>>,
    ) -> Result<T, Status> {
        let (mut store, instance) = self.instantiate(export).await?;
        let result = self
            .bounded(export, call(instance.kusion_runtime_runtime(), &mut store))
            .await;
        result.map_err(|(err, status)| match err {
            Some(err) => classify_failure(export, &err, &store.data().stderr()),
            None => status,
        })
    }
}

/// Turns a failed guest call into a status: which limit or fault, which export.
fn classify_failure(export: &str, err: &wasmtime::Error, stderr: &str) -> Status {
    let text = format!("{err:#}");
    let (code, reason, what) = if let Some(trap) = err.downcast_ref::<Trap>() {
        match trap {
            Trap::Interrupt => (
                StatusCode::LimitExceeded,
                "GuestTimeout",
                "exceeded its CPU time limit",
            ),
            Trap::OutOfFuel => (
                StatusCode::LimitExceeded,
                "GuestOutOfFuel",
                "ran out of fuel",
            ),
            Trap::StackOverflow => (
                StatusCode::LimitExceeded,
                "GuestStackOverflow",
                "overflowed its stack",
            ),
            Trap::UnreachableCodeReached if !stderr.is_empty() => {
                (StatusCode::Internal, "GuestPanic", "panicked")
            }
            _ => (StatusCode::Internal, "GuestTrap", "trapped"),
        }
    } else if text.contains("forcing trap when growing memory") {
        (
            StatusCode::LimitExceeded,
            "GuestMemoryLimit",
            "exceeded its memory limit",
        )
    } else {
        (StatusCode::Internal, "GuestFailure", "failed")
    };
    let mut message = format!("the runtime component {what} in runtime.{export}: {text}");
    if !stderr.is_empty() {
        message.push_str("; guest stderr: ");
        message.push_str(stderr);
    }
    Status::error(code, reason, message)
}

fn invalid_result(export: &str, problem: String) -> Status {
    Status::error(
        StatusCode::Internal,
        "GuestInvalidResult",
        format!("runtime.{export}: {problem}"),
    )
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
        let answer = self
            .call("apply", move |g, store| {
                Box::pin(async move {
                    g.call_apply(store, prior_w.as_ref(), plan_w.as_ref(), &opts)
                        .await
                })
            })
            .await;
        let failed = |status: Status| ApplyResponse {
            resource: None,
            live: None,
            action: if plan.is_none() {
                Action::Delete
            } else {
                Action::Unchanged
            },
            status: Some(status),
            retries: 0,
        };
        let r = match answer {
            Ok(r) => r,
            Err(status) => return failed(status),
        };
        let resource = match r.resource.map(resource_from_wit).transpose() {
            Ok(resource) => resource,
            Err(e) => return failed(invalid_result("apply", e)),
        };
        let live = match r.live.map(|l| serde_json::from_str(&l)).transpose() {
            Ok(live) => live,
            Err(e) => return failed(invalid_result("apply", format!("invalid live JSON: {e}"))),
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
        let opts = crate::bindings::runtime::ReadOptions {
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        let answer = self
            .call("read", move |g, store| {
                Box::pin(async move {
                    g.call_read(store, prior_w.as_ref(), plan_w.as_ref(), &opts)
                        .await
                })
            })
            .await;
        match answer {
            Ok(r) => match r.resource.map(resource_from_wit).transpose() {
                Ok(resource) => ReadResponse {
                    resource,
                    status: r.status.map(status_from_wit),
                },
                Err(e) => ReadResponse {
                    resource: None,
                    status: Some(invalid_result("read", e)),
                },
            },
            Err(status) => ReadResponse {
                resource: None,
                status: Some(status),
            },
        }
    }

    async fn delete(&self, resource: &Resource, options: &DeleteRequest) -> Option<Status> {
        let res = resource_to_wit(resource);
        let mut opts = delete_request_to_wit(options);
        opts.default_namespace = self.default_namespace(&opts.default_namespace);
        let answer = self
            .call("delete", move |g, store| {
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
        let opts = crate::bindings::runtime::WatchOptions {
            timeout_ms: options.timeout_ms,
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        let answer = self
            .call("watch", move |g, store| {
                Box::pin(async move { g.call_watch(store, &res, &opts).await })
            })
            .await;
        let unknown = |status: Status| WatchResponse {
            resource: None,
            health: Health::new(
                HealthState::Unknown,
                status.reason.clone(),
                status.message.clone(),
            ),
            status: Some(status),
        };
        match answer {
            Ok(r) => match r.resource.map(resource_from_wit).transpose() {
                Ok(resource) => WatchResponse {
                    resource,
                    health: health_from_wit(r.health),
                    status: r.status.map(status_from_wit),
                },
                Err(e) => unknown(invalid_result("watch", e)),
            },
            Err(status) => unknown(status),
        }
    }
}
