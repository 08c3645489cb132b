//! Pod and PodSpec defaults (kube's `pkg/apis/core/v1/defaults.go`), and what the admission
//! plugins add to a new Pod: the `default` service account and its token volume
//! (ServiceAccount), `priority` and `preemptionPolicy` (Priority), the not-ready/unreachable
//! tolerations (DefaultTolerationSeconds), then the status the registry starts it with.

use serde_json::{Value, json};

use super::{default, each_mut};
use crate::meta;

/// The image's tag as kube's `parsers.ParseImageName` finds it: `latest` when neither a tag
/// nor a digest is given.
fn tag(image: &str) -> &str {
    let name = image.split('@').next().unwrap_or_default();
    let last = name.rsplit('/').next().unwrap_or_default();
    match last.split_once(':') {
        Some((_, tag)) => tag,
        None if image.contains('@') => "",
        None => "latest",
    }
}

/// `Probe` defaults, and `httpGet`'s `path` and `scheme`, `grpc`'s `service`.
fn probe(p: &mut Value) {
    if !p.is_object() {
        return;
    }
    default(p, "timeoutSeconds", json!(1));
    default(p, "periodSeconds", json!(10));
    default(p, "successThreshold", json!(1));
    default(p, "failureThreshold", json!(3));
    handler(p);
    if let Some(grpc) = p.get_mut("grpc") {
        default(grpc, "service", json!(""));
    }
}

/// `httpGet` defaults of a probe or lifecycle handler.
fn handler(h: &mut Value) {
    if let Some(get) = h.get_mut("httpGet").filter(|g| g.is_object()) {
        default(get, "path", json!("/"));
        default(get, "scheme", json!("HTTP"));
    }
}

/// Container defaults (also for init and ephemeral containers).
fn container(c: &mut Value) {
    if !c.is_object() {
        return;
    }
    let policy = if tag(c["image"].as_str().unwrap_or_default()) == "latest" {
        "Always"
    } else {
        "IfNotPresent"
    };
    default(c, "imagePullPolicy", json!(policy));
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    default(c, "resources", json!({}));
    for port in each_mut(c, "ports") {
        default(port, "protocol", json!("TCP"));
    }
    for name in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(name) {
            probe(p);
        }
    }
    for hook in ["postStart", "preStop"] {
        if let Some(h) = c.get_mut("lifecycle").and_then(|l| l.get_mut(hook)) {
            handler(h);
        }
    }
    for env in each_mut(c, "env") {
        if let Some(field) = env.pointer_mut("/valueFrom/fieldRef") {
            default(field, "apiVersion", json!("v1"));
        }
    }
}

/// Volume defaults: `emptyDir` when no source is given, `defaultMode: 420` on secret,
/// configMap, downwardAPI and projected sources, a projected token's `expirationSeconds`,
/// hostPath's `type`.
fn volume(v: &mut Value) {
    let Some(map) = v.as_object_mut() else { return };
    if map.keys().all(|k| k == "name") {
        map.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = map.get_mut(source).filter(|s| s.is_object()) {
            default(s, "defaultMode", json!(420));
        }
    }
    if let Some(host_path) = map.get_mut("hostPath").filter(|h| h.is_object()) {
        default(host_path, "type", json!(""));
    }
    for s in map
        .get_mut("projected")
        .map(|p| each_mut(p, "sources"))
        .into_iter()
        .flatten()
    {
        if let Some(token) = s.get_mut("serviceAccountToken") {
            default(token, "expirationSeconds", json!(3600));
        }
    }
    if let Some(ephemeral) = map.get_mut("ephemeral")
        && let Some(spec) = ephemeral.pointer_mut("/volumeClaimTemplate/spec")
    {
        default(spec, "volumeMode", json!("Filesystem"));
    }
}

