//! Server-side defaulting: the fields kube-apiserver fills in that a diff must learn to ignore.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use crate::registry::ResourceType;

/// Sets `field` on `object` when it is absent.
fn default(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        map.entry(field).or_insert(value);
    }
}

fn each_mut<'a>(value: &'a mut Value, field: &str) -> impl Iterator<Item = &'a mut Value> {
    value
        .get_mut(field)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// Container defaults: `terminationMessagePath`, `terminationMessagePolicy`, `imagePullPolicy`,
/// port `protocol`.
fn container(c: &mut Value) {
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    let image = c["image"].as_str().unwrap_or_default();
    let tag = image.rsplit('/').next().unwrap_or_default();
    let policy = if image.contains('@') || (tag.contains(':') && !tag.ends_with(":latest")) {
        "IfNotPresent"
    } else {
        "Always"
    };
    default(c, "imagePullPolicy", json!(policy));
    default(c, "resources", json!({}));
    for port in each_mut(c, "ports") {
        default(port, "protocol", json!("TCP"));
    }
}

/// PodSpec defaults.
fn pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    for field in ["containers", "initContainers"] {
        for c in each_mut(spec, field) {
            container(c);
        }
    }
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "securityContext", json!({}));
    default(spec, "schedulerName", json!("default-scheduler"));
}

fn template(spec: &mut Value) {
    if let Some(s) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
        pod_spec(s);
    }
}

/// Allocates the next ClusterIP from 10.96.0.0/12.
fn next_cluster_ip() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(10);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("10.96.{}.{}", (n >> 8) & 0xff, n & 0xff)
}

fn service(spec: &mut Value, live: Option<&Value>) {
    default(spec, "type", json!("ClusterIP"));
    default(spec, "sessionAffinity", json!("None"));
    let external_name = spec["type"] == "ExternalName";
    if !external_name {
        let live_ip = live
            .and_then(|l| l["spec"]["clusterIP"].as_str())
            .map(str::to_string);
        if spec["clusterIP"].as_str().is_none_or(str::is_empty) {
            spec["clusterIP"] = json!(live_ip.unwrap_or_else(next_cluster_ip));
        }
        let ip = spec["clusterIP"].clone();
        default(spec, "clusterIPs", json!([ip]));
        default(spec, "ipFamilies", json!(["IPv4"]));
        default(spec, "ipFamilyPolicy", json!("SingleStack"));
        default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    let node_ports = matches!(spec["type"].as_str(), Some("NodePort" | "LoadBalancer"));
    for (i, port) in each_mut(spec, "ports").enumerate() {
        default(port, "protocol", json!("TCP"));
        let target = port["port"].clone();
        default(port, "targetPort", target);
        if node_ports {
            default(port, "nodePort", json!(30000 + i));
        }
    }
    if node_ports {
        default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
}

/// Fills server defaults into `object` of type `rt` (`live` is the current object for updates).
pub fn apply(rt: &ResourceType, object: &mut Value, live: Option<&Value>) {
    if rt.custom {
        return;
    }
    let Some(spec) = object.get_mut("spec") else {
        if rt.kind == "Namespace" {
            default(object, "spec", json!({"finalizers": ["kubernetes"]}));
            default(object, "status", json!({"phase": "Active"}));
        }
        if rt.kind == "Secret" {
            default(object, "type", json!("Opaque"));
        }
        return;
    };
    match rt.kind.as_str() {
        "Deployment" => {
            default(spec, "replicas", json!(1));
            default(spec, "revisionHistoryLimit", json!(10));
            default(spec, "progressDeadlineSeconds", json!(600));
            default(
                spec,
                "strategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
            );
            template(spec);
        }
        "StatefulSet" => {
            default(spec, "replicas", json!(1));
            default(spec, "podManagementPolicy", json!("OrderedReady"));
            default(spec, "revisionHistoryLimit", json!(10));
            default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
            );
            default(
                spec,
                "persistentVolumeClaimRetentionPolicy",
                json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
            );
            template(spec);
        }
        "DaemonSet" => {
            default(spec, "revisionHistoryLimit", json!(10));
            default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
            );
            template(spec);
        }
        "ReplicaSet" => {
            default(spec, "replicas", json!(1));
            template(spec);
        }
        "Job" => {
            default(spec, "backoffLimit", json!(6));
            default(spec, "completions", json!(1));
            default(spec, "parallelism", json!(1));
            default(spec, "completionMode", json!("NonIndexed"));
            default(spec, "suspend", json!(false));
            default(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
            let uid_label =
                json!({"batch.kubernetes.io/controller-uid": object["metadata"]["uid"].clone()});
            let spec = object.get_mut("spec").expect("present");
            default(spec, "manualSelector", json!(false));
            default(spec, "selector", json!({"matchLabels": uid_label}));
            template(spec);
        }
        "CronJob" => {
            default(spec, "concurrencyPolicy", json!("Allow"));
            default(spec, "suspend", json!(false));
            default(spec, "successfulJobsHistoryLimit", json!(3));
            default(spec, "failedJobsHistoryLimit", json!(1));
            if let Some(job) = spec.get_mut("jobTemplate").and_then(|j| j.get_mut("spec")) {
                template(job);
            }
        }
        "Pod" => pod_spec(spec),
        "Service" => service(spec, live),
        "PersistentVolumeClaim" => {
            default(spec, "volumeMode", json!("Filesystem"));
            default(spec, "storageClassName", json!("standard"));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtins;

    fn rt(kind: &str) -> ResourceType {
        builtins().into_iter().find(|t| t.kind == kind).unwrap()
    }

    #[test]
    fn deployment_defaults() {
        let mut d = json!({"metadata": {}, "spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}, {"name": "b", "image": "busybox"}]}}}});
        apply(&rt("Deployment"), &mut d, None);
        assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate");
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        let c = &d["spec"]["template"]["spec"]["containers"];
        assert_eq!(c[0]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c[1]["imagePullPolicy"], "Always");
        assert_eq!(c[0]["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(c[0]["ports"][0]["protocol"], "TCP");
    }

    #[test]
    fn services_get_a_cluster_ip_that_updates_keep() {
        let mut s = json!({"metadata": {}, "spec": {"ports": [{"port": 80}]}});
        apply(&rt("Service"), &mut s, None);
        let ip = s["spec"]["clusterIP"].clone();
        assert!(ip.as_str().unwrap().starts_with("10.96."));
        assert_eq!(s["spec"]["clusterIPs"], json!([ip.clone()]));
        assert_eq!(s["spec"]["type"], "ClusterIP");
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        let mut again = json!({"metadata": {}, "spec": {"ports": [{"port": 80}]}});
        apply(&rt("Service"), &mut again, Some(&s));
        assert_eq!(again["spec"]["clusterIP"], ip);
    }
}
