//! Host implementations of the WIT imports of `kusion:runtime`:
//!
//! - `kusion:runtime/kubernetes` ([`kubernetes`]): cluster access through kube-rs;
//! - `kusion:runtime/host` ([`host_services`]): logs, progress and a bounded sleep;
//! - `kusion:runtime/types`: types only, nothing to implement.
//!
//! WASI p2 is linked with nothing granted (see `state.rs`).

mod host_services;
pub(crate) mod kubernetes;

use crate::bindings::{KubernetesRuntime, types};
use crate::state::{HostState, Krt, KrtView};
use wasmtime::component::Linker;

impl types::Host for KrtView<'_> {}

/// Adds WASI and every krt import to `linker`.
pub fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    KubernetesRuntime::add_to_linker::<HostState, Krt>(linker, HostState::krt_view)
}