/// PodSpec defaults (every PodSpec, in Pods and in templates).
pub fn spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    // The v1 conversion keeps the deprecated `serviceAccount` and `serviceAccountName` equal.
    for (set, unset) in [
        ("serviceAccountName", "serviceAccount"),
        ("serviceAccount", "serviceAccountName"),
    ] {
        if let Some(account) = spec[set]
            .as_str()
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            && spec[unset].as_str().is_none_or(str::is_empty)
        {
            spec[unset] = json!(account);
        }
    }
    for field in ["containers", "initContainers", "ephemeralContainers"] {
        for c in each_mut(spec, field) {
            container(c);
        }
    }
    for v in each_mut(spec, "volumes") {
        volume(v);
    }
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "securityContext", json!({}));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "schedulerName", json!("default-scheduler"));
}

/// The defaults only a Pod gets (not a template): requests from limits, `enableServiceLinks`,
/// host ports under host networking.
fn pod_only(spec: &mut Value) {
    for field in ["containers", "initContainers"] {
        for c in each_mut(spec, field) {
            let Some(limits) = c
                .pointer("/resources/limits")
                .and_then(Value::as_object)
                .cloned()
            else {
                continue;
            };
            let requests = &mut c["resources"]["requests"];
            if !requests.is_object() {
                *requests = json!({});
            }
            for (k, v) in limits {
                default(requests, &k, v);
            }
        }
    }
    default(spec, "enableServiceLinks", json!(true));
    if spec["hostNetwork"] == true {
        for field in ["containers", "initContainers"] {
            for c in each_mut(spec, field) {
                for port in each_mut(c, "ports") {
                    let container_port = port["containerPort"].clone();
                    default(port, "hostPort", container_port);
                }
            }
        }
    }
}

/// Where the ServiceAccount admission plugin mounts the token.
const TOKEN_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// What the ServiceAccount admission plugin adds: the `default` account, and unless
/// automounting is off, the `kube-api-access-*` projected volume mounted in every container.
fn service_account(spec: &mut Value) {
    let account = spec["serviceAccountName"]
        .as_str()
        .or_else(|| spec["serviceAccount"].as_str())
        .filter(|a| !a.is_empty())
        .unwrap_or("default")
        .to_string();
    spec["serviceAccountName"] = json!(account);
    spec["serviceAccount"] = json!(account);
    let mounted = |c: &Value| {
        c["volumeMounts"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["mountPath"] == TOKEN_MOUNT))
    };
    if spec["automountServiceAccountToken"] == false {
        return;
    }
    let name = format!("kube-api-access-{}", meta::name_suffix());
    let volume = json!({"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
            "path": "namespace"}]}}]}});
    let mut any = false;
    for field in ["containers", "initContainers"] {
        for c in each_mut(spec, field).filter(|c| !mounted(c)) {
            let mount = json!({"name": name, "mountPath": TOKEN_MOUNT, "readOnly": true});
            match c["volumeMounts"].as_array_mut() {
                Some(mounts) => mounts.push(mount),
                None => c["volumeMounts"] = json!([mount]),
            }
            any = true;
        }
    }
    if any {
        match spec["volumes"].as_array_mut() {
            Some(volumes) => volumes.push(volume),
            None => spec["volumes"] = json!([volume]),
        }
    }
}

