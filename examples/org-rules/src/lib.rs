//! An organisation-rules guest for krt: a Kubernetes runtime component that
//! refuses plans breaking the organisation's rules ([`rules`]) with an
//! `illegal-manifest` status listing every violation, and hands every other
//! call to krt's standard logic (the `guest` library, linked without its own
//! component glue).
//!
//! Build it with `cargo build -p org-rules --target wasm32-wasip2 --release`
//! and run it with `krt --component target/wasm32-wasip2/release/org_rules.wasm`,
//! or swap it into a running `ComponentRuntime` with `reload`.

pub mod rules;

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code, reason = "wit-bindgen's generated import and export glue")]
mod component;
