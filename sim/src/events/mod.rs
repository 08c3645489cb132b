//! Events: what the simulated controllers, scheduler and kubelet record as the real ones do
//! (client-go's event recorder and its correlator, see [`record`]), stored once as core `v1`
//! Events and served through `events.k8s.io/v1` as well, converted as kube's conversion does
//! (see [`convert`]).

pub mod convert;

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::meta;
use crate::node::NODE;
use crate::store::{Key, State};

/// How many Events the cluster keeps: past this, recording one removes the least recently seen,
/// so simulated controllers cannot flood the store (kube-apiserver instead expires Events an
/// hour after their last update, `--event-ttl`).
pub const LIMIT: usize = 500;

/// Who records an Event: `source.component`/`reportingComponent` and
/// `source.host`/`reportingInstance`.
#[derive(Debug, Clone, Copy)]
pub struct Reporter {
    /// The component (`deployment-controller`, `kubelet`).
    pub component: &'static str,
    /// The host or instance, empty for the controller manager's controllers.
    pub host: &'static str,
}

/// The Deployment controller.
pub const DEPLOYMENT: Reporter = controller("deployment-controller");
/// The ReplicaSet controller.
pub const REPLICASET: Reporter = controller("replicaset-controller");
/// The StatefulSet controller.
pub const STATEFULSET: Reporter = controller("statefulset-controller");
/// The DaemonSet controller.
pub const DAEMONSET: Reporter = controller("daemonset-controller");
/// The Job controller.
pub const JOB: Reporter = controller("job-controller");
/// The kubelet of the simulated node.
pub const KUBELET: Reporter = Reporter {
    component: "kubelet",
    host: NODE,
};

const fn controller(component: &'static str) -> Reporter {
    Reporter {
        component,
        host: "",
    }
}

/// `Normal` or `Warning`, an Event's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// Something expected happened.
    Normal,
    /// Something may be wrong.
    Warning,
}

impl Type {
    fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

/// A reference to `object` as an Event's `involvedObject` (client-go's `reference.GetReference`),
/// with `fieldPath` when the Event is about a part of it (`spec.containers{web}`).
pub fn reference(object: &Value, field_path: Option<&str>) -> Value {
    let metadata = &object["metadata"];
    let mut reference = json!({"kind": object["kind"], "namespace": metadata["namespace"],
        "name": metadata["name"], "uid": metadata["uid"], "apiVersion": object["apiVersion"],
        "resourceVersion": metadata["resourceVersion"]});
    if let Some(path) = field_path {
        reference["fieldPath"] = json!(path);
    }
    if reference["namespace"].is_null() {
        reference
            .as_object_mut()
            .expect("object")
            .remove("namespace");
    }
    reference
}

/// What the correlator takes two Events to be the same occurrence by (client-go's
/// `getEventKey`): source, involved object, type, reason and message.
fn same_occurrence(a: &Value, b: &Value) -> bool {
    a["source"] == b["source"]
        && [
            "kind",
            "namespace",
            "name",
            "fieldPath",
            "uid",
            "apiVersion",
        ]
        .iter()
        .all(|f| a["involvedObject"][f] == b["involvedObject"][f])
        && ["type", "reason", "message"].iter().all(|f| a[f] == b[f])
}

fn unix_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Records an Event about `object` (in its namespace, `default` for a cluster-scoped one) as
/// client-go's recorder does: a new Event `<name>.<hex nanoseconds>` with count 1, or, when an
/// Event of the same occurrence exists, that Event with its `count` raised and `lastTimestamp`
/// moved (the correlator's deduplication). Past [`LIMIT`] Events the least recently seen goes.
pub fn record(
    state: &mut State,
    reporter: Reporter,
    regarding: &Value,
    event_type: Type,
    reason: &str,
    message: &str,
) {
    let namespace = regarding["namespace"]
        .as_str()
        .filter(|ns| !ns.is_empty())
        .unwrap_or("default")
        .to_string();
    let now = meta::now();
    let mut source = json!({"component": reporter.component});
    if !reporter.host.is_empty() {
        source["host"] = json!(reporter.host);
    }
    let mut event = json!({"apiVersion": "v1", "kind": "Event",
        "involvedObject": regarding, "reason": reason, "message": message, "source": source,
        "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": event_type.as_str(),
        "eventTime": null, "reportingComponent": reporter.component,
        "reportingInstance": reporter.host});
    let existing = state
        .list("", "events", Some(&namespace))
        .into_iter()
        .find(|(_, e)| same_occurrence(e, &event))
        .map(|(k, e)| (k.clone(), e.clone()));
    if let Some((key, mut seen)) = existing {
        seen["count"] = json!(seen["count"].as_u64().unwrap_or(1) + 1);
        seen["lastTimestamp"] = json!(now);
        seen["involvedObject"] = event["involvedObject"].take();
        state.put(key, seen);
        return;
    }
    let base = regarding["name"].as_str().unwrap_or_default();
    let mut nanos = unix_nanos();
    let key = loop {
        let key = Key::of("", "events", &namespace, format!("{base}.{nanos:x}"));
        if state.get(&key).is_none() {
            break key;
        }
        nanos += 1;
    };
    event["metadata"] = json!({"name": key.name, "namespace": namespace, "uid": meta::uid(),
        "creationTimestamp": now});
    state.put(key, event);
    evict(state);
}

/// Records a `Scheduled` Event for `pod` as kube-scheduler does, through the `events.k8s.io`
/// API: `eventTime`, `action: Binding` and `reportingController`/`reportingInstance`, without
/// the deprecated source, timestamps and count (so `v1` shows `source: {}` and null times).
pub fn record_scheduled(state: &mut State, pod: &Value) {
    let regarding = reference(pod, None);
    let namespace = regarding["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_string();
    let name = regarding["name"].as_str().unwrap_or_default().to_string();
    let key = Key::of(
        "",
        "events",
        &namespace,
        format!("{name}.{:x}", unix_nanos()),
    );
    let event = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": key.name, "namespace": namespace, "uid": meta::uid(),
            "creationTimestamp": meta::now()},
        "involvedObject": regarding, "reason": "Scheduled",
        "message": format!("Successfully assigned {namespace}/{name} to {NODE}"),
        "source": {}, "firstTimestamp": null, "lastTimestamp": null, "type": "Normal",
        "eventTime": micro_now(), "action": "Binding", "reportingComponent": "default-scheduler",
        "reportingInstance": format!("default-scheduler-{NODE}")});
    state.put(key, event);
    evict(state);
}

