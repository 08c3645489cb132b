//! Builds krt's own guest component (`guest` crate, `wasm32-wasip2`, profile
//! `guest`) so that `krt` embeds it and a user never runs a separate build step.
//!
//! The guest is built by a nested cargo into its own target directory
//! (`<target>/krt-guest`), so it neither deadlocks on the outer build's lock nor
//! is rebuilt when only host code changes.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir
        .parent()
        .expect("host/ sits in the workspace root");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let guest_target = target_dir(&out_dir).join("krt-guest");

    for path in ["guest/src", "guest/Cargo.toml", "wit", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args(["build", "--package", "guest", "--features", "component"])
        .args(["--target", "wasm32-wasip2"])
        .args(["--profile", "guest", "--target-dir"])
        .arg(&guest_target);
    // The outer build's flags and wrappers (clippy, coverage) are not meant for the guest.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .expect("failed to run cargo to build the guest component");
    assert!(
        status.success(),
        "building the guest component failed (see the cargo output above)"
    );

    let wasm = guest_target.join("wasm32-wasip2/guest/guest.wasm");
    assert!(
        wasm.exists(),
        "guest component missing at {}",
        wasm.display()
    );
    println!("cargo:rustc-env=KRT_GUEST_WASM={}", wasm.display());
}

/// `<target>` from `<target>/<profile>/build/host-<hash>/out` (or with a target triple in between).
fn target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(|build| build.parent())
        .and_then(|profile| profile.parent())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.join("target"))
}
