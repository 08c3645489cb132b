//! The layers hold: the sandbox library does not drag a command line, a
//! progress display or an HTTP server into an embedder's build, and the
//! stack engine knows nothing of wasmtime, kube-rs or clap.

use std::process::Command;

/// The names of the crates in the normal dependency tree of `package`.
fn tree(package: &str, args: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-p", package, "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

fn holds(tree: &[String], name: &str) -> bool {
    tree.iter().any(|c| c == name)
}

#[test]
fn the_sandbox_library_has_no_cli_display_or_server_in_its_tree() {
    for lean in [
        tree("krt-host", &["--no-default-features"]),
        tree("krt-host", &[]),
    ] {
        assert!(holds(&lean, "wasmtime") && holds(&lean, "kube"), "{lean:?}");
        for banned in ["clap", "indicatif", "axum", "anstream", "krt-sim"] {
            assert!(!holds(&lean, banned), "krt-host pulls in {banned}");
        }
    }
    // The `sim` feature embeds the simulator's server, but not its command line.
    let full = tree("krt-host", &["--features", "sim"]);
    assert!(holds(&full, "krt-sim") && holds(&full, "axum"), "{full:?}");
    for banned in ["clap", "indicatif", "anstream", "tracing-subscriber"] {
        assert!(
            !holds(&full, banned),
            "krt-host with `sim` pulls in {banned}"
        );
    }
}

#[test]
fn the_controller_reaches_wasmtime_only_through_the_host() {
    let direct = tree("krt-controller", &["--depth", "1"]);
    assert!(holds(&direct, "krt-host"), "{direct:?}");
    assert!(
        !holds(&direct, "wasmtime"),
        "krt-controller depends on wasmtime itself: {direct:?}"
    );
}

#[test]
fn the_stack_engine_has_no_wasmtime_kube_or_clap_in_its_tree() {
    let stack = tree("krt-stack", &[]);
    assert!(holds(&stack, "krt-guest"), "{stack:?}");
    for banned in ["wasmtime", "kube", "kube-client", "clap", "axum", "anyhow"] {
        assert!(!holds(&stack, banned), "krt-stack pulls in {banned}");
    }
}
