//! The component chains Stacks run through, compiled once per distinct chain
//! on one shared wasmtime engine and kept while in use (the most recently
//! used [`CACHED_CHAINS`]). Each Stack gets a clone bound to its own policy.

use crate::sources::Chain;
use krt_host::{
    ComponentRuntime, ComponentSource, EngineOptions, Error, KubeCluster, Limits, Middleware,
    Policy, SharedEngine,
};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// How many distinct chains stay compiled.
pub const CACHED_CHAINS: usize = 32;

/// Compiled chains by digest.
pub struct Runtimes {
    engine: SharedEngine,
    limits: Limits,
    cache: Mutex<VecDeque<(String, ComponentRuntime)>>,
}

impl Runtimes {
    /// An engine built with `options` (its pool shared by every chain), and
    /// no chain compiled yet.
    ///
    /// # Errors
    /// wasmtime rejects the engine configuration or its cache directory.
    pub fn new(options: &EngineOptions) -> Result<Self, Error> {
        Ok(Runtimes {
            engine: SharedEngine::new(options)?,
            limits: options.limits.clone(),
            cache: Mutex::new(VecDeque::new()),
        })
    }

    /// The runtime of `chain` under `policy` (its middleware get no cluster
    /// access) reaching `cluster`, compiling the chain unless it is cached.
    ///
    /// # Errors
    /// A component that does not load: invalid, refused imports, a world or
    /// version mismatch, a middleware given as the runtime or the reverse.
    pub async fn get(
        &self,
        chain: &Chain,
        policy: Policy,
        cluster: &Arc<KubeCluster>,
    ) -> Result<ComponentRuntime, Error> {
        let digest = chain.digest();
        if let Some(found) = self.cached(&digest) {
            return Ok(found.with_policy(policy).with_cluster(cluster.clone()));
        }
        let mut builder = ComponentRuntime::builder(chain.runtime_source());
        for m in &chain.middleware {
            builder = builder.middleware(Middleware {
                limits: self.limits.clone(),
                ..Middleware::new(m.name.clone(), ComponentSource::Bytes(m.bytes.clone()))
            });
        }
        let runtime = builder
            .build_with_engine(&self.engine, cluster.clone(), self.limits.clone())
            .await?;
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.push_front((digest, runtime.clone()));
        cache.truncate(CACHED_CHAINS);
        Ok(runtime.with_policy(policy))
    }

    /// The cached runtime of `digest`, moved to the front.
    fn cached(&self, digest: &str) -> Option<ComponentRuntime> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let at = cache.iter().position(|(d, _)| d == digest)?;
        let entry = cache.remove(at)?;
        let runtime = entry.1.clone();
        cache.push_front(entry);
        Some(runtime)
    }
}
