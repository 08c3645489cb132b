//! A cluster per test: a new krt-sim server, or, on the real tier (`KRT_E2E_KUBECONFIG`), the
//! real cluster behind a counting proxy; with a kube client that checks the cluster
//! independently of krt and a kubeconfig file for the CLI.

use kube::api::{Api, DynamicObject};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::real;

/// A cluster for one test, with a client and a kubeconfig file for it in a temporary directory
/// removed on drop.
///
/// Without `KRT_E2E_KUBECONFIG` it is a new krt-sim. With it, [`start`](TestCluster::start) and
/// [`start_tls`](TestCluster::start_tls) give that real cluster (see [`real_tier`](crate::real_tier)):
/// the test's turn on it, wiped back to its baseline, with krt-testkit's stand-in
/// serving its Pods. A test that needs what only krt-sim has (fault injection, its clock, its
/// users) starts one with [`simulated`](TestCluster::simulated), which says why on the real tier.
pub struct TestCluster {
    backend: Backend,
    /// A client of the cluster (kube-rs's retries off, as krt's `connect` does).
    pub client: kube::Client,
    /// The kubeconfig file, in [`dir`](TestCluster::dir).
    pub kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

enum Backend {
    Sim(Box<krt_sim::Sim>),
    Real(real::Turn),
}

impl TestCluster {
    /// The cluster of the tier: a new simulator with the default configuration, or the real one.
    pub async fn start() -> TestCluster {
        Self::start_tls_if(false).await
    }

    /// As [`start`](TestCluster::start), with a simulator serving HTTPS, for tests that run
    /// kubectl: client-go sends a kubeconfig's credentials only to a TLS server.
    pub async fn start_tls() -> TestCluster {
        Self::start_tls_if(true).await
    }

    async fn start_tls_if(tls: bool) -> TestCluster {
        match real::kubeconfig() {
            Some(path) => Self::real(&path).await,
            None => {
                Self::with_sim(krt_sim::SimConfig {
                    tls,
                    ..krt_sim::SimConfig::default()
                })
                .await
            }
        }
    }

    /// As [`start`](TestCluster::start), for a test whose Pods fail as krt-sim's annotation
    /// `sim.krt.dev/fail` asks ([`krt_sim::node`]): krt-sim, or a real control plane that
    /// the stand-in serves; a cluster with kubelets of its own ignores the annotation,
    /// so there the test runs on krt-sim and says `why`.
    pub async fn start_with_simulated_pods(why: &str) -> TestCluster {
        let cluster = Self::start().await;
        match &cluster.backend {
            Backend::Real(turn) if turn.stand_in.is_none() => {
                drop(cluster);
                Self::simulated(Default::default(), why).await
            }
            _ => cluster,
        }
    }

    /// A simulator with `config`, on the real tier too: for a test that needs krt-sim itself;
    /// `why` says what for, and the real tier prints it.
    pub async fn simulated(config: krt_sim::SimConfig, why: &str) -> TestCluster {
        if real::real_tier() {
            eprintln!("on krt-sim, not the real cluster: {why}");
        }
        Self::with_sim(config).await
    }

    async fn with_sim(config: krt_sim::SimConfig) -> TestCluster {
        let sim = krt_sim::Sim::start_with(config)
            .await
            .expect("simulator starts");
        let dir = temp_dir();
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig)
            .expect("kubeconfig written");
        let client = client_for(&sim).await;
        TestCluster {
            backend: Backend::Sim(Box::new(sim)),
            client,
            kubeconfig,
            dir,
        }
    }

