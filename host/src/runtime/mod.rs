//! [`ComponentRuntime`]: krt-stack's [`Runtime`](krt_stack::Runtime) backed by
//! a sandboxed component, with one fresh, limited instance per call, a
//! capability policy on every cluster call, and hot reload of the component.

mod contract;
mod failure;
mod stats;

pub use stats::RuntimeStats;

use crate::bindings::{KubernetesRuntimePre, logic as l, runtime as rt};
use crate::cluster::KubeCluster;
use crate::engine::{ComponentSource, EPOCH_TICK, EngineOptions, build_engine, load_component};
use crate::error::Error;
use crate::policy::Policy;
use crate::state::{HostState, LimitHit, Limits};
use failure::too_large;
use krt_guest::model::Status;
use krt_stack::{EventSink, TracingSink};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;
use wasmtime::{Engine, Store, UpdateDeadline};

/// A loaded component: linked, with its optional `logic` export located.
struct Loaded {
    pre: KubernetesRuntimePre<HostState>,
    /// `None` when the component exports only `runtime`.
    logic: Option<l::GuestIndices>,
    /// How messages name it.
    name: String,
    /// Whether the user was told that krt's built-in logic stands in for its
    /// missing `logic` export.
    told_builtin_logic: AtomicBool,
}

impl Loaded {
    async fn new(engine: &Engine, source: &ComponentSource) -> Result<Self, Error> {
        let (pre, name) = load_component(engine, source).await?;
        let logic = l::GuestIndices::new(pre.instance_pre()).ok();
        Ok(Loaded {
            pre,
            logic,
            name,
            told_builtin_logic: AtomicBool::new(false),
        })
    }
}

/// A [`Runtime`](krt_stack::Runtime) backed by a sandboxed component.
///
/// Every call runs in a fresh instance with the [`Limits`] applied, and every
/// cluster call the guest makes is checked against the [`Policy`]
/// (unrestricted unless [`with_policy`](ComponentRuntime::with_policy) says
/// otherwise). Clones share the component: a [`reload`](ComponentRuntime::reload)
/// affects all of them.
#[derive(Clone)]
pub struct ComponentRuntime {
    loaded: Arc<RwLock<Arc<Loaded>>>,
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
        let loaded = Loaded::new(engine, source).await?;
        Ok(ComponentRuntime {
            loaded: Arc::new(RwLock::new(Arc::new(loaded))),
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
        let engine = self.current().pre.engine().clone();
        let loaded = Loaded::new(&engine, source).await?;
        *self.loaded.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(loaded);
        Ok(())
    }

    /// Whether the current component exports `kusion:runtime/logic` (else
    /// diff, drift and health use krt's built-in logic).
    pub fn exports_logic(&self) -> bool {
        self.current().logic.is_some()
    }

    fn current(&self) -> Arc<Loaded> {
        self.loaded
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn default_namespace(&self, given: &Option<String>) -> Option<String> {
        given
            .clone()
            .or_else(|| Some(self.cluster.default_namespace().to_string()))
    }

    /// A fresh store with the limits applied. The CPU budget is enforced by
    /// the epoch callback, which charges the guest only for time outside host
    /// calls and yields to tokio at every tick.
    fn store(&self, loaded: &Loaded) -> Store<HostState> {
        let state = HostState::new(
            self.cluster.clone(),
            self.events.clone(),
            self.policy.clone(),
            &self.limits,
        );
        let mut store = Store::new(loaded.pre.engine(), state);
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
        store
    }

    /// Runs `call` in a fresh store, bounded by the wall-clock limit; traps,
    /// limit hits, deadlines and oversized responses come back as a [`Status`]
    /// naming `interface.export`.
    async fn run<T>(
        &self,
        export: &str,
        size: impl FnOnce(&T) -> usize,
        call: impl for<'a> FnOnce(
            &'a Loaded,
            &'a mut Store<HostState>,
        )
            -> Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 'a>>,
    ) -> Result<T, Status> {
        let loaded = self.current();
        let mut store = self.store(&loaded);
        let timeout = self.limits.call_timeout;
        let outcome = tokio::time::timeout(timeout, call(&loaded, &mut store)).await;
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

    /// Calls `runtime.<export>` of a fresh instance through `call`.
    async fn call<T>(
        &self,
        export: &str,
        size: impl FnOnce(&T) -> usize,
        call: impl for<'a> FnOnce(
            &'a rt::Guest,
            &'a mut Store<HostState>,
        )
            -> Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 'a>>
        + Send
        + 'static,
    ) -> Result<T, Status> {
        let export = format!("runtime.{export}");
        self.run(&export, size, move |loaded, store| {
            Box::pin(async move {
                let instance = loaded.pre.instantiate_async(&mut *store).await?;
                call(instance.kusion_runtime_runtime(), store).await
            })
        })
        .await
    }

    /// Calls `logic.<export>` of a fresh instance through `call`, or `None`
    /// when the component has no `logic` export (said once, at info level).
    async fn call_logic<T>(
        &self,
        export: &str,
        size: impl FnOnce(&T) -> usize,
        call: impl for<'a> FnOnce(
            &'a l::Guest,
            &'a mut Store<HostState>,
        )
            -> Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 'a>>
        + Send
        + 'static,
    ) -> Option<Result<T, Status>> {
        let loaded = self.current();
        let Some(indices) = &loaded.logic else {
            if !loaded.told_builtin_logic.swap(true, Ordering::Relaxed) {
                tracing::info!(
                    target: "krt::runtime",
                    "{} does not export `kusion:runtime/logic`: diffs, drift and health use \
                     krt's built-in logic",
                    loaded.name
                );
            }
            return None;
        };
        let indices = indices.clone();
        let export = format!("logic.{export}");
        let answer = self
            .run(&export, size, move |loaded, store| {
                Box::pin(async move {
                    let instance = loaded
                        .pre
                        .instance_pre()
                        .instantiate_async(&mut *store)
                        .await?;
                    let guest = indices.load(&mut *store, &instance)?;
                    call(&guest, store).await
                })
            })
            .await;
        Some(answer)
    }
}
