//! The descriptors krt-sim decodes protobuf with (`src/protobuf/kubernetes.fds`, one
//! `FileDescriptorSet` of every Kubernetes API package) are what k8s-rs-pb's `.proto` files parse
//! to. k8s-rs-pb 0.5's own embedded descriptors cannot be loaded: each generated module lists
//! itself among its dependencies, so loading one waits on itself forever. The set is kept in the
//! repository, so that building krt-sim parses nothing and runs no nested cargo; this test
//! parses the protos again and compares. `KRT_UPDATE_DESCRIPTORS=1 cargo test -p krt-sim --test
//! descriptors` writes the file anew (after a k8s-rs-pb update).

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kubernetes minor whose protos are read: k8s-rs-pb's newest (1.35; k8s-openapi serves 1.36).
const VERSION_DIR: &str = "src/v1_35";

#[test]
fn the_kept_descriptor_set_is_what_k8s_rs_pbs_protos_parse_to() {
    let root = protos_root();
    let mut inputs = Vec::new();
    collect(&root, &mut inputs);
    inputs.sort();
    let set = protobuf_parse::Parser::new()
        .pure()
        .include(&root)
        .inputs(&inputs)
        .file_descriptor_set()
        .expect("k8s-rs-pb's protos parse");
    let bytes = protobuf::Message::write_to_bytes(&set).expect("descriptor set encodes");
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/protobuf/kubernetes.fds");
    if std::env::var_os("KRT_UPDATE_DESCRIPTORS").is_some() {
        std::fs::write(&kept, &bytes).expect("descriptor set written");
    }
    let on_disk = std::fs::read(&kept).expect("the kept descriptor set");
    assert!(
        on_disk == bytes,
        "{} is not what k8s-rs-pb's protos parse to: run `KRT_UPDATE_DESCRIPTORS=1 cargo test -p \
         krt-sim --test suite descriptors` and commit it",
        kept.display()
    );
}

/// `src/v1_35` of the k8s-rs-pb package in this build, found through `cargo metadata`.
fn protos_root() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host()])
        .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    common::assert_success(&output, "cargo metadata");
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let manifest = metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == "k8s-rs-pb"))
        .and_then(|p| p["manifest_path"].as_str())
        .expect("k8s-rs-pb is a dependency");
    Path::new(manifest)
        .parent()
        .expect("package directory")
        .join(VERSION_DIR)
}

/// The host's target triple, as `rustc -vV` says it.
fn host() -> String {
    let output = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc names its host")
        .to_owned()
}

/// Every `.proto` file under `dir` (the API packages; the metrics APIs are left out).
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("proto directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "metrics") {
                collect(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
}
