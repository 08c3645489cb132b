//! An organisation-rules middleware for krt: a component of world
//! `kusion:runtime/middleware` that refuses plans breaking the organisation's
//! rules ([`rules`]) with an `illegal-manifest` status listing every
//! violation, and hands every other call to the next link of the chain (the
//! runtime, or another middleware). It has no cluster access at all (the
//! world has no `kubernetes` import) and links none of krt's logic.
//!
//! Build it with `cargo build -p org-rules --target wasm32-wasip2 --release`
//! and put it in front of krt's runtime with
//! `krt --middleware target/wasm32-wasip2/release/org_rules.wasm apply -f ...`.

pub mod rules;

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code, reason = "wit-bindgen's generated import and export glue")]
mod component;
