//! krt's Kubernetes runtime logic: ID parsing, three-way merge and server-side
//! apply requests, dry-run preview and diff, health and error mapping.
//!
//! This is a plain library with no I/O: it reaches the cluster only through the
//! [`cluster::Cluster`] trait. Compiled for `wasm32` with the `component`
//! feature, the thin glue in `component.rs` binds that trait to the WIT imports
//! and exports the runtime; natively it is tested against krt-sim's in-process
//! cluster and linked by `sim` and `host`. Other components (e.g. `examples/org-rules`) enable only
//! `bindings` and export their own wrapper with `krt_guest::export!`.

pub mod cluster;
pub mod diff;
pub mod errors;
pub mod health;
pub mod id;
pub mod merge;
pub mod model;
pub mod normalize;
pub mod runtime;
pub mod target;

#[cfg(all(target_arch = "wasm32", feature = "bindings"))]
#[allow(unsafe_code, reason = "wit-bindgen's generated import and export glue")]
pub mod component;

#[cfg(all(
    target_arch = "wasm32",
    feature = "component",
    not(target_feature = "atomics")
))]
#[allow(
    unsafe_code,
    reason = "a global allocator's memory source is unsafe to implement"
)]
mod allocator;

/// Lets the generated `export!` macro name this crate as `guest` from inside it too.
#[cfg(all(target_arch = "wasm32", feature = "bindings"))]
extern crate self as krt_guest;
