//! H5 rules of the apps/* workloads: Deployment, StatefulSet, DaemonSet and ReplicaSet.
//! Replica counts default to `spec.replicas: 1` and status counters to 0.

use serde_json::Value;

use super::fields::{at, condition, int, int_or, is_true, str_at};
use super::{current, failed, in_progress};
use crate::model::Health;

/// `spec.replicas`, 1 when missing.
fn spec_replicas(object: &Value) -> i64 {
    int_or(object, &["spec", "replicas"], 1)
}

/// A status counter, 0 when missing.
fn counter(object: &Value, name: &str) -> i64 {
    int_or(object, &["status", name], 0)
}

/// The message for pods above the desired count.
fn extra_pods(replicas: i64, spec: i64) -> Health {
    in_progress(
        "ExtraPods",
        format!("Pending termination: {}", replicas.saturating_sub(spec)),
    )
}

/// Deployment: deadline, pause, then kstatus' replica checks and conditions.
pub(super) fn deployment(object: &Value) -> Health {
    if let Some(c) = condition(object, "Progressing")
        && c.reason == "ProgressDeadlineExceeded"
    {
        let message = if c.message.is_empty() {
            "Progress deadline exceeded"
        } else {
            c.message
        };
        return failed("ProgressDeadlineExceeded", message);
    }
    if is_true(object, &["spec", "paused"]) {
        return current("Deployment is paused");
    }
    let spec = spec_replicas(object);
    let replicas = counter(object, "replicas");
    let updated = counter(object, "updatedReplicas");
    let ready = counter(object, "readyReplicas");
    let available = counter(object, "availableReplicas");
    let progressing = at(object, &["spec", "progressDeadlineSeconds"]).is_none()
        || condition(object, "Progressing")
            .is_some_and(|c| c.is_true() && c.reason == "NewReplicaSetAvailable");
    let is_available = condition(object, "Available").is_some_and(|c| c.is_true());
    if spec > replicas {
        in_progress("LessReplicas", format!("Replicas: {replicas}/{spec}"))
    } else if spec > updated {
        in_progress("LessUpdated", format!("Updated: {updated}/{spec}"))
    } else if replicas > spec {
        extra_pods(replicas, spec)
    } else if updated > available {
        in_progress("LessAvailable", format!("Available: {available}/{updated}"))
    } else if spec > ready {
        in_progress("LessReady", format!("Ready: {ready}/{spec}"))
    } else if !progressing {
        in_progress("ReplicaSetNotAvailable", "ReplicaSet not Available")
    } else if !is_available {
        in_progress("DeploymentNotAvailable", "Deployment not Available")
    } else {
        current(format!("Deployment is available. Replicas: {replicas}"))
    }
}

/// StatefulSet: OnDelete is not tracked; a partition decides the rollout when set.
pub(super) fn stateful_set(object: &Value) -> Health {
    if str_at(object, &["spec", "updateStrategy", "type"]) == Some("OnDelete") {
        return current("OnDelete update strategy: rollout is not tracked");
    }
    let spec = spec_replicas(object);
    let replicas = counter(object, "replicas");
    let ready = counter(object, "readyReplicas");
    if spec > replicas {
        return in_progress("LessReplicas", format!("Replicas: {replicas}/{spec}"));
    }
    if spec > ready {
        return in_progress("LessReady", format!("Ready: {ready}/{spec}"));
    }
    if replicas > spec {
        return extra_pods(replicas, spec);
    }
    let updated = counter(object, "updatedReplicas");
    let partition = int(
        object,
        &["spec", "updateStrategy", "rollingUpdate", "partition"],
    );
    if let Some(partition) = partition {
        let expected = spec.saturating_sub(partition);
        return if updated < expected {
            in_progress("PartitionRollout", format!("updated: {updated}/{expected}"))
        } else {
            current(format!("Partition rollout complete. updated: {updated}"))
        };
    }
    let current_replicas = counter(object, "currentReplicas");
    if spec > current_replicas {
        return in_progress("LessCurrent", format!("current: {current_replicas}/{spec}"));
    }
    if str_at(object, &["status", "currentRevision"])
        != str_at(object, &["status", "updateRevision"])
    {
        return in_progress(
            "RevisionMismatch",
            "Waiting for updated revision to match current",
        );
    }
    current(format!(
        "All replicas scheduled as expected. Replicas: {replicas}"
    ))
}

