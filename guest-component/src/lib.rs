//! krt's built-in Kubernetes runtime component, prebuilt: `krt-guest` with its
//! `component` feature, built for `wasm32-wasip2` in the workspace's `guest`
//! profile (size-optimized, LTO). It targets the world `kusion:runtime/krt-guest`
//! of the WIT package in `wit/`.
//!
//! The bytes are built by one reproducible step, `cargo run -p krt-wasm-build --
//! guest-component`, with the toolchain `rust-toolchain.toml` pins and the build's
//! paths remapped; CI runs it with `--check`, which fails when the file is not
//! what `guest/`, `wit/` and `Cargo.lock` build. An embedder of krt-host gets the
//! component with no nested cargo and no `wasm32-wasip2` target.

/// The component's bytes (`krt_guest.wasm`).
pub const COMPONENT: &[u8] = include_bytes!("../krt_guest.wasm");

#[cfg(test)]
mod tests {
    #[test]
    fn the_bytes_are_a_webassembly_component() {
        // The magic number, then version 0x0d and layer 1: a component, not a core module.
        assert_eq!(&super::COMPONENT[..8], b"\0asm\x0d\0\x01\0");
    }
}
