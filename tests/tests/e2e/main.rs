//! End-to-end tests of krt across the wasm boundary, against `krt-sim`:
//! the `krt` binary (`cli`) and the Rust `Runtime` API (`runtime_api`).

mod cli;
mod cli_pty;
mod cli_stack;
mod runtime_api;
mod support;
