//! The kinds the simulator serves: every built-in kind of [`crate::kinds`], plus the kinds CRDs
//! make served.
//!
//! A built-in kind's subresources are read off its type: `status` when it has a `status` field,
//! `scale` when it has `spec.replicas`, `spec.selector` and `status.replicas` (deployments,
//! replica sets, stateful sets and replication controllers, as kube-apiserver serves them).
//! What k8s-openapi does not carry is in [`FACTS`].

use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::decode;
use crate::kinds::{BUILTINS, Builtin};

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
    /// Discovery categories (`all`).
    pub categories: Vec<String>,
    /// The verbs served on the resource (`get`, `list`, ...).
    pub verbs: Vec<String>,
    /// Whether a `status` subresource exists (main-resource writes then ignore `status`).
    pub status_subresource: bool,
    /// Whether a `scale` subresource exists.
    pub scale_subresource: bool,
    /// Which of a `status` write's metadata is kept (its registry's status strategy).
    pub status_metadata: StatusMetadata,
    /// Whether writes maintain `metadata.generation`.
    pub generation: bool,
    /// Whether the object is a custom resource (JSON merge only, atomic lists).
    pub custom: bool,
    /// A custom resource's storage version (its CRD's `storage: true` version); `None` for a
    /// built-in kind, stored in its preferred version.
    pub storage_version: Option<String>,
    /// A custom resource version's `additionalPrinterColumns` as its CRD declares them (empty
    /// for built-in kinds, whose columns are [`crate::table`]'s).
    pub printer_columns: Vec<Value>,
}

impl ResourceType {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        krt_guest::model::api_version(&self.group, &self.version)
    }

    /// Whether writes maintain `metadata.generation`: custom resources, and the built-in kinds
    /// whose registry sets it (those with a spec a controller reports observing).
    pub fn tracks_generation(&self) -> bool {
        self.generation
    }
}

/// What a write through `status` may change in `metadata`, as the kind's status strategy says.
/// Every status write keeps the stored spec, and name, uid, generation and timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusMetadata {
    /// Labels, annotations, finalizers and owner references stay as stored
    /// (`metav1.ResetObjectMetaForStatus`): the newer registries' rule, and custom resources'.
    Reset,
    /// The written labels, annotations, finalizers and owner references are kept: the older
    /// registries, whose status strategy resets only the spec.
    Kept,
    /// As [`StatusMetadata::Kept`], but the labels stay as stored (Deployments).
    KeptButLabels,
    /// As [`StatusMetadata::Kept`], but the owner references stay as stored (Pods: old
    /// kubelets corrupted them).
    KeptButOwners,
}

impl StatusMetadata {
    /// The `metadata` fields a write through `status` takes from the written object.
    pub fn written_fields(self) -> &'static [&'static str] {
        match self {
            StatusMetadata::Reset => &[],
            StatusMetadata::Kept => &["labels", "annotations", "finalizers", "ownerReferences"],
            StatusMetadata::KeptButLabels => &["annotations", "finalizers", "ownerReferences"],
            StatusMetadata::KeptButOwners => &["labels", "annotations", "finalizers"],
        }
    }
}

/// Every verb of a stored resource.
const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs of a custom resource, in the order apiextensions-apiserver lists them.
const CUSTOM_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// The verbs of the create-only review kinds.
const CREATE: &[&str] = &["create"];

/// What kube-apiserver's registries declare and k8s-openapi's types do not carry, for the
/// resources that differ from the rule: short names (`ShortNames()`), categories
/// (`Categories()`), verbs of a storage without the full set, and `metadata.generation` where
/// it does not follow the presence of a `spec` (set by the registries' `PrepareForCreate`), and
/// the metadata a status write keeps where it is not [`StatusMetadata::Reset`].
pub struct Facts {
    group: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    verbs: &'static [&'static str],
    generation: Option<bool>,
    status_metadata: StatusMetadata,
}

const fn facts(group: &'static str, plural: &'static str) -> Facts {
    Facts {
        group,
        plural,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        generation: None,
        status_metadata: StatusMetadata::Reset,
    }
}

impl Facts {
    const fn short(mut self, names: &'static [&'static str]) -> Self {
        self.short_names = names;
        self
    }

    const fn all(mut self) -> Self {
        self.categories = &["all"];
        self
    }

    const fn api_extensions(mut self) -> Self {
        self.categories = &["api-extensions"];
        self
    }

    const fn verbs(mut self, verbs: &'static [&'static str]) -> Self {
        self.verbs = verbs;
        self
    }

    const fn generation(mut self, tracked: bool) -> Self {
        self.generation = Some(tracked);
        self
    }

    /// A status strategy other than [`StatusMetadata::Reset`].
    const fn status(mut self, metadata: StatusMetadata) -> Self {
        self.status_metadata = metadata;
        self
    }
}

