//! A krt-sim cluster with the Stack CRD installed (or the whole of
//! `krt controller install`) and one in-process controller reconciling it,
//! the waits the tests share, and the test components they run.

use krt_controller::install::{self, InstallOptions, crd};
use krt_controller::{
    Grants, Settings, ShardSettings, Stack, StackController, StackStatus, Tenancy,
};
use krt_host::oci::OciOptions;
use krt_host::{ClusterChoice, ConnectOptions, EngineOptions, connect};
use krt_testkit::TestCluster;
use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The namespace of the controller's Leases.
pub const LEASES: &str = "krt-system";

/// A simulator with the CRD, namespaces `krt-system` and `team-a`, and a
/// controller running in this process.
pub struct Harness {
    /// The cluster.
    pub cluster: TestCluster,
    /// Stacks of `team-a`.
    pub stacks: Api<Stack>,
    /// Where the controller serves its metrics.
    pub metrics_url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// How the controller of a [`Harness`] is installed and run.
#[derive(Default)]
pub struct Setup {
    /// What Stacks may touch beyond their namespace.
    pub grants: Grants,
    /// The controller's `--component-dir`s.
    pub component_dirs: Vec<PathBuf>,
    /// `Some`: the manifests of `krt controller install --tenancy` are applied
    /// (all but the Deployment, whose part this process plays) and the
    /// controller runs as their ServiceAccount `krt-system/krt-controller`
    /// with the Deployment's `--default-service-account`. `None`: the CRD
    /// alone, and the controller runs as the simulator's admin.
    pub installed: Option<install::TenancyMode>,
    /// The controller's `--no-cross-namespace-refs`.
    pub no_cross_namespace_refs: bool,
    /// The registries' settings (the tests' shared cache unless set).
    pub registries: Option<OciOptions>,
}

impl Harness {
    /// Starts everything; Stacks may touch what `grants` allow beyond their namespace.
    pub async fn start(grants: Grants) -> Harness {
        Harness::start_with(Setup {
            grants,
            ..Setup::default()
        })
        .await
    }

