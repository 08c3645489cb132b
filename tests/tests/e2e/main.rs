//! End-to-end tests of krt across the wasm boundary, against `krt-sim`:
//! the `krt` binary (`cli`), the Rust `Runtime` API (`runtime_api`),
//! middleware chains in front of the runtime (`middleware`), and the requests
//! krt needs, counted at the simulator (`requests`).

mod apply_semantics;
mod auth;
mod bad_input;
mod cli;
mod cli_policy;
mod cli_pty;
mod cli_stack;
mod conformance;
mod deletion;
mod faults;
mod idempotence;
mod impersonation;
mod kubeconfig;
mod logic;
mod middleware;
mod observed;
mod ownership;
mod registry;
mod requests;
mod retries;
mod runtime_api;
mod sandbox;
mod support;
mod wasmtime_cli;
mod watch_health;
