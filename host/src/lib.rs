//! krt's host: runs Kubernetes runtime components (the `kusion:runtime` WIT
//! world) in a wasmtime sandbox and gives them cluster access through kube-rs.
//!
//! It is a library first — [`Runtime`] / [`ComponentRuntime`] for hosts that
//! embed it — plus the `krt` CLI. It is not a Kubernetes client library: the
//! apply/merge/health logic lives in the guest.

mod bindings;
pub mod cli;
mod cluster;
mod connect;
mod convert;
mod engine;
mod error;
mod events;
mod imports;
pub mod manifest;
mod native;
pub mod policy;
mod runtime;
pub mod stack;
mod state;
pub mod state_store;

pub use cluster::KubeCluster;
pub use connect::{ClusterChoice, ConnectOptions, Connected, connect};
pub use engine::{
    ComponentSource, DEFAULT_COMPONENT, EngineOptions, WIT_VERSION, build_engine,
    build_engine_and_cache,
};
pub use error::Error;
pub use events::{EventSink, TracingSink};
pub use guest::model;
pub use native::NativeRuntime;
pub use policy::{Policy, PolicyArgs};
pub use runtime::{ComponentRuntime, Runtime, RuntimeStats};
pub use state::Limits;
