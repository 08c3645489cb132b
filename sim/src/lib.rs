//! krt-sim: a Kubernetes API server simulator, the embedded default cluster of `krt` and the
//! cluster every test runs against; real `kubectl` works with it.
//!
//! Its layers share one implementation of the API semantics:
//!
//! - [`api`]: the in-memory cluster callable in-process — create/get/list/update/patch (JSON
//!   merge, strategic merge, JSON patch, server-side apply) and delete of every served kind,
//!   defaulting, validation, generation, discovery, OpenAPI, tables, and watches that replay the
//!   stored events. It needs no HTTP stack and builds for `wasm32-wasip2` with
//!   `cargo build -p krt-sim --no-default-features --target wasm32-wasip2`.
//! - [`GuestCluster`]: that cluster behind krt's `krt_guest::cluster::Cluster` trait, each call
//!   mapped to the REST request krt-host sends a real API server (memcluster's component and
//!   krt-guest's tests use it).
//! - with the default `server` feature, [`Sim`]: that cluster served over HTTP or HTTPS on
//!   127.0.0.1, with simulated controllers on a timer and fault injection.
//!
//! It is not a real API server: no admission webhooks, no etcd, and controllers that only simulate the state machines of the built-in
//! workloads.
//!
//! ```no_run
//! # async fn demo() -> Result<(), krt_sim::SimError> {
//! let sim = krt_sim::Sim::start().await?;
//! println!("{}", sim.url());
//! sim.shutdown().await;
//! # Ok(()) }
//! ```

pub mod api;
pub mod auth;
mod canonical;
mod cluster;
mod controllers;
mod crd;
mod decode;
mod defaults;
mod deprecation;
mod discovery;
mod events;
mod guest_cluster;
mod kinds;
mod lifecycle;
mod meta;
pub mod node;
mod openapi;
#[cfg(feature = "protobuf")]
mod protobuf;
mod quantity;
mod rbac;
mod registry;
mod request;
mod routes;
mod selectors;
#[cfg(feature = "server")]
mod server;
mod ssa;
mod status;
mod store;
mod table;
mod validation;
mod watch;

pub use guest_cluster::{GuestCluster, GuestWatch};
#[cfg(feature = "protobuf")]
pub use protobuf::{decode_object as decode_protobuf, encode as encode_protobuf};
#[cfg(feature = "server")]
pub use server::{
    ADMIN, ClientCertificate, Credential, Fault, FaultAction, RequestCounter, RequestCounts, Sim,
    SimConfig, SimError, StaticToken,
};