    async fn real(path: &Path) -> TestCluster {
        let turn = real::turn(path).await;
        let dir = temp_dir();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, proxy_kubeconfig(turn.proxy.url(), None))
            .expect("kubeconfig written");
        let client = client_from(&std::fs::read_to_string(&kubeconfig).expect("readable")).await;
        TestCluster {
            backend: Backend::Real(turn),
            client,
            kubeconfig,
            dir,
        }
    }

    /// Whether this is the real tier's cluster.
    pub fn is_real(&self) -> bool {
        matches!(self.backend, Backend::Real(_))
    }

    /// The requests the cluster answered since it started or since the last
    /// [`reset_requests`](TestCluster::reset_requests): krt-sim's count, or the proxy's in
    /// front of a real cluster.
    pub fn requests(&self) -> krt_sim::RequestCounts {
        match &self.backend {
            Backend::Sim(sim) => sim.requests(),
            Backend::Real(turn) => turn.proxy.requests(),
        }
    }

    /// Counts requests from zero again.
    pub fn reset_requests(&self) {
        match &self.backend {
            Backend::Sim(sim) => sim.reset_requests(),
            Backend::Real(turn) => turn.proxy.reset(),
        }
    }

    /// The simulator, for what only it can do (fault injection, its clock).
    ///
    /// # Panics
    /// On the real tier's cluster: such a test starts with [`simulated`](TestCluster::simulated).
    pub fn sim(&self) -> &krt_sim::Sim {
        match &self.backend {
            Backend::Sim(sim) => sim,
            Backend::Real(_) => panic!(
                "this test drives krt-sim itself: start it with TestCluster::simulated(config, why)"
            ),
        }
    }

    /// A kubeconfig `user` entry (inline YAML) that acts as the cluster's admin at
    /// [`url`](TestCluster::url): krt-sim's admin token, or nothing on the real tier, whose
    /// proxy forwards a request without credentials as the real kubeconfig's user.
    pub fn admin_user(&self) -> String {
        match &self.backend {
            Backend::Sim(sim) => format!("{{token: {}}}", sim.admin_token()),
            Backend::Real(_) => "{}".to_owned(),
        }
    }

    /// The cluster's base URL (the proxy's on the real tier).
    pub fn url(&self) -> &str {
        match &self.backend {
            Backend::Sim(sim) => sim.url(),
            Backend::Real(turn) => turn.proxy.url(),
        }
    }

    /// The test's temporary directory (holding the kubeconfig).
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// A dynamic API for `kind` at `api_version` (`plural` in URLs), in
    /// `namespace` or cluster-wide.
    pub fn api(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> Api<DynamicObject> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let ar = ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
        };
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    /// Creates an object directly (not through krt).
    pub async fn create(&self, plural: &str, object: impl Into<Value>) {
        let object = object.into();
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let api = self.api(
            &text(&object["apiVersion"]),
            &text(&object["kind"]),
            plural,
            object["metadata"]["namespace"].as_str(),
        );
        let object: DynamicObject = serde_json::from_value(object).expect("a Kubernetes object");
        api.create(&Default::default(), &object)
            .await
            .expect("created directly");
    }

    /// A kubeconfig file in the test's directory that authenticates with
    /// `credential` (as the user `name` in its contexts).
    ///
    /// # Panics
    /// On the real tier, for any credential but a token.
    pub fn kubeconfig_as(&self, name: &str, credential: &krt_sim::Credential) -> PathBuf {
        let path = self.dir.path().join(format!("kubeconfig-{name}"));
        let yaml = match (&self.backend, credential) {
            (Backend::Sim(sim), _) => sim.kubeconfig_yaml_as(name, credential),
            (Backend::Real(turn), krt_sim::Credential::Token(token)) => {
                proxy_kubeconfig(turn.proxy.url(), Some(token))
            }
            (Backend::Real(_), _) => {
                panic!(
                    "the real tier authenticates tests with tokens only: use TestCluster::simulated"
                )
            }
        };
        std::fs::write(&path, yaml).expect("kubeconfig written");
        path
    }

    /// A kubeconfig file in the test's directory that authenticates as the
    /// ServiceAccount `name` of `namespace` (created when missing) with a
    /// token from its TokenRequest, as a pod of that account would.
    pub async fn kubeconfig_for_service_account(&self, namespace: &str, name: &str) -> PathBuf {
        use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
        use k8s_openapi::api::core::v1::ServiceAccount;
        let accounts: Api<ServiceAccount> = Api::namespaced(self.client.clone(), namespace);
        if accounts.get_opt(name).await.expect("GET works").is_none() {
            let account: ServiceAccount = serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "namespace": namespace}
            }))
            .expect("a ServiceAccount");
            accounts
                .create(&Default::default(), &account)
                .await
                .expect("the ServiceAccount is created");
        }
        let request = TokenRequest {
            spec: Some(TokenRequestSpec::default()),
            ..TokenRequest::default()
        };
        let issued = accounts
            .create_token_request(name, &Default::default(), &request)
            .await
            .expect("a token is issued");
        let token = issued.status.and_then(|s| s.token).expect("the token");
        self.kubeconfig_as(
            &format!("{namespace}-{name}"),
            &krt_sim::Credential::Token(token),
        )
    }

    /// Creates a namespace directly.
    pub async fn create_namespace(&self, name: &str) {
        self.create("namespaces", crate::namespace(name)).await;
    }

    /// The live object as JSON, read directly (not through krt).
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        self.api(api_version, kind, plural, namespace)
            .get_opt(name)
            .await
            .expect("direct GET works")
            .map(|o| serde_json::to_value(o).expect("serializes"))
    }

    /// The live ConfigMap `namespace/name` as JSON, read directly (not through krt).
    pub async fn get_configmap(&self, namespace: &str, name: &str) -> Option<Value> {
        self.get("v1", "ConfigMap", "configmaps", Some(namespace), name)
            .await
    }

    /// The live Deployment `namespace/name` as JSON, read directly (not through krt).
    pub async fn get_deployment(&self, namespace: &str, name: &str) -> Option<Value> {
        self.get(
            "apps/v1",
            "Deployment",
            "deployments",
            Some(namespace),
            name,
        )
        .await
    }

    /// Names of the objects of a kind, read directly, sorted.
    pub async fn names(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> Vec<String> {
        let list = self
            .api(api_version, kind, plural, namespace)
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

/// A client for `sim`, with kube-rs's retry layer off (krt retries itself).
pub async fn client_for(sim: &krt_sim::Sim) -> kube::Client {
    client_from(&sim.kubeconfig_yaml()).await
}

/// A client for `sim` that is `user`, signed in with `credential` (retries off, as
/// [`client_for`]'s).
pub async fn client_as(
    sim: &krt_sim::Sim,
    user: &str,
    credential: &krt_sim::Credential,
) -> kube::Client {
    client_from(&sim.kubeconfig_yaml_as(user, credential)).await
}

async fn client_from(kubeconfig: &str) -> kube::Client {
    let mut config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::from_yaml(kubeconfig).expect("a kubeconfig"),
        &KubeConfigOptions::default(),
    )
    .await
    .expect("a client configuration");
    config.default_retry = false;
    kube::Client::try_from(config).expect("a client")
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("krt-test-")
        .tempdir()
        .expect("temporary directory")
}

/// A kubeconfig for the real tier's proxy at `url`, with `token` or no credential (the proxy
/// then forwards as the real kubeconfig's user).
fn proxy_kubeconfig(url: &str, token: Option<&str>) -> String {
    let user = match token {
        Some(token) => format!("{{token: {token}}}"),
        None => "{}".to_owned(),
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: real\n  cluster: {{server: \"{url}\"}}\n\
         users:\n- name: test\n  user: {user}\ncontexts:\n- name: real\n  context: {{cluster: real, user: test, namespace: default}}\n\
         current-context: real\n"
    )
}
