//! Persistent volumes as kube-controller-manager and a dynamic provisioner handle them: a claim
//! binds to a matching Available volume (by class, access modes, size, volume mode, selector,
//! or the `volumeName` it names); a claim of a StorageClass whose binding mode is `Immediate`
//! gets a volume provisioned for it; a released volume is deleted or kept by its reclaim
//! policy; and the `kubernetes.io/pvc-protection` / `pv-protection` / `vac-protection`
//! finalizers go once a terminating claim is used by no Pod, a terminating volume is bound to no
//! claim, and a terminating VolumeAttributesClass is named by no claim or volume.

use serde_json::{Value, json};

use super::save_as_controller_manager;
use super::workloads::save;
use crate::lifecycle::{self, PV_PROTECTION, PVC_PROTECTION, VAC_PROTECTION};
use crate::store::{Key, State};
use crate::{meta, quantity};

const READS: &[(&str, &str)] = &[
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"),
    ("storage.k8s.io", "storageclasses"),
    ("", "pods"),
    ("storage.k8s.io", "volumeattributesclasses"),
];

fn pv_key(name: &str) -> Key {
    Key::of("", "persistentvolumes", "", name)
}

/// Every core `resource` object (terminating ones too), copied out of `state`.
fn all(state: &State, resource: &str) -> Vec<(Key, Value)> {
    all_of(state, "", resource)
}

/// Every `group` `resource` object (terminating ones too), copied out of `state`.
fn all_of(state: &State, group: &str, resource: &str) -> Vec<(Key, Value)> {
    state
        .list(group, resource, None)
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn claims(state: &State) -> Vec<(Key, Value)> {
    all(state, "persistentvolumeclaims")
}

fn volumes(state: &State) -> Vec<(Key, Value)> {
    all(state, "persistentvolumes")
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether Pod `pod` mounts claim `name`.
fn uses(pod: &Value, name: &str) -> bool {
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|v| v["persistentVolumeClaim"]["claimName"] == name)
}

fn claim_in_use(state: &State, claim: &Value) -> bool {
    let ns = str_of(claim, "/metadata/namespace");
    let name = str_of(claim, "/metadata/name");
    state
        .list("", "pods", Some(ns))
        .into_iter()
        .any(|(_, pod)| {
            uses(pod, name) && !matches!(str_of(pod, "/status/phase"), "Succeeded" | "Failed")
        })
}

/// Whether volume `pv` can satisfy `claim`.
fn matches(pv: &Value, claim: &Value) -> bool {
    let spec = &claim["spec"];
    let class = spec["storageClassName"].as_str().unwrap_or_default();
    let modes_ok = spec["accessModes"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|m| {
            pv["spec"]["accessModes"]
                .as_array()
                .is_some_and(|a| a.contains(m))
        });
    let request = str_of(claim, "/spec/resources/requests/storage");
    let capacity = str_of(pv, "/spec/capacity/storage");
    let big_enough =
        request.is_empty() || quantity::compare(capacity, request).is_some_and(|o| o.is_ge());
    let selector_ok = spec["selector"]["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| pv["metadata"]["labels"].get(k) == Some(v));
    let mode = |v: &Value| {
        v["spec"]["volumeMode"]
            .as_str()
            .unwrap_or("Filesystem")
            .to_string()
    };
    str_of(pv, "/spec/storageClassName") == class
        && modes_ok
        && big_enough
        && selector_ok
        && mode(pv) == mode(claim)
}

fn claim_ref(claim: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "namespace": claim["metadata"]["namespace"], "name": claim["metadata"]["name"],
        "uid": claim["metadata"]["uid"], "resourceVersion": claim["metadata"]["resourceVersion"]})
}

