//! Builds the guest components the sandbox tests run: the hostile guests
//! Builds the guest components the sandbox tests run: the hostile guests
//! (`tests/guests`, one component per example), the middleware of the chain
//! tests and benchmark (`tests/middleware`, one per example), the
//! marked-logic guest (`tests/logic-guest`) and the organisation-rules
//! middleware (`examples/org-rules`), for `wasm32-wasip2` in release mode,
//! into their own target directory (`<target>/krt-test-guests`), and writes
//! their paths as constants to `$OUT_DIR/guests.rs`.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The hostile guests, one example each.
const HOSTILE: &[&str] = &[
    "spin", "hog", "recurse", "huge", "chatty", "busy", "rogue", "midtrap", "liar", "sockets",
    "unknown", "v2", "sleepy", "residue",
];

/// The middleware of the chain tests, one example each.
const MIDDLEWARE: &[&str] = &["passthrough", "lookup", "spinner", "tagger"];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir
        .parent()
        .expect("tests/ sits in the workspace root");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    krt_wasm_build::rerun_if_changed(
        workspace,
        &[
            "tests/guests",
            "tests/logic-guest",
            "tests/middleware",
            "examples/org-rules",
            "guest/src",
            "guest/Cargo.toml",
            "wit",
            "Cargo.lock",
        ],
    );
    let build = krt_wasm_build::Build::new(
        workspace,
        krt_wasm_build::outer_target_dir(&out_dir).join("krt-test-guests"),
        "release",
        &[
            "-p",
            "krt-test-guests",
            "-p",
            "krt-test-middleware",
            "-p",
            "org-rules",
            "-p",
            "krt-test-logic-guest",
            "--lib",
            "--examples",
        ],
    );
    let mut files: Vec<String> = HOSTILE
        .iter()
        .chain(MIDDLEWARE)
        .map(|name| format!("examples/{name}.wasm"))
        .collect();
    files.push("org_rules.wasm".into());
    files.push("krt_test_logic_guest.wasm".into());
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let paths = build
        .outputs(false, &files)
        .unwrap_or_else(|e| panic!("building the test guest components failed: {e}"));
    let mut consts = String::new();
    let names = HOSTILE
        .iter()
        .chain(MIDDLEWARE)
        .copied()
        .chain(["org-rules", "marked-logic"]);
    for (name, path) in names.zip(paths) {
        writeln!(
            consts,
            "/// The `{name}` test guest component.\npub const {}: &str = {:?};",
            name.to_uppercase().replace('-', "_"),
            path.display().to_string()
        )
        .expect("writing to a String");
    }
    std::fs::write(out_dir.join("guests.rs"), consts).expect("guests.rs written");
}
