//! The embedding example (`host/examples/embed.rs`) runs end to end against an
//! in-process simulator: a host author can copy code that works.

use std::path::Path;
use std::process::Command;

#[test]
fn the_embedding_example_applies_and_watches_a_deployment_to_ready() {
    // <target>/<profile>/deps/example-<hash> → <target>/<profile>/examples/embed
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap();
    let example = profile.join("examples").join("embed");
    assert!(
        example.exists(),
        "{} missing: `cargo test` builds examples",
        example.display()
    );
    let out = Command::new(&example)
        .env_remove("KUBECONFIG")
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("apply: Create"), "{stdout}");
    assert!(stdout.contains("health: Current"), "{stdout}");
}
