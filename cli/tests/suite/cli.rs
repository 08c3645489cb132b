//! The `krt` binary's own surface: help and input errors that need no cluster.
//! (Its presence also makes `cargo test` build the binary for the end-to-end tests.)

use std::process::Command;

fn krt(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_krt"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("krt runs")
}

#[test]
fn help_lists_the_commands() {
    let out = krt(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["apply", "preview", "read", "delete"] {
        assert!(text.contains(cmd), "help lacks {cmd}:\n{text}");
    }
}

#[test]
fn a_missing_file_is_named_and_exits_1() {
    let out = krt(&[
        "apply",
        "-f",
        "/nonexistent/krt-input.yaml",
        "--cluster",
        "sim",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed to read '/nonexistent/krt-input.yaml'"),
        "{err}"
    );
}

#[test]
fn a_missing_kubeconfig_is_named_and_exits_1() {
    let dir = std::env::temp_dir().join(format!("krt-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cm.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    .unwrap();
    let out = krt(&[
        "apply",
        "-f",
        file.to_str().unwrap(),
        "--kubeconfig",
        "/nonexistent/kubeconfig",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/kubeconfig"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(krt(&["apply"]).status.code(), Some(2));
}
