//! Garbage collection and namespace finalization: dependents of deleted owners go (Background),
//! Foreground owners wait for their dependents, Orphan owners release them, and a terminating
//! Namespace empties before it is removed.

use serde_json::{Value, json};

use crate::lifecycle::{self, FOREGROUND, ORPHAN};
use crate::meta;
use crate::store::{Key, State};

fn uid(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

/// One pass of garbage collection and namespace finalization. It looks only at terminating
/// objects and at the owned objects written, or whose owner went, since the last pass.
pub fn reconcile(state: &mut State) {
    let candidates = state.take_orphan_candidates();
    for key in state.terminating() {
        terminating(state, &key);
    }
    for key in candidates {
        let Some(object) = state.get(&key) else {
            continue;
        };
        let owners = meta::owner_uids(object);
        if object["metadata"]["deletionTimestamp"].is_null()
            && !owners.is_empty()
            && owners.iter().all(|o| !state.has_uid(o))
        {
            lifecycle::delete(state, &key);
        }
    }
}

/// Orphans or deletes the dependents of the terminating object at `key` as its finalizers ask,
/// or empties it when it is a Namespace.
fn terminating(state: &mut State, key: &Key) {
    let Some(object) = state.get(key) else {
        return;
    };
    let owner = uid(object).to_string();
    let dependents = state.dependents(&owner);
    if lifecycle::has_finalizer(object, ORPHAN) {
        for dep in &dependents {
            if let Some(mut d) = state.get(dep).cloned() {
                if let Some(refs) = d["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"].as_str() != Some(owner.as_str()));
                }
                state.put(dep.clone(), d);
            }
        }
        finish(state, key, ORPHAN);
    } else if lifecycle::has_finalizer(object, FOREGROUND) {
        if dependents.is_empty() {
            finish(state, key, FOREGROUND);
        } else {
            for dep in &dependents {
                lifecycle::delete(state, dep);
            }
        }
    } else if key.resource == "namespaces" && key.group.is_empty() {
        finalize_namespace(state, key);
    }
}

/// Removes `finalizer` from the object at `key`, removing the object if nothing else holds it.
fn finish(state: &mut State, key: &Key, finalizer: &str) {
    if let Some(mut object) = state.get(key).cloned() {
        lifecycle::remove_finalizer(&mut object, finalizer);
        if lifecycle::ready_to_remove(&object) {
            state.remove(key);
        } else {
            state.put(key.clone(), object);
        }
    }
}

/// Whole seconds a terminating namespace waits before its contents are deleted: kube's
/// namespace controller first runs discovery, so a client deleting a namespace and then the
/// objects in it (`kubectl delete -f`) finds them still there.
const NAMESPACE_GRACE_SECONDS: i64 = 2;

fn finalize_namespace(state: &mut State, key: &Key) {
    let since = state
        .get(key)
        .and_then(|ns| ns["metadata"]["deletionTimestamp"].as_str())
        .and_then(meta::parse_rfc3339);
    if since.is_some_and(|t| meta::now_secs() < t + NAMESPACE_GRACE_SECONDS) {
        return;
    }
    let contents = state.keys_in_namespace(&key.name);
    if contents.is_empty() {
        if let Some((group, version, _)) = crate::discovery::remote_group_versions(state).first() {
            discovery_failed(state, key, &format!("{group}/{version}"));
            return;
        }
        if let Some(mut ns) = state.get(key).cloned() {
            ns["spec"]["finalizers"] = json!([]);
            if lifecycle::ready_to_remove(&ns) {
                state.remove(key);
            } else {
                state.put(key.clone(), ns);
            }
        }
    } else {
        for k in &contents {
            lifecycle::delete(state, k);
        }
    }
}

/// A namespace whose contents are gone but whose deletion cannot be confirmed: kube's namespace
/// controller keeps its `kubernetes` finalizer while discovery fails for some group (an
/// unavailable APIService), and says so in a condition.
fn discovery_failed(state: &mut State, key: &Key, group_version: &str) {
    let Some(mut ns) = state.get(key).cloned() else {
        return;
    };
    let message = format!(
        "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of \
         server APIs: {group_version}: stale GroupVersion discovery: {group_version}"
    );
    if ns["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["message"] == message.as_str()))
    {
        return;
    }
    ns["status"]["conditions"] = json!([{"type": "NamespaceDeletionDiscoveryFailure",
        "status": "True", "reason": "DiscoveryFailed", "message": message,
        "lastTransitionTime": meta::now()}]);
    state.put(key.clone(), ns);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn key(resource: &str, ns: &str, name: &str) -> Key {
        Key::of("", resource, ns, name)
    }

    #[test]
    fn dependents_of_a_gone_owner_are_collected() {
        let store = Store::new(100);
        let mut s = store.lock();
        s.put(
            key("configmaps", "d", "dep"),
            json!({"metadata": {"uid": "2", "ownerReferences": [{"uid": "1"}]}}),
        );
        reconcile(&mut s);
        assert!(s.get(&key("configmaps", "d", "dep")).is_none());
    }

    #[test]
    fn terminating_namespace_empties_then_goes() {
        let store = Store::new(100);
        let mut s = store.lock();
        let namespace = |deleted: String| {
            json!({"metadata": {"uid": "1", "deletionTimestamp": deleted},
            "spec": {"finalizers": ["kubernetes"]}})
        };
        s.put(key("namespaces", "", "d"), namespace(meta::now()));
        s.put(
            key("configmaps", "d", "c"),
            json!({"metadata": {"uid": "2"}}),
        );
        reconcile(&mut s);
        assert!(
            s.get(&key("configmaps", "d", "c")).is_some(),
            "contents stay for the grace period"
        );
        s.put(key("namespaces", "", "d"), namespace(meta::format_unix(0)));
        reconcile(&mut s);
        assert!(s.get(&key("configmaps", "d", "c")).is_none());
        reconcile(&mut s);
        assert!(s.get(&key("namespaces", "", "d")).is_none());
    }
}
