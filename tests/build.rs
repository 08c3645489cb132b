//! Builds the guest components the sandbox tests run: the hostile guests
//! (`tests/guests`, one component per example) and the organisation-rules
//! guest (`examples/org-rules`), for `wasm32-wasip2` in release mode, into
//! their own target directory (`<target>/krt-test-guests`), and writes their
//! paths as constants to `$OUT_DIR/guests.rs`.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The hostile guests: example name and constant name.
const HOSTILE: &[&str] = &[
    "spin", "hog", "recurse", "huge", "chatty", "busy", "rogue", "midtrap", "liar", "sockets",
    "unknown", "v2", "sleepy",
];

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir
        .parent()
        .expect("tests/ sits in the workspace root");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let target = target_dir(&out_dir).join("krt-test-guests");
    for path in [
        "tests/guests",
        "examples/org-rules",
        "guest/src",
        "guest/Cargo.toml",
        "wit",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .args([
            "-p",
            "krt-test-guests",
            "-p",
            "org-rules",
            "--lib",
            "--examples",
        ])
        .arg("--target-dir")
        .arg(&target);
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
        .expect("failed to run cargo to build the test guests");
    assert!(
        status.success(),
        "building the test guest components failed (see above)"
    );

    let release = target.join("wasm32-wasip2/release");
    let mut consts = String::new();
    let mut add = |name: &str, path: PathBuf| {
        assert!(path.exists(), "test guest missing at {}", path.display());
        writeln!(
            consts,
            "/// The `{name}` test guest component.\npub const {}: &str = {:?};",
            name.to_uppercase().replace('-', "_"),
            path.display().to_string()
        )
        .unwrap();
    };
    for name in HOSTILE {
        add(name, release.join("examples").join(format!("{name}.wasm")));
    }
    add("org-rules", release.join("org_rules.wasm"));
    std::fs::write(out_dir.join("guests.rs"), consts).expect("guests.rs written");
}

/// `<target>` from `<target>/<profile>/build/tests-<hash>/out`.
fn target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(|build| build.parent())
        .and_then(|profile| profile.parent())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.join("target"))
}
