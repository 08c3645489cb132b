//! Health (readiness) of live objects, following kstatus with the deviations of k8s-semantics §8.3.
//!
//! Rules run in order and the first that decides wins: deletion (H2), observed generation
//! (H3), `Reconciling`/`Stalled` conditions (H4), the kind's own rule (H5), then the generic
//! `Ready` condition (H6). Unknown or mistyped fields read as absent; nothing here panics.

mod apps;
mod fields;
mod kinds;
mod pod;

use serde_json::Value;

use crate::model::{Health, HealthState};
use fields::{at, condition, conditions, int, str_at};

/// Health of a live object. `now_unix_secs` is the current time (for the Pod 15 s unschedulable window);
/// `None` = treat every creationTimestamp as long ago. Never panics on any JSON input.
pub fn compute(object: &Value, now_unix_secs: Option<i64>) -> Health {
    if !object.is_object() {
        return Health::new(
            HealthState::Unknown,
            "InvalidObject",
            "the object is not a JSON object",
        );
    }
    if let Some(health) = terminating(object) {
        return health;
    }
    let api_version = str_at(object, &["apiVersion"]).unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = str_at(object, &["kind"]).unwrap_or("");
    let workload = matches!(
        (group, kind),
        (
            "apps" | "extensions",
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"
        )
    );
    if let Some(health) = generation(object, kind, workload) {
        return health;
    }
    if let Some(health) = reconciling_or_stalled(object) {
        return health;
    }
    kind_rule(object, group, kind, now_unix_secs).unwrap_or_else(|| ready_condition(object))
}

/// A `Current` health (no reason).
fn current(message: impl Into<String>) -> Health {
    Health::new(HealthState::Current, "", message)
}

/// An `InProgress` health.
fn in_progress(reason: impl Into<String>, message: impl Into<String>) -> Health {
    Health::new(HealthState::InProgress, reason, message)
}

/// A `Failed` health.
fn failed(reason: impl Into<String>, message: impl Into<String>) -> Health {
    Health::new(HealthState::Failed, reason, message)
}

