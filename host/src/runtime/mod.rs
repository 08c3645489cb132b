//! The Rust `Runtime` API (Kusion's contract) and its component-backed
//! implementation: one fresh, limited instance per call, a capability policy
//! on every cluster call, and hot reload of the component.

mod failure;
mod stats;

pub use stats::RuntimeStats;

use crate::bindings::exports::kusion::runtime::runtime::Guest;
use crate::bindings::{KubernetesRuntime, KubernetesRuntimePre, types as t};
use crate::cluster::KubeCluster;
use crate::convert::{
    action_from_wit, apply_options_to_wit, delete_request_to_wit, health_from_wit, status_from_wit,
};
use crate::engine::{ComponentSource, EPOCH_TICK, EngineOptions, build_engine, load_component};
use crate::error::Error;
use crate::events::{EventSink, TracingSink};
use crate::policy::Policy;
use crate::state::{HostState, LimitHit, Limits};
use failure::{invalid_result, resource_size, returned_resource, status_size, too_large};
use guest::model::{
    ApplyOptions, ApplyResponse, DeleteRequest, ReadOptions, ReadResponse, Resource, Status,
    WatchRequest, WatchResponse,
};
use std::pin::Pin;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;
use wasmtime::{Engine, Store, UpdateDeadline};

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
///
/// Every call runs in a fresh instance with the [`Limits`] applied, and every
/// cluster call the guest makes is checked against the [`Policy`]
/// (unrestricted unless [`with_policy`](ComponentRuntime::with_policy) says
/// otherwise). Clones share the component: a [`reload`](ComponentRuntime::reload)
/// affects all of them.
#[derive(Clone)]
pub struct ComponentRuntime {
    pre: Arc<RwLock<Arc<KubernetesRuntimePre<HostState>>>>,
    cluster: Arc<KubeCluster>,
    events: Arc<dyn EventSink>,
    policy: Arc<Policy>,
    limits: Limits,
    counters: Arc<stats::Counters>,
}

