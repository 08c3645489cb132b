//! [`ComponentRuntime`]: krt-stack's [`Runtime`](krt_stack::Runtime) backed by
//! a chain of sandboxed components (middleware in front of a runtime
//! component), with one fresh, limited instance per link and call, a
//! capability policy on every cluster call, and hot reload of each link.

mod builder;
mod chain;
mod contract;
mod failure;
mod stats;

pub(crate) use crate::link::{LinkSettings, Role};
pub use builder::{ChainBuilder, Middleware};
pub use stats::RuntimeStats;

use crate::cluster::KubeCluster;
use crate::engine::{
    ComponentSource, EngineOptions, LinkKind, Loaded, SharedEngine, load_component,
};
use crate::error::Error;
use crate::link::Limits;
use crate::policy::Policy;
use chain::{Chain, Link};
use krt_stack::EventSink;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

/// A [`Runtime`](krt_stack::Runtime) backed by a sandboxed component, or by a
/// chain of them: middleware 1 → … → middleware n → the runtime component.
///
/// Every call runs each link it reaches in a fresh instance with that link's
/// [`Limits`], and every cluster call a link makes is checked against that
/// link's [`Policy`] (the runtime's is unrestricted unless
/// [`with_policy`](ComponentRuntime::with_policy) says otherwise; a
/// middleware's grants nothing unless its [`Middleware::policy`] does).
/// Clones share the components: a [`reload`](ComponentRuntime::reload)
/// affects all of them.
#[derive(Clone)]
pub struct ComponentRuntime {
    /// The engine the components are compiled on, and its cache.
    engine: SharedEngine,
    /// The component of each link, outermost first; the runtime is last.
    components: Arc<[RwLock<Arc<Loaded>>]>,
    /// What each link runs under, in the same order.
    settings: Arc<[Arc<LinkSettings>]>,
    cluster: Arc<KubeCluster>,
    events: Arc<dyn EventSink>,
    counters: Arc<stats::Counters>,
    /// Whether the user was told that krt's built-in logic stands in for a
    /// `logic` export no link has.
    told_builtin_logic: Arc<AtomicBool>,
}

impl ComponentRuntime {
    /// Builds an engine with `options`, compiles and links `source` as the
    /// runtime (no middleware), and binds it to `cluster`.
    ///
    /// # Errors
    /// Engine setup, an unreadable or invalid component, a refused import, a
    /// middleware given as the runtime, or a world or version mismatch.
    pub async fn new(
        source: &ComponentSource,
        cluster: Arc<KubeCluster>,
        options: &EngineOptions,
    ) -> Result<Self, Error> {
        Self::builder(source.clone()).build(cluster, options).await
    }

    /// Like [`ComponentRuntime::new`] on an existing engine, so several
    /// components share it.
    /// The engine's memory and table limits (its pool) cap `limits`.
    ///
    /// # Errors
    /// As [`ComponentRuntime::new`], engine setup aside.
    pub async fn with_engine(
        engine: &SharedEngine,
        source: &ComponentSource,
        cluster: Arc<KubeCluster>,
        limits: Limits,
    ) -> Result<Self, Error> {
        Self::builder(source.clone())
            .build_with_engine(engine, cluster, limits)
            .await
    }

    /// A chain with `runtime` at its end; add middleware in front of it with
    /// [`ChainBuilder::middleware`], outermost first.
    pub fn builder(runtime: ComponentSource) -> ChainBuilder {
        ChainBuilder::new(runtime)
    }

    /// Sends the guests' logs and progress events to `events`.
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    /// Checks every cluster call of the runtime component against `policy`
    /// (the middleware keep their own).
    pub fn with_policy(mut self, policy: Policy) -> Self {
        let mut settings: Vec<Arc<LinkSettings>> = self.settings.to_vec();
        let runtime = settings.last_mut().expect("a chain ends with its runtime");
        *runtime = Arc::new(LinkSettings {
            policy: Arc::new(policy),
            ..LinkSettings::clone(runtime)
        });
        self.settings = settings.into();
        self
    }

    /// Sends every cluster call of the chain to `cluster` (for example the
    /// same cluster [acting as](KubeCluster::acting_as) another user); the
    /// compiled components are shared with `self`.
    pub fn with_cluster(mut self, cluster: Arc<KubeCluster>) -> Self {
        self.cluster = cluster;
        self
    }

