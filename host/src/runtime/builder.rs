//! Building a [`ComponentRuntime`] from a chain: a runtime component and the
//! middleware in front of it, each link with its own limits and policy.

use super::ComponentRuntime;
use crate::cluster::KubeCluster;
use crate::engine::{ComponentSource, EngineOptions, LinkKind, SharedEngine, load_component};
use crate::error::Error;
use crate::link::Limits;
use crate::link::{LinkSettings, Role};
use crate::policy::Policy;
use krt_stack::TracingSink;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

/// A middleware component (world `middleware` or `cluster-middleware`) and
/// what it runs under. It gets no cluster access unless `policy` grants it.
#[derive(Debug, Clone)]
pub struct Middleware {
    /// How messages name it, and the `NAME` of `krt --middleware-policy NAME=FILE`.
    pub name: String,
    /// The component.
    pub source: ComponentSource,
    /// Its own limits. Its wall-clock limit covers the links behind it, and
    /// the engine's pool caps its memory and table limits.
    pub limits: Limits,
    /// Its own capability policy, separate from the runtime's; by default
    /// ([`Policy::default`]) no namespace and no kind, so every cluster call
    /// is refused.
    pub policy: Policy,
}

impl Middleware {
    /// `source` named `name`, with the default limits and no cluster access.
    pub fn new(name: impl Into<String>, source: ComponentSource) -> Self {
        Middleware {
            name: name.into(),
            source,
            limits: Limits::default(),
            policy: Policy::default(),
        }
    }

    /// The component file `path`, named after its stem (`org_rules` for
    /// `org_rules.wasm`), with the default limits and no cluster access.
    pub fn file(path: &Path) -> Self {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Middleware::new(name, ComponentSource::File(path.to_path_buf()))
    }
}

/// A chain under construction: [`ComponentRuntime::builder`] takes the
/// runtime, [`middleware`](ChainBuilder::middleware) adds links in front of
/// it, outermost first, and [`build`](ChainBuilder::build) loads them all.
#[derive(Debug, Clone)]
pub struct ChainBuilder {
    runtime: ComponentSource,
    middleware: Vec<Middleware>,
}

impl ChainBuilder {
    /// A chain of just `runtime`.
    pub(crate) fn new(runtime: ComponentSource) -> Self {
        ChainBuilder {
            runtime,
            middleware: Vec::new(),
        }
    }

    /// Adds `middleware` behind the middleware added so far (the first one
    /// added is the outermost: krt calls it first).
    pub fn middleware(mut self, middleware: Middleware) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Builds an engine with `options`, whose pool holds
    /// `options.max_instances` instances per link (a call holds one instance
    /// of each link it reaches at once), loads every link and binds the chain
    /// to `cluster`. The runtime runs under `options.limits`.
    ///
    /// # Errors
    /// Engine setup, or as [`build_with_engine`](ChainBuilder::build_with_engine).
    pub async fn build(
        self,
        cluster: Arc<KubeCluster>,
        options: &EngineOptions,
    ) -> Result<ComponentRuntime, Error> {
        let links = self.middleware.len() as u32 + 1;
        let engine = SharedEngine::new(&EngineOptions {
            max_instances: options.max_instances.saturating_mul(links),
            ..options.clone()
        })?;
        self.build_with_engine(&engine, cluster, options.limits.clone())
            .await
    }

    /// Loads every link on `engine` and binds the chain to `cluster`; the
    /// runtime runs under `limits`.
    ///
    /// # Errors
    /// For any link: an unreadable or invalid component, a refused import, a
    /// version or world mismatch, a runtime given as a middleware or a
    /// middleware given as the runtime. The message names the component.
    pub async fn build_with_engine(
        self,
        engine: &SharedEngine,
        cluster: Arc<KubeCluster>,
        limits: Limits,
    ) -> Result<ComponentRuntime, Error> {
        let links = self.middleware.len() + 1;
        let mut components = Vec::with_capacity(links);
        let mut settings = Vec::with_capacity(links);
        for (i, m) in self.middleware.into_iter().enumerate() {
            let loaded = load_component(engine, &m.source, LinkKind::Middleware).await?;
            components.push(RwLock::new(Arc::new(loaded)));
            settings.push(Arc::new(LinkSettings {
                role: Role::Middleware {
                    name: m.name,
                    position: i + 1,
                    links,
                },
                limits: m.limits,
                policy: Arc::new(m.policy),
            }));
        }
        let loaded = load_component(engine, &self.runtime, LinkKind::Runtime).await?;
        components.push(RwLock::new(Arc::new(loaded)));
        settings.push(Arc::new(LinkSettings {
            role: Role::Runtime,
            limits,
            policy: Arc::new(Policy::unrestricted()),
        }));
        Ok(ComponentRuntime {
            engine: engine.clone(),
            components: components.into(),
            settings: settings.into(),
            cluster,
            events: Arc::new(TracingSink),
            counters: Arc::default(),
            told_builtin_logic: Arc::new(AtomicBool::new(false)),
        })
    }
}
