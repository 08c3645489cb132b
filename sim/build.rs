//! With the `protobuf` feature: the file descriptors of every Kubernetes API package, parsed
//! from the `generated.proto` files k8s-rs-pb ships and written to `OUT_DIR` as one
//! `FileDescriptorSet` for `src/protobuf` to load. (k8s-rs-pb 0.5's own embedded descriptors
//! cannot be loaded: each generated module lists itself among its dependencies, so loading one
//! waits on itself forever.)

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "protobuf")]
    descriptors::write();
}

/// The descriptor set, built from the protos.
#[cfg(feature = "protobuf")]
mod descriptors {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// The Kubernetes minor whose protos are read, as k8s-openapi's feature in the workspace.
    const VERSION_DIR: &str = "src/v1_33";

    /// Writes `OUT_DIR/kubernetes.fds`.
    pub fn write() {
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
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
        std::fs::write(out.join("kubernetes.fds"), bytes).expect("descriptor set written");
    }

    /// `src/v1_33` of the k8s-rs-pb package in this build, found through `cargo metadata`.
    fn protos_root() -> PathBuf {
        let cargo = std::env::var_os("CARGO").expect("CARGO");
        let target = std::env::var("TARGET").expect("TARGET");
        let output = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--offline"])
            .args(["--filter-platform", &target])
            .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo metadata runs");
        assert!(
            output.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let metadata: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
        let manifest = metadata["packages"]
            .as_array()
            .and_then(|packages| packages.iter().find(|p| p["name"] == "k8s-rs-pb"))
            .and_then(|p| p["manifest_path"].as_str())
            .expect("k8s-rs-pb is a dependency");
        let root = Path::new(manifest)
            .parent()
            .expect("package directory")
            .join(VERSION_DIR);
        println!("cargo:rerun-if-changed={}", root.display());
        root
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
}
