//! Hostile and broken guest components for krt's sandbox tests. The
//! components are the examples (`examples/*.rs`, one component each, built for
//! `wasm32-wasip2` by `tests/build.rs`); this library is empty.
