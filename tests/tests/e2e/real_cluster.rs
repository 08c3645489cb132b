//! The real-cluster tier: when `KRT_E2E_KUBECONFIG` names a kubeconfig, both
//! runtimes run create / update / no-op / read / delete against that cluster in
//! a fresh namespace (removed afterwards). Without it the tests say why they
//! skip and pass.

use k8s_openapi::api::core::v1::Namespace;
use krt_host::model::{Action, ApplyOptions, DeleteRequest, ReadOptions, Resource};
use krt_host::{
    ComponentRuntime, ComponentSource, EngineOptions, KubeCluster, NativeRuntime, Runtime,
};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;
use std::sync::Arc;

async fn real_client() -> Option<kube::Client> {
    let Ok(path) = std::env::var("KRT_E2E_KUBECONFIG") else {
        eprintln!("skipped: set KRT_E2E_KUBECONFIG to a kubeconfig to run the real-cluster tier");
        return None;
    };
    let kubeconfig =
        kube::config::Kubeconfig::read_from(&path).expect("KRT_E2E_KUBECONFIG is readable");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("KRT_E2E_KUBECONFIG is valid");
    Some(kube::Client::try_from(config).expect("client"))
}

async fn lifecycle<R: Runtime>(rt: &R, namespace: &str) {
    let cm = |data: serde_json::Value| Resource {
        id: format!("v1:ConfigMap:{namespace}:krt-e2e"),
        type_: "Kubernetes".into(),
        attributes: json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "krt-e2e", "namespace": namespace}, "data": data}),
        depends_on: vec![],
        extensions: json!({}),
    };
    let (v1, v2) = (cm(json!({"a": "1"})), cm(json!({"a": "2"})));
    let opts = ApplyOptions::default();
    assert_eq!(
        rt.apply(None, Some(&v1), &opts).await.action,
        Action::Create
    );
    assert_eq!(
        rt.apply(Some(&v1), Some(&v2), &opts).await.action,
        Action::Update
    );
    assert_eq!(
        rt.apply(Some(&v2), Some(&v2), &opts).await.action,
        Action::Unchanged
    );
    let read = rt.read(None, Some(&v2), &ReadOptions::default()).await;
    assert_eq!(read.resource.unwrap().attributes["data"], json!({"a": "2"}));
    assert_eq!(
        rt.delete(&v2, &DeleteRequest::default())
            .await
            .filter(|s| s.is_error()),
        None
    );
    assert!(
        rt.read(None, Some(&v2), &ReadOptions::default())
            .await
            .resource
            .is_none()
    );
}

async fn in_fresh_namespace(client: &kube::Client, tag: &str) -> String {
    let name = format!("krt-e2e-{tag}-{}", std::process::id());
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    api.create(&PostParams::default(), &ns)
        .await
        .expect("namespace created");
    name
}

async fn remove_namespace(client: &kube::Client, name: &str) {
    let api: Api<Namespace> = Api::all(client.clone());
    let _ = api.delete(name, &DeleteParams::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn component_runtime_on_a_real_cluster() {
    let Some(client) = real_client().await else {
        return;
    };
    let ns = in_fresh_namespace(&client, "component").await;
    let cluster = Arc::new(KubeCluster::new(client.clone(), ns.clone()));
    let rt = ComponentRuntime::new(
        &ComponentSource::Default,
        cluster,
        &EngineOptions::default(),
    )
    .await
    .expect("component loads");
    lifecycle(&rt, &ns).await;
    remove_namespace(&client, &ns).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_runtime_on_a_real_cluster() {
    let Some(client) = real_client().await else {
        return;
    };
    let ns = in_fresh_namespace(&client, "native").await;
    let rt = NativeRuntime::new(Arc::new(KubeCluster::new(client.clone(), ns.clone())));
    lifecycle(&rt, &ns).await;
    remove_namespace(&client, &ns).await;
}