/// Now as a `metav1.MicroTime` (`2025-01-02T03:04:05.123456Z`).
fn micro_now() -> String {
    let nanos = unix_nanos();
    let seconds = meta::format_unix(u64::try_from(nanos / 1_000_000_000).unwrap_or(0));
    format!(
        "{}.{:06}Z",
        seconds.trim_end_matches('Z'),
        (nanos % 1_000_000_000) / 1_000
    )
}

/// Removes the least recently seen Events past [`LIMIT`].
fn evict(state: &mut State) {
    let all = state.list("", "events", None);
    if all.len() <= LIMIT {
        return;
    }
    let mut by_age: Vec<(String, Key)> = all
        .into_iter()
        .map(|(k, e)| {
            let seen = e["lastTimestamp"]
                .as_str()
                .or_else(|| e["eventTime"].as_str())
                .unwrap_or_default()
                .to_string();
            (seen, k.clone())
        })
        .collect();
    by_age.sort();
    let excess = by_age.len() - LIMIT;
    for (_, key) in by_age.into_iter().take(excess) {
        state.remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "d", "uid": "u1", "resourceVersion": "7"}})
    }

    #[test]
    fn the_same_occurrence_counts_up_one_event() {
        let store = Store::new(100);
        let mut s = store.lock();
        let d = reference(&deployment(), None);
        for message in ["m", "m", "other"] {
            record(
                &mut s,
                DEPLOYMENT,
                &d,
                Type::Normal,
                "ScalingReplicaSet",
                message,
            );
        }
        let events = s.list("", "events", Some("d"));
        assert_eq!(events.len(), 2);
        let counted = events.iter().find(|(_, e)| e["message"] == "m").unwrap().1;
        assert_eq!(counted["count"], 2);
        assert_eq!(counted["involvedObject"]["uid"], "u1");
        assert_eq!(counted["involvedObject"]["resourceVersion"], "7");
        assert_eq!(
            counted["source"],
            json!({"component": "deployment-controller"})
        );
        assert!(
            counted["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with("web.")
        );
    }

    #[test]
    fn events_are_bounded() {
        let store = Store::new(10);
        let mut s = store.lock();
        let d = reference(&deployment(), None);
        for i in 0..LIMIT + 5 {
            record(&mut s, DEPLOYMENT, &d, Type::Normal, "R", &i.to_string());
        }
        assert_eq!(s.list("", "events", None).len(), LIMIT);
    }
}
