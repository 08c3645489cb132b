//! What the simulator's test crates share: a [`Kubectl`] bound to one simulator, raw HTTP
//! requests ([`http`]), a CRD fixture, and polling.

pub mod http;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Real `kubectl` with a kubeconfig for one simulator and a directory for its cache and manifests,
/// removed when the last kubectl sharing it goes.
pub struct Kubectl {
    /// The kubeconfig `kubectl` is run with.
    pub kubeconfig: PathBuf,
    /// The directory manifests are written to.
    pub dir: PathBuf,
    /// Keeps `dir` until the last kubectl that shares it goes.
    _temp: std::sync::Arc<tempfile::TempDir>,
}

/// A simulator serving HTTPS, as kubectl needs one: client-go reads a kubeconfig's credentials
/// only for a TLS server, so against plain HTTP every kubectl request is `system:anonymous`.
pub async fn tls_sim() -> krt_sim::Sim {
    krt_sim::Sim::start_with(krt_sim::SimConfig {
        tls: true,
        ..krt_sim::SimConfig::default()
    })
    .await
    .expect("sim starts")
}

impl Kubectl {
    /// A kubectl for `sim` (which must serve HTTPS, see [`tls_sim`]), with its kubeconfig
    /// written to a temporary directory.
    pub fn new(sim: &krt_sim::Sim) -> Self {
        assert!(
            sim.ca_pem().is_some(),
            "kubectl sends its credentials only over TLS: start the simulator with `tls: true`"
        );
        let temp = tempfile::Builder::new()
            .prefix("krt-sim-kubectl-")
            .tempdir()
            .expect("temp dir");
        let dir = temp.path().to_path_buf();
        let kubeconfig = dir.join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        Self {
            kubeconfig,
            dir,
            _temp: std::sync::Arc::new(temp),
        }
    }

    /// Writes `yaml` to `name` in the directory and returns its path.
    pub fn file(&self, name: &str, yaml: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, yaml).expect("manifest");
        path
    }

    /// A kubectl like this one that signs in to `sim` as `user` with `credential`, its
    /// kubeconfig written to `<user>.kubeconfig` in the directory.
    pub fn as_user(
        &self,
        sim: &krt_sim::Sim,
        user: &str,
        credential: &krt_sim::Credential,
    ) -> Self {
        let yaml = sim.kubeconfig_yaml_as(user, credential);
        Self {
            kubeconfig: self.file(&format!("{user}.kubeconfig"), &yaml),
            dir: self.dir.clone(),
            _temp: self._temp.clone(),
        }
    }

    /// The kubectl command with this kubeconfig and cache, and `args`.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args);
        command
    }

    /// Runs kubectl with `args` and returns what it did.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("kubectl runs")
    }

    /// Starts kubectl with `args`, its output piped.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs")
    }

    /// Runs kubectl with `args`, which must succeed, and returns its standard output.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_success(&out, &format!("kubectl {args:?}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs kubectl with `args`, which must succeed and print JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).expect("kubectl printed JSON")
    }
}

/// Asserts that the command `what` that gave `out` succeeded, showing its standard error if not.
pub fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `name` of each item of the array `items`.
pub fn names(items: &Value) -> Vec<&str> {
    items
        .as_array()
        .expect("an array")
        .iter()
        .map(|item| item["name"].as_str().expect("a name"))
        .collect()
}

/// `p` as a command-line argument.
pub fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Polls `check` every 20 ms until it holds, failing after `secs` seconds.
pub fn eventually(secs: u64, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The collection path of CustomResourceDefinitions.
pub const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The CRD of the namespaced kind `Widget` (`widgets.example.com/v1`), whose schema keeps any
/// field.
pub fn widget_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}
