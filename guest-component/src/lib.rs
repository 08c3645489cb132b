//! krt's built-in Kubernetes runtime component, prebuilt: `krt-guest` with its
//! `component` feature, built for `wasm32-wasip2` in the workspace's `guest`
//! profile (optimized for speed, LTO, a 256 KiB stack). It targets the world `kusion:runtime/krt-guest`
//! of the WIT package in `wit/`.
//!
//! The bytes are built by one reproducible step, `cargo run -p krt-wasm-build --
//! guest-component`, with the toolchain `rust-toolchain.toml` pins and the build's
//! paths remapped; CI runs it with `--check`, which fails when the file is not
//! what `guest/`, `wit/` and `Cargo.lock` build. An embedder of krt-host gets the
//! component with no nested cargo and no `wasm32-wasip2` target.

/// The component's bytes (`krt_guest.wasm`).
pub const COMPONENT: &[u8] = include_bytes!("../krt_guest.wasm");

/// The SHA-256 digest of [`COMPONENT`] in lowercase hex, written beside it by
/// the same build step: krt-host's compile cache keys the component by it.
pub const SHA256: &str = include_str!("../krt_guest.wasm.sha256");

#[cfg(test)]
mod tests {
    #[test]
    fn the_bytes_are_a_webassembly_component() {
        // The magic number, then version 0x0d and layer 1: a component, not a core module.
        assert_eq!(&super::COMPONENT[..8], b"\0asm\x0d\0\x01\0");
    }

    #[test]
    fn the_digest_is_the_bytes_sha256() {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(super::COMPONENT);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(super::SHA256, hex);
    }
}
