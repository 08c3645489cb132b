//! The in-memory cluster: the object store plus the API semantics, callable in-process. The HTTP
//! server and the simulated controllers share one [`Cluster`].

use serde_json::json;

use crate::api::{self, Request, Response};
use crate::store::{Key, Store};
use crate::watch::Watch;
use crate::{controllers, meta};

/// An in-memory Kubernetes cluster: objects, resourceVersions, event history, and
/// kube-apiserver's semantics for every request (see [`crate::api`]).
pub struct Cluster {
    pub(crate) store: Store,
    /// `host:port` reported in `/api` discovery.
    pub(crate) address: String,
}

impl Cluster {
    /// A cluster with the namespaces every cluster starts with (`default`, `kube-system`,
    /// `kube-public`, `kube-node-lease`), keeping the last `history_limit` events for watches.
    pub fn new(history_limit: usize) -> Self {
        let cluster = Self::empty(history_limit, "127.0.0.1");
        cluster.seed();
        cluster
    }

    /// A cluster with no objects at all, reporting `address` in discovery.
    pub(crate) fn empty(history_limit: usize, address: &str) -> Self {
        Self {
            store: Store::new(history_limit),
            address: address.to_string(),
        }
    }

    /// Serves one request (anything but a watch, see [`Cluster::watch`]).
    pub fn handle(&self, request: &Request) -> Response {
        api::handle(self, request)
    }

    /// Starts the watch `request` asks for (`GET` of a collection with the WATCH parameters).
    ///
    /// # Errors
    /// The error response (404 for an unknown resource, 410 Gone for a too-old
    /// `resourceVersion`, 400 for a bad selector).
    pub fn watch(&self, request: &Request) -> Result<Watch, Response> {
        api::watch(self, request)
    }

    /// Runs one pass of the simulated controllers (garbage collection, workloads, services,
    /// volumes, namespaces): every object moves one step toward its desired state.
    pub fn reconcile(&self) {
        controllers::reconcile(&mut self.store.lock());
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

    /// Creates the namespaces every cluster starts with.
    pub(crate) fn seed(&self) {
        let mut state = self.store.lock();
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let key = Key {
                group: String::new(),
                resource: "namespaces".into(),
                namespace: String::new(),
                name: name.into(),
            };
            state.put(
                key,
                json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "uid": meta::uid(), "creationTimestamp": meta::now(),
                        "labels": {"kubernetes.io/metadata.name": name}},
                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
            );
        }
    }
}
