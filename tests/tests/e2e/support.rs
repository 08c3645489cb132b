//! What the e2e tests share beyond krt-testkit: runtimes over a test cluster.

pub use krt_testkit::{
    Run, SimCluster, cache_dir, client_for, krt, krt_bin, krt_env, krt_in, krt_spawn, resource,
    temp_dir, workspace,
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
