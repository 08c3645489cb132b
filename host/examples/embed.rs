//! Embedding krt: load the runtime component, apply a Deployment and watch it
//! to ready.
//!
//! ```sh
//! cargo run -p host --example embed                      # against an embedded krt-sim
//! KUBECONFIG=~/.kube/config cargo run -p host --example embed -- --real
//! ```

use krt_host::model::{ApplyOptions, Resource, WatchRequest};
use krt_host::{ComponentRuntime, ComponentSource, EngineOptions, KubeCluster, Runtime};
use serde_json::json;
use std::sync::Arc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // 1. A cluster: a real one with `--real`, else an in-process simulator.
    let (client, _sim) = if std::env::args().any(|a| a == "--real") {
        (kube::Client::try_default().await?, None)
    } else {
        let sim = krt_sim::Sim::start().await?;
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&sim.kubeconfig_yaml())?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
        (kube::Client::try_from(config)?, Some(sim))
    };
    let cluster = Arc::new(KubeCluster::new(client, "default"));

    // 2. The runtime: krt's built-in guest (or `ComponentSource::File(path)`).
    let runtime = ComponentRuntime::new(
        &ComponentSource::Default,
        cluster,
        &EngineOptions::default(),
    )
    .await?;

    // 3. Apply a Deployment (server-side apply, field manager `krt`).
    let deployment = Resource {
        id: "apps/v1:Deployment:default:hello".into(),
        type_: "Kubernetes".into(),
        attributes: json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "hello"}},
                "template": {"metadata": {"labels": {"app": "hello"}},
                    "spec": {"containers": [{"name": "hello", "image": "nginx:1.27"}]}}}
        }),
        depends_on: vec![],
        extensions: json!({}),
    };
    let applied = runtime
        .apply(None, Some(&deployment), &ApplyOptions::default())
        .await;
    if let Some(status) = applied.status {
        anyhow::bail!("apply failed: {}: {}", status.reason, status.message);
    }
    println!("apply: {:?}", applied.action);

    // 4. Watch it until it is ready (or 60 s pass).
    let watched = runtime
        .watch(
            &deployment,
            &WatchRequest {
                timeout_ms: 60_000,
                ..WatchRequest::default()
            },
        )
        .await;
    println!(
        "health: {:?} {} {}",
        watched.health.state, watched.health.reason, watched.health.message
    );
    match watched.status {
        None => Ok(()),
        Some(status) => anyhow::bail!("not ready: {}", status.message),
    }
}