    /// Starts everything as `setup` says.
    pub async fn start_with(setup: Setup) -> Harness {
        // The controller's logs, as RUST_LOG says (shown for failed tests).
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let cluster = TestCluster::start_tls().await;
        let (kubeconfig, tenancy) = match setup.installed {
            None => {
                prepare(&cluster, &["team-a"]).await;
                (cluster.kubeconfig.clone(), Tenancy::default())
            }
            Some(mode) => {
                let tenancy = install(&cluster, mode).await;
                for ns in ["team-a", "team-b"] {
                    cluster.create_namespace(ns).await;
                }
                let kubeconfig = cluster
                    .kubeconfig_for_service_account(LEASES, "krt-controller")
                    .await;
                (kubeconfig, tenancy)
            }
        };
        let connected = connect(&ConnectOptions {
            choice: ClusterChoice::Kubeconfig,
            kubeconfig: Some(kubeconfig),
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
            grants: setup.grants,
            tenancy: Tenancy {
                no_cross_namespace_refs: tenancy.no_cross_namespace_refs
                    || setup.no_cross_namespace_refs,
                ..tenancy
            },
            component_dirs: setup.component_dirs,
            concurrency: 4,
            resource_concurrency: 4,
            metrics_address: Some("127.0.0.1:0".parse().expect("an address")),
            engine: EngineOptions {
                cache_dir: Some(krt_testkit::cache_dir().join("krt").join("components")),
                ..EngineOptions::default()
            },
            registries: setup.registries.unwrap_or_else(|| OciOptions {
                cache_dir: Some(krt_testkit::cache_dir().join("krt").join("oci")),
                ..OciOptions::default()
            }),
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
        let api: Api<Stack> = Api::namespaced(self.cluster.client.clone(), namespace);
        let what = format!("Stack {namespace}/{name} with {type_}={status}");
        poll(&what, within, || async {
            let stack = api.get_opt(name).await.ok().flatten();
            match stack {
                Some(stack)
                    if stack.condition(type_).is_some_and(|c| c.status == status)
                        && stack.status.as_ref().and_then(|s| s.observed_generation)
                            == stack.metadata.generation =>
                {
                    Ok(stack)
                }
                _ => Err(format!(
                    "; last seen: {}",
                    serde_json::to_string_pretty(&stack).unwrap_or_default()
                )),
            }
        })
        .await
    }

    /// Waits until Stack `name` of `team-a` has reconciled its current
    /// generation and `holds` of it, and returns its status; panics after
    /// `within`, naming `what` was awaited.
    pub async fn until_reconciled(
        &self,
        what: &str,
        name: &str,
        within: Duration,
        holds: impl Fn(&Stack) -> bool,
    ) -> StackStatus {
        until(what, within, || async {
            let stack = self.stacks.get(name).await.ok()?;
            let status = stack.status.clone()?;
            (status.observed_generation == stack.metadata.generation && holds(&stack))
                .then_some(status)
        })
        .await
    }

    /// A ConfigMap of `namespace`, if it exists.
    pub async fn config_map(&self, namespace: &str, name: &str) -> Option<Value> {
        self.cluster
            .get("v1", "ConfigMap", "configmaps", Some(namespace), name)
            .await
    }
}

/// Applies the manifests of `krt controller install --tenancy MODE` but its
/// Deployment (server-side, as the admin), and returns the tenancy that
/// Deployment's arguments give the controller.
async fn install(cluster: &TestCluster, mode: install::TenancyMode) -> Tenancy {
    let options = InstallOptions {
        namespace: LEASES.into(),
        image: "krt:test".into(),
        replicas: 1,
        shards: 2,
        tenancy: mode,
        default_service_account: None,
    };
    let mut args = Vec::new();
    for object in install::manifests(&options) {
        if object["kind"] == "Deployment" {
            let container = &object["spec"]["template"]["spec"]["containers"][0];
            args = serde_json::from_value(container["args"].clone()).expect("string arguments");
            continue;
        }
        apply(cluster, &object).await;
    }
    let default_service_account = args
        .windows(2)
        .find(|w: &&[String]| w[0] == "--default-service-account")
        .map(|w| w[1].clone());
    Tenancy {
        default_service_account,
        no_cross_namespace_refs: args.iter().any(|a| a == "--no-cross-namespace-refs"),
    }
}

/// Applies `object` server-side as the simulator's admin (kube-rs's
/// discovery finds its resource).
pub async fn apply(cluster: &TestCluster, object: &Value) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let api_version = text(&object["apiVersion"]);
    let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
    let gvk = kube::api::GroupVersionKind::gvk(group, version, &text(&object["kind"]));
    let (resource, capabilities) = kube::discovery::pinned_kind(&cluster.client, &gvk)
        .await
        .expect("the kind is served");
    let name = text(&object["metadata"]["name"]);
    let api: Api<DynamicObject> = match capabilities.scope {
        kube::discovery::Scope::Namespaced => Api::namespaced_with(
            cluster.client.clone(),
            &text(&object["metadata"]["namespace"]),
            &resource,
        ),
        kube::discovery::Scope::Cluster => Api::all_with(cluster.client.clone(), &resource),
    };
    api.patch(
        &name,
        &PatchParams::apply("krt-test"),
        &Patch::Apply(object),
    )
    .await
    .unwrap_or_else(|e| panic!("applying {} {name}: {e}", gvk.kind));
}

/// A client authenticating with the kubeconfig file `path`.
pub async fn client_from(path: &std::path::Path) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(path).expect("a kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("a client configuration");
    kube::Client::try_from(config).expect("a client")
}

/// Binds the ClusterRole `role` to the ServiceAccount `account` of
/// `namespace` (created when missing) within `namespace`.
pub async fn bind(cluster: &TestCluster, namespace: &str, account: &str, role: &str) {
    apply(
        cluster,
        &json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": account, "namespace": namespace}}),
    )
    .await;
    apply(
        cluster,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": format!("{account}-{role}"), "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": account,
                              "namespace": namespace}]}),
    )
    .await;
}

/// Installs the CRD and creates the Lease namespace and `namespaces`.
pub async fn prepare(cluster: &TestCluster, namespaces: &[&str]) {
    cluster.create("customresourcedefinitions", crd()).await;
    cluster.create_namespace(LEASES).await;
    for ns in namespaces {
        cluster.create_namespace(ns).await;
    }
}

/// Creates a Stack object (its namespace is in its metadata).
pub async fn create_stack(cluster: &TestCluster, stack: Value) {
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

/// Whether the Stack's Ready condition is True.
pub fn is_ready(stack: &Stack) -> bool {
    stack.condition("Ready").is_some_and(|c| c.status == "True")
}

/// A ConfigMap `name` holding `{"key": value}`.
pub fn config_map(name: &str, value: &str) -> Value {
    krt_testkit::configmap(name)
        .data(json!({"key": value}))
        .value()
}

/// Polls `probe` every 100 ms until it gives a value; panics after `within`,
/// naming `what` was awaited.
pub async fn until<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    poll(what, within, || {
        let probed = probe();
        async { probed.await.ok_or_else(String::new) }
    })
    .await
}

/// Polls `probe` every 100 ms until it gives a value; panics after `within`,
/// naming `what` was awaited and adding what the last probe said of it.
async fn poll<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        let last = match probe().await {
            Ok(value) => return value,
            Err(last) => last,
        };
        assert!(
            started.elapsed() < within,
            "{what}: not reached within {within:?}{last}"
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

/// The controller's metrics, scraped over HTTP.
pub async fn scrape(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (address, path) = rest.split_once('/').expect("a path");
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("the metrics port answers");
    let request = format!("GET /{path} HTTP/1.0\r\nHost: {address}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("a response");
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");
    response
}
