//! Middleware components for krt's chain tests and benchmark. The components
//! are the examples (`examples/*.rs`, one component each, built for
//! `wasm32-wasip2` by `tests/build.rs`); this library is empty.
