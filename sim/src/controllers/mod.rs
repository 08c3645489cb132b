//! Simulated controllers: each pass moves every object one step toward its desired state, so
//! rollouts, health and watches are observable. A pass looks only at what can have changed: the
//! garbage collector at terminating objects and owned objects written since, the other
//! controllers at nothing unless a resource they read changed since their last pass. The server runs passes on a timer and right
//! after writes; an in-process caller runs them with [`crate::cluster::Cluster::reconcile`].

pub(crate) mod aggregation;
mod autoscaling;
mod crd_cleanup;
mod cronjobs;
mod disruption;
mod gc;
mod infra;
mod namespace_defaults;
mod nodes;
mod pod_groups;
mod service_cidrs;
mod volumes;
mod workloads;

use serde_json::Value;

use crate::meta;
use crate::ssa::{self, Schema, Writer};
use crate::store::{Key, State};

pub use namespace_defaults::{publish_root_ca, reconcile as namespace_defaults};

/// One pass of every controller.
pub fn reconcile(state: &mut State) {
    gc::reconcile(state);
    crd_cleanup::reconcile(state);
    workloads::reconcile(state);
    cronjobs::reconcile(state);
    infra::reconcile(state);
    volumes::reconcile(state);
    disruption::reconcile(state);
    autoscaling::reconcile(state);
    aggregation::reconcile(state);
    namespace_defaults::reconcile(state);
    nodes::reconcile(state);
    pod_groups::reconcile(state);
    service_cidrs::reconcile(state);
}

/// Saves `next`, kube-controller-manager's write at `key` over `object` (`None` for a
/// create; nothing when it changes nothing), with the fields it added or changed recorded as that manager's `Update` in
/// `managedFields`, as the API server's field manager records a controller's write.
pub(crate) fn save_as_controller_manager(
    state: &mut State,
    key: &Key,
    object: Option<&Value>,
    mut next: Value,
) {
    if object == Some(&next) {
        return;
    }
    let api_version = next["apiVersion"].as_str().unwrap_or_default().to_string();
    let kind = next["kind"].as_str().unwrap_or_default().to_string();
    let schema = Schema::new(&api_version, &kind, false).with_status_subresource(true);
    let writer = Writer {
        manager: "kube-controller-manager",
        api_version: &api_version,
        subresource: None,
        now: meta::now_secs(),
    };
    ssa::record_update(object, &mut next, &schema, &writer);
    workloads::save(state, key, next);
}
