//! Host implementations of the WIT imports a guest may use:
//!
//! - `kusion:runtime/kubernetes` ([`kubernetes`]): cluster access through
//!   kube-rs, every call checked against the capability policy;
//! - `kusion:runtime/host` ([`host_services`]): logs, progress and a bounded sleep;
//! - `kusion:runtime/runtime`, imported by a middleware ([`runtime`]): the
//!   next link of the chain;
//! - `kusion:runtime/types`: types only, nothing to implement;
//! - a subset of WASI p2 ([`wasi`]): clocks, randomness, stdio with nothing granted.
//!
//! Nothing else is linked, and loading refuses a component that imports
//! anything else before linking it, naming the import (`engine.rs`).

mod host_services;
pub(crate) mod kubernetes;
mod runtime;
#[cfg(test)]
mod tests;
mod wasi;

use crate::bindings::{ClusterMiddleware, types};
use crate::state::{HostState, Krt, KrtView};
use wasmtime::component::Linker;

pub(crate) use wasi::ALLOWED as ALLOWED_WASI;

impl types::Host for KrtView<'_> {}

/// Adds the allowed WASI interfaces and every krt import to `linker`.
pub fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    wasi::add_to_linker(linker)?;
    ClusterMiddleware::add_to_linker::<HostState, Krt>(linker, HostState::krt_view)
}
