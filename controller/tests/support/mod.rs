//! A krt-sim cluster with the Stack CRD installed and one in-process
//! controller reconciling it, the waits the tests share, and the test
//! components they run.

use krt_controller::install::crd;
use krt_controller::{Grants, Settings, ShardSettings, Stack, StackController};
use krt_host::{ClusterChoice, ConnectOptions, EngineOptions, connect};
use krt_testkit::SimCluster;
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The namespace of the controller's Leases.
pub const LEASES: &str = "krt-system";

/// A simulator with the CRD, namespaces `krt-system` and `team-a`, and a
/// controller running in this process.
pub struct Harness {
    /// The cluster.
    pub cluster: SimCluster,
    /// Stacks of `team-a`.
    pub stacks: Api<Stack>,
    /// Where the controller serves its metrics.
    pub metrics_url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Harness {
    /// Starts everything; Stacks may touch what `grants` allow beyond their namespace.
    pub async fn start(grants: Grants) -> Harness {
        Harness::start_with_component_dirs(grants, Vec::new()).await
    }

    /// As [`Harness::start`], with the controller's `--component-dir`s.
    pub async fn start_with_component_dirs(
        grants: Grants,
        component_dirs: Vec<PathBuf>,
    ) -> Harness {
        // The controller's logs, as RUST_LOG says (shown for failed tests).
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let cluster = SimCluster::start_tls().await;
        prepare(&cluster, &["team-a"]).await;
        let connected = connect(&ConnectOptions {
            choice: ClusterChoice::Kubeconfig,
            kubeconfig: Some(cluster.kubeconfig.clone()),
            ..ConnectOptions::default()
        })
        .await
        .expect("connected to the simulator");
        let settings = Settings {
            shards: ShardSettings {
                identity: "test-replica".into(),
                namespace: LEASES.into(),
                shards: 2,
                lease_duration: Duration::from_secs(3),
            },
            grants,
            component_dirs,
            concurrency: 4,
            resource_concurrency: 4,
            metrics_address: Some("127.0.0.1:0".parse().expect("an address")),
            engine: EngineOptions {
                cache_dir: Some(krt_testkit::cache_dir().join("krt").join("wasmtime")),
                ..EngineOptions::default()
            },
        };
        let controller = StackController::new(settings, connected.cluster.clone())
            .await
            .expect("the controller starts");
        let metrics_url = format!(
            "http://{}/metrics",
            controller.metrics_address().expect("metrics are served")
        );
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(controller.run(async {
            let _ = rx.await;
        }));
        Harness {
            stacks: Api::namespaced(cluster.client.clone(), "team-a"),
            cluster,
            metrics_url,
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// Stops the controller and waits for it to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(20), task)
                .await
                .expect("the controller stops within 20 s")
                .expect("the controller task ends cleanly");
        }
    }

    /// Creates a Stack in `team-a`.
    pub async fn create(&self, stack: Value) {
        create_stack(&self.cluster, stack).await;
    }

    /// Waits until the Stack `name` of `namespace` has condition `type_`
    /// with `status`, and returns it.
    pub async fn until_condition(
        &self,
        namespace: &str,
        name: &str,
        type_: &str,
        status: &str,
        within: Duration,
    ) -> Stack {
        until_condition(&self.cluster, namespace, name, type_, status, within).await
    }

    /// A ConfigMap of `namespace`, if it exists.
    pub async fn config_map(&self, namespace: &str, name: &str) -> Option<Value> {
        self.cluster
            .get("v1", "ConfigMap", "configmaps", Some(namespace), name)
            .await
    }
}

/// Installs the CRD and creates the Lease namespace and `namespaces`.
pub async fn prepare(cluster: &SimCluster, namespaces: &[&str]) {
    cluster.create("customresourcedefinitions", crd()).await;
    cluster.create_namespace(LEASES).await;
    for ns in namespaces {
        cluster.create_namespace(ns).await;
    }
}

/// Creates a Stack object (its namespace is in its metadata).
pub async fn create_stack(cluster: &SimCluster, stack: Value) {
    let namespace = stack["metadata"]["namespace"]
        .as_str()
        .expect("the Stack names its namespace")
        .to_owned();
    let api: Api<Stack> = Api::namespaced(cluster.client.clone(), &namespace);
    let stack: Stack = serde_json::from_value(stack).expect("a Stack");
    api.create(&PostParams::default(), &stack)
        .await
        .expect("the Stack is created");
}

/// A Stack `name` in `namespace` applying `resources` inline, reconciled every `interval`.
pub fn stack(namespace: &str, name: &str, interval: &str, resources: Vec<Value>) -> Value {
    json!({
        "apiVersion": "krt.dev/v1alpha1",
        "kind": "Stack",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"interval": interval, "resources": resources},
    })
}

/// A ConfigMap `name` holding `{"key": value}`.
pub fn config_map(name: &str, value: &str) -> Value {
    krt_testkit::configmap(name)
        .data(json!({"key": value}))
        .value()
}

/// Waits until the Stack `name` of `namespace` has condition `type_` with `status`.
pub async fn until_condition(
    cluster: &SimCluster,
    namespace: &str,
    name: &str,
    type_: &str,
    status: &str,
    within: Duration,
) -> Stack {
    let api: Api<Stack> = Api::namespaced(cluster.client.clone(), namespace);
    let started = Instant::now();
    loop {
        let stack = api.get_opt(name).await.ok().flatten();
        if let Some(stack) = &stack {
            let holds = stack.condition(type_).is_some_and(|c| c.status == status)
                && stack.status.as_ref().and_then(|s| s.observed_generation)
                    == stack.metadata.generation;
            if holds {
                return stack.clone();
            }
        }
        assert!(
            started.elapsed() < within,
            "Stack {namespace}/{name} with {type_}={status}: not reached within {within:?}; \
             last seen: {}",
            serde_json::to_string_pretty(&stack).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls `probe` every 100 ms until it gives a value; panics after `within`,
/// naming `what` was awaited.
pub async fn until<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            started.elapsed() < within,
            "{what}: not reached within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The bytes of the `tagger` middleware of `tests/middleware` (it sets the
/// annotation `team: platform` on every plan without a `team` annotation),
/// built where `tests/build.rs` builds it, so an up-to-date one is reused.
pub async fn tagger_component() -> Vec<u8> {
    let workspace = krt_testkit::workspace();
    let path = tokio::task::spawn_blocking(move || {
        krt_wasm_build::test_examples(&workspace, "krt-test-middleware", &["tagger"])
    })
    .await
    .expect("the build task ends")
    .unwrap_or_else(|e| panic!("building the tagger middleware failed: {e}"))
    .remove(0);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}
