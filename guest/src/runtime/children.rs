//! The children that explain a workload's progress: Deployment → its current ReplicaSet →
//! Pods; StatefulSet, DaemonSet and Job → Pods by selector (owned by the object); Service →
//! its EndpointSlices. Their state becomes a note on the parent's health message, for example
//! `1/2 pods not ready; pod web-5d9c-x: app: CrashLoopBackOff: back-off restarting` or
//! `0/2 endpoints ready`.

use crate::cluster::Cluster;
use crate::health;
use crate::model::{ApiResource, HealthState, ListOptions};
use serde_json::Value;

/// The annotation a Deployment controller numbers its ReplicaSets with.
const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";

/// Most Pods listed for one note.
const MAX_PODS: u32 = 200;

fn api(group: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: "v1".into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced: true,
    }
}

/// Whether objects of this group and kind have children worth following.
pub fn followed(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet") | ("batch", "Job") | ("", "Service")
    )
}

/// A note on `object`'s children, `None` when there is nothing to add (or a
/// child lookup failed: notes are best effort and never fail a watch).
pub fn note<C: Cluster>(cluster: &C, group: &str, kind: &str, object: &Value) -> Option<String> {
    let namespace = object.pointer("/metadata/namespace")?.as_str()?;
    if (group, kind) == ("", "Service") {
        return service_note(cluster, namespace, object);
    }
    let owner = match (group, kind) {
        ("apps", "Deployment") => current_replica_set(cluster, namespace, object)?,
        _ => object.clone(),
    };
    let pods = owned(
        cluster,
        &api("", "Pod", "pods"),
        namespace,
        &owner,
        Some(MAX_PODS),
    )?;
    pods_note(&pods)
}

/// The Deployment's newest ReplicaSet (highest revision, then newest).
fn current_replica_set<C: Cluster>(
    cluster: &C,
    namespace: &str,
    deployment: &Value,
) -> Option<Value> {
    let sets = owned(
        cluster,
        &api("apps", "ReplicaSet", "replicasets"),
        namespace,
        deployment,
        None,
    )?;
    sets.into_iter().max_by_key(|rs| {
        let revision = rs
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(REVISION_ANNOTATION))
            .and_then(Value::as_str)
            .and_then(|r| r.parse::<u64>().ok())
            .unwrap_or(0);
        let created = rs
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        (revision, created)
    })
}

/// The label EndpointSlices carry with the name of their Service.
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// A note on a Service's EndpointSlices: how many endpoints are ready. Services
/// without a selector have no managed slices and get no note.
fn service_note<C: Cluster>(cluster: &C, namespace: &str, service: &Value) -> Option<String> {
    service
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty())?;
    let name = service.pointer("/metadata/name")?.as_str()?;
    let slices = cluster
        .list(
            &api("discovery.k8s.io", "EndpointSlice", "endpointslices"),
            Some(namespace),
            &ListOptions {
                label_selector: Some(format!("{SERVICE_NAME_LABEL}={name}")),
                ..ListOptions::default()
            },
        )
        .ok()?;
    Some(endpoints_note(&slices.items))
}

/// `R/N endpoints ready` over the endpoints of `slices` (an endpoint with no
/// `ready` condition counts as ready, as kube-proxy treats it).
fn endpoints_note(slices: &[Value]) -> String {
    let endpoints: Vec<&Value> = slices
        .iter()
        .filter_map(|s| s.get("endpoints").and_then(Value::as_array))
        .flatten()
        .collect();
    if endpoints.is_empty() {
        return "no endpoints: no ready Pod matches the Service's selector".into();
    }
    let ready = endpoints
        .iter()
        .filter(|e| e.pointer("/conditions/ready") != Some(&Value::Bool(false)))
        .count();
    format!("{ready}/{} endpoints ready", endpoints.len())
}

/// Objects matching `owner`'s selector that `owner` controls (by uid).
fn owned<C: Cluster>(
    cluster: &C,
    api: &ApiResource,
    namespace: &str,
    owner: &Value,
    limit: Option<u32>,
) -> Option<Vec<Value>> {
    let selector = label_selector(owner.pointer("/spec/selector")?)?;
    let uid = owner.pointer("/metadata/uid")?.as_str()?;
    let list = cluster
        .list(
            api,
            Some(namespace),
            &ListOptions {
                label_selector: Some(selector),
                limit,
                ..ListOptions::default()
            },
        )
        .ok()?;
    Some(
        list.items
            .into_iter()
            .filter(|item| {
                item.pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .is_some_and(|refs| {
                        refs.iter()
                            .any(|r| r.get("uid").and_then(Value::as_str) == Some(uid))
                    })
            })
            .collect(),
    )
}

