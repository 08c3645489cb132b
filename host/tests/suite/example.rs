//! The embedding examples (`host/examples/*.rs`) run end to end against an
//! in-process simulator: a host author can copy code that works.

use krt_testkit::{assert_contains, run_ok};
use std::path::PathBuf;
use std::process::Command;

/// Runs the example `name` built by this `cargo test` run; its stdout.
fn run_example(name: &str) -> String {
    // <target>/<profile>/deps/example-<hash> → <target>/<profile>/examples/<name>
    let exe = std::env::current_exe().unwrap();
    let profile: PathBuf = exe.ancestors().nth(2).unwrap().into();
    let example = profile.join("examples").join(name);
    assert!(
        example.exists(),
        "{} missing: `cargo test` builds examples",
        example.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(&example);
    command
        .current_dir(dir.path())
        .env_remove("KUBECONFIG")
        .env("HOME", dir.path());
    let out = run_ok(&mut command, &format!("the example {name}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_embedding_example_applies_and_watches_a_deployment_to_ready() {
    let stdout = run_example("embed");
    assert_contains(&stdout, "apply: Create");
    assert_contains(&stdout, "health: Current");
}

#[test]
fn the_stack_example_applies_the_quickstart_in_dependency_order() {
    let stdout = run_example("stack");
    let order: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("created"))
        .map(str::trim)
        .collect();
    assert_eq!(order.len(), 4, "{stdout}");
    assert_eq!(order[0], "v1:Namespace:quickstart", "{stdout}");
    assert!(stdout.ends_with("Succeeded: 4 resources\n"), "{stdout}");
}