use StatusMetadata::{Kept, KeptButLabels, KeptButOwners};

/// The facts of [`Facts`], by group and plural.
pub const FACTS: &[Facts] = &[
    facts("", "componentstatuses")
        .short(&["cs"])
        .verbs(&["get", "list"]),
    facts("", "configmaps").short(&["cm"]),
    facts("", "endpoints").short(&["ep"]),
    facts("", "events").short(&["ev"]),
    facts("", "limitranges")
        .short(&["limits"])
        .generation(false),
    facts("", "namespaces")
        .status(Kept)
        .short(&["ns"])
        .verbs(&[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ])
        .generation(false),
    facts("", "nodes")
        .short(&["no"])
        .generation(false)
        .status(Kept),
    facts("", "persistentvolumeclaims")
        .short(&["pvc"])
        .generation(false)
        .status(Kept),
    facts("", "podtemplates").generation(true),
    facts("", "persistentvolumes")
        .short(&["pv"])
        .generation(false)
        .status(Kept),
    facts("", "pods").short(&["po"]).all().status(KeptButOwners),
    facts("", "replicationcontrollers")
        .short(&["rc"])
        .all()
        .status(Kept),
    facts("", "resourcequotas")
        .short(&["quota"])
        .generation(false)
        .status(Kept),
    facts("", "serviceaccounts").short(&["sa"]),
    facts("", "services")
        .short(&["svc"])
        .all()
        .generation(false)
        .status(Kept),
    facts("apiregistration.k8s.io", "apiservices")
        .api_extensions()
        .generation(false),
    facts("apps", "daemonsets")
        .short(&["ds"])
        .all()
        .status(Kept),
    facts("apps", "deployments")
        .short(&["deploy"])
        .all()
        .status(KeptButLabels),
    facts("apps", "replicasets")
        .short(&["rs"])
        .all()
        .status(Kept),
    facts("apps", "statefulsets")
        .short(&["sts"])
        .all()
        .status(Kept),
    facts("events.k8s.io", "events").short(&["ev"]),
    facts("authentication.k8s.io", "selfsubjectreviews").verbs(CREATE),
    facts("authentication.k8s.io", "tokenreviews").verbs(CREATE),
    facts("authorization.k8s.io", "localsubjectaccessreviews").verbs(CREATE),
    facts("authorization.k8s.io", "selfsubjectaccessreviews").verbs(CREATE),
    facts("authorization.k8s.io", "selfsubjectrulesreviews").verbs(CREATE),
    facts("authorization.k8s.io", "subjectaccessreviews").verbs(CREATE),
    facts("autoscaling", "horizontalpodautoscalers")
        .short(&["hpa"])
        .all()
        .generation(false)
        .status(Kept),
    facts("batch", "cronjobs").short(&["cj"]).all().status(Kept),
    facts("batch", "jobs").all().status(Kept),
    facts("certificates.k8s.io", "certificatesigningrequests")
        .short(&["csr"])
        .generation(false)
        .status(Kept),
    facts("networking.k8s.io", "ingresses")
        .short(&["ing"])
        .status(Kept),
    facts("networking.k8s.io", "ipaddresses").short(&["ip"]),
    facts("networking.k8s.io", "networkpolicies").short(&["netpol"]),
    facts("networking.k8s.io", "servicecidrs").generation(false),
    facts("coordination.k8s.io", "leases").generation(false),
    facts("coordination.k8s.io", "leasecandidates").generation(false),
    facts("certificates.k8s.io", "clustertrustbundles").generation(false),
    facts("resource.k8s.io", "resourcepoolstatusrequests").generation(false),
    facts("scheduling.k8s.io", "workloads").generation(false),
    facts("scheduling.k8s.io", "podgroups").generation(false),
    facts("policy", "poddisruptionbudgets")
        .short(&["pdb"])
        .status(Kept),
    facts("storage.k8s.io", "storageclasses").short(&["sc"]),
    // Specs that nothing reports observing: their registries set no generation.
    facts("storage.k8s.io", "csidrivers").generation(false),
    facts("storage.k8s.io", "volumeattachments").generation(false),
    facts("storage.k8s.io", "csinodes").generation(false),
    facts("internal.apiserver.k8s.io", "storageversions").generation(false),
    facts("storage.k8s.io", "volumeattributesclasses").short(&["vac"]),
    facts(
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
    )
    .api_extensions()
    .generation(true),
    facts(
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
    )
    .api_extensions()
    .generation(true),
    facts(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
    )
    .api_extensions(),
    facts(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
    )
    .api_extensions(),
    facts("admissionregistration.k8s.io", "mutatingadmissionpolicies").api_extensions(),
    facts(
        "admissionregistration.k8s.io",
        "mutatingadmissionpolicybindings",
    )
    .api_extensions(),
    facts("apiextensions.k8s.io", "customresourcedefinitions")
        .short(&["crd", "crds"])
        .api_extensions()
        .status(Kept),
    facts("scheduling.k8s.io", "priorityclasses").short(&["pc"]),
    // A claim's spec is immutable, a migration's too: their registries set no generation.
    facts("resource.k8s.io", "resourceclaims").generation(false),
    facts("resource.k8s.io", "resourceclaimtemplates").generation(false),
    facts("storagemigration.k8s.io", "storageversionmigrations").generation(false),
    facts("discovery.k8s.io", "endpointslices").generation(true),
];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

