//! What kube-controller-manager does to every Node, kubelet or not: the TTL controller's
//! `node.alpha.kubernetes.io/ttl` annotation (0 seconds in a cluster of up to 100 nodes), and
//! the node lifecycle controller's NoSchedule taints, which follow the Node's conditions and
//! `spec.unschedulable` (its `doNoScheduleTaintingPass`). Both write as kube-controller-manager.

use serde_json::{Value, json};

use super::save_as_controller_manager;
use super::workloads::objects;
use crate::meta;
use crate::store::State;

const READS: &[(&str, &str)] = &[("", "nodes")];

/// The TTL controller's annotation: how long kubelets may cache objects, by cluster size.
const TTL: &str = "node.alpha.kubernetes.io/ttl";

/// The taint of `spec.unschedulable`.
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// The NoSchedule taint of each node condition status that has one
/// (`nodeConditionToTaintKeyStatusMap`).
const CONDITION_TAINTS: &[(&str, &str, &str)] = &[
    ("Ready", "False", "node.kubernetes.io/not-ready"),
    ("Ready", "Unknown", "node.kubernetes.io/unreachable"),
    (
        "MemoryPressure",
        "True",
        "node.kubernetes.io/memory-pressure",
    ),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];

/// One pass over the Nodes (none when no Node changed).
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("nodes", READS) {
        return;
    }
    for (key, node) in objects(state, "", "nodes", |_| true) {
        let mut next = node.clone();
        if next["metadata"]["annotations"][TTL].is_null() {
            if !next["metadata"]["annotations"].is_object() {
                next["metadata"]["annotations"] = json!({});
            }
            next["metadata"]["annotations"][TTL] = json!("0");
        }
        if let Some(taints) = no_schedule_taints(&node) {
            next["spec"]["taints"] = taints;
        }
        if next != node {
            save_as_controller_manager(state, &key, Some(&node), next);
        }
    }
}

/// The taints `node` should have, when its NoSchedule taints of conditions and
/// unschedulability are not what they say: the others kept, the missing added now, the
/// stale removed (`SwapNodeControllerTaint`).
fn no_schedule_taints(node: &Value) -> Option<Value> {
    let conditions = node["status"]["conditions"].as_array();
    let mut wanted: Vec<&str> = CONDITION_TAINTS
        .iter()
        .filter(|(kind, status, _)| {
            conditions
                .into_iter()
                .flatten()
                .any(|c| c["type"] == *kind && c["status"] == *status)
        })
        .map(|(_, _, taint)| *taint)
        .collect();
    if node["spec"]["unschedulable"] == true {
        wanted.push(UNSCHEDULABLE);
    }
    let managed = |key: &str| key == UNSCHEDULABLE || CONDITION_TAINTS.iter().any(|t| t.2 == key);
    let taints: Vec<Value> = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let is_ours = |t: &Value| t["effect"] == "NoSchedule" && t["key"].as_str().is_some_and(managed);
    let present: Vec<&str> = taints
        .iter()
        .filter(|t| is_ours(t))
        .filter_map(|t| t["key"].as_str())
        .collect();
    if present.len() == wanted.len() && wanted.iter().all(|w| present.contains(w)) {
        return None;
    }
    let mut next: Vec<Value> = taints
        .iter()
        .filter(|t| !is_ours(t) || t["key"].as_str().is_some_and(|k| wanted.contains(&k)))
        .cloned()
        .collect();
    for key in wanted.iter().filter(|w| !present.contains(w)) {
        next.push(json!({"key": key, "effect": "NoSchedule", "timeAdded": meta::now()}));
    }
    Some(Value::Array(next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_follow_conditions_and_unschedulability() {
        let node = json!({"spec": {"unschedulable": true, "taints": [
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}});
        let taints = no_schedule_taints(&node).unwrap();
        let keys: Vec<&str> = taints
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["key"].as_str().unwrap())
            .collect();
        assert_eq!(keys, ["dedicated", UNSCHEDULABLE]);
        let mut settled = node.clone();
        settled["spec"]["taints"] = taints;
        assert!(no_schedule_taints(&settled).is_none());
        settled["status"] = json!({"conditions": [{"type": "Ready", "status": "False"}]});
        let not_ready = no_schedule_taints(&settled).unwrap();
        assert_eq!(not_ready[2]["key"], "node.kubernetes.io/not-ready");
    }
}
