//! Drift: fields of the last applied state that changed outside the tool (k8s-semantics
//! §8.1 M10), found by diffing the prior against the live object and keeping only what the
//! prior declared. Fields only live has (defaults, controllers' additions) are not drift,
//! except inside atomic lists, where any difference is.

use super::diff;
use crate::model::{FieldChange, ObjectDiff};
use serde_json::Value;

/// The fields of `prior` whose live value differs or is gone (`live` `None`: every field
/// is gone), after normalizing both and dropping `ignore_paths`. `unified` is the whole
/// diff of prior and live when there is drift, else empty.
pub fn drift(prior: &Value, live: Option<&Value>, ignore_paths: &[String]) -> ObjectDiff {
    let full = diff(Some(prior), live, ignore_paths);
    let changes: Vec<FieldChange> = full
        .changes
        .into_iter()
        .filter(|c| c.before.is_some() || in_atomic_list(&c.path))
        .collect();
    ObjectDiff {
        unified: if changes.is_empty() {
            String::new()
        } else {
            full.unified
        },
        changes,
    }
}

/// The drifted fields of `original` that writing `result` over `live` changes again
/// (M10's "changed outside the tool and will be overwritten").
pub fn overwritten(
    original: &Value,
    live: &Value,
    result: &Value,
    ignore_paths: &[String],
) -> Vec<FieldChange> {
    let drifted = drift(original, Some(live), ignore_paths).changes;
    if drifted.is_empty() {
        return drifted;
    }
    let written = diff(Some(live), Some(result), ignore_paths).changes;
    drifted
        .into_iter()
        .filter(|d| written.iter().any(|w| overlaps(&d.path, &w.path)))
        .collect()
}

/// Whether a path goes through an item of an atomic list (`args[0]`).
fn in_atomic_list(path: &str) -> bool {
    path.split('[').skip(1).any(|rest| {
        rest.split_once(']').is_some_and(|(index, _)| {
            !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// Whether one path is the other or lies inside it.
fn overlaps(a: &str, b: &str) -> bool {
    let inside = |long: &str, short: &str| {
        short.is_empty()
            || long
                .strip_prefix(short)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    };
    inside(a, b) || inside(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(changes: &[FieldChange]) -> Vec<&str> {
        changes.iter().map(|c| c.path.as_str()).collect()
    }

    fn deploy(replicas: i64, image: &str, args: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [
                {"name": "app", "image": image, "args": args}]}}}})
    }

    #[test]
    fn reports_changed_and_vanished_fields_of_the_prior_only() {
        let prior = deploy(3, "nginx:1", json!(["a"]));
        let mut live = deploy(5, "nginx:1", json!(["a", "b"]));
        live["metadata"]["labels"] = json!({"added": "by-someone"});
        live["metadata"]["uid"] = json!("u");
        live["spec"]["strategy"] = json!({"type": "RollingUpdate"});
        live["status"] = json!({"replicas": 5});
        let d = drift(&prior, Some(&live), &[]);
        assert_eq!(
            paths(&d.changes),
            [
                "spec.replicas",
                "spec.template.spec.containers[name=app].args[1]"
            ]
        );
        assert!(d.unified.contains("replicas"));
        let d = drift(&prior, Some(&live), &["spec.replicas".to_owned()]);
        assert_eq!(d.changes.len(), 1);
        assert!(drift(&prior, Some(&prior), &[]).unified.is_empty());
        let gone = drift(&prior, None, &[]);
        assert!(gone.changes.iter().all(|c| c.after.is_none()));
        assert!(paths(&gone.changes).contains(&"spec"), "{gone:?}");
    }

    #[test]
    fn quantities_in_another_unit_are_not_drift() {
        let with = |memory: &str| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "resources": {"limits": {"memory": memory}}}]}})
        };
        assert!(
            drift(&with("1Gi"), Some(&with("1024Mi")), &[])
                .changes
                .is_empty()
        );
        assert_eq!(
            drift(&with("1Gi"), Some(&with("2Gi")), &[]).changes.len(),
            1
        );
    }

    #[test]
    fn overwritten_keeps_drift_the_write_changes_back() {
        let prior = deploy(3, "nginx:1", json!([]));
        let live = deploy(5, "nginx:2", json!([]));
        // The write resets replicas but keeps the foreign image.
        let result = deploy(3, "nginx:2", json!([]));
        assert_eq!(
            paths(&overwritten(&prior, &live, &result, &[])),
            ["spec.replicas"]
        );
        assert!(overwritten(&prior, &live, &live, &[]).is_empty());
    }

    #[test]
    fn path_helpers() {
        assert!(in_atomic_list("spec.args[12].x"));
        assert!(!in_atomic_list("spec.containers[name=app].image"));
        assert!(overlaps("spec.replicas", "spec"));
        assert!(overlaps(
            "spec.containers[name=a]",
            "spec.containers[name=a].image"
        ));
        assert!(!overlaps("spec.replica", "spec.replicas"));
        assert!(overlaps("", "anything"));
    }
}
