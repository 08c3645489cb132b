//! The real tier: with `KRT_E2E_KUBECONFIG` naming a kubeconfig, a [`TestCluster`] is that
//! cluster instead of a new krt-sim.
//!
//! A real cluster is shared, so its tests take turns (one at a time, across test processes too:
//! they lock `<kubeconfig>.krt-lock`), and
//! each begins on the cluster as it was when the tier first ran on it: the objects there then
//! are recorded in `<kubeconfig>.krt-baseline`, and before each test every other object is
//! deleted (finalizers that hold one are cleared) and waited for. On a control plane without
//! nodes, [`StandIn`] serves the test's Pods, Ingresses and LoadBalancer Services. **Point the tier at a cluster
//! made for it** (kind, k3d, minikube, a throwaway control plane), never at one whose objects
//! matter.
//!
//! [`TestCluster`]: crate::TestCluster

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use serde_json::json;

use crate::proxy::Proxy;
use crate::standin::StandIn;

/// The variable naming the real tier's kubeconfig.
pub const KUBECONFIG_VAR: &str = "KRT_E2E_KUBECONFIG";

/// How long a test waits for the objects of the tests before it to be gone.
const WIPE_TIMEOUT: Duration = Duration::from_secs(180);

/// The real tier's kubeconfig, when one is given.
pub(crate) fn kubeconfig() -> Option<PathBuf> {
    std::env::var_os(KUBECONFIG_VAR).map(PathBuf::from)
}

/// Whether the tests run on the real tier.
pub fn real_tier() -> bool {
    kubeconfig().is_some()
}

/// One test's turn on the real cluster: the proxy its clients go through and the stand-in, if
/// any. The next test's turn starts when it is dropped.
pub(crate) struct Turn {
    pub(crate) proxy: Proxy,
    /// The stand-in, on a control plane that has no node of its own.
    pub(crate) stand_in: Option<StandIn>,
    /// The lock on `<kubeconfig>.krt-lock`: one test at a time, across test processes too.
    _turn: std::fs::File,
}

/// Takes the next turn on the cluster of `path`, with the cluster wiped back to its baseline.
pub(crate) async fn turn(path: &Path) -> Turn {
    let lock = sibling(path, "krt-lock");
    let turn = tokio::task::spawn_blocking(move || {
        let file =
            std::fs::File::create(&lock).unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
        file.lock()
            .unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
        file
    })
    .await
    .expect("the real cluster's lock");
    let config = config(path).await;
    let admin = kube::Client::try_from(config.clone()).expect("a client of the real cluster");
    let mut bare = config;
    bare.auth_info = Default::default();
    let bare = kube::Client::try_from(bare).expect("a client of the real cluster");
    let baseline = baseline(path, &admin).await;
    wipe(&admin, &baseline).await;
    let nodes: Api<Node> = Api::all(admin.clone());
    let kubelets = nodes
        .list(&ListParams::default())
        .await
        .expect("the real cluster's nodes");
    let nodeless = kubelets
        .items
        .iter()
        .all(|n| n.metadata.name.as_deref() == Some(krt_sim::node::NODE));
    Turn {
        proxy: Proxy::start(admin.clone(), bare).await,
        stand_in: match nodeless {
            true => Some(StandIn::start(admin).await),
            false => None,
        },
        _turn: turn,
    }
}

async fn config(path: &Path) -> kube::Config {
    let kubeconfig = Kubeconfig::read_from(path)
        .unwrap_or_else(|e| panic!("{KUBECONFIG_VAR}={}: {e}", path.display()));
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{KUBECONFIG_VAR}={}: {e}", path.display()));
    config.default_retry = false;
    config
}

/// Every resource that can be listed and deleted, once, in the first version of its group that
/// serves it (the preferred one first: a kind only an alpha or beta version serves, such as a
/// ClusterTrustBundle, is found in that version), with whether it is namespaced. A group whose
/// discovery fails (an aggregated API whose service is gone answers 503) is passed over: what
/// is left of it is its APIService.
async fn resources(client: &kube::Client) -> Vec<(ApiResource, bool)> {
    let mut versions = vec!["v1".to_owned()];
    if let Ok(groups) = client.list_api_groups().await {
        for group in groups.groups {
            let preferred = group.preferred_version.map(|v| v.group_version);
            versions.extend(preferred.clone());
            versions.extend(
                group
                    .versions
                    .into_iter()
                    .map(|v| v.group_version)
                    .filter(|gv| Some(gv) != preferred.as_ref()),
            );
        }
    }
    let mut all: Vec<(ApiResource, bool)> = Vec::new();
    for group_version in versions {
        let listed = match group_version.as_str() {
            "v1" => client.list_core_api_resources("v1").await,
            gv => client.list_api_group_resources(gv).await,
        };
        let Ok(listed) = listed else {
            continue;
        };
        let gv: kube::core::GroupVersion = group_version.parse().expect("a group version");
        all.extend(
            listed
                .resources
                .iter()
                .filter(|r| !r.name.contains('/'))
                .filter(|r| {
                    ["list", "delete"]
                        .iter()
                        .all(|v| r.verbs.iter().any(|x| x == v))
                })
                .map(|r| {
                    (
                        ApiResource::from_gvk_with_plural(&gv.clone().with_kind(&r.kind), &r.name),
                        r.namespaced,
                    )
                })
                .filter(|(r, _)| {
                    !all.iter()
                        .any(|(seen, _)| seen.group == r.group && seen.plural == r.plural)
                })
                .collect::<Vec<_>>(),
        );
    }
    all
}

