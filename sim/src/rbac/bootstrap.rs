//! The default RBAC policy of a new cluster: the ClusterRoles and ClusterRoleBindings of
//! kube-apiserver's bootstrap policy (`bootstrap.yaml`, kept as data), stored when the cluster
//! is created, with the aggregated roles (`admin`, `edit`, `view`) filled in at once by the
//! aggregation controller.

use serde_json::{Value, json};

use super::GROUP;
use crate::meta;
use crate::store::{Key, State};

const POLICY: &str = include_str!("bootstrap.yaml");

/// Stores the default ClusterRoles and ClusterRoleBindings.
pub(crate) fn seed(state: &mut State) {
    let policy: Value = serde_saphyr::from_str(POLICY).expect("bootstrap.yaml is valid YAML");
    for (field, kind, resource) in [
        ("clusterRoles", "ClusterRole", "clusterroles"),
        (
            "clusterRoleBindings",
            "ClusterRoleBinding",
            "clusterrolebindings",
        ),
    ] {
        for item in policy[field].as_array().into_iter().flatten() {
            let mut object = item.clone();
            object["apiVersion"] = json!(format!("{GROUP}/v1"));
            object["kind"] = json!(kind);
            let metadata = &mut object["metadata"];
            metadata["labels"]["kubernetes.io/bootstrapping"] = json!("rbac-defaults");
            metadata["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = json!("true");
            metadata["uid"] = json!(meta::uid());
            metadata["creationTimestamp"] = json!(meta::now());
            let name = metadata["name"].as_str().unwrap_or_default().to_string();
            let key = Key {
                group: GROUP.into(),
                resource: resource.into(),
                namespace: String::new(),
                name,
            };
            state.put(key, object);
        }
    }
}