/// H2: `metadata.deletionTimestamp` set, naming the finalizers that hold the object.
fn terminating(object: &Value) -> Option<Health> {
    match at(object, &["metadata", "deletionTimestamp"]) {
        None | Some(Value::Null) => return None,
        Some(Value::String(s)) if s.is_empty() => return None,
        Some(_) => {}
    }
    let finalizers: Vec<&str> = at(object, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut message = String::from("Resource scheduled for deletion");
    if !finalizers.is_empty() {
        message.push_str("; waiting for finalizers: ");
        message.push_str(&finalizers.join(", "));
    }
    Some(Health::new(
        HealthState::Terminating,
        "Terminating",
        message,
    ))
}

/// H3: the controller has not observed the latest generation (strict for apps/* workloads).
fn generation(object: &Value, kind: &str, workload: bool) -> Option<Health> {
    let observed = int(object, &["status", "observedGeneration"]);
    match (int(object, &["metadata", "generation"]), observed) {
        (Some(g), Some(o)) if g != o => Some(in_progress(
            "LatestGenerationNotObserved",
            format!("{kind} generation is {g}, but latest observed generation is {o}"),
        )),
        (_, None) if workload => Some(in_progress(
            "NoObservedGeneration",
            format!("{kind} status.observedGeneration not found"),
        )),
        _ => None,
    }
}

/// H4: the first `Reconciling=True` or `Stalled=True` condition.
fn reconciling_or_stalled(object: &Value) -> Option<Health> {
    conditions(object).find_map(|c| match (c.type_, c.is_true()) {
        ("Reconciling", true) => Some(in_progress(c.reason_or("Reconciling"), c.message)),
        ("Stalled", true) => Some(failed(c.reason_or("Stalled"), c.message)),
        _ => None,
    })
}

/// H5: the rule of a known kind, `None` for kinds without one.
fn kind_rule(object: &Value, group: &str, kind: &str, now: Option<i64>) -> Option<Health> {
    let health = match (group, kind) {
        ("apps" | "extensions", "Deployment") => apps::deployment(object),
        ("apps", "StatefulSet") => apps::stateful_set(object),
        ("apps" | "extensions", "DaemonSet") => apps::daemon_set(object),
        ("apps" | "extensions", "ReplicaSet") => apps::replica_set(object),
        ("", "Pod") => pod::pod(object, now),
        ("batch", "Job") => kinds::job(object),
        ("", "PersistentVolumeClaim") => kinds::pvc(object),
        ("", "Service") => kinds::service(object),
        ("networking.k8s.io" | "extensions", "Ingress") => kinds::ingress(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => kinds::crd(object),
        ("apiregistration.k8s.io", "APIService") => kinds::api_service(object),
        ("", "Namespace") => kinds::namespace(object),
        ("policy", "PodDisruptionBudget") => current("AllowedDisruptions has been computed."),
        ("batch", "CronJob")
        | ("", "ConfigMap" | "Secret" | "ServiceAccount")
        | ("storage.k8s.io", "StorageClass")
        | (
            "rbac.authorization.k8s.io",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        ) => current("Resource is always ready"),
        _ => return None,
    };
    Some(health)
}

/// H6: the generic `Ready` condition, else `Current`.
fn ready_condition(object: &Value) -> Health {
    match condition(object, "Ready") {
        Some(c) if c.is_true() => current("Resource is Ready"),
        Some(c) => in_progress(c.reason_or("NotReady"), c.message),
        None => current("Resource is current"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(object: Value) -> HealthState {
        compute(&object, None).state
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        for object in [
            json!(null),
            json!([1, 2]),
            json!("Pod"),
            json!({}),
            json!({"kind": 5, "apiVersion": ["v1"], "metadata": "x", "status": 7, "spec": []}),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"generation": 1},
                   "spec": {"replicas": i64::MAX, "updateStrategy": {"rollingUpdate": {"partition": i64::MIN}}},
                   "status": {"observedGeneration": 1, "replicas": i64::MAX, "readyReplicas": i64::MAX, "updatedReplicas": -1}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"generation": 1},
                   "spec": {"replicas": i64::MIN},
                   "status": {"observedGeneration": 1, "replicas": i64::MAX, "conditions": "x"}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"creationTimestamp": "9999-99-99T99:99:99Z"},
                   "status": {"phase": "Pending", "containerStatuses": [1, {"state": []}],
                              "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}),
        ] {
            let _ = compute(&object, Some(i64::MAX));
            let _ = compute(&object, Some(i64::MIN));
        }
        assert_eq!(state(json!(null)), HealthState::Unknown);
    }

    #[test]
    fn deletion_names_finalizers() {
        let health = compute(
            &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {
                "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["a/b", "c"]}}),
            None,
        );
        assert_eq!(health.state, HealthState::Terminating);
        assert_eq!(
            health.message,
            "Resource scheduled for deletion; waiting for finalizers: a/b, c"
        );
    }

    #[test]
    fn stalled_and_reconciling_conditions() {
        let stalled = json!({"apiVersion": "x/v1", "kind": "K", "status": {"conditions": [
            {"type": "Stalled", "status": "True", "reason": "Broken", "message": "no"},
            {"type": "Reconciling", "status": "True"}]}});
        assert_eq!(
            compute(&stalled, None),
            Health::new(HealthState::Failed, "Broken", "no")
        );
        let reconciling = json!({"apiVersion": "x/v1", "kind": "K", "status": {"conditions": [
            {"type": "Reconciling", "status": "True"}]}});
        assert_eq!(
            compute(&reconciling, None),
            Health::new(HealthState::InProgress, "Reconciling", "")
        );
    }

    #[test]
    fn always_ready_kinds() {
        for (api_version, kind) in [
            ("v1", "ConfigMap"),
            ("v1", "Secret"),
            ("v1", "ServiceAccount"),
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            ("storage.k8s.io/v1", "StorageClass"),
            ("batch/v1", "CronJob"),
        ] {
            let object = json!({"apiVersion": api_version, "kind": kind,
                "status": {"conditions": [{"type": "Ready", "status": "False"}]}});
            assert_eq!(
                compute(&object, None),
                current("Resource is always ready"),
                "{kind}"
            );
        }
    }
}
