//! What kube-controller-manager gives every namespace: the serviceaccount controller its
//! `default` ServiceAccount, and the root-ca-cert-publisher its `kube-root-ca.crt` ConfigMap
//! holding the cluster CA as `ca.crt` (once the server has set one, see
//! [`crate::cluster::Cluster::set_root_ca`]). Both are recreated when deleted, and the
//! ConfigMap's data is put back when changed; a terminating namespace gets neither.

use serde_json::{Value, json};

use super::save_as_controller_manager;
use crate::meta;
use crate::store::{Key, State};

/// The ConfigMap the root CA publisher keeps in every namespace.
const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";

/// The annotation the root CA publisher puts on it.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// What the two controllers read.
const READS: &[(&str, &str)] = &[
    ("", "namespaces"),
    ("", "serviceaccounts"),
    ("", "configmaps"),
];

fn key(resource: &str, namespace: &str, name: &str) -> Key {
    Key::of("", resource, namespace, name)
}

/// The names of the namespaces that are not terminating.
fn active_namespaces(state: &State) -> Vec<String> {
    state
        .list("", "namespaces", None)
        .into_iter()
        .filter(|(_, ns)| ns["metadata"]["deletionTimestamp"].is_null())
        .map(|(k, _)| k.name.clone())
        .collect()
}

/// One pass of both controllers, when a namespace, ServiceAccount or ConfigMap changed since
/// the last one.
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("namespace-defaults", READS) {
        return;
    }
    for namespace in active_namespaces(state) {
        let account = key("serviceaccounts", &namespace, "default");
        if state.get(&account).is_none() {
            let object = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": "default", "namespace": namespace, "uid": meta::uid(),
                    "creationTimestamp": meta::now()}});
            state.put(account, object);
        }
        publish(state, &namespace);
    }
}

/// Publishes the root CA in every active namespace (after the CA is set).
pub fn publish_root_ca(state: &mut State) {
    for namespace in active_namespaces(state) {
        publish(state, &namespace);
    }
}

/// Creates or repairs `namespace`'s `kube-root-ca.crt`, when a root CA is set.
fn publish(state: &mut State, namespace: &str) {
    let Some(pem) = state.root_ca().map(str::to_string) else {
        return;
    };
    let k = key("configmaps", namespace, ROOT_CA_CONFIGMAP);
    let data = json!({"ca.crt": pem});
    let existing = state.get(&k).cloned();
    let next = match &existing {
        Some(existing) => {
            let mut next: Value = existing.clone();
            next["data"] = data;
            next["metadata"]["annotations"]["kubernetes.io/description"] = json!(DESCRIPTION);
            if let Some(fields) = next.as_object_mut() {
                fields.remove("binaryData");
            }
            next
        }
        None => json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": namespace, "uid": meta::uid(),
                "creationTimestamp": meta::now(),
                "annotations": {"kubernetes.io/description": DESCRIPTION}},
            "data": data}),
    };
    save_as_controller_manager(state, &k, existing.as_ref(), next);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn namespaces_get_a_default_account_and_once_set_the_root_ca() {
        let store = Store::new(100);
        let mut s = store.lock();
        s.put(
            key("namespaces", "", "a"),
            json!({"metadata": {"name": "a"}}),
        );
        reconcile(&mut s);
        assert!(s.get(&key("serviceaccounts", "a", "default")).is_some());
        assert!(s.get(&key("configmaps", "a", ROOT_CA_CONFIGMAP)).is_none());
        s.set_root_ca("PEM".into());
        publish_root_ca(&mut s);
        let cm = key("configmaps", "a", ROOT_CA_CONFIGMAP);
        assert_eq!(s.get(&cm).unwrap()["data"]["ca.crt"], "PEM");
        s.remove(&cm);
        s.remove(&key("serviceaccounts", "a", "default"));
        reconcile(&mut s);
        assert_eq!(s.get(&cm).unwrap()["data"]["ca.crt"], "PEM");
        assert!(s.get(&key("serviceaccounts", "a", "default")).is_some());
        let mut changed = s.get(&cm).unwrap().clone();
        changed["data"]["ca.crt"] = json!("other");
        s.put(cm.clone(), changed);
        reconcile(&mut s);
        assert_eq!(s.get(&cm).unwrap()["data"]["ca.crt"], "PEM");
    }
}
