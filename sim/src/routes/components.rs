//! ComponentStatus (`kubectl get componentstatuses`, deprecated since 1.19): the health of the
//! control plane's components as kube-apiserver probes them when asked, never stored.

use serde_json::{Value, json};

use super::target::Target;
use crate::status::ApiError;
use crate::store::Store;

/// Where kube-apiserver probes the scheduler.
const SCHEDULER_HEALTH: &str = "https://127.0.0.1:10259/healthz";

/// The components and their health. kube-controller-manager and etcd always answer; a
/// cluster with a worker runs a scheduler, and a bare control plane has none listening.
fn components(worker: bool) -> Vec<Value> {
    let component = |name: &str, healthy: bool, message: &str| {
        json!({"metadata": {"name": name}, "conditions": [{"type": "Healthy",
            "status": if healthy { "True" } else { "False" }, "message": message}]})
    };
    let refused = format!(
        "Get \"{SCHEDULER_HEALTH}\": dial tcp 127.0.0.1:10259: connect: connection refused"
    );
    vec![
        component("controller-manager", true, "ok"),
        component("etcd-0", true, "ok"),
        match worker {
            true => component("scheduler", true, "ok"),
            false => component("scheduler", false, &refused),
        },
    ]
}

/// A GET of the collection, or of one component.
///
/// # Errors
/// 404 for a component that does not exist.
pub(super) fn get(store: &Store, target: &Target) -> Result<(u16, Value), ApiError> {
    let items = components(store.lock().has_worker());
    let Some(name) = target.name.as_deref() else {
        return Ok((
            200,
            json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items}),
        ));
    };
    let mut item = items
        .into_iter()
        .find(|c| c["metadata"]["name"] == name)
        .ok_or_else(|| ApiError::not_found(&target.subject()))?;
    let object = item.as_object_mut().expect("a component is an object");
    object.insert("kind".into(), json!("ComponentStatus"));
    object.insert("apiVersion".into(), json!("v1"));
    Ok((200, item))
}
