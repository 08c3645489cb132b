//! Plain Rust mirrors of the WIT types (`wit/types.wit`, `wit/kubernetes.wit`,
//! `wit/runtime.wit`). Objects are `serde_json::Value`s here; the component glue
//! converts them to and from JSON text exactly once per boundary crossing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One resource of a Kusion spec or state (`types.resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// `apiVersion:kind[:namespace]:name`.
    pub id: String,
    /// The runtime type, `Kubernetes`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The whole Kubernetes manifest.
    pub attributes: Value,
    /// Ids this resource depends on.
    #[serde(rename = "dependsOn", default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// Free-form extensions (a JSON object).
    #[serde(default, skip_serializing_if = "is_empty_object")]
    pub extensions: Value,
}

fn is_empty_object(v: &Value) -> bool {
    v.is_null() || v.as_object().is_some_and(|m| m.is_empty())
}

/// How serious a status is (`types.status-kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StatusKind {
    /// The operation failed.
    Error,
    /// Success with a note.
    Warning,
    /// Informative.
    Info,
}

/// What went wrong (`types.status-code`); see the WIT for each meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[expect(missing_docs, reason = "each variant is documented in wit/types.wit")]
pub enum StatusCode {
    Unknown,
    Unavailable,
    Unimplemented,
    Canceled,
    InvalidArgument,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    Internal,
    Unauthenticated,
    IllegalManifest,
    Conflict,
    FieldConflict,
    ImmutableField,
    Throttled,
    KindNotInstalled,
    Timeout,
    Invalid,
    BadRequest,
    NamespaceTerminating,
    Unsupported,
    TooLarge,
    ServerError,
    Unreachable,
    LimitExceeded,
}

/// A field-level detail of a status or API error (`types.cause`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Cause {
    /// Field path, for example `.spec.replicas`.
    pub field: String,
    /// Machine-readable reason.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
}

/// The outcome of an operation that is not a plain success (`types.status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// Severity.
    pub kind: StatusKind,
    /// Code.
    pub code: StatusCode,
    /// CamelCase reason.
    pub reason: String,
    /// Message for the user.
    pub message: String,
    /// Whether a later retry may succeed.
    pub retryable: bool,
    /// Field-level details.
    pub causes: Vec<Cause>,
    /// Server-advised wait before retrying.
    pub retry_after_ms: Option<u32>,
}

impl Status {
    /// An error status with no causes, not retryable.
    pub fn error(code: StatusCode, reason: impl Into<String>, message: impl Into<String>) -> Self {
        Status {
            kind: StatusKind::Error,
            code,
            reason: reason.into(),
            message: message.into(),
            retryable: false,
            causes: Vec::new(),
            retry_after_ms: None,
        }
    }

    /// A warning status (a success with a note).
    pub fn warning(
        code: StatusCode,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Status {
            kind: StatusKind::Warning,
            ..Status::error(code, reason, message)
        }
    }

    /// Whether this status means the call failed.
    pub fn is_error(&self) -> bool {
        self.kind == StatusKind::Error
    }
}

/// Readiness of a live object (`types.health-state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HealthState {
    /// The object does not exist.
    NotFound,
    /// The object is being deleted.
    Terminating,
    /// The object is converging.
    InProgress,
    /// The object is ready.
    Current,
    /// The object will not become ready without intervention.
    Failed,
    /// Undetermined.
    Unknown,
}

/// The health of one object (`types.health`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// State.
    pub state: HealthState,
    /// CamelCase reason, empty when current.
    pub reason: String,
    /// Message for the user.
    pub message: String,
}

impl Health {
    /// A health value from its parts.
    pub fn new(state: HealthState, reason: impl Into<String>, message: impl Into<String>) -> Self {
        Health {
            state,
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// Patch formats (`types.patch-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatchType {
    /// RFC 7386 JSON merge patch.
    JsonMerge,
    /// Kubernetes strategic merge patch.
    StrategicMerge,
    /// Server-side apply.
    Apply,
    /// RFC 6902 JSON patch.
    JsonPatch,
}

/// Garbage-collection policy of a delete (`types.propagation-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PropagationPolicy {
    /// Background collection.
    Background,
    /// Foreground collection.
    Foreground,
    /// Orphan dependents.
    Orphan,
}

/// A kind resolved to its REST resource (`kubernetes.api-resource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiResource {
    /// API group, empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Whether objects are namespaced.
    pub namespaced: bool,
}

impl ApiResource {
    /// Its `apiVersion`: `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }
}