fn claimed_by(pv: &Value, claim: &Value) -> bool {
    pv["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
        || pv["spec"]["claimRef"]["uid"].is_null()
            && pv["spec"]["claimRef"]["name"] == claim["metadata"]["name"]
            && pv["spec"]["claimRef"]["namespace"] == claim["metadata"]["namespace"]
}

fn available(pv: &Value) -> bool {
    pv["spec"]["claimRef"].is_null() && pv["metadata"]["deletionTimestamp"].is_null()
}

/// A volume the StorageClass `class`'s provisioner makes for `claim`.
fn provisioned(claim: &Value, class: &Value) -> Value {
    let name = format!("pvc-{}", str_of(claim, "/metadata/uid"));
    let provisioner = class["provisioner"].clone();
    json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "uid": meta::uid(), "creationTimestamp": meta::now(),
            "annotations": {"pv.kubernetes.io/provisioned-by": provisioner},
            "finalizers": [PV_PROTECTION]},
        "spec": {"accessModes": claim["spec"]["accessModes"],
            "capacity": {"storage": claim["spec"]["resources"]["requests"]["storage"]},
            "claimRef": claim_ref(claim),
            "hostPath": {"path": format!("/var/local-path-provisioner/{name}"), "type": "DirectoryOrCreate"},
            "persistentVolumeReclaimPolicy": class["reclaimPolicy"].as_str().unwrap_or("Delete"),
            "storageClassName": class["metadata"]["name"],
            "volumeMode": claim["spec"]["volumeMode"].as_str().unwrap_or("Filesystem")},
        "status": {"phase": "Bound"}})
}

/// Binds `claim` (at `key`) to `pv`: claimRef on the volume, volumeName and status on the claim.
fn bind(
    state: &mut State,
    key: &Key,
    claim: &Value,
    pv_key: &Key,
    mut pv: Value,
    by_controller: bool,
) {
    let stored = state.get(pv_key).cloned();
    if pv["spec"]["claimRef"]["uid"].is_null() {
        pv["spec"]["claimRef"] = claim_ref(claim);
        if by_controller {
            pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] = json!("yes");
        }
    }
    pv["status"] = json!({"phase": "Bound"});
    save_as_controller_manager(state, pv_key, stored.as_ref(), pv.clone());
    let mut next = claim.clone();
    next["spec"]["volumeName"] = pv["metadata"]["name"].clone();
    let annotations = &mut next["metadata"]["annotations"];
    annotations["pv.kubernetes.io/bind-completed"] = json!("yes");
    if by_controller {
        annotations["pv.kubernetes.io/bound-by-controller"] = json!("yes");
    }
    if let Some(provisioner) =
        pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"].as_str()
    {
        annotations["volume.beta.kubernetes.io/storage-provisioner"] = json!(provisioner);
        annotations["volume.kubernetes.io/storage-provisioner"] = json!(provisioner);
    }
    next["status"] = json!({"phase": "Bound", "accessModes": pv["spec"]["accessModes"],
        "capacity": pv["spec"]["capacity"]});
    save_as_controller_manager(state, key, Some(claim), next);
}

fn bind_claim(state: &mut State, key: &Key, claim: &Value) {
    // A bound claim that lost its bind-completed annotation is bound again (`syncClaim`).
    let completed = !claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"].is_null();
    if claim["status"]["phase"] == "Bound" && completed {
        return;
    }
    let all = volumes(state);
    if let Some(wanted) = claim["spec"]["volumeName"]
        .as_str()
        .filter(|n| !n.is_empty())
    {
        if let Some((k, pv)) = all.into_iter().find(|(k, _)| k.name == wanted)
            && (available(&pv) || claimed_by(&pv, claim))
        {
            bind(state, key, claim, &k, pv, false);
        }
        return;
    }
    let chosen = all
        .iter()
        .filter(|(_, pv)| claimed_by(pv, claim) && pv["metadata"]["deletionTimestamp"].is_null())
        .chain(
            all.iter()
                .filter(|(_, pv)| available(pv) && matches(pv, claim)),
        )
        .min_by(|(_, a), (_, b)| {
            let size = |pv: &Value| str_of(pv, "/spec/capacity/storage").to_string();
            quantity::compare(&size(a), &size(b)).unwrap_or(std::cmp::Ordering::Equal)
        })
        .cloned();
    if let Some((k, pv)) = chosen {
        bind(state, key, claim, &k, pv, true);
        return;
    }
    let class_name = claim["spec"]["storageClassName"]
        .as_str()
        .unwrap_or_default();
    let class = state
        .list("storage.k8s.io", "storageclasses", None)
        .into_iter()
        .find(|(k, _)| !class_name.is_empty() && k.name == class_name)
        .map(|(_, c)| c.clone());
    // A provisioner makes a volume of the requested size: a claim that requests none gets none.
    let sized = claim.pointer("/spec/resources/requests/storage").is_some();
    let Some(class) = class.filter(|_| sized) else {
        return;
    };
    let consumer =
        class["volumeBindingMode"] != "WaitForFirstConsumer" || claim_in_use(state, claim);
    if consumer {
        let pv = provisioned(claim, &class);
        let k = pv_key(str_of(&pv, "/metadata/name"));
        if state.get(&k).is_none() {
            state.put(k.clone(), pv.clone());
        }
        bind(state, key, claim, &k, pv, true);
    }
}

