//! The CRD finalizer (apiextensions-apiserver's `finalizer` controller): a terminating CRD's
//! custom resources are deleted, and once the last is gone the cleanup finalizer goes and the
//! CRD with it.

use crate::crd::CLEANUP_FINALIZER;
use crate::lifecycle;
use crate::store::{Key, State};

/// One pass over the terminating CRDs that still carry the cleanup finalizer.
pub fn reconcile(state: &mut State) {
    let terminating = lifecycle::held(
        state,
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        CLEANUP_FINALIZER,
    );
    for (key, crd) in terminating {
        let group = crd["spec"]["group"].as_str().unwrap_or_default();
        let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
        let instances: Vec<Key> = state
            .list(group, plural, None)
            .into_iter()
            .map(|(k, _)| k.clone())
            .collect();
        if instances.is_empty() {
            lifecycle::release_finalizer(state, &key, &crd, CLEANUP_FINALIZER);
            continue;
        }
        for instance in instances {
            lifecycle::delete(state, &instance);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use serde_json::json;

    fn key(group: &str, resource: &str, ns: &str, name: &str) -> Key {
        Key::of(group, resource, ns, name)
    }

    #[test]
    fn a_terminating_crd_goes_after_its_resources() {
        let store = Store::new(100);
        let mut s = store.lock();
        let crd = key(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "ws.x.io",
        );
        s.put(
            crd.clone(),
            json!({"metadata": {"name": "ws.x.io", "deletionTimestamp": "2024-01-01T00:00:00Z",
                "finalizers": [CLEANUP_FINALIZER]},
                "spec": {"group": "x.io", "names": {"kind": "W", "plural": "ws"},
                    "versions": [{"name": "v1", "served": true, "storage": true}]}}),
        );
        let held = key("x.io", "ws", "d", "held");
        s.put(
            held.clone(),
            json!({"metadata": {"name": "held", "finalizers": ["x.io/hold"]}}),
        );
        s.put(
            key("x.io", "ws", "d", "free"),
            json!({"metadata": {"name": "free"}}),
        );
        reconcile(&mut s);
        assert!(s.get(&key("x.io", "ws", "d", "free")).is_none());
        assert!(!s.get(&held).unwrap()["metadata"]["deletionTimestamp"].is_null());
        reconcile(&mut s);
        assert!(
            s.get(&crd).is_some(),
            "a finalizer on a resource holds the CRD"
        );
        let mut released = s.get(&held).unwrap().clone();
        lifecycle::remove_finalizer(&mut released, "x.io/hold");
        s.remove(&held);
        reconcile(&mut s);
        assert!(s.get(&crd).is_none());
    }
}