/// The tolerations the DefaultTolerationSeconds admission plugin adds when absent.
fn default_tolerations(spec: &mut Value) {
    for taint in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = spec["tolerations"].as_array().is_some_and(|ts| {
            ts.iter().any(|t| {
                (t["key"] == taint || t["key"].is_null() && t["operator"] == "Exists")
                    && (t["effect"] == "NoExecute" || t["effect"].is_null())
            })
        });
        if tolerated {
            continue;
        }
        let toleration = json!({"key": taint, "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 300});
        match spec["tolerations"].as_array_mut() {
            Some(ts) => ts.push(toleration),
            None => spec["tolerations"] = json!([toleration]),
        }
    }
}

/// The Pod's QoS class (kube's `GetPodQOS`) from its containers' CPU and memory.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .flat_map(|f| spec[*f].as_array().into_iter().flatten())
        .collect();
    let amount = |c: &Value, list: &str, resource: &str| {
        c["resources"][list][resource]
            .as_str()
            .filter(|q| *q != "0")
            .map(str::to_string)
    };
    let mut best_effort = true;
    let mut guaranteed = true;
    for c in containers {
        for resource in ["cpu", "memory"] {
            let (request, limit) = (
                amount(c, "requests", resource),
                amount(c, "limits", resource),
            );
            if request.is_some() || limit.is_some() {
                best_effort = false;
            }
            if limit.is_none() || request.is_some_and(|r| Some(r) != limit) {
                guaranteed = false;
            }
        }
    }
    if best_effort {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// A Pod: its spec's defaults and, when `created`, what admission and the registry add.
pub fn pod(object: &mut Value) {
    if let Some(s) = object.get_mut("spec").filter(|s| s.is_object()) {
        spec(s);
        pod_only(s);
    }
}

/// What a new Pod gets after its defaults, from the admission plugins (ServiceAccount,
/// Priority, DefaultTolerationSeconds) and its registry (the status a Pod starts with).
pub fn admit(object: &mut Value) {
    let Some(s) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    service_account(s);
    if s["priorityClassName"].as_str().is_none_or(str::is_empty) {
        default(s, "priority", json!(0));
    }
    default(s, "preemptionPolicy", json!("PreemptLowerPriority"));
    default_tolerations(s);
    let qos = qos_class(s);
    object["status"] = json!({"phase": "Pending", "qosClass": qos});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_pull_policy_follows_the_tag() {
        for (image, policy) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("localhost:5000/nginx", "Always"),
            ("localhost:5000/nginx:1", "IfNotPresent"),
            ("nginx@sha256:abc", "IfNotPresent"),
        ] {
            let mut c = json!({"name": "a", "image": image});
            container(&mut c);
            assert_eq!(c["imagePullPolicy"], policy, "{image}");
        }
    }

    #[test]
    fn new_pods_get_admission_defaults_and_a_qos_class() {
        let mut p = json!({"spec": {"containers": [{"name": "a", "image": "x:1",
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
            "readinessProbe": {"httpGet": {"port": 80}}}]}});
        pod(&mut p);
        assert!(
            p["spec"]["serviceAccountName"].is_null(),
            "admission's, not a default"
        );
        admit(&mut p);
        let s = &p["spec"];
        assert_eq!(s["serviceAccountName"], "default");
        assert_eq!(s["enableServiceLinks"], true);
        assert_eq!(s["priority"], 0);
        assert_eq!(s["preemptionPolicy"], "PreemptLowerPriority");
        assert_eq!(s["tolerations"].as_array().unwrap().len(), 2);
        let c = &s["containers"][0];
        assert_eq!(
            c["resources"]["requests"],
            json!({"cpu": "1", "memory": "1Gi"})
        );
        assert_eq!(c["readinessProbe"]["httpGet"]["scheme"], "HTTP");
        assert_eq!(c["readinessProbe"]["periodSeconds"], 10);
        assert_eq!(c["volumeMounts"][0]["mountPath"], TOKEN_MOUNT);
        assert!(
            s["volumes"][0]["name"]
                .as_str()
                .unwrap()
                .starts_with("kube-api-access-")
        );
        assert_eq!(
            p["status"],
            json!({"phase": "Pending", "qosClass": "Guaranteed"})
        );
        let mut plain = json!({"spec": {"automountServiceAccountToken": false,
            "containers": [{"name": "a", "image": "x"}]}});
        pod(&mut plain);
        admit(&mut plain);
        assert!(plain["spec"]["volumes"].is_null());
        assert_eq!(plain["status"]["qosClass"], "BestEffort");
    }
}
