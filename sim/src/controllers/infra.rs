//! Controllers for the non-workload kinds: PVC → Bound, LoadBalancer Service → ingress IP,
//! CRD → Established.

use serde_json::{Value, json};

use super::workloads::save;
use crate::store::State;

fn each(state: &mut State, group: &str, resource: &str, step: impl Fn(&Value) -> Option<Value>) {
    let items: Vec<_> = state
        .list(group, resource, None)
        .into_iter()
        .filter(|(_, o)| o["metadata"]["deletionTimestamp"].is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, object) in items {
        if let Some(next) = step(&object) {
            save(state, &k, next);
        }
    }
}

/// One pass.
pub fn reconcile(state: &mut State) {
    each(state, "", "persistentvolumeclaims", |pvc| {
        let mut next = pvc.clone();
        let storage = pvc["spec"]["resources"]["requests"]["storage"].clone();
        next["status"] = json!({"phase": "Bound", "accessModes": pvc["spec"]["accessModes"], "capacity": {"storage": storage}});
        if next["spec"]["volumeName"].is_null() {
            next["spec"]["volumeName"] = json!(format!(
                "pvc-{}",
                pvc["metadata"]["uid"].as_str().unwrap_or_default()
            ));
        }
        Some(next)
    });
    each(state, "", "services", |svc| {
        let lb = svc["spec"]["type"] == "LoadBalancer";
        let mut next = svc.clone();
        next["status"] = if lb {
            json!({"loadBalancer": {"ingress": [{"ip": "172.18.255.200", "ipMode": "VIP"}]}})
        } else {
            json!({"loadBalancer": {}})
        };
        Some(next)
    });
    each(
        state,
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        |crd| {
            let mut next = crd.clone();
            next["status"] = json!({"acceptedNames": crd["spec"]["names"], "storedVersions":
            crd["spec"]["versions"].as_array().into_iter().flatten()
                .filter(|v| v["storage"].as_bool().unwrap_or(false)).map(|v| v["name"].clone()).collect::<Vec<_>>(),
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found",
                 "lastTransitionTime": crd["metadata"]["creationTimestamp"]},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": crd["metadata"]["creationTimestamp"]}]});
            Some(next)
        },
    );
}
