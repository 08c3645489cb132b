//! The host library's typed error: what can go wrong while setting up krt.
//! (Running an operation never fails this way: its failures are
//! [`Status`](krt_guest::model::Status) values.) Every variant keeps its cause.

use crate::wit::WIT_VERSION;
use std::path::PathBuf;

/// A cause from a library whose errors are `anyhow`-style (wasmtime).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What can go wrong while building an engine, loading a component or
/// connecting to a cluster.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// wasmtime rejected the engine configuration.
    #[error("wasmtime engine setup failed")]
    Engine(#[source] BoxError),
    /// The compiled-component cache cannot be used.
    #[error(transparent)]
    CompileCache(#[from] crate::compile_cache::CacheError),
    /// [`SharedEngine::precompile`](crate::SharedEngine::precompile) on an
    /// engine without a compile cache.
    #[error("no compile cache to compile into: the engine was built with `cache_dir: None`")]
    NoCompileCache,
    /// The cluster's identity (its `kube-system` Namespace) could not be read.
    #[error("cannot read the identity of the cluster at {server} (its kube-system Namespace)")]
    Identity {
        /// The API server.
        server: String,
        /// The cluster call's failure.
        #[source]
        source: krt_guest::model::ApiError,
    },
    /// A component could not be fetched from its registry.
    #[error(transparent)]
    Oci(#[from] crate::oci::OciError),
    /// The component file could not be read.
    #[error("failed to read component '{}'", path.display())]
    ReadComponent {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not a WebAssembly component wasmtime can compile.
    #[error("{name} is not a valid component")]
    InvalidComponent {
        /// The component, for example `component 'x.wasm'`.
        name: String,
        /// wasmtime's complaint.
        #[source]
        source: BoxError,
    },
    /// The component imports what krt does not provide.
    #[error(
        "{name} imports {}, which krt does not provide: a component may import only \
         `kusion:runtime/{{kubernetes,host,types}}@0.1.x` (a middleware also \
         `kusion:runtime/runtime`, the next link), WASI 0.2 clocks and random, and the \
         `wasi:cli` stdio and `wasi:io` interfaces a std Rust guest needs (no filesystem, \
         sockets, HTTP, environment or arguments)",
        imports.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
    )]
    RefusedImports {
        /// The component.
        name: String,
        /// The refused imports.
        imports: Vec<String>,
    },
    /// The component was built against an incompatible `kusion:runtime` version.
    #[error(
        "{name} was built against `kusion:runtime@{found}`, but this krt implements \
         `kusion:runtime@{WIT_VERSION}` (components built against any `0.1.x` load); rebuild \
         the component against krt's `wit/` (or run a krt that implements {found})"
    )]
    WitVersion {
        /// The component.
        name: String,
        /// The version it was built against.
        found: String,
    },
    /// The component does not export `kusion:runtime/runtime`.
    #[error(
        "{name} does not export `kusion:runtime/runtime@{WIT_VERSION}`: it is not a Kubernetes runtime component"
    )]
    NotARuntime {
        /// The component.
        name: String,
    },
    /// A middleware (it imports `kusion:runtime/runtime`, the next link) was
    /// given as the runtime at the end of a chain.
    #[error(
        "{name} imports `kusion:runtime/runtime`: it is a middleware, which calls a next link, \
         not a runtime; put it in front of a runtime (`--middleware FILE`)"
    )]
    MiddlewareAsRuntime {
        /// The component.
        name: String,
    },
    /// A component given as a middleware does not import
    /// `kusion:runtime/runtime`, so it cannot call the next link.
    #[error(
        "{name} does not import `kusion:runtime/runtime`, so it cannot call a next link: it is \
         a runtime (`--component FILE`), not a middleware (world `middleware` or \
         `cluster-middleware`)"
    )]
    NotAMiddleware {
        /// The component.
        name: String,
    },
    /// A middleware position that the chain does not have.
    #[error("the chain has no middleware {position} (it has {count})")]
    NoSuchMiddleware {
        /// The position asked for, 1 for the outermost.
        position: usize,
        /// How many middleware the chain has.
        count: usize,
    },
    /// The component's imports or exports do not have the types krt's world gives them.
    #[error("{name} does not fit krt's `kusion:runtime/{world}@{WIT_VERSION}` world")]
    WorldMismatch {
        /// The component.
        name: String,
        /// The world it was checked against.
        world: &'static str,
        /// wasmtime's complaint, naming the import or export.
        #[source]
        source: BoxError,
    },
    /// A kubeconfig could not be read or used.
    #[error("kubeconfig {what}")]
    Kubeconfig {
        /// Which one: `'PATH'`, `'~/.kube/config'`, `of the embedded cluster`.
        what: String,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// No kubeconfig anywhere, and not running in a pod.
    #[error("no kubeconfig found (--kubeconfig, KUBECONFIG, ~/.kube/config) and not in a pod")]
    NoCluster(#[source] kube::config::InClusterError),
    /// A user or group to impersonate cannot be sent in a header.
    #[error("cannot impersonate '{what}': not a valid header value")]
    Impersonation {
        /// The user or group name.
        what: String,
        /// Why.
        #[source]
        source: http::header::InvalidHeaderValue,
    },
    /// A client could not be built from the configuration.
    #[error("cannot build a client for {url}")]
    Client {
        /// The server.
        url: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
    /// The embedded cluster could not start.
    #[cfg(feature = "sim")]
    #[error("cannot start the embedded cluster")]
    Sim(#[source] krt_sim::SimError),
}

impl Error {
    /// Wraps a wasmtime engine error.
    pub(crate) fn engine(err: wasmtime::Error) -> Self {
        Error::Engine(err.into())
    }
}
