//! The object store: every object by key, one resourceVersion counter, a bounded event history
//! that feeds watches, and indices (see [`index`]) that let the controllers look only at what
//! changed. All writes go through [`State`] under one lock, so the resourceVersion
//! sequence and the event order are the commit order.

mod index;
mod key;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

pub use key::Key;

use crate::registry::{self, ResourceType};

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// An object was created.
    Added,
    /// An object was changed.
    Modified,
    /// An object was removed.
    Deleted,
}

/// One committed change.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened.
    pub kind: EventType,
    /// The resourceVersion of the change.
    pub rv: u64,
    /// Which object.
    pub key: Key,
    /// The object after the change (for deletions: its last state, at the deletion's version).
    pub object: Value,
    /// The object before the change, if it existed.
    pub previous: Option<Value>,
}

/// The store's contents, reached through [`Store::lock`].
pub struct State {
    rv: u64,
    /// Versions at or below this one have left the history (410 Gone for watches from them).
    compacted: u64,
    objects: BTreeMap<Key, Value>,
    history: VecDeque<Arc<Event>>,
    history_limit: usize,
    custom_types: Vec<ResourceType>,
    builtins: Vec<ResourceType>,
    observer: Option<Observer>,
    index: index::Index,
    /// The resourceVersion each controller last ran at, by controller name.
    cursors: HashMap<&'static str, u64>,
    /// The cluster CA certificate (PEM) published in every namespace's `kube-root-ca.crt`.
    root_ca: Option<String>,
    /// Whether the cluster has its simulated worker node (see [`State::has_worker`]).
    worker: bool,
}

/// Called with the new resourceVersion after every committed change (under the store lock, so
/// it must not block); the server wakes watches and controllers with it.
pub type Observer = Box<dyn Fn(u64) + Send + Sync>;

/// The shared store.
pub struct Store {
    state: Mutex<State>,
}

impl Store {
    /// An empty store keeping the last `history_limit` events.
    pub fn new(history_limit: usize) -> Self {
        Self {
            state: Mutex::new(State {
                rv: 1,
                compacted: 0,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                history_limit: history_limit.max(1),
                custom_types: Vec::new(),
                builtins: registry::builtins(),
                observer: None,
                index: index::Index::default(),
                cursors: HashMap::new(),
                root_ca: None,
                worker: true,
            }),
        }
    }

    /// Locks the store. Keep the guard for the whole read-modify-write of one request.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl State {
    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// Every served resource type: built-ins then CRD-served ones.
    pub fn resource_types(&self) -> impl Iterator<Item = &ResourceType> {
        self.builtins.iter().chain(self.custom_types.iter())
    }

    /// The served type at `group`/`version` with plural `resource`.
    pub fn find_type(&self, group: &str, version: &str, resource: &str) -> Option<ResourceType> {
        self.resource_types()
            .find(|t| t.group == group && t.version == version && t.plural == resource)
            .cloned()
    }

    /// The object at `key`.
    pub fn get(&self, key: &Key) -> Option<&Value> {
        self.objects.get(key)
    }

    /// Objects of one resource, in key order; `namespace: None` means all namespaces.
    pub fn list(
        &self,
        group: &str,
        resource: &str,
        namespace: Option<&str>,
    ) -> Vec<(&Key, &Value)> {
        let start = Key::of(group, resource, namespace.unwrap_or_default(), "");
        self.objects
            .range(start..)
            .take_while(|(k, _)| {
                k.group == group
                    && k.resource == resource
                    && namespace.is_none_or(|ns| k.namespace == ns)
            })
            .collect()
    }