/// Epoch ticks in `d`, at least one.
fn ticks(d: Duration) -> u64 {
    (d.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

impl ComponentRuntime {
    /// Builds an engine with `options`, compiles and links `source`, and binds
    /// it to `cluster`.
    ///
    /// # Errors
    /// Engine setup, an unreadable or invalid component, a refused import, or
    /// a world or version mismatch.
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
    /// The engine's memory and table limits (its pool) cap `limits`.
    ///
    /// # Errors
    /// An unreadable or invalid component, a refused import, or a world or
    /// version mismatch.
    pub async fn with_engine(
        engine: &Engine,
        source: &ComponentSource,
        cluster: Arc<KubeCluster>,
        limits: Limits,
    ) -> Result<Self, Error> {
        let pre = load_component(engine, source).await?;
        Ok(ComponentRuntime {
            pre: Arc::new(RwLock::new(Arc::new(pre))),
            cluster,
            events: Arc::new(TracingSink),
            policy: Arc::new(Policy::unrestricted()),
            limits,
            counters: Arc::default(),
        })
    }

    /// Sends the guest's logs and progress events to `events`.
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    /// Checks every cluster call of the guest against `policy`.
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    /// The policy cluster calls are checked against.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The limits every call runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Instances created and the most memory one of them held, over all
    /// calls of this runtime and its clones.
    pub fn stats(&self) -> RuntimeStats {
        self.counters.snapshot()
    }

    /// The cluster this runtime talks to.
    pub fn cluster(&self) -> &Arc<KubeCluster> {
        &self.cluster
    }

    /// Replaces the component for calls that start from now on; calls already
    /// running finish on the component they started with. The new component
    /// is compiled and checked first, so one that fails to load leaves the
    /// current one in place.
    ///
    /// # Errors
    /// As [`ComponentRuntime::new`]; the runtime is unchanged.
    pub async fn reload(&self, source: &ComponentSource) -> Result<(), Error> {
        let engine = self.current().engine().clone();
        let pre = load_component(&engine, source).await?;
        *self.pre.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(pre);
        Ok(())
    }

    fn current(&self) -> Arc<KubernetesRuntimePre<HostState>> {
        self.pre
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn default_namespace(&self, given: &Option<String>) -> Option<String> {
        given
            .clone()
            .or_else(|| Some(self.cluster.default_namespace().to_string()))
    }

    /// A fresh store with the limits applied and a new instance in it. The
    /// CPU budget is enforced by the epoch callback, which charges the guest
    /// only for time outside host calls and yields to tokio at every tick.
    async fn instantiate(
        &self,
        export: &str,
    ) -> Result<(Store<HostState>, KubernetesRuntime), Status> {
        let pre = self.current();
        let state = HostState::new(
            self.cluster.clone(),
            self.events.clone(),
            self.policy.clone(),
            &self.limits,
        );
        let mut store = Store::new(pre.engine(), state);
        store.limiter(|s| &mut s.limiter);
        let budget = self.limits.cpu_time;
        store.set_epoch_deadline(ticks(budget));
        store.epoch_deadline_callback(move |mut ctx| {
            let krt = &mut ctx.data_mut().krt;
            let used = krt.guest_time();
            if used >= budget {
                krt.hit.get_or_insert(LimitHit::Cpu(budget));
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Yield(ticks(budget - used)))
        });
        match pre.instantiate_async(&mut store).await {
            Ok(instance) => Ok((store, instance)),
            Err(err) => Err(failure::classify(export, &err, store.data())),
        }
    }

    /// Runs `export` through `call` on a fresh instance, bounded by the
    /// wall-clock limit; traps, limit hits, deadlines and oversized responses
    /// come back as a [`Status`] naming the export.
    async fn call<T>(
        &self,
        export: &str,
        size: impl FnOnce(&T) -> usize,
        call: impl for<'a> FnOnce(
            &'a Guest,
            &'a mut Store<HostState>,
        )
            -> Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 'a>>,
    ) -> Result<T, Status> {
        let (mut store, instance) = self.instantiate(export).await?;
        let timeout = self.limits.call_timeout;
        let outcome =
            tokio::time::timeout(timeout, call(instance.kusion_runtime_runtime(), &mut store))
                .await;
        self.counters.record(store.data().limiter.memory_in_use);
        match outcome {
            Ok(Ok(value)) => {
                let bytes = size(&value);
                if bytes > self.limits.max_response_bytes {
                    return Err(too_large(export, bytes, self.limits.max_response_bytes));
                }
                Ok(value)
            }
            Ok(Err(err)) => Err(failure::classify(export, &err, store.data())),
            Err(_) => Err(failure::deadline(export, timeout, store.data())),
        }
    }
}

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
        let prior_w = prior.map(crate::convert::resource_to_wit);
        let plan_w = plan.map(crate::convert::resource_to_wit);
        let mut opts = apply_options_to_wit(options);
        opts.default_namespace = self.default_namespace(&opts.default_namespace);
        let size = |r: &crate::bindings::runtime::ApplyResponse| {
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
            .map(|r| returned_resource("apply", r))
            .transpose()
        {
            Ok(resource) => resource,
            Err(status) => return failed(status),
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
        let prior_w = prior.map(crate::convert::resource_to_wit);
        let plan_w = plan.map(crate::convert::resource_to_wit);
        let opts = crate::bindings::runtime::ReadOptions {
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        let size = |r: &crate::bindings::runtime::ReadResponse| {
            opt_resource_size(&r.resource) + opt_status_size(&r.status)
        };
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
            Ok(r) => match r.resource.map(|r| returned_resource("read", r)).transpose() {
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
        let res = crate::convert::resource_to_wit(resource);
        let mut opts = delete_request_to_wit(options);
        opts.default_namespace = self.default_namespace(&opts.default_namespace);
        let size = |r: &crate::bindings::runtime::DeleteResponse| opt_status_size(&r.status);
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
        let res = crate::convert::resource_to_wit(resource);
        let opts = crate::bindings::runtime::WatchOptions {
            timeout_ms: options.timeout_ms,
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        let size = |r: &crate::bindings::runtime::WatchResponse| {
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
                .map(|r| returned_resource("watch", r))
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
}