    /// The policy the runtime component's cluster calls are checked against.
    pub fn policy(&self) -> &Policy {
        &self.runtime_settings().policy
    }

    /// The limits every call of the runtime component runs under.
    pub fn limits(&self) -> &Limits {
        &self.runtime_settings().limits
    }

    /// The names of the middleware, outermost first.
    pub fn middleware(&self) -> Vec<&str> {
        self.settings
            .iter()
            .filter_map(|s| match &s.role {
                Role::Middleware { name, .. } => Some(name.as_str()),
                Role::Runtime => None,
            })
            .collect()
    }

    /// Instances created (one per link a call reaches) and the most memory
    /// one of them held, over all calls of this runtime and its clones.
    pub fn stats(&self) -> RuntimeStats {
        self.counters.snapshot()
    }

    /// The cluster this runtime talks to.
    pub fn cluster(&self) -> &Arc<KubeCluster> {
        &self.cluster
    }

    /// Replaces the runtime component for calls that start from now on;
    /// calls already running finish on the component they started with. The
    /// new component is compiled and checked first, so one that fails to load
    /// leaves the current one in place.
    ///
    /// # Errors
    /// As [`ComponentRuntime::new`]; the runtime is unchanged.
    pub async fn reload(&self, source: &ComponentSource) -> Result<(), Error> {
        self.swap(self.components.len() - 1, source, LinkKind::Runtime)
            .await
    }

    /// Replaces middleware `position` (1 for the outermost) for calls that
    /// start from now on, as [`reload`](ComponentRuntime::reload) does for
    /// the runtime; its name, limits and policy stay.
    ///
    /// # Errors
    /// [`Error::NoSuchMiddleware`], or as [`ComponentRuntime::new`] (a
    /// component that is not a middleware included); the chain is unchanged.
    pub async fn reload_middleware(
        &self,
        position: usize,
        source: &ComponentSource,
    ) -> Result<(), Error> {
        let count = self.components.len() - 1;
        if position == 0 || position > count {
            return Err(Error::NoSuchMiddleware { position, count });
        }
        self.swap(position - 1, source, LinkKind::Middleware).await
    }

    /// Loads `source` as link `at` and swaps it in.
    async fn swap(&self, at: usize, source: &ComponentSource, kind: LinkKind) -> Result<(), Error> {
        let loaded = load_component(&self.engine, source, kind).await?;
        *self.components[at]
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(loaded);
        Ok(())
    }

    /// Whether some link exports `kusion:runtime/logic` (else diff, drift and
    /// health use krt's built-in logic).
    pub fn exports_logic(&self) -> bool {
        (0..self.components.len()).any(|at| self.loaded(at).logic.is_some())
    }

    fn loaded(&self, at: usize) -> Arc<Loaded> {
        self.components[at]
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn runtime_settings(&self) -> &LinkSettings {
        self.settings.last().expect("a chain ends with its runtime")
    }

    /// The chain one call runs through: the current component of every link.
    fn chain(&self) -> Arc<Chain> {
        let links = self
            .settings
            .iter()
            .enumerate()
            .map(|(at, settings)| Link {
                loaded: self.loaded(at),
                settings: settings.clone(),
            })
            .collect();
        Arc::new(Chain {
            links,
            cluster: self.cluster.clone(),
            events: self.events.clone(),
            counters: self.counters.clone(),
        })
    }

    /// The first link of `chain` that exports `logic`; `None` (said once, at
    /// info level) when none does, and `None` too when it is krt's built-in
    /// guest: its logic is the `krt_guest` code the host links, built from the
    /// same source, so it runs natively (pure functions of what the host hands
    /// it, no cluster access), without an instance or the copies in and out.
    fn logic_link(&self, chain: &Chain) -> Option<usize> {
        let found = chain.logic_link();
        match found {
            Some(at) if chain.links[at].loaded.builtin => None,
            Some(at) => Some(at),
            None => {
                if !self.told_builtin_logic.swap(true, Ordering::Relaxed) {
                    let runtime = &chain.links[chain.links.len() - 1].loaded.name;
                    tracing::info!(
                        target: "krt::runtime",
                        "{runtime} does not export `kusion:runtime/logic` (nor does any \
                         middleware): diffs, drift and health use krt's built-in logic"
                    );
                }
                None
            }
        }
    }

    fn default_namespace(&self, given: &Option<String>) -> Option<String> {
        given
            .clone()
            .or_else(|| Some(self.cluster.default_namespace().to_string()))
    }
}
