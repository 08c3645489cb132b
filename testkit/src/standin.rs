//! A stand-in for what a bare control plane (kube-apiserver and kube-controller-manager alone)
//! lacks: a node with its kubelet and scheduler, an ingress controller and a load balancer. It
//! registers krt-sim's node and keeps its Lease renewed, binds every Pod that is not bound (to
//! the node its required affinity names, else to krt-sim's), acts as the kubelet of every node
//! (none has one of its own): reports each bound Pod's status as krt-sim's simulated kubelet does
//! ([`krt_sim::node::pod_status`]), ends graceful deletions, and gives Ingresses and
//! LoadBalancer Services krt-sim's addresses ([`krt_sim::node::ingress_status`],
//! [`krt_sim::node::service_status`]), so that rollouts, Jobs and health waits finish there as
//! they do on krt-sim.
//!
//! Use it for a control plane without nodes only: on kind, k3d or minikube the real kubelet,
//! scheduler and controllers do this.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use krt_sim::node::{NODE, ingress_status, pod_status, service_status};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::watcher;
use serde_json::{Value, json};

/// How often the node's Lease is renewed (the kubelet's default).
const RENEW: Duration = Duration::from_secs(10);

/// A running stand-in; it stops when dropped.
pub struct StandIn {
    task: tokio::task::JoinHandle<()>,
}

impl StandIn {
    /// Registers the node through `client` (the cluster's admin) and starts serving its Pods,
    /// Ingresses and LoadBalancer Services.
    pub async fn start(client: kube::Client) -> StandIn {
        register(&client).await;
        let task = tokio::spawn(run(client));
        StandIn { task }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn now() -> Value {
    serde_json::to_value(Time(jiff::Timestamp::now())).expect("a time serializes")
}

async fn register(client: &kube::Client) {
    let nodes: Api<Node> = Api::all(client.clone());
    if nodes.get_opt(NODE).await.expect("GET node").is_none() {
        let node: Node = serde_json::from_value(json!({"metadata": {"name": NODE,
            "labels": {"kubernetes.io/hostname": NODE, "kubernetes.io/os": "linux"}}}))
        .expect("a Node");
        nodes
            .create(&PostParams::default(), &node)
            .await
            .expect("the stand-in kubelet registers its node");
    }
    let capacity = json!({"cpu": "8", "memory": "32Gi", "pods": "110"});
    let status = json!({"status": {"capacity": capacity, "allocatable": capacity,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "kubelet is posting ready status", "lastHeartbeatTime": now(),
            "lastTransitionTime": now()}]}});
    nodes
        .patch_status(NODE, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("the stand-in kubelet reports its node Ready");
    renew(client).await;
}

/// Creates or renews the node's Lease in `kube-node-lease`, the heartbeat the node lifecycle
/// controller reads.
async fn renew(client: &kube::Client) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    let renewed = serde_json::to_value(MicroTime(jiff::Timestamp::now())).expect("serializes");
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": NODE, "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": NODE, "leaseDurationSeconds": 40, "renewTime": renewed}});
    let params = PatchParams::apply("krt-testkit-kubelet").force();
    if let Err(e) = leases.patch(NODE, &params, &Patch::Apply(&lease)).await {
        eprintln!("krt-testkit's stand-in could not renew its Lease: {e}");
    }
}

async fn run(client: kube::Client) {
    let pods: Api<Pod> = Api::all(client.clone());
    let mut pods = watcher(pods, watcher::Config::default()).boxed();
    let ingresses: Api<Ingress> = Api::all(client.clone());
    let mut ingresses = watcher(ingresses, watcher::Config::default()).boxed();
    let services: Api<Service> = Api::all(client.clone());
    let mut services = watcher(services, watcher::Config::default()).boxed();
    let mut heartbeat = tokio::time::interval(RENEW);
    loop {
        tokio::select! {
            _ = heartbeat.tick() => renew(&client).await,
            event = pods.next() => match event {
                Some(Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod))) => {
                    serve(&client, pod).await;
                }
                Some(_) => {}
                None => return,
            },
            event = ingresses.next() => match event {
                Some(Ok(watcher::Event::Apply(ingress) | watcher::Event::InitApply(ingress))) => {
                    let address = ingress_status();
                    address_once(&client, ingress, &address).await;
                }
                Some(_) => {}
                None => return,
            },
            event = services.next() => match event {
                Some(Ok(watcher::Event::Apply(service) | watcher::Event::InitApply(service))) => {
                    let value = serde_json::to_value(&service).expect("a Service serializes");
                    if value["spec"]["type"] == "LoadBalancer" {
                        address_once(&client, service, &service_status(&value)).await;
                    }
                }
                Some(_) => {}
                None => return,
            },
        }
    }
}

/// Sets `object`'s status to `status` unless it already has its load balancer address.
async fn address_once<K>(client: &kube::Client, object: K, status: &Value)
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + serde::Serialize
        + serde::de::DeserializeOwned
        + Clone
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let value = serde_json::to_value(&object).expect("serializes");
    if value["metadata"]["deletionTimestamp"].is_string()
        || value["status"]["loadBalancer"]["ingress"].is_array()
    {
        return;
    }
    let (Some(namespace), Some(name)) = (
        value["metadata"]["namespace"].as_str(),
        value["metadata"]["name"].as_str(),
    ) else {
        return;
    };
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let patch = json!({ "status": status });
    if let Err(e) = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        eprintln!("krt-testkit's stand-in could not address {namespace}/{name}: {e}");
    }
}

/// The node a Pod is bound to: the one its required node affinity names by name (a
/// DaemonSet's Pod for each node), else the stand-in's own.
fn node_for(pod: &Value) -> String {
    let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    terms
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|term| term["matchFields"].as_array().into_iter().flatten())
        .find(|field| field["key"] == "metadata.name" && field["operator"] == "In")
        .and_then(|field| field["values"][0].as_str())
        .unwrap_or(NODE)
        .to_owned()
}

/// Binds `pod` to its node, reports its next status, or, once it is being deleted, confirms
/// that its containers stopped by deleting it for good (grace period 0), as a kubelet does.
async fn serve(client: &kube::Client, pod: Pod) {
    let (Some(namespace), Some(name)) = (pod.metadata.namespace.clone(), pod.metadata.name.clone())
    else {
        return;
    };
    let api: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let deleting = pod.metadata.deletion_timestamp.is_some();
    let pod = serde_json::to_value(&pod).expect("a Pod serializes");
    let bound = pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let result = if deleting {
        if !bound {
            return;
        }
        let uid = pod["metadata"]["uid"].as_str().map(str::to_owned);
        let params = DeleteParams {
            grace_period_seconds: Some(0),
            preconditions: Some(Preconditions {
                uid,
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&name, &params).await {
            Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
            other => other.map(drop),
        }
    } else if !bound {
        let binding = json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_for(&pod)}});
        api.create_subresource::<_, Value>("binding", &name, &PostParams::default(), &binding)
            .await
            .map(drop)
    } else if let Some(status) = pod_status(&pod) {
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "status": status })),
        )
        .await
        .map(drop)
    } else {
        return;
    };
    if let Err(e) = result {
        eprintln!("krt-testkit's stand-in could not serve Pod {namespace}/{name}: {e}");
    }
}