/// A volume whose claim went: `Released`, or deleted when its reclaim policy is `Delete`.
fn release(state: &mut State, key: &Key, pv: &Value, claims: &[(Key, Value)]) {
    if pv["spec"]["claimRef"].is_null() || !pv["metadata"]["deletionTimestamp"].is_null() {
        return;
    }
    let bound = claims.iter().any(|(_, c)| claimed_by(pv, c));
    if bound {
        return;
    }
    if pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete" {
        lifecycle::delete(state, key);
    } else if pv["status"]["phase"] != "Released" {
        let mut next = pv.clone();
        next["status"] = json!({"phase": "Released"});
        save(state, key, next);
    }
}

/// The VolumeAttributesClasses a claim or volume names (the vac-protection controller's
/// `getPVCReferencedVACs` and `getPVReferencedVACs`).
fn named_classes(claims: &[(Key, Value)], volumes: &[(Key, Value)]) -> Vec<String> {
    let claim_names = claims.iter().flat_map(|(_, c)| {
        [
            str_of(c, "/spec/volumeAttributesClassName"),
            str_of(c, "/status/currentVolumeAttributesClassName"),
            str_of(
                c,
                "/status/modifyVolumeStatus/targetVolumeAttributesClassName",
            ),
        ]
    });
    let volume_names = volumes
        .iter()
        .map(|(_, v)| str_of(v, "/spec/volumeAttributesClassName"));
    claim_names
        .chain(volume_names)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// One pass of the volume controllers (none when nothing they read changed).
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("volumes", READS) {
        return;
    }
    for (key, claim) in claims(state) {
        if claim["metadata"]["deletionTimestamp"].is_null() {
            bind_claim(state, &key, &claim);
        } else if lifecycle::has_finalizer(&claim, PVC_PROTECTION) && !claim_in_use(state, &claim) {
            lifecycle::release_finalizer(state, &key, &claim, PVC_PROTECTION);
        }
    }
    let live_claims = claims(state);
    for (key, pv) in volumes(state) {
        if pv["metadata"]["deletionTimestamp"].is_null() {
            release(state, &key, &pv, &live_claims);
        } else if lifecycle::has_finalizer(&pv, PV_PROTECTION)
            && !live_claims.iter().any(|(_, c)| {
                claimed_by(&pv, c) && c["spec"]["volumeName"] == pv["metadata"]["name"]
            })
        {
            lifecycle::release_finalizer(state, &key, &pv, PV_PROTECTION);
        }
        if let Some(current) = state.get(&key).cloned()
            && current["spec"]["claimRef"].is_null()
            && current["metadata"]["deletionTimestamp"].is_null()
            && current["status"]["phase"] != "Available"
        {
            let mut next = current;
            next["status"] = json!({"phase": "Available"});
            save(state, &key, next);
        }
    }
    let named = named_classes(&claims(state), &volumes(state));
    for (key, class) in all_of(state, "storage.k8s.io", "volumeattributesclasses") {
        if !class["metadata"]["deletionTimestamp"].is_null()
            && lifecycle::has_finalizer(&class, VAC_PROTECTION)
            && !named
                .iter()
                .any(|n| class["metadata"]["name"] == n.as_str())
        {
            lifecycle::release_finalizer(state, &key, &class, VAC_PROTECTION);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn claim(name: &str, class: Option<&str>, size: &str) -> (Key, Value) {
        let mut spec = json!({"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem",
            "resources": {"requests": {"storage": size}}});
        if let Some(c) = class {
            spec["storageClassName"] = json!(c);
        }
        (
            Key::of("", "persistentvolumeclaims", "d", name),
            json!({"metadata": {"name": name, "namespace": "d", "uid": format!("u-{name}"),
                "finalizers": [PVC_PROTECTION]}, "spec": spec, "status": {"phase": "Pending"}}),
        )
    }

    fn class(state: &mut State, mode: &str) {
        state.put(
            Key::of("storage.k8s.io", "storageclasses", "", "standard"),
            json!({"metadata": {"name": "standard"}, "provisioner": "rancher.io/local-path",
                "reclaimPolicy": "Delete", "volumeBindingMode": mode}),
        );
    }

    #[test]
    fn claims_of_an_immediate_class_get_a_provisioned_volume_deleted_with_them() {
        let store = Store::new(100);
        let mut s = store.lock();
        class(&mut s, "Immediate");
        let (k, c) = claim("data", Some("standard"), "1Gi");
        s.put(k.clone(), c);
        reconcile(&mut s);
        let bound = s.get(&k).unwrap().clone();
        assert_eq!(bound["status"]["phase"], "Bound");
        assert_eq!(bound["status"]["capacity"]["storage"], "1Gi");
        assert_eq!(bound["spec"]["volumeName"], "pvc-u-data");
        let pv = s.get(&pv_key("pvc-u-data")).unwrap().clone();
        assert_eq!(pv["spec"]["claimRef"]["name"], "data");
        assert_eq!(pv["status"]["phase"], "Bound");
        let rv = bound["metadata"]["resourceVersion"].clone();
        reconcile(&mut s);
        assert_eq!(
            s.get(&k).unwrap()["metadata"]["resourceVersion"],
            rv,
            "settled"
        );
        lifecycle::delete(&mut s, &k);
        reconcile(&mut s);
        assert!(
            s.get(&k).is_none(),
            "pvc-protection goes when no Pod uses it"
        );
        reconcile(&mut s);
        assert!(
            s.get(&pv_key("pvc-u-data")).is_none(),
            "reclaimed by the Delete policy"
        );
    }

    #[test]
    fn a_pre_created_volume_binds_the_smallest_match_and_unknown_classes_wait() {
        let store = Store::new(100);
        let mut s = store.lock();
        for (name, size) in [("big", "10Gi"), ("small", "2Gi"), ("tiny", "500Mi")] {
            s.put(
                pv_key(name),
                json!({"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": size}, "storageClassName": "manual",
                    "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"},
                    "status": {"phase": "Pending"}}),
            );
        }
        let (k, c) = claim("data", Some("manual"), "1Gi");
        s.put(k.clone(), c);
        let (lost, c) = claim("lost", Some("nowhere"), "1Gi");
        s.put(lost.clone(), c);
        reconcile(&mut s);
        assert_eq!(s.get(&k).unwrap()["spec"]["volumeName"], "small");
        assert_eq!(s.get(&pv_key("small")).unwrap()["status"]["phase"], "Bound");
        assert_eq!(
            s.get(&pv_key("big")).unwrap()["status"]["phase"],
            "Available"
        );
        assert_eq!(s.get(&lost).unwrap()["status"]["phase"], "Pending");
        lifecycle::delete(&mut s, &k);
        reconcile(&mut s);
        reconcile(&mut s);
        assert_eq!(
            s.get(&pv_key("small")).unwrap()["status"]["phase"],
            "Released"
        );
    }
}
