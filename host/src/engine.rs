//! The wasmtime engine (one per process) and component loading: compile once
//! (with krt's on-disk cache, keyed by the component's bytes and the engine's
//! settings), check the component's imports and exports against what krt
//! offers, link once, instantiate per call through `InstancePre`.

use crate::bindings::{logic as l, observed as o, runtime as rt};
use crate::compile_cache::CompileCache;
use crate::error::Error;
use crate::link::Limits;
use crate::oci::{OciReference, OciStore};
use crate::state::HostState;
use crate::wit::WIT_VERSION;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig,
    ProfilingStrategy,
};

/// The `kusion:runtime` interfaces a runtime component may import.
const RUNTIME_IMPORTS: &[&str] = &["kubernetes", "host", "types"];

/// The interface a middleware imports to call the next link; a runtime must not.
const NEXT_LINK: &str = "runtime";

/// Which part of a chain a component is loaded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// The runtime at the end of the chain (world `kubernetes-runtime`).
    Runtime,
    /// A middleware in front of it (world `middleware` or `cluster-middleware`).
    Middleware,
}

impl LinkKind {
    /// What `component` is by its imports: a middleware imports the next link.
    fn of(engine: &Engine, component: &Component) -> LinkKind {
        let imports_next = component
            .component_type()
            .imports(engine)
            .any(|(import, _)| is_next_link(import));
        match imports_next {
            true => LinkKind::Middleware,
            false => LinkKind::Runtime,
        }
    }
}

/// Whether `import` (`ns:pkg/iface@version`) is the next link a middleware calls.
pub(crate) fn is_next_link(import: &str) -> bool {
    split_version(import).0.strip_prefix("kusion:runtime/") == Some(NEXT_LINK)
}

/// How often the engine's epoch advances; CPU deadlines are counted in these ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// krt's own runtime component, embedded in the binary: the prebuilt
/// `krt-guest` of [`krt_guest_component`].
pub const DEFAULT_COMPONENT: &[u8] = krt_guest_component::COMPONENT;

/// Where a component comes from.
#[derive(Debug, Clone)]
pub enum ComponentSource {
    /// krt's own guest, embedded at build time.
    Default,
    /// A component file on disk.
    File(PathBuf),
    /// Component bytes in memory.
    Bytes(Arc<[u8]>),
    /// A component in an OCI registry, fetched through `store` (its cache
    /// first for a digest reference).
    Oci {
        /// The reference: a tag is resolved on every load.
        reference: OciReference,
        /// The registries' settings and the cache.
        store: OciStore,
    },
}

/// Engine settings.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Per-instance limits (memory, time, host calls).
    pub limits: Limits,
    /// Most instances alive at once (sizes the pooling allocator).
    pub max_instances: u32,
    /// Directory of the compiled-component cache; `None` disables it. krt
    /// maps the machine code it finds there into the process, so it must be
    /// private to the user (owned by them, writable by nobody else).
    pub cache_dir: Option<PathBuf>,
    /// Most bytes the compiled-component cache keeps; the least recently used
    /// components go first when it grows past this.
    pub cache_max_bytes: u64,
    /// Bytes of each pooled instance's linear memory kept mapped and reset
    /// with `memset` (only the pages touched, where the kernel can tell) when
    /// the instance ends, instead of being handed back to the kernel and
    /// faulted in again by the next instance; 0 hands everything back.
    pub keep_resident_bytes: usize,
    /// Address space reserved for each instance's linear memory (at least the
    /// memory limit). At 4 GiB, the default, compiled code checks no bounds: a
    /// 32-bit address cannot reach past the reservation and its guard pages,
    /// where an access traps. Less saves address space (for a process under
    /// `ulimit -v`) at the cost of a bounds check on every memory access: larger
    /// code, a slower compile and slower calls (the bench's boundary levers
    /// measure it).
    pub memory_reservation: u64,
    /// Cranelift optimizes the code it compiles (its `opt_level` `speed`, the
    /// default); `false` compiles with `none`: a faster first compile, slower
    /// calls (the bench's components section measures both on the JavaScript
    /// middleware).
    pub optimize_code: bool,
    /// Writes `/tmp/perf-<pid>.map`, naming the machine code compiled from
    /// each guest function, for `perf` and for the bench's instruction counts
    /// (callgrind sees that code as bare addresses otherwise).
    pub perf_map: bool,
}

