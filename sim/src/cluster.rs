//! The in-memory cluster: the object store plus the API semantics, callable in-process. The HTTP
//! server and the simulated controllers share one [`Cluster`].

use std::sync::Arc;

use serde_json::json;

use crate::request::{Request, Response};
use crate::store::{Key, Store};
use crate::watch::Watch;
use crate::{controllers, meta, routes};

/// An in-memory Kubernetes cluster: objects, resourceVersions, event history, and
/// kube-apiserver's semantics for every request (a [`Request`] in, a [`Response`] out).
pub struct Cluster {
    /// The objects, shared with the cluster's [`Watch`] cursors.
    pub(crate) store: Arc<Store>,
    /// `host:port` reported in `/api` discovery.
    pub(crate) address: String,
}

impl Cluster {
    /// A cluster with the namespaces every cluster starts with (`default`, `kube-system`,
    /// `kube-public`, `kube-node-lease`, each with its `default` ServiceAccount) and a default
    /// StorageClass, keeping the last `history_limit` events for watches.
    pub fn new(history_limit: usize) -> Self {
        let cluster = Self::empty(history_limit, "127.0.0.1");
        cluster.seed();
        cluster
    }

    /// A cluster with no objects at all, reporting `address` in discovery.
    pub(crate) fn empty(history_limit: usize, address: &str) -> Self {
        Self {
            store: Arc::new(Store::new(history_limit)),
            address: address.to_string(),
        }
    }

    /// Serves one request (anything but a watch, see [`Cluster::watch`]).
    pub fn handle(&self, request: &Request) -> Response {
        routes::handle(&self.store, &self.address, request)
    }

    /// Starts the watch `request` asks for (`GET` of a collection with the WATCH parameters).
    ///
    /// # Errors
    /// The error response (404 for an unknown resource, 410 Gone for a too-old
    /// `resourceVersion`, 400 for a bad selector).
    pub fn watch(&self, request: &Request) -> Result<Watch, Box<Response>> {
        routes::watch(&self.store, request)
    }

    /// Runs one pass of the simulated controllers (garbage collection, workloads, services,
    /// volumes, namespaces): every object moves one step toward its desired state.
    pub fn reconcile(&self) {
        controllers::reconcile(&mut self.store.lock());
    }

    /// Sets the CA certificate (PEM) that signs the server's certificate: the root CA publisher
    /// publishes it as `ca.crt` of a `kube-root-ca.crt` ConfigMap in every namespace (until one
    /// is set, no namespace has that ConfigMap), starting now. The HTTP server is to set the CA
    /// of its certificate; an in-process caller may set one too.
    pub fn set_root_ca(&self, pem: String) {
        let mut state = self.store.lock();
        state.set_root_ca(pem);
        controllers::publish_root_ca(&mut state);
    }

    /// Forgets the event history: watches from any earlier resourceVersion get 410 Gone.
    pub fn expire_resource_versions(&self) {
        self.store.lock().compact();
    }

    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.store.lock().resource_version()
    }

    /// Sets the function told the new resourceVersion after every committed change (called
    /// under the store's lock: it must not block or call back into the cluster).
    pub fn observe(&self, observer: impl Fn(u64) + Send + Sync + 'static) {
        self.store.lock().set_observer(Box::new(observer));
    }

    /// Removes the cluster's worker, before it is seeded: a bare control plane, as
    /// kube-apiserver and kube-controller-manager alone are. No scheduler binds Pods and no
    /// kubelet runs them (they stay Pending, without a node), DaemonSets have no node to run on,
    /// and no default StorageClass is seeded.
    #[cfg(feature = "server")]
    pub(crate) fn remove_worker(&self) {
        self.store.lock().remove_worker();
    }

    /// Creates the namespaces every cluster starts with (each with its `default`
    /// ServiceAccount), the default StorageClass `standard` (as kind's, with a worker), whose
    /// claims the volume controller provisions at once, and the default RBAC roles and bindings
    /// (the aggregated `admin`, `edit` and `view` filled in).
    pub(crate) fn seed(&self) {
        let mut state = self.store.lock();
        crate::rbac::bootstrap::seed(&mut state);
        controllers::aggregation::reconcile(&mut state);
        if state.has_worker() {
            state.put(
            Key::of("storage.k8s.io", "storageclasses", "", "standard"),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "standard", "uid": meta::uid(), "creationTimestamp": meta::now(),
                    "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete",
                "volumeBindingMode": "Immediate"}),
            );
        }
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let key = Key::of("", "namespaces", "", name);
            state.put(
                key,
                json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "uid": meta::uid(), "creationTimestamp": meta::now(),
                        "labels": {"kubernetes.io/metadata.name": name},
                        // kube-apiserver creates them, with its name label, as its own write.
                        "managedFields": [{"manager": "kube-apiserver", "operation": "Update",
                            "apiVersion": "v1", "time": meta::now(), "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:metadata": {"f:labels": {".": {},
                                "f:kubernetes.io/metadata.name": {}}}}}]},
                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
            );
        }
        controllers::namespace_defaults(&mut state);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn configmap(name: &str, app: &str) -> Vec<u8> {
        json!({"metadata": {"name": name, "labels": {"app": app}}, "data": {"k": "v"}})
            .to_string()
            .into_bytes()
    }

    const CM: &str = "/api/v1/namespaces/default/configmaps";

    #[test]
    fn watches_replay_from_a_version_and_report_selection_changes() {
        let cluster = Cluster::new(100);
        let created = cluster.handle(&Request::post(CM, configmap("a", "web")));
        let rv = created.body["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let mut all = cluster
            .watch(&Request::get(CM).query("resourceVersion", &rv))
            .unwrap();
        let mut web = cluster
            .watch(&Request::get(CM).query("labelSelector", "app=web"))
            .unwrap();
        assert_eq!(web.poll().unwrap()[0]["type"], "ADDED");
        cluster.handle(&Request::post(CM, configmap("b", "db")));
        cluster.handle(&Request::put(&format!("{CM}/a"), configmap("a", "db")));
        let types = |events: Vec<Value>| -> Vec<String> {
            events
                .iter()
                .map(|e| format!("{} {}", e["type"], e["object"]["metadata"]["name"]))
                .collect()
        };
        assert_eq!(
            types(all.poll().unwrap()),
            ["\"ADDED\" \"b\"", "\"MODIFIED\" \"a\""]
        );
        assert_eq!(types(web.poll().unwrap()), ["\"DELETED\" \"a\""]);
        assert!(all.poll().unwrap().is_empty());
    }

    #[test]
    fn watches_from_too_old_versions_are_gone() {
        let cluster = Cluster::new(2);
        let mut watch = cluster.watch(&Request::get(CM)).unwrap();
        for name in ["a", "b", "c"] {
            cluster.handle(&Request::post(CM, configmap(name, "x")));
        }
        let gone = watch.poll().unwrap_err();
        assert_eq!((gone.code, gone.reason), (410, "Expired"));
        let err = cluster
            .watch(&Request::get(CM).query("resourceVersion", "2"))
            .unwrap_err();
        assert_eq!(err.code, 410);
        assert_eq!(err.body["reason"], "Expired");
    }
}