/// A `metav1.LabelSelector` as a label-selector string; `None` when empty or malformed.
pub fn label_selector(selector: &Value) -> Option<String> {
    let mut terms = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            terms.push(format!("{key}={}", value.as_str()?));
        }
    }
    for expression in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = expression.get("key")?.as_str()?;
        let values: Vec<&str> = expression
            .get("values")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        terms.push(match expression.get("operator")?.as_str()? {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => return None,
        });
    }
    (!terms.is_empty()).then(|| terms.join(","))
}

/// How many Pods are not current, and the most telling one's message (a failed
/// Pod first); `None` when every Pod is current or there are none.
fn pods_note(pods: &[Value]) -> Option<String> {
    let states: Vec<(&Value, crate::model::Health)> = pods
        .iter()
        .map(|pod| (pod, health::compute(pod, super::now_unix_secs())))
        .collect();
    let waiting: Vec<&(&Value, crate::model::Health)> = states
        .iter()
        .filter(|(_, h)| h.state != HealthState::Current)
        .collect();
    let (pod, worst) = waiting
        .iter()
        .find(|(_, h)| h.state == HealthState::Failed)
        .or_else(|| waiting.first())?;
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    Some(format!(
        "{}/{} pods not ready; pod {name}: {}",
        waiting.len(),
        pods.len(),
        worst.message
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors_render_like_kubectl() {
        let selector = json!({"matchLabels": {"app": "web", "tier": "fe"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]},
                {"key": "x", "operator": "NotIn", "values": ["c"]},
                {"key": "y", "operator": "Exists"}, {"key": "z", "operator": "DoesNotExist"}]});
        assert_eq!(
            label_selector(&selector).unwrap(),
            "app=web,tier=fe,env in (a,b),x notin (c),y,!z"
        );
        assert_eq!(label_selector(&json!({})), None);
        assert_eq!(
            label_selector(&json!({"matchExpressions": [{"key": "k", "operator": "Odd"}]})),
            None
        );
    }

    fn pod(name: &str, waiting: Option<&str>) -> Value {
        let mut status = json!({"phase": "Running",
            "conditions": [{"type": "Ready", "status": if waiting.is_some() { "False" } else { "True" }}]});
        if let Some(reason) = waiting {
            status["containerStatuses"] = json!([{"name": "app", "ready": false,
                "state": {"waiting": {"reason": reason, "message": "back-off"}}}]);
        }
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"restartPolicy": "Always"}, "status": status})
    }

    #[test]
    fn pod_notes_prefer_failed_pods() {
        assert_eq!(pods_note(&[pod("a", None)]), None);
        assert_eq!(pods_note(&[]), None);
        let note = pods_note(&[
            pod("ok", None),
            pod("slow", Some("ContainerCreating")),
            pod("bad", Some("CrashLoopBackOff")),
        ])
        .unwrap();
        assert!(note.starts_with("2/3 pods not ready; pod bad: "), "{note}");
        assert!(note.contains("CrashLoopBackOff"), "{note}");
        assert!(followed("apps", "Deployment") && followed("batch", "Job"));
        assert!(followed("", "Service"));
        assert!(!followed("", "Pod") && !followed("apps", "ReplicaSet"));
    }

    #[test]
    fn endpoint_notes_count_ready_endpoints() {
        let slice = |ready: &[bool]| {
            let endpoints: Vec<Value> = ready
                .iter()
                .map(|r| json!({"addresses": ["10.0.0.1"], "conditions": {"ready": r}}))
                .collect();
            json!({"endpoints": endpoints})
        };
        assert_eq!(
            endpoints_note(&[slice(&[true, false]), slice(&[true])]),
            "2/3 endpoints ready"
        );
        assert_eq!(
            endpoints_note(&[json!({"endpoints": [{"addresses": ["10.0.0.2"]}]})]),
            "1/1 endpoints ready"
        );
        assert!(endpoints_note(&[]).starts_with("no endpoints"));
        assert!(endpoints_note(&[json!({"endpoints": null})]).starts_with("no endpoints"));
    }
}
