//! A Stack's state kept in its own status: the inventory of applied IDs and
//! their objects' UIDs, written as they change (krt-stack's [`Recorder`](krt_stack::Recorder)
//! saves while a walk runs), so no Secret is needed. A resource is recorded
//! by its ID alone; read back, it is the ID's object skeleton (`apiVersion`,
//! `kind`, `metadata.name` and `namespace`), which is all pruning and
//! deletion need (server-side apply needs no "original", and a client-side
//! merge finds its original in the object's last-applied annotation).
//!
//! The Stack's lock is the Lease of its shard: a reconcile runs only while
//! this replica holds it, and [`take_lock`](StateBackend::take_lock) checks
//! that it still does.

use crate::crd::{FIELD_MANAGER, InventoryEntry, Stack};
use futures::future::BoxFuture;
use krt_guest::id::ResourceId;
use krt_stack::model::Resource;
use krt_stack::{State, StateBackend, StateError, StateLock};
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The state of one Stack, in `status.inventory`.
pub struct StatusBackend {
    api: Api<Stack>,
    name: String,
    namespace: String,
    /// The entries as last read or written.
    recorded: Mutex<Vec<InventoryEntry>>,
    /// Whether this replica holds the Stack's shard.
    held: Arc<AtomicBool>,
}

impl StatusBackend {
    /// The backend of `stack`, whose inventory is read from the object as
    /// given; `held` says whether this replica still holds its shard.
    pub fn new(client: kube::Client, stack: &Stack, held: Arc<AtomicBool>) -> Self {
        let namespace = stack.namespace_or_default().to_owned();
        let recorded = stack
            .status
            .as_ref()
            .map(|s| s.inventory.clone())
            .unwrap_or_default();
        StatusBackend {
            api: Api::namespaced(client, &namespace),
            name: stack.name().to_owned(),
            namespace,
            recorded: Mutex::new(recorded),
            held,
        }
    }

    /// The entries as last read or written.
    pub fn entries(&self) -> Vec<InventoryEntry> {
        self.recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The IDs as last read or written.
    pub fn ids(&self) -> Vec<String> {
        self.entries().into_iter().map(|e| e.id).collect()
    }

    fn what(&self) -> String {
        format!("the status of Stack {}/{}", self.namespace, self.name)
    }
}

/// The object skeleton an ID names.
fn skeleton(id: &str) -> Resource {
    let mut attributes = json!({"metadata": {}});
    if let Ok(parsed) = ResourceId::parse(id) {
        attributes["apiVersion"] = parsed.api_version.into();
        attributes["kind"] = parsed.kind.into();
        attributes["metadata"]["name"] = parsed.name.into();
        if let Some(ns) = parsed.namespace {
            attributes["metadata"]["namespace"] = ns.into();
        }
    }
    Resource {
        id: id.to_owned(),
        type_: "Kubernetes".into(),
        attributes,
        depends_on: Vec::new(),
        extensions: Value::Object(Default::default()),
    }
}

/// How the controller patches Stack status: as [`FIELD_MANAGER`].
pub fn status_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    }
}

/// The `status.inventory` patch for `entries`.
pub fn inventory_patch(entries: &[InventoryEntry]) -> Value {
    json!({"status": {"inventory": entries, "inventoryCount": entries.len()}})
}

struct ShardLock;

impl StateLock for ShardLock {
    fn release(self: Box<Self>) -> BoxFuture<'static, Result<(), StateError>> {
        // The shard's Lease stays with the replica; there is nothing to remove.
        Box::pin(async { Ok(()) })
    }
}

impl StateBackend for StatusBackend {
    fn describe(&self, _stack: &str) -> String {
        self.what()
    }

    fn read_state<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<State, StateError>> {
        Box::pin(async move {
            let mut state = State::empty(stack);
            let entries = self.entries();
            state.resources = entries.iter().map(|e| skeleton(&e.id)).collect();
            state.uids = entries
                .into_iter()
                .filter_map(|e| Some((e.id, e.uid?)))
                .collect();
            Ok(state)
        })
    }

    fn write_state<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<(), StateError>> {
        Box::pin(async move {
            let entries: Vec<InventoryEntry> = state
                .resources
                .iter()
                .map(|r| InventoryEntry {
                    id: r.id.clone(),
                    uid: state.uid(&r.id).map(str::to_owned),
                })
                .collect();
            if entries == self.entries() {
                return Ok(());
            }
            let patch = Patch::Merge(inventory_patch(&entries));
            self.api
                .patch_status(&self.name, &status_params(), &patch)
                .await
                .map_err(|e| StateError::Store {
                    action: "write",
                    what: self.what(),
                    source: Box::new(e),
                })?;
            *self.recorded.lock().unwrap_or_else(PoisonError::into_inner) = entries;
            Ok(())
        })
    }

    fn take_lock<'a>(
        &'a self,
        stack: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn StateLock>, StateError>> {
        Box::pin(async move {
            if self.held.load(Ordering::Acquire) {
                Ok(Box::new(ShardLock) as Box<dyn StateLock>)
            } else {
                Err(StateError::Locked {
                    stack: stack.to_owned(),
                    holder: "another controller replica: its shard moved away".into(),
                })
            }
        })
    }

    /// The Stack's own name, which needs no check: a Stack's name is not a
    /// state file's or a Secret's.
    fn load<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<State, StateError>> {
        self.read_state(stack)
    }

    /// As [`load`](StateBackend::load): the Stack's name needs no check.
    fn lock<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<Box<dyn StateLock>, StateError>> {
        self.take_lock(stack)
    }

    fn remove_lock<'a>(&'a self, _stack: &'a str) -> BoxFuture<'a, Result<bool, StateError>> {
        // Shard Leases expire by themselves; there is no lock to remove.
        Box::pin(async { Ok(false) })
    }

    fn stacks(&self) -> BoxFuture<'_, Result<Vec<String>, StateError>> {
        Box::pin(async move { Ok(vec![self.name.clone()]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_reads_back_as_its_object_skeleton() {
        let r = skeleton("apps/v1:Deployment:team-a:web");
        assert_eq!(
            r.attributes,
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "namespace": "team-a"}})
        );
        let r = skeleton("v1:Namespace:team-a");
        assert_eq!(r.attributes["metadata"], json!({"name": "team-a"}));
        let entry = InventoryEntry {
            id: "v1:Namespace:a".into(),
            uid: Some("u".into()),
        };
        assert_eq!(
            inventory_patch(&[entry]),
            json!({"status": {"inventory": [{"id": "v1:Namespace:a", "uid": "u"}], "inventoryCount": 1}})
        );
    }
}