/// The `apiVersion` of `group` and `version`: `group/version`, or `version`
/// for the core group (`""`).
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// Where an API error came from (`kubernetes.error-source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorSource {
    /// A `metav1.Status` from the API server.
    Api,
    /// Connection-level failure.
    Transport,
    /// The host's deadline passed.
    Timeout,
    /// The host's capability policy refused the call.
    Policy,
    /// A host limit was reached.
    Limit,
}

/// A failed cluster call (`kubernetes.api-error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// Where it came from.
    pub source: ErrorSource,
    /// HTTP code, 0 without a response.
    pub code: u16,
    /// `metav1.Status.reason`.
    pub reason: String,
    /// `metav1.Status.message`.
    pub message: String,
    /// `metav1.Status.details.causes`.
    pub causes: Vec<Cause>,
    /// Server-advised wait in seconds.
    pub retry_after_seconds: Option<u32>,
}

impl ApiError {
    /// An API-server error with a code, reason and message.
    pub fn api(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError {
            source: ErrorSource::Api,
            code,
            reason: reason.into(),
            message: message.into(),
            causes: Vec::new(),
            retry_after_seconds: None,
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            0 => write!(f, "{}", self.message),
            code => write!(f, "{code} {}: {}", self.reason, self.message),
        }
    }
}

impl std::error::Error for ApiError {}

/// Options of a create call (`kubernetes.create-options`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Field manager.
    pub field_manager: Option<String>,
}

/// Options of a patch call (`kubernetes.patch-options`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Field manager (required for apply patches).
    pub field_manager: Option<String>,
    /// Force server-side apply ownership.
    pub force: bool,
}

/// Delete preconditions (`kubernetes.preconditions`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Preconditions {
    /// Required `metadata.uid`.
    pub uid: Option<String>,
    /// Required `metadata.resourceVersion`.
    pub resource_version: Option<String>,
}

/// Options of a delete call (`kubernetes.delete-options`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Propagation policy.
    pub propagation_policy: Option<PropagationPolicy>,
    /// Preconditions.
    pub preconditions: Option<Preconditions>,
    /// Grace period in seconds.
    pub grace_period_seconds: Option<u32>,
}

/// Options of a list call (`kubernetes.list-options`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListOptions {
    /// Label selector.
    pub label_selector: Option<String>,
    /// Field selector.
    pub field_selector: Option<String>,
    /// Page size.
    pub limit: Option<u32>,
    /// Continue token.
    pub continue_token: Option<String>,
}

/// One page of a list (`kubernetes.object-list`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjectList {
    /// The objects.
    pub items: Vec<Value>,
    /// The list's resourceVersion.
    pub resource_version: String,
    /// Token of the next page.
    pub continue_token: Option<String>,
}

/// Options of a watch call (`kubernetes.watch-options`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WatchOptions {
    /// Label selector.
    pub label_selector: Option<String>,
    /// Field selector.
    pub field_selector: Option<String>,
    /// Start after this resourceVersion.
    pub resource_version: Option<String>,
    /// Server-side timeout in seconds.
    pub timeout_seconds: Option<u32>,
    /// Ask for bookmarks.
    pub allow_bookmarks: bool,
}

/// Type of a watch event (`kubernetes.event-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created or initially present.
    Added,
    /// Changed.
    Modified,
    /// Deleted.
    Deleted,
    /// Progress marker.
    Bookmark,
}

/// One watch event (`kubernetes.watch-event`).
#[derive(Debug, Clone, PartialEq)]
pub struct WatchEvent {
    /// What happened.
    pub type_: EventType,
    /// The object.
    pub object: Value,
}

/// Log severity (`host.log-level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(missing_docs, reason = "the usual log levels")]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// A progress event (`host.progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Resource id.
    pub id: String,
    /// Step name.
    pub phase: String,
    /// What is happening.
    pub message: String,
    /// Latest health.
    pub health: Option<Health>,
}

/// How apply writes (`runtime.apply-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApplyMode {
    /// Server-side apply.
    #[default]
    ServerSide,
    /// Client-side three-way merge.
    ClientSideThreeWay,
}

/// Options of `runtime.apply`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApplyOptions {
    /// Dry run.
    pub dry_run: bool,
    /// Mode.
    pub mode: ApplyMode,
    /// Field manager (`krt` when `None`).
    pub field_manager: Option<String>,
    /// Force SSA ownership.
    pub force: bool,
    /// Delete and recreate on immutable-field changes.
    pub replace_on_immutable: bool,
    /// Default namespace.
    pub default_namespace: Option<String>,
    /// Predict a dry run locally instead of asking the server.
    pub offline: bool,
    /// Paths ignored when deciding whether anything changed.
    pub ignore_paths: Vec<String>,
}

