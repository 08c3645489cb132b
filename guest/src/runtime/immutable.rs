//! Fields that cannot change in place (k8s-semantics §1.7): a change between
//! the live object and the dry-run result at one of these paths means the
//! object must be replaced, even when the server's dry run did not say so.

use serde_json::Value;

/// The immutable field paths (JSON pointers) of a group and kind.
fn paths(group: &str, kind: &str, live: &Value) -> Vec<&'static str> {
    let immutable_data = live.get("immutable").and_then(Value::as_bool) == Some(true);
    match (group, kind) {
        ("apps", "Deployment" | "DaemonSet" | "ReplicaSet") => vec!["/spec/selector"],
        ("apps", "StatefulSet") => vec![
            "/spec/selector",
            "/spec/serviceName",
            "/spec/volumeClaimTemplates",
            "/spec/podManagementPolicy",
        ],
        ("batch", "Job") => vec!["/spec/selector", "/spec/template"],
        ("", "Service") => vec!["/spec/clusterIP"],
        ("", "PersistentVolumeClaim") => vec![
            "/spec/accessModes",
            "/spec/selector",
            "/spec/storageClassName",
            "/spec/volumeName",
        ],
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => vec!["/roleRef"],
        ("storage.k8s.io", "StorageClass") => vec!["/provisioner", "/parameters"],
        ("", "Secret") if immutable_data => vec!["/type", "/data", "/stringData"],
        ("", "Secret") => vec!["/type"],
        ("", "ConfigMap") if immutable_data => vec!["/data", "/binaryData"],
        _ => Vec::new(),
    }
}

/// The immutable fields (dotted) whose value differs between `live` and `result`.
///
/// A field the live object does not have yet (or has empty, like an unallocated
/// `clusterIP`) can still be set, so it never counts.
pub(super) fn changed_fields(group: &str, kind: &str, live: &Value, result: &Value) -> Vec<String> {
    paths(group, kind, live)
        .into_iter()
        .filter(|path| match live.pointer(path) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) if s.is_empty() => false,
            Some(before) => result.pointer(path) != Some(before),
        })
        .map(|path| path.trim_start_matches('/').replace('/', "."))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selector_change_is_detected() {
        let live = json!({"spec": {"selector": {"matchLabels": {"app": "a"}}, "replicas": 1}});
        let same = json!({"spec": {"selector": {"matchLabels": {"app": "a"}}, "replicas": 3}});
        let other = json!({"spec": {"selector": {"matchLabels": {"app": "b"}}}});
        assert!(changed_fields("apps", "Deployment", &live, &same).is_empty());
        assert_eq!(
            changed_fields("apps", "Deployment", &live, &other),
            ["spec.selector"]
        );
        assert!(changed_fields("example.com", "Widget", &live, &other).is_empty());
    }

    #[test]
    fn unset_fields_may_be_set_and_immutable_configmaps_are_frozen() {
        let live = json!({"spec": {"clusterIP": ""}});
        let result = json!({"spec": {"clusterIP": "10.0.0.1"}});
        assert!(changed_fields("", "Service", &live, &result).is_empty());
        let live = json!({"immutable": true, "data": {"a": "1"}});
        let result = json!({"immutable": true, "data": {"a": "2"}});
        assert_eq!(changed_fields("", "ConfigMap", &live, &result), ["data"]);
        let live = json!({"data": {"a": "1"}});
        assert!(changed_fields("", "ConfigMap", &live, &result).is_empty());
    }
}