impl Default for EngineOptions {
    /// Default limits, 32 concurrent instances, a cache of up to 1 GiB in
    /// `$XDG_CACHE_HOME/krt/components` (or `~/.cache/krt/components`), 4 MiB
    /// of memory kept resident per instance slot (the built-in guest uses
    /// about 1.2 MiB for ordinary objects), 4 GiB of address space per linear
    /// memory, optimized code, and a perf map when the environment sets
    /// `KRT_PERF_MAP`.
    fn default() -> Self {
        EngineOptions {
            limits: Limits::default(),
            max_instances: 32,
            cache_dir: cache_home().map(|krt| krt.join("components")),
            cache_max_bytes: 1 << 30,
            keep_resident_bytes: 4 << 20,
            memory_reservation: 4 << 30,
            optimize_code: true,
            perf_map: std::env::var_os("KRT_PERF_MAP").is_some(),
        }
    }
}

/// krt's directory in the user's cache: `$XDG_CACHE_HOME/krt`, else
/// `~/.cache/krt`; the compile cache and the registry cache live under it.
pub(crate) fn cache_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|base| base.join("krt"))
}

/// The engine several runtimes share: compiled code, the on-disk compile
/// cache, the instance pool and the epoch ticker. Build it once with
/// [`SharedEngine::new`] and load components on it with
/// [`ComponentRuntime::with_engine`](crate::ComponentRuntime::with_engine) or
/// [`ChainBuilder::build_with_engine`](crate::ChainBuilder::build_with_engine).
/// Cloning it is cheap and shares it.
#[derive(Clone)]
pub struct SharedEngine {
    engine: Engine,
    cache: Option<Arc<CompileCache>>,
}

impl SharedEngine {
    /// Builds the engine: epoch interruption with a ticker thread, the
    /// pooling allocator sized to `max_instances`, no component-model
    /// concurrency (the WIT has no async functions), and the on-disk compile
    /// cache when `cache_dir` names one. When the process cannot reserve
    /// [`EngineOptions::memory_reservation`] for every memory of the pool (its
    /// address space is limited, as under `ulimit -v` or valgrind), each
    /// memory reserves only its limit, bounds-checked, and a warning says so.
    ///
    /// # Errors
    /// Fails when wasmtime rejects the configuration, or the cache directory
    /// cannot be created or is not private to this user.
    pub fn new(options: &EngineOptions) -> Result<Self, Error> {
        let limit = options.limits.memory_bytes as u64;
        let engine = match build_engine(options) {
            Err(error) if options.memory_reservation > limit => {
                let cause = std::error::Error::source(&error).map(ToString::to_string);
                tracing::warn!(
                    error = cause.as_deref().unwrap_or("unknown"),
                    "cannot reserve {} MiB of address space for each of {} instance memories; \
                     reserving their limit instead, with a bounds check on every memory access",
                    options.memory_reservation >> 20,
                    pool_memories(options),
                );
                build_engine(&EngineOptions {
                    memory_reservation: limit,
                    ..options.clone()
                })?
            }
            built => built?,
        };
        let cache = match &options.cache_dir {
            Some(dir) => Some(Arc::new(CompileCache::open(
                dir,
                &engine,
                options.cache_max_bytes,
            )?)),
            None => None,
        };
        Ok(SharedEngine { engine, cache })
    }

    /// How many compiled components the on-disk cache had (hits) and did not
    /// have (misses, then compiled and added), when the cache is enabled.
    pub fn compile_cache_counts(&self) -> Option<(usize, usize)> {
        self.cache.as_ref().map(|c| c.counts())
    }

    /// Compiles `source` into the on-disk cache and checks it as
    /// [`ComponentRuntime`](crate::ComponentRuntime) would load it (as a
    /// middleware when it imports the next link, else as a runtime), so that
    /// its first use is a cached start: for example when a component is
    /// installed, or while an image is built.
    ///
    /// # Errors
    /// [`Error::NoCompileCache`] without a cache; otherwise what loading the
    /// component would report (unreadable, invalid, a refused import, a
    /// version or world mismatch).
    pub async fn precompile(&self, source: &ComponentSource) -> Result<Precompiled, Error> {
        if self.cache.is_none() {
            return Err(Error::NoCompileCache);
        }
        let (component, name, cached) = compile(self, source).await?;
        let kind = LinkKind::of(&self.engine, &component);
        check_world(&self.engine, &component, &name, kind)?;
        Ok(Precompiled {
            middleware: kind == LinkKind::Middleware,
            compiled: !cached,
        })
    }
}

/// What [`SharedEngine::precompile`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Precompiled {
    /// The component is a middleware (it imports the next link), not a runtime.
    pub middleware: bool,
    /// It was compiled now; `false` when the cache already had it.
    pub compiled: bool,
}

/// How many linear memories the pool holds: two per instance.
fn pool_memories(options: &EngineOptions) -> u32 {
    options.max_instances * 2
}