/// The first of `checks` (status counter, reason, label) whose counter is below
/// `wanted`, as in-progress health (`label: count/wanted`).
fn first_short(object: &Value, wanted: i64, checks: &[(&str, &str, &str)]) -> Option<Health> {
    checks.iter().find_map(|&(field, reason, label)| {
        let count = counter(object, field);
        (wanted > count).then(|| in_progress(reason, format!("{label}: {count}/{wanted}")))
    })
}

/// DaemonSet: every desired pod scheduled, updated, available and ready.
pub(super) fn daemon_set(object: &Value) -> Health {
    let Some(desired) = int(object, &["status", "desiredNumberScheduled"]) else {
        return in_progress("NoDesiredNumber", "Missing .status.desiredNumberScheduled");
    };
    let checks = [
        ("currentNumberScheduled", "LessCurrent", "Current"),
        ("updatedNumberScheduled", "LessUpdated", "Updated"),
        ("numberAvailable", "LessAvailable", "Available"),
        ("numberReady", "LessReady", "Ready"),
    ];
    if let Some(short) = first_short(object, desired, &checks) {
        return short;
    }
    current(format!(
        "All replicas scheduled as expected. Replicas: {desired}"
    ))
}

/// ReplicaSet: `ReplicaFailure=True` fails (§8.3), then the replica counters.
pub(super) fn replica_set(object: &Value) -> Health {
    if let Some(c) = condition(object, "ReplicaFailure")
        && c.is_true()
    {
        let message = if c.message.is_empty() {
            "Replica Failure condition. Check Pods"
        } else {
            c.message
        };
        return failed("ReplicaFailure", message);
    }
    let spec = spec_replicas(object);
    let replicas = counter(object, "replicas");
    let checks = [
        ("fullyLabeledReplicas", "LessLabelled", "Labelled"),
        ("availableReplicas", "LessAvailable", "Available"),
        ("readyReplicas", "LessReady", "Ready"),
    ];
    if let Some(short) = first_short(object, spec, &checks) {
        return short;
    }
    if replicas > spec {
        return extra_pods(replicas, spec);
    }
    current(format!("ReplicaSet is available. Replicas: {replicas}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HealthState;
    use serde_json::json;

    #[test]
    fn deployment_deadline_and_pause() {
        let deadline = json!({"status": {"conditions": [
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
             "message": "ReplicaSet \"web-1\" has timed out progressing."}]}});
        let health = deployment(&deadline);
        assert_eq!(health.state, HealthState::Failed);
        assert_eq!(
            health.message,
            "ReplicaSet \"web-1\" has timed out progressing."
        );
        let paused = json!({"spec": {"paused": true, "replicas": 3}});
        assert_eq!(deployment(&paused), current("Deployment is paused"));
    }

    #[test]
    fn deployment_rollout_steps() {
        let rolling = json!({"spec": {"replicas": 3}, "status": {
            "replicas": 4, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3}});
        assert_eq!(
            deployment(&rolling),
            in_progress("ExtraPods", "Pending termination: 1")
        );
        let less_ready = json!({"spec": {"replicas": 3}, "status": {
            "replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 3}});
        assert_eq!(
            deployment(&less_ready),
            in_progress("LessReady", "Ready: 2/3")
        );
    }

    #[test]
    fn stateful_set_partition_and_revision() {
        let partition = json!({"spec": {"replicas": 3, "updateStrategy": {"type": "RollingUpdate",
            "rollingUpdate": {"partition": 1}}},
            "status": {"replicas": 3, "readyReplicas": 3, "updatedReplicas": 1}});
        assert_eq!(
            stateful_set(&partition),
            in_progress("PartitionRollout", "updated: 1/2")
        );
        let revision = json!({"spec": {"replicas": 1}, "status": {"replicas": 1, "readyReplicas": 1,
            "currentReplicas": 1, "currentRevision": "a", "updateRevision": "b"}});
        assert_eq!(stateful_set(&revision).reason, "RevisionMismatch");
        let on_delete = json!({"spec": {"updateStrategy": {"type": "OnDelete"}}});
        assert_eq!(stateful_set(&on_delete).state, HealthState::Current);
    }

    #[test]
    fn replica_set_failure_uses_condition_message() {
        let rs = json!({"status": {"conditions": [{"type": "ReplicaFailure", "status": "True",
            "reason": "FailedCreate", "message": "pods \"x\" is forbidden: exceeded quota"}]}});
        assert_eq!(
            replica_set(&rs),
            failed("ReplicaFailure", "pods \"x\" is forbidden: exceeded quota")
        );
    }
}
