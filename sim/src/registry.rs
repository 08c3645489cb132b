//! The kinds the simulator serves: the built-in table plus kinds made served by CRDs.

use serde_json::Value;

/// One served REST resource (a kind at one group/version).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    /// API group ("" for core).
    pub group: String,
    /// API version (`v1`).
    pub version: String,
    /// Kind (`Deployment`).
    pub kind: String,
    /// Plural resource name used in paths (`deployments`).
    pub plural: String,
    /// Lower-case singular name.
    pub singular: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// kubectl short names.
    pub short_names: Vec<String>,
    /// Whether a `status` subresource exists (main-resource writes then ignore `status`).
    pub status_subresource: bool,
    /// Whether a `scale` subresource exists.
    pub scale_subresource: bool,
    /// Whether the object is a custom resource (JSON merge only, atomic lists).
    pub custom: bool,
}

impl ResourceType {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether writes maintain `metadata.generation`: custom resources, and the built-in kinds
    /// whose registry sets it (those with a spec a controller reports observing).
    pub fn tracks_generation(&self) -> bool {
        self.custom
            || matches!(
                self.kind.as_str(),
                "Deployment"
                    | "ReplicaSet"
                    | "StatefulSet"
                    | "DaemonSet"
                    | "Job"
                    | "CronJob"
                    | "Pod"
                    | "Ingress"
                    | "IngressClass"
                    | "NetworkPolicy"
                    | "PodDisruptionBudget"
                    | "HorizontalPodAutoscaler"
                    | "EndpointSlice"
                    | "CustomResourceDefinition"
            )
    }
}

struct Builtin {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    status: bool,
    scale: bool,
}

const BUILTINS: &[Builtin] = &[
    b("", "Namespace", "namespaces", false, &["ns"], true, false),
    b("", "ConfigMap", "configmaps", true, &["cm"], false, false),
    b("", "Secret", "secrets", true, &[], false, false),
    b("", "Service", "services", true, &["svc"], true, false),
    b(
        "",
        "ServiceAccount",
        "serviceaccounts",
        true,
        &["sa"],
        false,
        false,
    ),
    b("", "Pod", "pods", true, &["po"], true, false),
    b(
        "",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        &["pvc"],
        true,
        false,
    ),
    b("", "Event", "events", true, &["ev"], false, false),
    b(
        "apps",
        "Deployment",
        "deployments",
        true,
        &["deploy"],
        true,
        true,
    ),
    b(
        "apps",
        "StatefulSet",
        "statefulsets",
        true,
        &["sts"],
        true,
        true,
    ),
    b(
        "apps",
        "DaemonSet",
        "daemonsets",
        true,
        &["ds"],
        true,
        false,
    ),
    b(
        "apps",
        "ReplicaSet",
        "replicasets",
        true,
        &["rs"],
        true,
        true,
    ),
    b("batch", "Job", "jobs", true, &[], true, false),
    b("batch", "CronJob", "cronjobs", true, &["cj"], true, false),
    b(
        "networking.k8s.io",
        "Ingress",
        "ingresses",
        true,
        &["ing"],
        true,
        false,
    ),
    b(
        "discovery.k8s.io",
        "EndpointSlice",
        "endpointslices",
        true,
        &[],
        false,
        false,
    ),
    b(
        "networking.k8s.io",
        "NetworkPolicy",
        "networkpolicies",
        true,
        &["netpol"],
        false,
        false,
    ),
    b(
        "networking.k8s.io",
        "IngressClass",
        "ingressclasses",
        false,
        &[],
        false,
        false,
    ),
    b(
        "policy",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        &["pdb"],
        true,
        false,
    ),
    Builtin {
        version: "v2",
        ..b(
            "autoscaling",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            &["hpa"],
            true,
            false,
        )
    },
    b(
        "",
        "PersistentVolume",
        "persistentvolumes",
        false,
        &["pv"],
        true,
        false,
    ),
    b(
        "storage.k8s.io",
        "StorageClass",
        "storageclasses",
        false,
        &["sc"],
        false,
        false,
    ),
    b(
        "coordination.k8s.io",
        "Lease",
        "leases",
        true,
        &[],
        false,
        false,
    ),
    // What the krt controller needs beyond these: the events.k8s.io Events it reports, and the
    // RBAC kinds `krt controller install --apply` writes.
    b("events.k8s.io", "Event", "events", true, &[], false, false),
    b(
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "clusterroles",
        false,
        &[],
        false,
        false,
    ),
    b(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        &[],
        false,
        false,
    ),
    b(
        "rbac.authorization.k8s.io",
        "Role",
        "roles",
        true,
        &[],
        false,
        false,
    ),
    b(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        "rolebindings",
        true,
        &[],
        false,
        false,
    ),
    b(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        &["crd", "crds"],
        true,
        false,
    ),
];

const fn b(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    status: bool,
    scale: bool,
) -> Builtin {
    Builtin {
        group,
        version: "v1",
        kind,
        plural,
        namespaced,
        short_names,
        status,
        scale,
    }
}

/// The built-in resource types, in discovery order.
pub fn builtins() -> Vec<ResourceType> {
    BUILTINS
        .iter()
        .map(|b| ResourceType {
            group: b.group.into(),
            version: b.version.into(),
            kind: b.kind.into(),
            plural: b.plural.into(),
            singular: b.kind.to_lowercase(),
            namespaced: b.namespaced,
            short_names: b.short_names.iter().map(|s| s.to_string()).collect(),
            status_subresource: b.status,
            scale_subresource: b.scale,
            custom: false,
        })
        .collect()
}

/// The resource types a CRD object serves: one per `served` version.
pub fn from_crd(crd: &Value) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let str_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let kind = str_of(&names["kind"]);
    let plural = str_of(&names["plural"]);
    if kind.is_empty() || plural.is_empty() {
        return Vec::new();
    }
    let singular = names["singular"]
        .as_str()
        .map_or_else(|| kind.to_lowercase(), str::to_string);
    let short_names: Vec<String> = names["shortNames"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .map(|v| ResourceType {
            group: str_of(&spec["group"]),
            version: str_of(&v["name"]),
            kind: kind.clone(),
            plural: plural.clone(),
            singular: singular.clone(),
            namespaced,
            short_names: short_names.clone(),
            status_subresource: v["subresources"]["status"].is_object(),
            scale_subresource: v["subresources"]["scale"].is_object(),
            custom: true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crd_serves_each_served_version() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "subresources": {"status": {}}},
                         {"name": "v0", "served": false}]}});
        let types = from_crd(&crd);
        assert_eq!(types.len(), 1);
        assert_eq!(types[0].api_version(), "example.com/v1");
        assert!(types[0].status_subresource && types[0].namespaced && types[0].custom);
        assert_eq!(types[0].short_names, vec!["wd"]);
    }

    #[test]
    fn builtins_cover_the_foundation_kinds() {
        let kinds: Vec<String> = builtins().into_iter().map(|t| t.kind).collect();
        for k in [
            "Namespace",
            "Deployment",
            "CronJob",
            "Ingress",
            "PersistentVolumeClaim",
            "CustomResourceDefinition",
        ] {
            assert!(kinds.iter().any(|x| x == k), "{k}");
        }
    }
}
