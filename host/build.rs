//! Builds krt's own guest component (`krt-guest` with its `component` feature,
//! profile `guest`) so that krt embeds it and a user never runs a separate
//! build step.

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir
        .parent()
        .expect("host/ sits in the workspace root");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    krt_wasm_build::rerun_if_changed(
        workspace,
        &["guest/src", "guest/Cargo.toml", "wit", "Cargo.lock"],
    );
    let build = krt_wasm_build::Build::new(
        workspace,
        krt_wasm_build::outer_target_dir(&out_dir).join("krt-guest"),
        "guest",
        &["--package", "krt-guest", "--features", "component"],
    );
    match build.outputs(false, &["krt_guest.wasm"]) {
        Ok(paths) => println!("cargo:rustc-env=KRT_GUEST_WASM={}", paths[0].display()),
        Err(e) => panic!("building krt's guest component failed: {e}"),
    }
}
