//! Deletion lifecycle shared by DELETE and the controllers: `deletionTimestamp`, finalizers and
//! the moment an object finally goes.

use serde_json::{Value, json};

use crate::meta;
use crate::store::{Key, State};

/// Deletes the object at `key` as a Background delete would: removed at once without finalizers,
/// otherwise marked terminating.
pub fn delete(state: &mut State, key: &Key) {
    let Some(mut object) = state.get(key).cloned() else {
        return;
    };
    mark_deleted(&mut object);
    if ready_to_remove(&object) {
        state.remove(key);
    } else if state.get(key) != Some(&object) {
        state.put(key.clone(), object);
    }
}

/// Removes `finalizer` from the terminating `object` at `key`, and the object when nothing
/// else holds it (a controller done with what its finalizer guarded).
pub fn release_finalizer(state: &mut State, key: &Key, object: &Value, finalizer: &str) {
    let mut next = object.clone();
    remove_finalizer(&mut next, finalizer);
    if ready_to_remove(&next) {
        state.remove(key);
    } else if state.get(key) != Some(&next) {
        state.put(key.clone(), next);
    }
}

/// The terminating objects of `group`/`resource` that `finalizer` still holds: what the
/// controller owning that finalizer looks at.
pub fn held(state: &State, group: &str, resource: &str, finalizer: &str) -> Vec<(Key, Value)> {
    state
        .list(group, resource, None)
        .into_iter()
        .filter(|(_, object)| {
            !object["metadata"]["deletionTimestamp"].is_null() && has_finalizer(object, finalizer)
        })
        .map(|(key, object)| (key.clone(), object.clone()))
        .collect()
}

/// Finalizer kube-apiserver adds for `propagationPolicy=Foreground`.
pub const FOREGROUND: &str = "foregroundDeletion";
/// Finalizer kube-apiserver adds for `propagationPolicy=Orphan`.
pub const ORPHAN: &str = "orphan";
/// Finalizer the StorageObjectInUseProtection admission plugin puts on every new claim, kept
/// while a Pod uses it.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// Finalizer the same plugin puts on every new volume, kept while a claim is bound to it.
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";
/// Finalizer the same plugin puts on every new VolumeAttributesClass, kept while a claim or a
/// volume names it.
pub const VAC_PROTECTION: &str = "kubernetes.io/vac-protection";

/// Finalizer a PodGroup's registry puts on every new PodGroup, kept while a Pod names it as its
/// scheduling group.
pub const PODGROUP_PROTECTION: &str = "scheduling.k8s.io/podgroup-protection";

/// The finalizers `object` carries, in order.
pub(crate) fn finalizers(object: &Value) -> impl Iterator<Item = &str> {
    object["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether a terminating object has no finalizers left (and, for a Namespace, no spec finalizers).
pub fn ready_to_remove(object: &Value) -> bool {
    !object["metadata"]["deletionTimestamp"].is_null()
        && finalizers(object).next().is_none()
        && object["spec"]["finalizers"]
            .as_array()
            .is_none_or(Vec::is_empty)
}

/// Whether the object carries `name` among its finalizers.
pub fn has_finalizer(object: &Value, name: &str) -> bool {
    finalizers(object).any(|f| f == name)
}

/// Adds a finalizer if missing.
pub fn add_finalizer(object: &mut Value, name: &str) {
    if !has_finalizer(object, name) {
        match object["metadata"]["finalizers"].as_array_mut() {
            Some(list) => list.push(json!(name)),
            None => object["metadata"]["finalizers"] = json!([name]),
        }
    }
}

/// Removes a finalizer (and the list when it becomes empty).
pub fn remove_finalizer(object: &mut Value, name: &str) {
    if let Some(list) = object["metadata"]["finalizers"].as_array_mut() {
        list.retain(|f| f != name);
        if list.is_empty()
            && let Some(m) = object["metadata"].as_object_mut()
        {
            m.remove("finalizers");
        }
    }
}

/// Marks an object as terminating (idempotent). The first mark bumps a generation the object
/// has, as kube-apiserver does (`markAsDeleting`): its controllers' work changes.
pub fn mark_deleted(object: &mut Value) {
    if object["metadata"]["deletionTimestamp"].is_null() {
        object["metadata"]["deletionTimestamp"] = json!(meta::now());
        object["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        if let Some(generation) = object["metadata"]["generation"].as_i64().filter(|g| *g > 0) {
            object["metadata"]["generation"] = json!(generation + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalizers_hold_removal() {
        let mut o = json!({"metadata": {"finalizers": ["a"], "generation": 3}});
        mark_deleted(&mut o);
        mark_deleted(&mut o);
        assert_eq!(
            o["metadata"]["generation"], 4,
            "bumped once, by the first mark"
        );
        assert!(!ready_to_remove(&o));
        remove_finalizer(&mut o, "a");
        assert!(ready_to_remove(&o));
        add_finalizer(&mut o, FOREGROUND);
        assert!(has_finalizer(&o, FOREGROUND));
    }
}
