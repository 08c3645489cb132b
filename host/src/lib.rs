//! krt's sandbox: runs Kubernetes runtime components (the `kusion:runtime`
//! WIT world) in wasmtime and gives them cluster access through kube-rs.
//!
//! - [`ComponentRuntime`]: krt-stack's [`Runtime`](krt_stack::Runtime) backed by a
//!   component, one fresh and limited instance per call ([`Limits`]), every
//!   cluster call checked against a capability [`Policy`], hot reload; or by a
//!   chain of [`Middleware`] in front of it ([`ChainBuilder`]), each link with
//!   its own instance, limits and policy;
//! - [`NativeRuntime`]: the same guest logic linked natively, for comparison
//!   and trusted use;
//! - [`KubeCluster`] and [`connect`]: one shared kube-rs client, chosen like
//!   kubectl chooses its cluster, or the embedded krt-sim (feature `sim`);
//! - [`KubernetesBackend`]: a stack's state in a Secret.
//!
//! It is not a Kubernetes client library: the apply, merge and health logic
//! lives in the guest, and the stack engine in krt-stack.

mod bindings;
mod cluster;
mod compile_cache;
mod connect;
mod convert;
mod engine;
mod error;
mod imports;
mod link;
mod native;
pub mod oci;
pub mod policy;
mod runtime;
mod secret_state;
mod state;
mod wit;

pub use cluster::{DEFAULT_MAX_IN_FLIGHT, Impersonation, KubeCluster, LimitStats};
pub use compile_cache::CacheError;
pub use connect::{ClusterChoice, ConnectOptions, Connected, connect};
pub use engine::{ComponentSource, DEFAULT_COMPONENT, EngineOptions, Precompiled, SharedEngine};
pub use error::{BoxError, Error};
pub use krt_guest::model;
/// The contract this crate's runtimes implement, and where their events go.
pub use krt_stack::{Event, EventSink, Runtime};
pub use link::Limits;
pub use native::NativeRuntime;
pub use policy::Policy;
pub use runtime::{ChainBuilder, ComponentRuntime, Middleware, RuntimeStats};
pub use secret_state::KubernetesBackend;
pub use wit::WIT_VERSION;
