//! A krt-sim server per test, with a kube client that checks the cluster
//! independently of krt and a kubeconfig file for the CLI.

use kube::api::{Api, DynamicObject};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use serde_json::Value;
use std::path::PathBuf;

/// A running simulator with a client and a kubeconfig file for it, in a
/// temporary directory removed on drop.
pub struct SimCluster {
    sim: krt_sim::Sim,
    /// A client of the simulator (kube-rs's retries off, as krt's `connect` does).
    pub client: kube::Client,
    /// The kubeconfig file, in [`dir`](SimCluster::dir).
    pub kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

impl SimCluster {
    /// Starts a simulator with the default configuration.
    pub async fn start() -> SimCluster {
        Self::start_with(krt_sim::SimConfig::default()).await
    }

    /// Starts a simulator serving HTTPS, for tests that run kubectl: client-go sends a
    /// kubeconfig's credentials only to a TLS server.
    pub async fn start_tls() -> SimCluster {
        Self::start_with(krt_sim::SimConfig {
            tls: true,
            ..krt_sim::SimConfig::default()
        })
        .await
    }

    /// Starts a simulator with `config`.
    pub async fn start_with(config: krt_sim::SimConfig) -> SimCluster {
        let sim = krt_sim::Sim::start_with(config)
            .await
            .expect("simulator starts");
        let dir = tempfile::Builder::new()
            .prefix("krt-test-")
            .tempdir()
            .expect("temporary directory");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig)
            .expect("kubeconfig written");
        let client = client_for(&sim).await;
        SimCluster {
            sim,
            client,
            kubeconfig,
            dir,
        }
    }

    /// The simulator, for fault injection and its URL.
    pub fn sim(&self) -> &krt_sim::Sim {
        &self.sim
    }

    /// The simulator's base URL.
    pub fn url(&self) -> &str {
        self.sim.url()
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
    pub fn kubeconfig_as(&self, name: &str, credential: &krt_sim::Credential) -> PathBuf {
        let path = self.dir.path().join(format!("kubeconfig-{name}"));
        std::fs::write(&path, self.sim.kubeconfig_yaml_as(name, credential))
            .expect("kubeconfig written");
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
            spec: TokenRequestSpec {
                audiences: Vec::new(),
                ..TokenRequestSpec::default()
            },
            ..TokenRequest::default()
        };
        let issued = accounts
            .create_token_request(name, &Default::default(), &request)
            .await
            .expect("a token is issued");
        let token = issued.status.expect("the token").token;
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
    let mut config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::from_yaml(&sim.kubeconfig_yaml()).expect("the simulator's kubeconfig"),
        &KubeConfigOptions::default(),
    )
    .await
    .expect("a client configuration");
    config.default_retry = false;
    kube::Client::try_from(config).expect("a client")
}
