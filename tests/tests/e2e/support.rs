//! What the e2e tests share beyond krt-testkit: runtimes over a test cluster.

pub use krt_testkit::{
    Run, SimCluster, cache_dir, client_for, krt, krt_at, krt_bin, krt_env, krt_in, krt_spawn,
    local_state, resource, show, state_ids, temp_dir, workspace,
};

/// The paths of the test components `tests/build.rs` built.
pub mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

use krt_host::{ComponentRuntime, ComponentSource, EngineOptions, KubeCluster, NativeRuntime};
use std::sync::Arc;

/// Runtimes over a [`SimCluster`].
pub trait Runtimes {
    /// A runtime over the built-in guest component.
    async fn runtime(&self) -> ComponentRuntime;

    /// A runtime over the built-in guest component reaching `cluster`.
    async fn runtime_in(&self, cluster: Arc<KubeCluster>) -> ComponentRuntime;

    /// The same logic run natively, reaching `cluster`.
    fn native_in(&self, cluster: Arc<KubeCluster>) -> NativeRuntime;

    /// A cluster handle whose context namespace is `namespace`.
    fn kube_cluster(&self, namespace: &str) -> Arc<KubeCluster>;
}

impl Runtimes for SimCluster {
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
pub async fn foreign_write(cluster: &SimCluster, name: &str, key: &str, value: &str) {
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