/// The engine of [`SharedEngine::new`].
fn build_engine(options: &EngineOptions) -> Result<Engine, Error> {
    let mut cfg = Config::new();
    cfg.epoch_interruption(true);
    cfg.concurrency_support(false);
    let memory = options.limits.memory_bytes as u64;
    cfg.memory_reservation(options.memory_reservation.max(memory));
    cfg.memory_guard_size(64 << 20);
    cfg.memory_reservation_for_growth(0);
    cfg.max_wasm_stack(1 << 20);
    cfg.cranelift_opt_level(match options.optimize_code {
        true => OptLevel::Speed,
        false => OptLevel::None,
    });
    let mut pool = PoolingAllocationConfig::default();
    let n = options.max_instances;
    pool.total_component_instances(n)
        .total_memories(pool_memories(options))
        .total_tables(n * 4)
        .total_stacks(n)
        .total_core_instances(n * 8)
        .table_elements(options.limits.table_elements)
        .max_memory_size(options.limits.memory_bytes)
        .linear_memory_keep_resident(options.keep_resident_bytes)
        .table_keep_resident(options.keep_resident_bytes.min(64 << 10))
        .pagemap_scan(wasmtime::Enabled::Auto);
    cfg.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    if options.perf_map {
        cfg.profiler(ProfilingStrategy::PerfMap);
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
        .map_err(|e| Error::Engine(e.into()))?;
    Ok(engine)
}

/// Compiles `source` (off the async executor), checks its imports and
/// exports for its place in a chain (`kind`), and links it against krt's
/// imports. A component that imports
/// anything krt does not provide (sockets, filesystem, HTTP, an unknown
/// interface) or was built against an incompatible `kusion:runtime` version is
/// refused before linking, with a message naming the import or both versions;
/// so is a middleware given as the runtime and a runtime given as a middleware.
///
/// # Errors
/// Unreadable file, invalid component, a refused import, a version mismatch,
/// the wrong kind of component, or a world mismatch (the message names the
/// import or export).
pub(crate) async fn load_component(
    shared: &SharedEngine,
    source: &ComponentSource,
    kind: LinkKind,
) -> Result<Loaded, Error> {
    let (component, name, _) = compile(shared, source).await?;
    let engine = &shared.engine;
    check_world(engine, &component, &name, kind)?;
    let mut linker = Linker::new(engine);
    crate::imports::add_to_linker(&mut linker).map_err(Error::engine)?;
    let mismatch = |source: wasmtime::Error| Error::WorldMismatch {
        name: name.clone(),
        world: match kind {
            LinkKind::Runtime => "kubernetes-runtime",
            LinkKind::Middleware => "cluster-middleware",
        },
        source: source.into(),
    };
    let pre = linker.instantiate_pre(&component).map_err(mismatch)?;
    let runtime = rt::GuestIndices::new(&pre).map_err(mismatch)?;
    let logic = l::GuestIndices::new(&pre).ok();
    let observed = o::GuestIndices::new(&pre).ok();
    Ok(Loaded {
        pre,
        runtime,
        logic,
        observed,
        name,
        builtin: matches!(source, ComponentSource::Default),
    })
}

/// A component compiled, checked and linked: instantiate it from `pre`, then
/// find its exports with `runtime`, `logic` and `observed`.
pub(crate) struct Loaded {
    /// The linked component.
    pub(crate) pre: InstancePre<HostState>,
    /// Where its `runtime` export is.
    pub(crate) runtime: rt::GuestIndices,
    /// Where its `logic` export is; `None` when it has none.
    pub(crate) logic: Option<l::GuestIndices>,
    /// Where its `observed-apply` export is; `None` when it has none.
    pub(crate) observed: Option<o::GuestIndices>,
    /// How messages name it, for example `component 'x.wasm'`.
    pub(crate) name: String,
    /// It is krt's built-in guest: its `logic` is the host's own `krt_guest`,
    /// built from the same source.
    pub(crate) builtin: bool,
}

/// Reads and compiles `source` off the async executor, through the cache when
/// there is one; the component's name for messages, and whether the cache had
/// it, come with it.
async fn compile(
    shared: &SharedEngine,
    source: &ComponentSource,
) -> Result<(Component, String, bool), Error> {
    let bytes: Arc<[u8]> = match source {
        ComponentSource::Default => Arc::from(DEFAULT_COMPONENT),
        ComponentSource::Bytes(b) => b.clone(),
        ComponentSource::File(path) => {
            Arc::from(std::fs::read(path).map_err(|source| Error::ReadComponent {
                path: path.clone(),
                source,
            })?)
        }
        ComponentSource::Oci { reference, store } => store.fetch(reference).await?.component,
    };
    let name = match source {
        ComponentSource::File(path) => format!("component '{}'", path.display()),
        ComponentSource::Default => "the built-in guest".to_string(),
        ComponentSource::Bytes(_) => "the component".to_string(),
        ComponentSource::Oci { reference, .. } => format!("component '{reference}'"),
    };
    // The built-in guest's digest was computed when krt-guest-component built.
    let sha256 = matches!(source, ComponentSource::Default).then_some(krt_guest_component::SHA256);
    let shared = shared.clone();
    let (compiled, cached) = tokio::task::spawn_blocking(move || match &shared.cache {
        Some(cache) => cache.component(&shared.engine, &bytes, sha256),
        None => Component::new(&shared.engine, &bytes).map(|c| (c, false)),
    })
    .await
    .map_err(|e| Error::InvalidComponent {
        name: name.clone(),
        source: e.into(),
    })?
    .map_err(|e| Error::InvalidComponent {
        name: name.clone(),
        source: e.into(),
    })?;
    Ok((compiled, name, cached))
}

/// Checks a component's imports against the allow-list for `kind`, its
/// `kusion:runtime` version against [`WIT_VERSION`], and that it exports
/// `runtime` (and, as a middleware, imports it).
fn check_world(
    engine: &Engine,
    component: &Component,
    name: &str,
    kind: LinkKind,
) -> Result<(), Error> {
    let ty = component.component_type();
    let mut refused = Vec::new();
    for (import, _) in ty.imports(engine) {
        let (path, version) = split_version(import);
        if let Some(iface) = path.strip_prefix("kusion:runtime/") {
            check_version(name, version)?;
            if iface != NEXT_LINK && !RUNTIME_IMPORTS.contains(&iface) {
                refused.push(import.to_owned());
            }
        } else if !(crate::imports::ALLOWED_WASI.contains(&path)
            && version.is_none_or(|v| compatible(v, "0.2.0")))
        {
            refused.push(import.to_owned());
        }
    }
    if !refused.is_empty() {
        return Err(Error::RefusedImports {
            name: name.to_owned(),
            imports: refused,
        });
    }
    let mut exports_runtime = false;
    for (export, _) in ty.exports(engine) {
        let (path, version) = split_version(export);
        if path == "kusion:runtime/runtime" {
            check_version(name, version)?;
            exports_runtime = true;
        }
    }
    if !exports_runtime {
        return Err(Error::NotARuntime {
            name: name.to_owned(),
        });
    }
    match (kind, LinkKind::of(engine, component)) {
        (LinkKind::Runtime, LinkKind::Middleware) => Err(Error::MiddlewareAsRuntime {
            name: name.to_owned(),
        }),
        (LinkKind::Middleware, LinkKind::Runtime) => Err(Error::NotAMiddleware {
            name: name.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// `ns:pkg/iface@1.2.3` as (`ns:pkg/iface`, `Some("1.2.3")`).
pub(crate) fn split_version(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((path, version)) => (path, Some(version)),
        None => (name, None),
    }
}

fn check_version(name: &str, version: Option<&str>) -> Result<(), Error> {
    let version = version.unwrap_or("(unversioned)");
    if compatible(version, WIT_VERSION) {
        return Ok(());
    }
    Err(Error::WitVersion {
        name: name.to_owned(),
        found: version.to_owned(),
    })
}

/// Semver compatibility as wasmtime's linker sees it: same major version, and
/// for `0.x` the same minor version.
fn compatible(version: &str, ours: &str) -> bool {
    let parts = |v: &str| -> Option<(u64, u64)> {
        let mut it = v.split(['.', '-', '+']);
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    match (parts(version), parts(ours)) {
        (Some((0, a)), Some((0, b))) => a == b,
        (Some((a, _)), Some((b, _))) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_compatibility() {
        assert!(compatible("0.1.0", "0.1.0"));
        assert!(compatible("0.1.0", WIT_VERSION), "0.1.0 components load");
        assert!(compatible("0.1.7", "0.1.0"));
        assert!(!compatible("0.2.0", "0.1.0"));
        assert!(compatible("0.2.6", "0.2.0"));
        assert!(!compatible("1.0.0", "0.1.0"));
        assert!(compatible("1.4.0", "1.0.0"));
        assert!(!compatible("(unversioned)", "0.1.0"));
        let err = check_version("component 'v2.wasm'", Some("0.2.0")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("kusion:runtime@0.2.0")
                && text.contains(&format!("kusion:runtime@{WIT_VERSION}"))
                && text.contains("any `0.1.x`"),
            "{text}"
        );
    }
}