    /// Stores `object` at `key` with the next resourceVersion and records the event; returns the
    /// stored object.
    pub fn put(&mut self, key: Key, mut object: Value) -> Value {
        self.rv += 1;
        object["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        in_field_order(&mut object["metadata"]);
        let previous = self.objects.insert(key.clone(), object.clone());
        self.index
            .update(self.rv, &key, previous.as_ref(), Some(&object));
        let kind = if previous.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(kind, key, object.clone(), previous);
        object
    }

    /// Removes the object at `key`, recording a deletion at a new resourceVersion.
    pub fn remove(&mut self, key: &Key) -> Option<Value> {
        let mut object = self.objects.remove(key)?;
        self.rv += 1;
        self.index.update(self.rv, key, Some(&object), None);
        let previous = object.clone();
        object["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        self.record(
            EventType::Deleted,
            key.clone(),
            object.clone(),
            Some(previous),
        );
        Some(object)
    }

    fn record(&mut self, kind: EventType, key: Key, object: Value, previous: Option<Value>) {
        if key.group == "apiextensions.k8s.io" {
            self.refresh_custom_types();
        }
        let event = Arc::new(Event {
            kind,
            rv: self.rv,
            key,
            object,
            previous,
        });
        if self.history.len() == self.history_limit
            && let Some(old) = self.history.pop_front()
        {
            self.compacted = old.rv;
        }
        self.history.push_back(event);
        if let Some(observer) = &self.observer {
            observer(self.rv);
        }
    }

    /// Sets the function told about every committed change.
    pub fn set_observer(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// Recomputes the CRD-served types (a terminating CRD serves until its cleanup finalizer
    /// goes); when a CRD goes, its objects go too.
    fn refresh_custom_types(&mut self) {
        let old = std::mem::take(&mut self.custom_types);
        self.custom_types = self
            .list("apiextensions.k8s.io", "customresourcedefinitions", None)
            .into_iter()
            .flat_map(|(_, crd)| registry::from_crd(crd))
            .collect();
        let gone: Vec<ResourceType> = old
            .into_iter()
            .filter(|t| {
                !self
                    .custom_types
                    .iter()
                    .any(|n| n.group == t.group && n.plural == t.plural)
            })
            .collect();
        for t in gone {
            let keys: Vec<Key> = self
                .list(&t.group, &t.plural, None)
                .into_iter()
                .map(|(k, _)| k.clone())
                .collect();
            for k in keys {
                self.remove(&k);
            }
        }
    }

    /// Retained events after `rv`, or `Err(oldest available)` when `rv` is too old.
    pub fn events_since(&self, rv: u64) -> Result<Vec<Arc<Event>>, u64> {
        if rv < self.compacted {
            return Err(self.compacted + 1);
        }
        let start = self.history.partition_point(|e| e.rv <= rv);
        Ok(self.history.range(start..).cloned().collect())
    }

    /// Every object with its key, and the latest resourceVersion (what a snapshot keeps).
    #[cfg(feature = "server")]
    pub fn snapshot(&self) -> (u64, Vec<(Key, Value)>) {
        let objects = self
            .objects
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (self.rv, objects)
    }

    /// Replaces the contents with a snapshot, without events (nobody watched them happen).
    #[cfg(feature = "server")]
    pub fn restore(&mut self, rv: u64, objects: Vec<(Key, Value)>) {
        self.objects = objects.into_iter().collect();
        self.rv = rv.max(self.rv);
        self.index = index::Index::default();
        self.cursors.clear();
        for (key, object) in &self.objects {
            self.index.update(self.rv, key, None, Some(object));
        }
        self.history.clear();
        self.compacted = self.rv;
        self.custom_types = self
            .list("apiextensions.k8s.io", "customresourcedefinitions", None)
            .into_iter()
            .flat_map(|(_, crd)| registry::from_crd(crd))
            .collect();
    }

    /// Whether some object carries the uid `uid`.
    pub fn has_uid(&self, uid: &str) -> bool {
        self.index.has_uid(uid)
    }

    /// The keys of the objects naming `uid` among their owners, in key order.
    pub fn dependents(&self, uid: &str) -> Vec<Key> {
        self.index.dependents(uid).cloned().collect()
    }

    /// The keys of the objects with a `deletionTimestamp`, in key order.
    pub fn terminating(&self) -> Vec<Key> {
        self.index.terminating().cloned().collect()
    }

    /// The keys of every object in `namespace`, whatever its resource.
    pub fn keys_in_namespace(&self, namespace: &str) -> Vec<Key> {
        let resources: BTreeSet<(&str, &str)> = self.index.resources().collect();
        resources
            .into_iter()
            .flat_map(|(group, resource)| self.list(group, resource, Some(namespace)))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The owned objects written, or whose owner went, since the last call: the only ones whose
    /// owners can have all gone.
    pub fn take_orphan_candidates(&mut self) -> BTreeSet<Key> {
        self.index.take_orphan_candidates()
    }

    /// Whether an object of one of `resources` (group, plural) changed since controller `name`
    /// last called this; the next call answers for the changes after this one.
    pub fn changed_since_last_run(
        &mut self,
        name: &'static str,
        resources: &[(&str, &str)],
    ) -> bool {
        let seen = self.cursors.insert(name, self.rv).unwrap_or(0);
        resources
            .iter()
            .any(|(group, resource)| self.index.changed_since(group, resource, seen))
    }

    /// The cluster CA certificate (PEM) the root CA publisher publishes, once one is set.
    pub fn root_ca(&self) -> Option<&str> {
        self.root_ca.as_deref()
    }

    /// Whether the cluster has a worker: the node `krt-sim-node` that Pods are scheduled to and
    /// run on. Without one it is a bare control plane, whose Pods stay unscheduled.
    pub fn has_worker(&self) -> bool {
        self.worker
    }

    /// Removes the worker node ([`State::has_worker`]).
    #[cfg(feature = "server")]
    pub fn remove_worker(&mut self) {
        self.worker = false;
    }

    /// Sets the cluster CA certificate (PEM) the root CA publisher publishes.
    pub fn set_root_ca(&mut self, pem: String) {
        self.root_ca = Some(pem);
    }

    /// Forgets the whole event history: every older resourceVersion now gets 410 Gone.
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }
}

/// ObjectMeta's fields in the order kube-apiserver's Go type encodes them.
const OBJECT_META_ORDER: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Puts `metadata`'s fields in the order kube-apiserver answers them (what a client that keeps
/// the order, like a YAML diff, shows): ObjectMeta's fields in the order of its Go type (ones it
/// does not have last), and the keys of its labels and annotations sorted, as Go encodes a map.
fn in_field_order(metadata: &mut Value) {
    let Some(fields) = metadata.as_object_mut() else {
        return;
    };
    for map in ["labels", "annotations"] {
        if let Some(entries) = fields.get_mut(map).and_then(Value::as_object_mut) {
            entries.sort_keys();
        }
    }
    let position = |k: &str| {
        OBJECT_META_ORDER
            .iter()
            .position(|f| *f == k)
            .unwrap_or(OBJECT_META_ORDER.len())
    };
    let mut sorted: Vec<(String, Value)> = std::mem::take(fields).into_iter().collect();
    sorted.sort_by_key(|(k, _)| position(k));
    fields.extend(sorted);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(name: &str) -> Key {
        Key::of("", "configmaps", "default", name)
    }

    #[test]
    fn writes_take_increasing_versions_and_history_is_bounded() {
        let store = Store::new(2);
        let mut s = store.lock();
        let a = s.put(key("a"), json!({"metadata": {}}));
        let b = s.put(key("b"), json!({"metadata": {}}));
        assert_eq!(a["metadata"]["resourceVersion"], "2");
        assert_eq!(b["metadata"]["resourceVersion"], "3");
        s.remove(&key("a"));
        assert_eq!(s.resource_version(), 4);
        assert_eq!(s.events_since(2).map(|e| e.len()), Ok(2));
        assert_eq!(s.events_since(1).map(|e| e.len()), Err(3));
        assert_eq!(s.list("", "configmaps", Some("default")).len(), 1);
    }

    #[test]
    fn controllers_hear_of_changes_to_what_they_read_once() {
        let store = Store::new(100);
        let mut s = store.lock();
        let reads = [("", "configmaps")];
        assert!(!s.changed_since_last_run("c", &reads), "nothing stored yet");
        s.put(key("a"), json!({"metadata": {}}));
        assert!(s.changed_since_last_run("c", &reads));
        assert!(!s.changed_since_last_run("c", &reads));
        assert!(
            s.changed_since_last_run("other", &reads),
            "each controller has its own cursor"
        );
        s.put(
            Key {
                resource: "secrets".into(),
                ..key("s")
            },
            json!({"metadata": {}}),
        );
        assert!(!s.changed_since_last_run("c", &reads));
        s.remove(&key("a"));
        assert!(s.changed_since_last_run("c", &reads));
    }

    #[test]
    fn crds_serve_kinds_and_take_their_objects_when_deleted() {
        let store = Store::new(100);
        let mut s = store.lock();
        let crd_key = Key::of(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "widgets.example.com",
        );
        s.put(crd_key.clone(), json!({"metadata": {}, "spec": {"group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"}, "versions": [{"name": "v1", "served": true}]}}));
        let rt = s.find_type("example.com", "v1", "widgets").expect("served");
        s.put(Key::new(&rt, "default", "w"), json!({"metadata": {}}));
        s.remove(&crd_key);
        assert!(s.find_type("example.com", "v1", "widgets").is_none());
        assert!(s.list("example.com", "widgets", None).is_empty());
    }
}
