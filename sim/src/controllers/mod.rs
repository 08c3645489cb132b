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
mod volumes;
mod workloads;

use crate::store::State;

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
}
