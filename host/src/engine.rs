//! The wasmtime engine (one per process) and component loading: compile once
//! (with wasmtime's on-disk cache), link once, instantiate per call through
//! `InstancePre`.

use crate::bindings::KubernetesRuntimePre;
use crate::error::Error;
use crate::state::{HostState, Limits};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Cache, CacheConfig, Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig,
};

/// How often the engine's epoch advances; CPU deadlines are counted in these ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The guest component built by this workspace, embedded in the binary.
pub const DEFAULT_COMPONENT: &[u8] = include_bytes!(env!("KRT_GUEST_WASM"));

/// Where a component comes from.
#[derive(Debug, Clone)]
pub enum ComponentSource {
    /// krt's own guest, embedded at build time.
    Default,
    /// A component file on disk.
    File(PathBuf),
    /// Component bytes in memory.
    Bytes(Arc<[u8]>),
}

/// Engine settings.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Per-instance limits (memory, time, host calls).
    pub limits: Limits,
    /// Most instances alive at once (sizes the pooling allocator).
    pub max_instances: u32,
    /// Directory of the compiled-component cache; `None` disables it.
    pub cache_dir: Option<PathBuf>,
}

impl Default for EngineOptions {
    /// Default limits, 32 concurrent instances, cache in `$XDG_CACHE_HOME/krt`
    /// (or `~/.cache/krt`).
    fn default() -> Self {
        EngineOptions {
            limits: Limits::default(),
            max_instances: 32,
            cache_dir: default_cache_dir(),
        }
    }
}

fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|base| base.join("krt").join("wasmtime"))
}

/// Builds the process's engine: epoch interruption with a ticker thread, the
/// pooling allocator sized to `max_instances`, no component-model concurrency
/// (the WIT has no async functions), and the on-disk compile cache.
///
/// # Errors
/// Fails when wasmtime rejects the configuration or the cache directory.
pub fn build_engine(options: &EngineOptions) -> Result<Engine, Error> {
    let mut cfg = Config::new();
    cfg.epoch_interruption(true);
    cfg.concurrency_support(false);
    let memory = options.limits.memory_bytes as u64;
    cfg.memory_reservation(memory);
    cfg.memory_guard_size(64 << 20);
    cfg.memory_reservation_for_growth(0);
    cfg.max_wasm_stack(1 << 20);
    let mut pool = PoolingAllocationConfig::default();
    let n = options.max_instances;
    pool.total_component_instances(n)
        .total_memories(n * 2)
        .total_tables(n * 4)
        .total_stacks(n)
        .total_core_instances(n * 8)
        .max_memory_size(options.limits.memory_bytes);
    cfg.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    if let Some(dir) = &options.cache_dir {
        let mut cache = CacheConfig::new();
        cache.with_directory(dir);
        cfg.cache(Some(Cache::new(cache).map_err(Error::engine)?));
    }
    let engine = Engine::new(&cfg).map_err(Error::engine)?;
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("krt-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map_err(|e| Error::Engine(e.to_string()))?;
    Ok(engine)
}

/// Compiles `source` (off the async executor) and links it against krt's
/// imports. A component whose imports krt does not provide, or whose exports
/// do not match the `kubernetes-runtime` world, is refused here.
///
/// # Errors
/// Unreadable file, invalid component, or a world mismatch (the message names the import or export).
pub async fn load_component(
    engine: &Engine,
    source: &ComponentSource,
) -> Result<KubernetesRuntimePre<HostState>, Error> {
    let bytes: Arc<[u8]> = match source {
        ComponentSource::Default => Arc::from(DEFAULT_COMPONENT),
        ComponentSource::Bytes(b) => b.clone(),
        ComponentSource::File(path) => Arc::from(std::fs::read(path).map_err(|e| {
            Error::Component(format!(
                "failed to read component '{}': {e}",
                path.display()
            ))
        })?),
    };
    let name = match source {
        ComponentSource::File(path) => path.display().to_string(),
        _ => "the built-in guest".to_string(),
    };
    let compile_engine = engine.clone();
    let component = tokio::task::spawn_blocking(move || Component::new(&compile_engine, &bytes))
        .await
        .map_err(|e| Error::Component(format!("compiling {name} panicked: {e}")))?
        .map_err(|e| Error::Component(format!("{name} is not a valid component: {e:#}")))?;
    let mut linker = Linker::new(engine);
    crate::imports::add_to_linker(&mut linker).map_err(Error::engine)?;
    let pre = linker.instantiate_pre(&component).map_err(|e| {
        Error::Component(format!(
            "{name} does not fit krt's `kusion:runtime/kubernetes-runtime` world: {e:#}"
        ))
    })?;
    KubernetesRuntimePre::new(pre).map_err(|e| {
        Error::Component(format!(
            "{name} does not export `kusion:runtime/runtime@0.1.0` as krt expects: {e:#}"
        ))
    })
}
