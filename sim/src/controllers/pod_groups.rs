//! kube-controller-manager's PodGroup protection controller: a terminating PodGroup keeps its
//! `scheduling.k8s.io/podgroup-protection` finalizer (put on by its registry at creation) while
//! a Pod of its namespace names it as its scheduling group.

use crate::lifecycle::{self, PODGROUP_PROTECTION};
use crate::store::State;

const READS: &[(&str, &str)] = &[("scheduling.k8s.io", "podgroups"), ("", "pods")];

/// One pass (none when no PodGroup or Pod changed).
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("pod-groups", READS) {
        return;
    }
    let terminating = lifecycle::held(state, "scheduling.k8s.io", "podgroups", PODGROUP_PROTECTION);
    for (key, group) in terminating {
        let in_use = state
            .list("", "pods", Some(&key.namespace))
            .into_iter()
            .any(|(_, pod)| pod["spec"]["schedulingGroup"]["podGroupName"] == key.name.as_str());
        if !in_use {
            lifecycle::release_finalizer(state, &key, &group, PODGROUP_PROTECTION);
        }
    }
}