fn resource_type(b: &Builtin) -> ResourceType {
    const NONE: Facts = facts("", "");
    let facts = FACTS
        .iter()
        .find(|f| f.group == b.group && f.plural == b.plural)
        .unwrap_or(&NONE);
    let has = |fields: Value| decode::has_fields(b, fields);
    let has_spec = has(json!({"spec": {}}));
    let stored = facts.verbs != CREATE;
    ResourceType {
        group: b.group.into(),
        version: b.version.into(),
        kind: b.kind.into(),
        plural: b.plural.into(),
        singular: b.kind.to_lowercase(),
        namespaced: b.namespaced,
        short_names: strings(facts.short_names),
        categories: strings(facts.categories),
        verbs: strings(facts.verbs),
        // The review kinds are answered, not stored: no subresources.
        status_subresource: stored && has(json!({"status": {}})),
        scale_subresource: stored
            && has(json!({"spec": {"replicas": 1, "selector": {}}, "status": {"replicas": 1}})),
        status_metadata: facts.status_metadata,
        generation: facts.generation.unwrap_or(has_spec),
        custom: false,
        storage_version: None,
        printer_columns: Vec::new(),
    }
}

/// The built-in resource types, in discovery order.
pub fn builtins() -> Vec<ResourceType> {
    static TYPES: OnceLock<Vec<ResourceType>> = OnceLock::new();
    TYPES
        .get_or_init(|| BUILTINS.iter().map(resource_type).collect())
        .clone()
}

/// The built-in type of `kind` in `group`; panics when there is none.
#[cfg(test)]
pub(crate) fn builtin(group: &str, kind: &str) -> ResourceType {
    builtins()
        .into_iter()
        .find(|t| t.group == group && t.kind == kind)
        .unwrap()
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
    let strings_of = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let short_names = strings_of(&names["shortNames"]);
    let categories = strings_of(&names["categories"]);
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let storage_version = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .map(str::to_string);
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
            categories: categories.clone(),
            verbs: strings(CUSTOM_VERBS),
            status_subresource: v["subresources"]["status"].is_object(),
            scale_subresource: v["subresources"]["scale"].is_object(),
            status_metadata: StatusMetadata::Reset,
            generation: true,
            custom: true,
            storage_version: storage_version.clone(),
            printer_columns: v["additionalPrinterColumns"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
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
    fn subresources_and_generation_are_read_off_the_types() {
        for (group, kind, status, scale, generation) in [
            ("apps", "Deployment", true, true, true),
            ("apps", "StatefulSet", true, true, true),
            ("", "ReplicationController", true, true, true),
            ("apps", "DaemonSet", true, false, true),
            // kube-apiserver 1.36 sets no generation on an HPA (recorded in tests/data/differential).
            ("autoscaling", "HorizontalPodAutoscaler", true, false, false),
            ("", "ResourceQuota", true, false, false),
            ("", "Namespace", true, false, false),
            ("", "Service", true, false, false),
            ("", "ConfigMap", false, false, false),
            ("rbac.authorization.k8s.io", "Role", false, false, false),
            ("discovery.k8s.io", "EndpointSlice", false, false, true),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                false,
                false,
                true,
            ),
        ] {
            let t = builtin(group, kind);
            assert_eq!(
                (
                    t.status_subresource,
                    t.scale_subresource,
                    t.tracks_generation()
                ),
                (status, scale, generation),
                "{kind}"
            );
        }
        let pdb = builtin("policy", "PodDisruptionBudget");
        assert_eq!(
            (pdb.plural.as_str(), pdb.namespaced),
            ("poddisruptionbudgets", true)
        );
        assert_eq!(pdb.short_names, ["pdb"]);
        assert!(!builtin("storage.k8s.io", "StorageClass").namespaced);
        assert_eq!(builtin("", "Pod").categories, ["all"]);
    }
}
