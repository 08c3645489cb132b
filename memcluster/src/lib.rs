//! The in-memory cluster component: krt-sim's in-process cluster behind the
//! `kusion:runtime/kubernetes` interface (through [`krt_sim::GuestCluster`], which maps each
//! call to the simulator's REST request as krt-host's kube-rs client does against a real API
//! server), plus trivial `kusion:runtime/host` services (logs to stderr, progress dropped,
//! sleep on the WASI clock).
//!
//! Composed with a guest by `wac compose` (see `tests/compose.sh`), it lets the plain `wasmtime`
//! CLI run the whole runtime: every `wasmtime run --invoke` instantiates the composition afresh,
//! so each invocation starts from a new cluster holding only the four default namespaces.
//!
//! Compiled for `wasm32`, `component.rs` converts the WIT values and calls the adapter; natively
//! this crate is empty (the adapter is tested in krt-sim).

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code, reason = "wit-bindgen's generated export glue")]
mod component;