/// The uid of every object there, per `(apiVersion, kind)`.
async fn objects(
    client: &kube::Client,
    resources: &[(ApiResource, bool)],
) -> Vec<(ApiResource, bool, DynamicObject)> {
    let mut all = Vec::new();
    for (resource, namespaced) in resources {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), resource);
        let Ok(list) = api.list(&ListParams::default()).await else {
            continue;
        };
        all.extend(
            list.items
                .into_iter()
                .map(|o| (resource.clone(), *namespaced, o)),
        );
    }
    all
}

/// `<path>.<suffix>`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// The uids of the objects that were there when the tier first ran on the cluster.
async fn baseline(path: &Path, client: &kube::Client) -> BTreeSet<String> {
    let file = sibling(path, "krt-baseline");
    if let Ok(text) = std::fs::read_to_string(&file) {
        return serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: {e} (delete it to record it again)", file.display()));
    }
    let resources = resources(client).await;
    let uids: BTreeSet<String> = objects(client, &resources)
        .await
        .into_iter()
        .filter_map(|(_, _, o)| o.metadata.uid)
        .collect();
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&uids).expect("serializes"),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    uids
}

/// Deletes every object that is not in `baseline` and waits until they are gone, clearing the
/// finalizers of those that linger in deletion (but a Namespace's or a CRD's, which the API
/// server clears once their contents are gone).
async fn wipe(client: &kube::Client, baseline: &BTreeSet<String>) {
    let started = Instant::now();
    loop {
        let resources = resources(client).await;
        let left: Vec<_> = objects(client, &resources)
            .await
            .into_iter()
            .filter(|(_, _, o)| {
                o.metadata
                    .uid
                    .as_ref()
                    .is_some_and(|uid| !baseline.contains(uid))
            })
            .collect();
        if left.is_empty() {
            return;
        }
        if started.elapsed() > WIPE_TIMEOUT {
            let names: Vec<String> = left
                .iter()
                .map(|(r, _, o)| {
                    let ns = o.metadata.namespace.as_deref().unwrap_or("");
                    format!(
                        "{} {ns}/{}",
                        r.kind,
                        o.metadata.name.as_deref().unwrap_or("")
                    )
                })
                .collect();
            panic!(
                "the real cluster still holds objects of earlier tests after {WIPE_TIMEOUT:?}: {}",
                names.join(", ")
            );
        }
        for (resource, namespaced, object) in &left {
            let name = object.metadata.name.as_deref().unwrap_or_default();
            let api: Api<DynamicObject> = match (namespaced, &object.metadata.namespace) {
                (true, Some(ns)) => Api::namespaced_with(client.clone(), ns, resource),
                _ => Api::all_with(client.clone(), resource),
            };
            let lingering = object.metadata.deletion_timestamp.is_some();
            let held = object
                .metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty());
            // A Namespace and a CustomResourceDefinition are finalized by the API server
            // once what they hold is gone (cleared by force, a CRD would leave its custom
            // resources behind in etcd, back when the CRD is created again).
            let finalized_by_server = matches!(
                resource.kind.as_str(),
                "Namespace" | "CustomResourceDefinition"
            );
            if lingering && held && !finalized_by_server {
                let clear = json!({"metadata": {"finalizers": null}});
                api.patch(name, &PatchParams::default(), &Patch::Merge(&clear))
                    .await
                    .ok();
            } else if lingering && resource.kind == "Pod" {
                // A Pod's graceful deletion waits for a kubelet: end it, as `--force` does.
                let now = DeleteParams {
                    grace_period_seconds: Some(0),
                    ..DeleteParams::background()
                };
                api.delete(name, &now).await.ok();
            } else if !lingering {
                api.delete(name, &DeleteParams::background()).await.ok();
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
