//! What the e2e tests share beyond krt-testkit: runtimes over a test cluster.

pub use krt_testkit::{
    Run, TestCluster, assert_contains, cache_dir, client_for, krt, krt_at, krt_bin, krt_env,
    krt_in, krt_spawn, local_state, resource, run_ok, show, state_ids, temp_dir, workspace,
};

/// The paths of the test components `tests/build.rs` built.
pub mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

use krt_host::model::{
    ApplyMode, ApplyOptions, ApplyResponse, DeleteRequest, ReadOptions, Resource, Status,
    StatusCode, WatchRequest,
};
use krt_host::{
    ComponentRuntime, ComponentSource, EngineOptions, KubeCluster, NativeRuntime, Runtime,
};
use std::sync::Arc;

/// Runtimes over a [`TestCluster`].
pub trait Runtimes {
    /// A runtime over the built-in guest component.
    async fn runtime(&self) -> ComponentRuntime;

    /// A runtime over the built-in guest component reaching `cluster`.
    async fn runtime_in(&self, cluster: Arc<KubeCluster>) -> ComponentRuntime;

    /// The same logic run natively, reaching `cluster`.
    fn native_in(&self, cluster: Arc<KubeCluster>) -> NativeRuntime;

    /// A cluster handle whose context namespace is `namespace`.
    fn kube_cluster(&self, namespace: &str) -> Arc<KubeCluster>;

    /// A runtime over the built-in guest component and its cluster handle
    /// (context namespace `default`), whose retries a test can count.
    async fn counted_runtime(&self) -> (ComponentRuntime, Arc<KubeCluster>) {
        let kc = self.kube_cluster("default");
        (self.runtime_in(kc.clone()).await, kc)
    }
}

impl Runtimes for TestCluster {
    async fn runtime(&self) -> ComponentRuntime {
        self.runtime_in(self.kube_cluster("default")).await
    }

    async fn runtime_in(&self, cluster: Arc<KubeCluster>) -> ComponentRuntime {
        let options = EngineOptions {
            cache_dir: Some(cache_dir()),
            ..EngineOptions::default()
        };
        ComponentRuntime::new(&ComponentSource::Default, cluster, &options)
            .await
            .expect("component loads")
    }

    fn native_in(&self, cluster: Arc<KubeCluster>) -> NativeRuntime {
        NativeRuntime::new(cluster)
    }

    fn kube_cluster(&self, namespace: &str) -> Arc<KubeCluster> {
        Arc::new(KubeCluster::new(self.client.clone(), namespace))
    }
}

/// The requests for object `name` of `namespace`'s ConfigMaps, by verb
/// (in verb order), as the simulator counted them.
pub fn configmap_requests(
    r: &krt_sim::RequestCounts,
    namespace: &str,
    name: &str,
) -> Vec<(String, u64)> {
    let path = format!("/api/v1/namespaces/{namespace}/configmaps/{name}");
    r.iter()
        .filter(|(_, p, _)| *p == path)
        .map(|(v, _, n)| (v.to_owned(), n))
        .collect()
}

/// Request counts by verb, as [`configmap_requests`] gives them.
pub fn verbs(list: &[(&str, u64)]) -> Vec<(String, u64)> {
    list.iter().map(|(v, n)| (v.to_string(), *n)).collect()
}

/// Another field manager (`someone-else`) sets `data.<key>` of ConfigMap
/// `default/<name>` by server-side apply, directly (not through krt).
pub async fn foreign_write(cluster: &TestCluster, name: &str, key: &str, value: &str) {
    use kube::api::{Api, DynamicObject, Patch, PatchParams};
    let ar = kube::discovery::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(cluster.client.clone(), "default", &ar);
    let patch = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {key: value}
    });
    api.patch(
        name,
        &PatchParams::apply("someone-else"),
        &Patch::Apply(patch),
    )
    .await
    .expect("foreign writer patches");
}

/// The message of `response`'s error status, checked for `code` and `reason`.
pub fn failure(response: &ApplyResponse, code: StatusCode, reason: &str) -> String {
    let status = response.status.as_ref().expect("a status");
    assert_eq!(
        (status.code, status.reason.as_str()),
        (code, reason),
        "{status:?}"
    );
    status.message.clone()
}

/// A ConfigMap `default/<name>` holding `data`.
pub fn configmap(name: &str, data: serde_json::Value) -> serde_json::Value {
    krt_testkit::configmap(name)
        .namespace("default")
        .data(data)
        .value()
}

/// Applies `plan` through `rt` (no prior, default options) and asserts that it worked.
pub async fn apply_ok(rt: &impl Runtime, plan: &Resource) -> ApplyResponse {
    let response = rt.apply(None, Some(plan), &ApplyOptions::default()).await;
    assert_eq!(response.status, None, "{response:?}");
    response
}

/// Apply options for a client-side three-way apply.
pub fn client_side() -> ApplyOptions {
    ApplyOptions {
        mode: ApplyMode::ClientSideThreeWay,
        ..ApplyOptions::default()
    }
}

/// A watch request that waits at most `ms` milliseconds.
pub fn watch_for(ms: u32) -> WatchRequest {
    WatchRequest {
        timeout_ms: ms,
        ..WatchRequest::default()
    }
}

/// Reads and deletes `missing`, an object that does not exist, through `rt`:
/// the read finds nothing and the delete succeeds with a note that it was
/// already gone, which it returns.
pub async fn read_and_delete_missing(rt: &impl Runtime, missing: &Resource) -> Status {
    let read = rt.read(None, Some(missing), &ReadOptions::default()).await;
    assert_eq!(read.status, None);
    assert!(read.resource.is_none());
    // Already gone is a success that says nothing was deleted.
    let gone = rt
        .delete(missing, &DeleteRequest::default())
        .await
        .expect("a note");
    assert!(!gone.is_error(), "{gone:?}");
    assert_eq!(gone.code, StatusCode::NotFound);
    assert_eq!(gone.reason, "AlreadyGone");
    gone
}

/// A fault for the next request of `verb` whose path contains `path`.
pub fn fault(verb: &str, path: &str, action: krt_sim::FaultAction) -> krt_sim::Fault {
    krt_sim::Fault {
        verb: Some(verb.into()),
        path: Some(path.into()),
        times: 1,
        action,
    }
}
