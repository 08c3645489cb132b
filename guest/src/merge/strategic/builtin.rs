//! The compiled-in patch metadata of the built-in kinds (k8s-semantics §1.2,
//! from the `patchStrategy` / `patchMergeKey` tags of kubernetes/api).
//!
//! Only fields with a strategy are listed; everything else is a map merged per
//! key or an atomic list.

use std::borrow::Cow;

use super::schema::{PatchMeta, Schema, TypeDef};

const fn ty(name: &'static str, fields: &'static [(&'static str, PatchMeta)]) -> TypeDef {
    TypeDef {
        name,
        fields: Cow::Borrowed(fields),
    }
}

const fn object(name: &'static str) -> PatchMeta {
    PatchMeta::object(name)
}

const fn merge(key: &'static str, ty: &'static str) -> PatchMeta {
    PatchMeta::merge_list(key, ty)
}

/// Every `status.conditions` of the built-ins merges by `type`.
const CONDITIONS: (&str, PatchMeta) = ("conditions", merge("type", "Condition"));

/// `metadata` of every kind.
const METADATA: (&str, PatchMeta) = ("metadata", object("ObjectMeta"));

/// `status` of most kinds: only its conditions carry a strategy.
const STATUS: (&str, PatchMeta) = ("status", object("Status"));

static TYPES: &[TypeDef] = &[
    ty(
        "ObjectMeta",
        &[
            ("ownerReferences", merge("uid", "OwnerReference")),
            ("finalizers", PatchMeta::merge_scalars()),
        ],
    ),
    ty("Status", &[CONDITIONS]),
    ty("Object", &[METADATA, STATUS]),
    // core/v1
    ty(
        "Pod",
        &[
            METADATA,
            ("spec", object("PodSpec")),
            ("status", object("PodStatus")),
        ],
    ),
    ty(
        "PodStatus",
        &[
            CONDITIONS,
            ("podIPs", merge("ip", "PodIP")),
            ("hostIPs", merge("ip", "HostIP")),
            (
                "resourceClaimStatuses",
                merge("name", "PodResourceClaimStatus").retain_keys(),
            ),
        ],
    ),
    ty(
        "PodSpec",
        &[
            ("containers", merge("name", "Container")),
            ("initContainers", merge("name", "Container")),
            ("ephemeralContainers", merge("name", "Container")),
            ("volumes", merge("name", "Volume").retain_keys()),
            ("imagePullSecrets", merge("name", "LocalObjectReference")),
            ("hostAliases", merge("ip", "HostAlias")),
            (
                "topologySpreadConstraints",
                merge("topologyKey", "TopologySpreadConstraint"),
            ),
            ("schedulingGates", merge("name", "PodSchedulingGate")),
            (
                "resourceClaims",
                merge("name", "PodResourceClaim").retain_keys(),
            ),
        ],
    ),
    ty(
        "Container",
        &[
            ("ports", merge("containerPort", "ContainerPort")),
            ("env", merge("name", "EnvVar")),
            ("volumeMounts", merge("mountPath", "VolumeMount")),
            ("volumeDevices", merge("devicePath", "VolumeDevice")),
        ],
    ),
    ty(
        "PodTemplateSpec",
        &[
            ("metadata", object("ObjectMeta")),
            ("spec", object("PodSpec")),
        ],
    ),
    ty(
        "PodTemplate",
        &[METADATA, STATUS, ("template", object("PodTemplateSpec"))],
    ),
    ty(
        "ReplicationController",
        &[
            METADATA,
            STATUS,
            ("spec", object("ReplicationControllerSpec")),
        ],
    ),
    ty(
        "ReplicationControllerSpec",
        &[("template", object("PodTemplateSpec"))],
    ),
    ty(
        "Service",
        &[METADATA, STATUS, ("spec", object("ServiceSpec"))],
    ),
    ty("ServiceSpec", &[("ports", merge("port", "ServicePort"))]),
    ty(
        "ServiceAccount",
        &[
            METADATA,
            STATUS,
            ("secrets", merge("name", "ObjectReference")),
        ],
    ),
    ty(
        "Node",
        &[
            METADATA,
            ("spec", object("NodeSpec")),
            ("status", object("NodeStatus")),
        ],
    ),
    ty("NodeSpec", &[("podCIDRs", PatchMeta::merge_scalars())]),
    ty(
        "NodeStatus",
        &[CONDITIONS, ("addresses", merge("type", "NodeAddress"))],
    ),
    // apps/v1
    ty(
        "Deployment",
        &[METADATA, STATUS, ("spec", object("DeploymentSpec"))],
    ),
    ty(
        "DeploymentSpec",
        &[
            ("template", object("PodTemplateSpec")),
            (
                "strategy",
                PatchMeta::object("DeploymentStrategy").retain_keys(),
            ),
        ],
    ),
    ty("WorkloadSpec", &[("template", object("PodTemplateSpec"))]),
    ty(
        "StatefulSet",
        &[METADATA, STATUS, ("spec", object("WorkloadSpec"))],
    ),
    ty(
        "DaemonSet",
        &[METADATA, STATUS, ("spec", object("WorkloadSpec"))],
    ),
    ty(
        "ReplicaSet",
        &[METADATA, STATUS, ("spec", object("WorkloadSpec"))],
    ),
    // batch/v1
    ty("Job", &[METADATA, STATUS, ("spec", object("WorkloadSpec"))]),
    ty(
        "CronJob",
        &[METADATA, STATUS, ("spec", object("CronJobSpec"))],
    ),
    ty("CronJobSpec", &[("jobTemplate", object("JobTemplateSpec"))]),
    ty(
        "JobTemplateSpec",
        &[
            ("metadata", object("ObjectMeta")),
            ("spec", object("WorkloadSpec")),
        ],
    ),
    // policy/v1
    ty(
        "PodDisruptionBudget",
        &[
            METADATA,
            STATUS,
            ("spec", object("PodDisruptionBudgetSpec")),
        ],
    ),
    ty(
        "PodDisruptionBudgetSpec",
        &[("selector", PatchMeta::replace())],
    ),
    // admissionregistration.k8s.io/v1
    ty(
        "WebhookConfiguration",
        &[METADATA, STATUS, ("webhooks", merge("name", "Webhook"))],
    ),
];

/// A built-in kind and its schema.
struct Kind {
    api_version: &'static str,
    kind: &'static str,
    schema: Schema,
}

const fn kind(api_version: &'static str, kind: &'static str, root: &'static str) -> Kind {
    Kind {
        api_version,
        kind,
        schema: Schema::from_static(root, TYPES),
    }
}

static KINDS: &[Kind] = &[
    kind("v1", "Pod", "Pod"),
    kind("v1", "PodTemplate", "PodTemplate"),
    kind("v1", "ReplicationController", "ReplicationController"),
    kind("v1", "Service", "Service"),
    kind("v1", "ServiceAccount", "ServiceAccount"),
    kind("v1", "Node", "Node"),
    kind("v1", "Namespace", "Object"),
    kind("v1", "ConfigMap", "Object"),
    kind("v1", "Secret", "Object"),
    kind("v1", "Endpoints", "Object"),
    kind("v1", "PersistentVolume", "Object"),
    kind("v1", "PersistentVolumeClaim", "Object"),
    kind("v1", "LimitRange", "Object"),
    kind("v1", "ResourceQuota", "Object"),
    kind("v1", "Event", "Object"),
    kind("apps/v1", "Deployment", "Deployment"),
    kind("apps/v1", "StatefulSet", "StatefulSet"),
    kind("apps/v1", "DaemonSet", "DaemonSet"),
    kind("apps/v1", "ReplicaSet", "ReplicaSet"),
    kind("apps/v1", "ControllerRevision", "Object"),
    kind("batch/v1", "Job", "Job"),
    kind("batch/v1", "CronJob", "CronJob"),
    kind("networking.k8s.io/v1", "Ingress", "Object"),
    kind("networking.k8s.io/v1", "IngressClass", "Object"),
    kind("networking.k8s.io/v1", "NetworkPolicy", "Object"),
    kind("networking.k8s.io/v1", "IPAddress", "Object"),
    kind("networking.k8s.io/v1", "ServiceCIDR", "Object"),
    kind("policy/v1", "PodDisruptionBudget", "PodDisruptionBudget"),
    kind("rbac.authorization.k8s.io/v1", "Role", "Object"),
    kind("rbac.authorization.k8s.io/v1", "ClusterRole", "Object"),
    kind("rbac.authorization.k8s.io/v1", "RoleBinding", "Object"),
    kind(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "Object",
    ),
    kind(
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        "WebhookConfiguration",
    ),
    kind(
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        "WebhookConfiguration",
    ),
];

/// The compiled-in schema of a built-in kind; None for CRDs / unknown kinds (use JSON merge then).
///
/// Covers the served versions of core, apps, batch, networking.k8s.io,
/// policy, rbac.authorization.k8s.io and admissionregistration.k8s.io. The
/// schemas are static, so the reference lives for the whole program.
pub fn schema_for(api_version: &str, kind: &str) -> Option<&'static Schema> {
    KINDS
        .iter()
        .find(|k| k.api_version == api_version && k.kind == kind)
        .map(|k| &k.schema)
}

/// Merge key of the list at `path` (field names only, no indices, e.g. `["spec","template","spec","containers"]`) of a built-in kind, if it is a merge list of objects.
///
/// `None` for unknown kinds, atomic lists, merge lists of scalars and paths
/// that are not lists.
pub fn list_merge_key(api_version: &str, kind: &str, path: &[&str]) -> Option<&'static str> {
    schema_for(api_version, kind)?.lookup(path)?.merge_key()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_root_type() {
        for k in KINDS {
            assert!(
                TYPES.iter().any(|t| t.name == k.schema.root()),
                "{} has no root type",
                k.kind
            );
        }
    }

    #[test]
    fn merge_keys_of_pod_templates() {
        let containers = ["spec", "template", "spec", "containers"];
        assert_eq!(
            list_merge_key("apps/v1", "Deployment", &containers),
            Some("name")
        );
        assert_eq!(
            list_merge_key(
                "apps/v1",
                "Deployment",
                &[&containers[..], &["ports"]].concat()
            ),
            Some("containerPort")
        );
        assert_eq!(
            list_merge_key(
                "batch/v1",
                "CronJob",
                &["spec", "jobTemplate", "spec", "template", "spec", "volumes"]
            ),
            Some("name")
        );
        assert_eq!(
            list_merge_key("v1", "Pod", &["spec", "containers", "args"]),
            None
        );
        assert_eq!(
            list_merge_key("v1", "Pod", &["metadata", "finalizers"]),
            None
        );
        assert_eq!(
            list_merge_key("v1", "Service", &["spec", "ports"]),
            Some("port")
        );
        assert_eq!(
            list_merge_key("apps/v1", "Deployment", &["status", "conditions"]),
            Some("type")
        );
    }

    #[test]
    fn custom_kinds_have_no_schema() {
        assert!(schema_for("example.com/v1", "Widget").is_none());
        assert!(schema_for("apps/v1", "Widget").is_none());
        assert!(schema_for("apps/v1", "Deployment").is_some());
    }
}