/// What apply did (`runtime.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Created.
    Create,
    /// Updated.
    Update,
    /// Nothing to do.
    Unchanged,
    /// Deleted.
    Delete,
    /// Deleted and recreated.
    Replace,
}

/// Result of `runtime.apply`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyResponse {
    /// The resulting (normalized) resource.
    pub resource: Option<Resource>,
    /// The normalized live object before the call.
    pub live: Option<Value>,
    /// What was done.
    pub action: Action,
    /// `None` on success.
    pub status: Option<Status>,
    /// Optimistic-concurrency retries.
    pub retries: u32,
}

impl ApplyResponse {
    /// A failed apply: no resource, nothing done (`delete` when there was no plan).
    pub fn failed(status: Status, deleting: bool) -> Self {
        ApplyResponse {
            resource: None,
            live: None,
            action: if deleting {
                Action::Delete
            } else {
                Action::Unchanged
            },
            status: Some(status),
            retries: 0,
        }
    }
}

/// What an apply saw of the live object before it wrote (WIT
/// `observed-apply.observation`): handed to a later apply of the same plan,
/// it spares that apply the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// No object existed, or none can yet (its Namespace or CRD is still to be created).
    Absent,
    /// The object as the runtime read it (JSON), opaque to callers.
    Seen(String),
}

/// Result of `observed-apply.apply-observed`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedResponse {
    /// What `runtime.apply` answers for the same call.
    pub response: ApplyResponse,
    /// What the call saw before it wrote; `None` when it failed before that, and after a delete.
    pub observation: Option<Observation>,
}

/// Options of `runtime.read`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// Default namespace.
    pub default_namespace: Option<String>,
}

/// Result of `runtime.read`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadResponse {
    /// The normalized live resource, `None` when absent.
    pub resource: Option<Resource>,
    /// `None` on success.
    pub status: Option<Status>,
}

impl ReadResponse {
    /// A failed read: no resource.
    pub fn failed(status: Status) -> Self {
        ReadResponse {
            resource: None,
            status: Some(status),
        }
    }
}

/// Options of `runtime.delete`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteRequest {
    /// Dry run.
    pub dry_run: bool,
    /// Propagation policy.
    pub propagation_policy: Option<PropagationPolicy>,
    /// Default namespace.
    pub default_namespace: Option<String>,
}

/// Result of `runtime.delete`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteResponse {
    /// `None` on success, including when the object was already gone.
    pub status: Option<Status>,
}

/// Options of `runtime.watch`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WatchRequest {
    /// Timeout in milliseconds.
    pub timeout_ms: u32,
    /// Default namespace.
    pub default_namespace: Option<String>,
}

/// Result of `runtime.watch`.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchResponse {
    /// Last observed resource.
    pub resource: Option<Resource>,
    /// Its health.
    pub health: Health,
    /// `None` when current.
    pub status: Option<Status>,
}

impl WatchResponse {
    /// A failed watch: no resource, health unknown with the status's reason and message.
    pub fn failed(status: Status) -> Self {
        WatchResponse {
            resource: None,
            health: Health::new(HealthState::Unknown, &status.reason, &status.message),
            status: Some(status),
        }
    }
}

/// One changed field (`logic.field-change`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    /// Dotted path.
    pub path: String,
    /// Old value as JSON.
    pub before: Option<String>,
    /// New value as JSON.
    pub after: Option<String>,
}

/// A diff of two objects (`logic.object-diff`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectDiff {
    /// Changed fields in path order.
    pub changes: Vec<FieldChange>,
    /// Unified diff as YAML.
    pub unified: String,
}

/// A computed patch (`logic.patch`).
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// Format.
    pub type_: PatchType,
    /// Document.
    pub body: Value,
}

/// A JSON value as compact text, as `Display` prints it, but written straight
/// into the string (`Display` goes through `fmt` one fragment at a time): how
/// krt prints every object it hands on. In krt's component simd-json writes it
/// (with wasm's SIMD it scans strings for what to escape 16 bytes at a time;
/// the boundary bench's levers measured the watch of a 1 MiB object faster),
/// elsewhere serde_json.
pub fn json_text(value: &Value) -> String {
    #[cfg(all(feature = "component", target_arch = "wasm32"))]
    let text = simd_json::serde::to_string(value);
    #[cfg(not(all(feature = "component", target_arch = "wasm32")))]
    let text = serde_json::to_string(value);
    text.expect("a JSON value always serializes")
}
