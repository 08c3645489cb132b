//! Shared helpers: a simulator per test, a kube client for checking the
//! cluster independently of krt, a component runtime, and the `krt` binary.

use krt_host::model::Resource;
use krt_host::{ComponentRuntime, ComponentSource, EngineOptions, KubeCluster, NativeRuntime};
use kube::api::{Api, DynamicObject};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A running simulator with a client and a kubeconfig file for it.
pub struct Cluster {
    _sim: krt_sim::Sim,
    pub client: kube::Client,
    pub kubeconfig: PathBuf,
    _dir: TempDir,
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "krt-e2e-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Cluster {
    pub async fn start() -> Cluster {
        let sim = krt_sim::Sim::start().await.expect("simulator starts");
        let dir = TempDir::new("kubeconfig");
        let kubeconfig = dir.0.join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig)
            .expect("kubeconfig written");
        let client = client_for(&sim).await;
        Cluster {
            _sim: sim,
            client,
            kubeconfig,
            _dir: dir,
        }
    }

    /// The simulator's base URL.
    pub fn url(&self) -> &str {
        self._sim.url()
    }

    /// A runtime over the built-in guest component.
    pub async fn runtime(&self) -> ComponentRuntime {
        self.runtime_in(Arc::new(KubeCluster::new(self.client.clone(), "default")))
            .await
    }

    /// A runtime over the built-in guest component reaching `cluster`.
    pub async fn runtime_in(&self, cluster: Arc<KubeCluster>) -> ComponentRuntime {
        let options = EngineOptions {
            cache_dir: Some(cache_dir()),
            ..EngineOptions::default()
        };
        ComponentRuntime::new(&ComponentSource::Default, cluster, &options)
            .await
            .expect("component loads")
    }

    /// The same logic run natively, reaching `cluster`.
    pub fn native_in(&self, cluster: Arc<KubeCluster>) -> NativeRuntime {
        NativeRuntime::new(cluster)
    }

    /// A cluster handle whose context namespace is `namespace`.
    pub fn kube_cluster(&self, namespace: &str) -> Arc<KubeCluster> {
        Arc::new(KubeCluster::new(self.client.clone(), namespace))
    }

    /// Creates a namespace directly.
    pub async fn create_namespace(&self, name: &str) {
        let api = self.api("v1", "Namespace", "namespaces", None);
        let ns: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}
        }))
        .unwrap();
        api.create(&Default::default(), &ns)
            .await
            .expect("namespace created");
    }

    fn api(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        ns: Option<&str>,
    ) -> Api<DynamicObject> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let ar = ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
        };
        match ns {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    /// The live object as JSON, read directly (not through krt).
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        ns: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        self.api(api_version, kind, plural, ns)
            .get_opt(name)
            .await
            .expect("direct GET works")
            .map(|o| serde_json::to_value(o).unwrap())
    }

    /// Names of the objects of a kind, read directly.
    pub async fn names(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        ns: Option<&str>,
    ) -> Vec<String> {
        let list = self
            .api(api_version, kind, plural, ns)
            .list(&Default::default())
            .await
            .expect("direct LIST works");
        let mut names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect();
        names.sort();
        names
    }
}

/// A client for `sim`, checking the cluster independently of krt.
pub async fn client_for(sim: &krt_sim::Sim) -> kube::Client {
    let mut config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::from_yaml(&sim.kubeconfig_yaml()).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    // As `krt_host::connect` does: KubeCluster retries, kube-rs's layer must not stack on it.
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

/// The compiled-component cache shared by the tests (inside the target dir).
pub fn cache_dir() -> PathBuf {
    target_dir().join("krt-test-cache")
}

fn target_dir() -> PathBuf {
    // <target>/<profile>/deps/e2e-<hash>
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf()
}

/// The `krt` binary built by this `cargo test` run (host's integration tests make cargo build it).
pub fn krt_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(Path::parent).unwrap().join("krt");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo test --workspace` (it builds the krt binary)",
        bin.display()
    );
    bin
}

/// The result of running `krt`.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `krt` with `args` against `kubeconfig`, with stdin from `input`, in
/// the kubeconfig's directory (so each cluster has its own `.krt/state`).
pub async fn krt(kubeconfig: &Path, args: &[&str], input: Option<&str>) -> Run {
    let mut full = vec!["--kubeconfig", kubeconfig.to_str().unwrap()];
    full.extend_from_slice(args);
    krt_in(kubeconfig.parent().unwrap(), &full, input).await
}

/// Runs `krt` with `args` in directory `dir`, with no kubeconfig in the environment.
pub async fn krt_in(dir: &Path, args: &[&str], input: Option<&str>) -> Run {
    krt_env(dir, args, &[], input).await
}

/// Runs `krt` with `args` in `dir` with extra environment variables `env`
/// (`KUBECONFIG` and `HOME` are cleared unless given).
pub async fn krt_env(dir: &Path, args: &[&str], env: &[(&str, &str)], input: Option<&str>) -> Run {
    let mut cmd = tokio::process::Command::new(krt_bin());
    cmd.args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", cache_dir())
        .env_remove("KUBECONFIG")
        .env("HOME", dir)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("krt starts");
    if let Some(text) = input {
        use tokio::io::AsyncWriteExt;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .await
            .unwrap();
    }
    drop(child.stdin.take());
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        child.wait_with_output(),
    )
    .await
    .expect("krt finishes within 2 minutes")
    .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Starts `krt` with `args` in `dir` without waiting for it (to kill or stop
/// the cluster mid-run), stdin closed and no kubeconfig in the environment;
/// dropping the child kills it.
pub fn krt_spawn(
    dir: &Path,
    args: &[&str],
    stdout: std::process::Stdio,
    stderr: std::process::Stdio,
) -> tokio::process::Child {
    tokio::process::Command::new(krt_bin())
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", cache_dir())
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .expect("krt starts")
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A Kubernetes resource with its ID derived like `krt` does.
pub fn resource(attributes: Value) -> Resource {
    let api_version = attributes["apiVersion"].as_str().unwrap();
    let kind = attributes["kind"].as_str().unwrap();
    let name = attributes["metadata"]["name"].as_str().unwrap();
    let id = match attributes["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{api_version}:{kind}:{ns}:{name}"),
        None => format!("{api_version}:{kind}:{name}"),
    };
    Resource {
        id,
        type_: "Kubernetes".into(),
        attributes,
        depends_on: vec![],
        extensions: json!({}),
    }
}

impl Cluster {
    /// The simulator itself, for fault injection (`close_watches`, `expire_resource_versions`).
    pub fn sim(&self) -> &krt_sim::Sim {
        &self._sim
    }
}
