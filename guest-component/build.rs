//! Hashes the prebuilt component once, when the crate builds, so that
//! krt-host's compile cache finds its entry by that digest without hashing
//! the component's bytes at every start.

use sha2::{Digest, Sha256};
use std::fmt::Write;

fn main() {
    println!("cargo::rerun-if-changed=krt_guest.wasm");
    let bytes = std::fs::read("krt_guest.wasm").expect("krt_guest.wasm sits beside Cargo.toml");
    let hex = Sha256::digest(&bytes)
        .iter()
        .fold(String::new(), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        });
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("sha256"), hex).expect("OUT_DIR is writable");
}
