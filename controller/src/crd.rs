//! The `Stack` custom resource (`stacks.krt.dev`, version `v1alpha1`,
//! namespaced): what to apply (inline manifests and ConfigMaps holding
//! manifests), through which component chain, how often, and whether to prune;
//! its status is kstatus-shaped and holds the stack's inventory (its state).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The API group of [`Stack`].
pub const GROUP: &str = "krt.dev";

/// The finalizer that makes deleting a Stack delete its resources.
pub const FINALIZER: &str = "krt.dev/stack";

/// The field manager the controller writes as (resources and Stack status).
pub const FIELD_MANAGER: &str = "krt-controller";

/// What a Stack applies and how (`spec` of `stacks.krt.dev/v1alpha1`).
#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "krt.dev",
    version = "v1alpha1",
    kind = "Stack",
    namespaced,
    status = "StackStatus",
    shortname = "stk",
    derive = "PartialEq",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    printcolumn = r#"{"name":"Resources","type":"integer","jsonPath":".status.inventoryCount"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct StackSpec {
    /// Kubernetes objects to apply, inline. A namespaced object that names no
    /// namespace goes to the Stack's namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "objects_schema")]
    pub resources: Vec<Value>,
    /// ConfigMaps (of the Stack's namespace unless they name another) whose
    /// data holds manifests (YAML or JSON, multi-document, or Kusion specs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_maps: Vec<ConfigMapManifests>,
    /// The runtime component; krt's built-in guest when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentRef>,
    /// Middleware in front of the runtime, outermost first. They get no
    /// cluster access.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub middleware: Vec<ComponentRef>,
    /// How often the Stack is reconciled (drift corrected), as `30s`, `5m`, `1h`.
    #[serde(default = "default_interval")]
    pub interval: String,
    /// Delete what left the spec, and the Stack's resources when the Stack is
    /// deleted; `false` leaves them in the cluster.
    #[serde(default = "default_prune")]
    pub prune: bool,
    /// How resources are written.
    #[serde(default)]
    pub mode: ApplyMode,
    /// How long one resource may take to become healthy, as `30s`, `5m`
    /// (at most 10 minutes).
    #[serde(default = "default_timeout")]
    pub timeout: String,
    /// The ServiceAccount of the Stack's namespace whose rights the Stack has:
    /// every read, dry run, write and delete of it, and the reads of the
    /// ConfigMaps it names, go to the API server impersonating
    /// `system:serviceaccount:<namespace>:<name>`, so the server's RBAC and
    /// escalation checks decide. When absent, the controller's
    /// `--default-service-account`, or else the controller itself
    /// (single-tenant installs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// `kubernetes.io/dockerconfigjson` Secrets of the Stack's namespace with
    /// the credentials of the registries its `oci` components are in, tried
    /// before the `imagePullSecrets` of its ServiceAccount (as a Pod's are);
    /// read as the Stack's identity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<SecretName>,
}

fn default_interval() -> String {
    "5m".into()
}

fn default_prune() -> bool {
    true
}

fn default_timeout() -> String {
    "1m".into()
}

/// Any Kubernetes object, kept as it is (`x-kubernetes-preserve-unknown-fields`).
fn objects_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    })
}

/// A ConfigMap holding manifests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapManifests {
    /// The ConfigMap's name.
    pub name: String,
    /// Its namespace, when not the Stack's (refused by a controller run with
    /// `--no-cross-namespace-refs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The data key to read; every key ending in `.yaml`, `.yml` or `.json`
    /// (in name order) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Where a component comes from: exactly one of `path`, `configMap` and `oci`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentRef {
    /// A file in the controller's image, under one of its `--component-dir`s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A `binaryData` key of a ConfigMap (of the Stack's namespace unless it names another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<BinaryKey>,
    /// A component in an OCI registry, pulled with the Stack's pull secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciComponent>,
}

/// A component in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OciComponent {
    /// `oci://REGISTRY/REPOSITORY:TAG` (resolved to a digest on each
    /// reconcile) or `oci://REGISTRY/REPOSITORY@sha256:DIGEST`.
    #[serde(rename = "ref")]
    pub reference: String,
}

/// A Secret of the Stack's namespace, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SecretName {
    /// The Secret's name.
    pub name: String,
}

/// One `binaryData` key of a ConfigMap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BinaryKey {
    /// The ConfigMap's name.
    pub name: String,
    /// Its namespace, when not the Stack's (refused by a controller run with
    /// `--no-cross-namespace-refs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The `binaryData` key.
    pub key: String,
}

/// How a Stack's resources are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApplyMode {
    /// Server-side apply as field manager `krt-controller`, taking over
    /// fields changed by others (that is how drift is corrected).
    #[default]
    ServerSide,
    /// A client-side three-way merge against the last applied configuration.
    ClientSide,
}

/// What the controller observed and did (`status`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StackStatus {
    /// The generation the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// kstatus conditions: `Ready`, and `Reconciling` or `Stalled` while they hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The IDs of what the Stack applied (`apiVersion:kind[:namespace]:name`):
    /// its state, what pruning and deletion work from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inventory: Vec<InventoryEntry>,
    /// How many entries `inventory` has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory_count: Option<i64>,
    /// The digest of the inputs last applied successfully (`sha256:…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_revision: Option<String>,
    /// The component chain last applied: middleware outermost first, then
    /// the runtime; a registry component pinned to the digest its tag
    /// resolved to (`oci://…@sha256:…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<String>,
    /// The digest of the inputs last attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision: Option<String>,
    /// The health of each resource of the spec, in dependency order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceHealth>,
}

/// A condition in the Kubernetes (kstatus) form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, `Reconciling` or `Stalled`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase reason.
    pub reason: String,
    /// For people.
    pub message: String,
    /// When `status` last changed (RFC 3339).
    pub last_transition_time: String,
    /// The generation this condition describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// One applied resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InventoryEntry {
    /// Its ID.
    pub id: String,
    /// Its object's `metadata.uid`: only the object with this UID is pruned
    /// or deleted with the Stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// The health of one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceHealth {
    /// Its ID.
    pub id: String,
    /// `Current`, `InProgress`, `Failed`, `NotFound`, `Terminating` or `Unknown`.
    pub health: String,
    /// Why, when not `Current`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Stack {
    /// The Stack's namespace (Stacks are namespaced, so it always has one).
    pub fn namespace_or_default(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }

    /// The Stack's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The condition of type `type_`, if set.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
    }
}
