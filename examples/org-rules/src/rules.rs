//! The organisation's rules, checked on every plan before anything reaches
//! the cluster:
//!
//! - every object carries the labels in [`REQUIRED_LABELS`];
//! - every container image is pinned: a tag other than `latest`, or a digest;
//! - every container sets `resources.limits.cpu` and `resources.limits.memory`.

use serde_json::Value;

/// Labels every object must carry.
pub const REQUIRED_LABELS: &[&str] = &["app.kubernetes.io/name", "team"];

/// One broken rule: the field and what is wrong with it (a status `cause`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// Path of the field, for example `metadata.labels.team`.
    pub field: String,
    /// `RequiredLabel`, `UnpinnedImage` or `MissingLimit`.
    pub reason: String,
    /// What to change.
    pub message: String,
}

/// Why a plan is refused: a message listing every broken rule, and the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// For example `v1:ConfigMap:c breaks the organisation's rules: ...`.
    pub message: String,
    /// Every broken rule.
    pub causes: Vec<Cause>,
}

/// Every rule `object` breaks, as status causes (field, reason, message).
pub fn violations(object: &Value) -> Vec<Cause> {
    let mut found = Vec::new();
    let labels = &object["metadata"]["labels"];
    for label in REQUIRED_LABELS {
        if labels[label].as_str().is_none_or(str::is_empty) {
            found.push(Cause {
                field: format!("metadata.labels.{label}"),
                reason: "RequiredLabel".into(),
                message: format!("the label `{label}` is required"),
            });
        }
    }
    if let Some((path, pod)) = pod_spec(object) {
        for list in ["initContainers", "containers"] {
            let containers = pod[list].as_array().map(Vec::as_slice).unwrap_or_default();
            for (i, c) in containers.iter().enumerate() {
                let at = format!("{path}.{list}[{i}]");
                check_container(&at, c, &mut found);
            }
        }
    }
    found
}

/// The refusal of `id` when `object` breaks any rule.
pub fn check(id: &str, object: &Value) -> Option<Refusal> {
    let causes = violations(object);
    if causes.is_empty() {
        return None;
    }
    let list: Vec<String> = causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    Some(Refusal {
        message: format!("{id} breaks the organisation's rules: {}", list.join("; ")),
        causes,
    })
}

/// The pod spec of a workload and its path: Pods, pod templates, CronJobs.
fn pod_spec(object: &Value) -> Option<(&'static str, &Value)> {
    let candidates = [
        ("spec", &object["spec"]),
        ("spec.template.spec", &object["spec"]["template"]["spec"]),
        (
            "spec.jobTemplate.spec.template.spec",
            &object["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        ),
    ];
    candidates
        .into_iter()
        .find(|(_, spec)| spec["containers"].is_array())
}

fn check_container(at: &str, c: &Value, found: &mut Vec<Cause>) {
    let image = c["image"].as_str().unwrap_or_default();
    if !pinned(image) {
        found.push(Cause {
            field: format!("{at}.image"),
            reason: "UnpinnedImage".into(),
            message: format!("image `{image}` must name a tag other than `latest`, or a digest"),
        });
    }
    for resource in ["cpu", "memory"] {
        if c["resources"]["limits"][resource].is_null() {
            found.push(Cause {
                field: format!("{at}.resources.limits.{resource}"),
                reason: "MissingLimit".into(),
                message: format!("a {resource} limit is required"),
            });
        }
    }
}

/// Whether an image reference names a digest or a tag other than `latest`.
fn pinned(image: &str) -> bool {
    if image.contains('@') {
        return true;
    }
    let last = image.rsplit('/').next().unwrap_or_default();
    match last.split_once(':') {
        Some((_, tag)) => !tag.is_empty() && tag != "latest",
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(image: &str, limits: Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "web", "team": "a"}},
            "spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": image, "resources": {"limits": limits}}
            ]}}}
        })
    }

    #[test]
    fn a_compliant_deployment_passes() {
        let d = deployment("nginx:1.27", json!({"cpu": "1", "memory": "1Gi"}));
        assert!(violations(&d).is_empty());
        assert!(check("apps/v1:Deployment:a:web", &d).is_none());
    }

    #[test]
    fn unpinned_images_and_missing_limits_are_listed() {
        let d = deployment("registry:5000/team/nginx", json!({"cpu": "1"}));
        let fields: Vec<_> = violations(&d).into_iter().map(|c| c.field).collect();
        assert_eq!(
            fields,
            [
                "spec.template.spec.containers[0].image",
                "spec.template.spec.containers[0].resources.limits.memory"
            ]
        );
        assert!(!pinned("nginx:latest"));
        assert!(!pinned("nginx"));
        assert!(pinned("nginx@sha256:abc"));
        assert!(pinned("localhost:5000/nginx:1.2"));
    }

    #[test]
    fn labels_are_required_on_every_object() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"team": "a"}}});
        let status = check("v1:ConfigMap:c", &cm).unwrap();
        assert_eq!(status.causes.len(), 1);
        assert_eq!(status.causes[0].reason, "RequiredLabel");
        assert!(
            status.message.contains("app.kubernetes.io/name"),
            "{}",
            status.message
        );
    }
}
