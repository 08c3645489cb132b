//! Mapping cluster errors to statuses (k8s-semantics §8.4, E1–E4): the
//! `metav1.Status` reason first, the HTTP code only as a fallback, and a
//! message that names the object and says what to do.

use crate::model::{ApiError, Cause, ErrorSource, Status, StatusCode, StatusKind};
use std::fmt;

/// The cause message the API server uses for a change to an immutable field.
pub const IMMUTABLE_MESSAGE: &str = "field is immutable";

/// The cause reason of a server-side apply conflict with another field manager.
pub const FIELD_MANAGER_CONFLICT: &str = "FieldManagerConflict";

/// The object a call was about, for messages: `Deployment web/nginx`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// API group/version, for example `apps/v1`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace, `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The cluster call that failed; some codes mean different things per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Resolving the kind (404 means the kind is not served).
    Resolve,
    /// Reading the object.
    Get,
    /// Creating it (409 means it already exists).
    Create,
    /// Patching it.
    Patch,
    /// Deleting it.
    Delete,
    /// Watching it.
    Watch,
}

impl Operation {
    fn verb(self) -> &'static str {
        match self {
            Operation::Resolve => "resolve",
            Operation::Get => "read",
            Operation::Create => "create",
            Operation::Patch => "update",
            Operation::Delete => "delete",
            Operation::Watch => "watch",
        }
    }
}

/// Whether the error is a server-side apply conflict with another field manager.
pub fn is_field_manager_conflict(err: &ApiError) -> bool {
    err.causes
        .iter()
        .any(|c| c.reason == FIELD_MANAGER_CONFLICT)
}

/// Whether the error is an optimistic-concurrency conflict (409 Conflict that is
/// not a field-manager conflict), which M11 retries.
pub fn is_optimistic_conflict(err: &ApiError) -> bool {
    err.source == ErrorSource::Api
        && api_reason(err) == Reason::Conflict
        && !is_field_manager_conflict(err)
}

/// Whether the error is the rejection of a change to an immutable field.
pub fn is_immutable(err: &ApiError) -> bool {
    err.source == ErrorSource::Api
        && api_reason(err) == Reason::Invalid
        && (err.message.contains(IMMUTABLE_MESSAGE)
            || err
                .causes
                .iter()
                .any(|c| c.message.contains(IMMUTABLE_MESSAGE)))
}

/// Whether the error is a 404 for the object itself.
pub fn is_not_found(err: &ApiError) -> bool {
    err.source == ErrorSource::Api && api_reason(err) == Reason::NotFound
}

/// Whether the error is a 409 AlreadyExists.
pub fn is_already_exists(err: &ApiError) -> bool {
    err.source == ErrorSource::Api && api_reason(err) == Reason::AlreadyExists
}

/// Whether the error is a 410 Gone / Expired (a watch must re-list).
pub fn is_gone(err: &ApiError) -> bool {
    err.source == ErrorSource::Api && api_reason(err) == Reason::Gone
}

/// The fields named by immutable-field causes, for messages.
pub fn immutable_fields(err: &ApiError) -> Vec<String> {
    err.causes
        .iter()
        .filter(|c| c.message.contains(IMMUTABLE_MESSAGE))
        .map(|c| c.field.clone())
        .filter(|f| !f.is_empty())
        .collect()
}

/// The `metav1.Status` reasons the mapping distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    NotFound,
    AlreadyExists,
    Conflict,
    Invalid,
    BadRequest,
    Unauthorized,
    Forbidden,
    Unsupported,
    Gone,
    TooLarge,
    TooManyRequests,
    Unavailable,
    ServerError,
    Unknown,
}

/// E2: the reason when it is a known one, else the HTTP code.
fn api_reason(err: &ApiError) -> Reason {
    match err.reason.as_str() {
        "NotFound" => Reason::NotFound,
        "AlreadyExists" => Reason::AlreadyExists,
        "Conflict" => Reason::Conflict,
        "Invalid" => Reason::Invalid,
        "BadRequest" => Reason::BadRequest,
        "Unauthorized" => Reason::Unauthorized,
        "Forbidden" => Reason::Forbidden,
        "MethodNotAllowed" | "NotAcceptable" | "UnsupportedMediaType" => Reason::Unsupported,
        "Gone" | "Expired" => Reason::Gone,
        "RequestEntityTooLarge" => Reason::TooLarge,
        "TooManyRequests" => Reason::TooManyRequests,
        "ServiceUnavailable" => Reason::Unavailable,
        "ServerTimeout" | "Timeout" | "InternalError" | "StorageReadError" => Reason::ServerError,
        _ => match err.code {
            404 => Reason::NotFound,
            409 => Reason::Conflict,
            422 => Reason::Invalid,
            400 => Reason::BadRequest,
            401 => Reason::Unauthorized,
            403 => Reason::Forbidden,
            405 | 406 | 415 => Reason::Unsupported,
            410 => Reason::Gone,
            413 => Reason::TooLarge,
            429 => Reason::TooManyRequests,
            503 => Reason::Unavailable,
            500..=599 => Reason::ServerError,
            _ => Reason::Unknown,
        },
    }
}

/// Maps a failed cluster call about `subject` to a status (E1–E4).
pub fn map_api_error(err: &ApiError, subject: &Subject, op: Operation) -> Status {
    let retry_after_ms = err.retry_after_seconds.map(|s| s.saturating_mul(1000));
    let verb = op.verb();
    let server = err.message.trim();
    let mut status = match err.source {
        ErrorSource::Transport => Status {
            retryable: op == Operation::Get || op == Operation::Watch || op == Operation::Resolve,
            ..Status::error(
                StatusCode::Unreachable,
                "Unreachable",
                format!("cannot reach the API server to {verb} {subject}: {server}"),
            )
        },
        ErrorSource::Timeout => Status {
            retryable: true,
            ..Status::error(
                StatusCode::Timeout,
                "HostTimeout",
                format!("the call to {verb} {subject} timed out: {server}"),
            )
        },
        // The host's message says how to allow the call: keep it verbatim.
        ErrorSource::Policy => Status::error(
            StatusCode::PermissionDenied,
            "PolicyDenied",
            server.to_owned(),
        ),
        ErrorSource::Limit => Status::error(
            StatusCode::LimitExceeded,
            "LimitExceeded",
            format!("a host limit stopped the call to {verb} {subject}: {server}"),
        ),
        ErrorSource::Api => map_api_status(err, subject, op),
    };
    if status.causes.is_empty() {
        status.causes = err.causes.clone();
    }
    status.retry_after_ms = status.retry_after_ms.or(retry_after_ms);
    status
}

fn map_api_status(err: &ApiError, subject: &Subject, op: Operation) -> Status {
    let verb = op.verb();
    let server = err.message.trim();
    let reason = if err.reason.is_empty() {
        fallback_reason_name(err.code)
    } else {
        err.reason.clone()
    };
    let error = |code: StatusCode, message: String| Status::error(code, reason.clone(), message);
    let retryable = |status: Status| Status {
        retryable: true,
        ..status
    };
    match api_reason(err) {
        Reason::NotFound if op == Operation::Resolve => kind_not_installed(subject),
        Reason::NotFound if server.contains("namespaces") => error(
            StatusCode::NotFound,
            format!("cannot {verb} {subject}: {server} (create the namespace first)"),
        ),
        Reason::NotFound => error(
            StatusCode::NotFound,
            format!("{subject} not found ({server})"),
        ),
        Reason::AlreadyExists => error(
            StatusCode::AlreadyExists,
            format!(
                "{subject} already exists and is not managed by this stack: import or adopt it, or rename it"
            ),
        ),
        Reason::Conflict if is_field_manager_conflict(err) => field_conflict(err, subject),
        Reason::Conflict if op == Operation::Create && err.reason.is_empty() => error(
            StatusCode::AlreadyExists,
            format!("{subject} already exists and is not managed by this stack: {server}"),
        ),
        Reason::Conflict => retryable(error(
            StatusCode::Conflict,
            format!("{subject} changed while it was being applied: {server}"),
        )),
        Reason::Invalid if is_immutable(err) => immutable_field(err, subject),
        Reason::Invalid => invalid(err, subject, &reason),
        Reason::BadRequest => error(
            StatusCode::BadRequest,
            format!("the API server rejected the request to {verb} {subject}: {server}"),
        ),
        Reason::Unauthorized => error(
            StatusCode::Unauthenticated,
            format!("credentials rejected by the API server ({verb} {subject}): {server}"),
        ),
        Reason::Forbidden if is_namespace_terminating(err) => retryable(error(
            StatusCode::NamespaceTerminating,
            format!(
                "namespace {} is being deleted; {subject} cannot be written until it is gone",
                subject.namespace.as_deref().unwrap_or("?")
            ),
        )),
        Reason::Forbidden => error(StatusCode::PermissionDenied, server.to_owned()),
        Reason::Unsupported => error(
            StatusCode::Unsupported,
            format!("the API server does not support this request to {verb} {subject}: {server}"),
        ),
        Reason::Gone => retryable(error(
            StatusCode::Unavailable,
            format!("the watch of {subject} expired: {server}"),
        )),
        Reason::TooLarge => error(
            StatusCode::TooLarge,
            format!("{subject} is too large for the API server (check data sizes): {server}"),
        ),
        Reason::TooManyRequests => retryable(error(
            StatusCode::Throttled,
            format!("the API server is throttling requests ({verb} {subject}): {server}"),
        )),
        Reason::Unavailable => retryable(error(
            StatusCode::Unavailable,
            format!("the API server is unavailable ({verb} {subject}): {server}"),
        )),
        Reason::ServerError => retryable(error(
            StatusCode::ServerError,
            server_error_message(server, verb, subject),
        )),
        Reason::Unknown => error(
            StatusCode::Unknown,
            format!("cannot {verb} {subject}: HTTP {}: {server}", err.code),
        ),
    }
}

/// The status for a kind the cluster does not serve.
pub fn kind_not_installed(subject: &Subject) -> Status {
    let (group, version) = match subject.api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", subject.api_version.as_str()),
    };
    let gvk = if group.is_empty() {
        format!("{version}/{}", subject.kind)
    } else {
        format!("{group}/{version}/{}", subject.kind)
    };
    Status {
        retryable: true,
        ..Status::error(
            StatusCode::KindNotInstalled,
            "KindNotInstalled",
            format!(
                "no resource type {gvk} in the cluster (is the CRD installed?), needed for {subject}"
            ),
        )
    }
}

fn field_conflict(err: &ApiError, subject: &Subject) -> Status {
    let causes: Vec<Cause> = err
        .causes
        .iter()
        .filter(|c| c.reason == FIELD_MANAGER_CONFLICT)
        .cloned()
        .collect();
    let lines: Vec<String> = causes
        .iter()
        .map(|c| format!("- {}: {}", c.field, c.message))
        .collect();
    Status {
        causes,
        ..Status::error(
            StatusCode::FieldConflict,
            "FieldManagerConflict",
            format!(
                "applying {subject} conflicts with other field managers:\n{}\nset force to take ownership, drop the fields from the plan, or match the live values",
                lines.join("\n")
            ),
        )
    }
}

fn immutable_field(err: &ApiError, subject: &Subject) -> Status {
    let fields = immutable_fields(err);
    let named = if fields.is_empty() {
        "a field".to_owned()
    } else {
        fields.join(", ")
    };
    Status {
        causes: err.causes.clone(),
        ..Status::error(
            StatusCode::ImmutableField,
            "FieldImmutable",
            format!(
                "{named} of {subject} cannot be changed in place; the object must be replaced (set replace-on-immutable to delete and recreate it)"
            ),
        )
    }
}

fn invalid(err: &ApiError, subject: &Subject, reason: &str) -> Status {
    let mut message = format!("{subject} is invalid");
    if err.causes.is_empty() {
        message.push_str(": ");
        message.push_str(err.message.trim());
    } else {
        message.push(':');
        for cause in &err.causes {
            message.push_str("\n- ");
            if !cause.field.is_empty() {
                message.push_str(&cause.field);
                message.push_str(": ");
            }
            message.push_str(&cause.message);
        }
    }
    Status {
        causes: err.causes.clone(),
        ..Status::error(StatusCode::Invalid, reason, message)
    }
}

fn is_namespace_terminating(err: &ApiError) -> bool {
    err.causes
        .iter()
        .any(|c| c.reason == "NamespaceTerminating" || c.field == "NamespaceTerminating")
        || err.message.contains("because it is being terminated")
}

fn server_error_message(server: &str, verb: &str, subject: &Subject) -> String {
    const WEBHOOK: &str = "failed calling webhook";
    if let Some(at) = server.find(WEBHOOK) {
        let rest = server[at + WEBHOOK.len()..].trim_start();
        let name = rest
            .strip_prefix('"')
            .and_then(|r| r.split_once('"'))
            .map(|(name, _)| name)
            .unwrap_or("?");
        return format!(
            "admission webhook \"{name}\" failed while trying to {verb} {subject} (is the webhook's service running?): {server}"
        );
    }
    format!("the API server failed to {verb} {subject}: {server}")
}

fn fallback_reason_name(code: u16) -> String {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Gone",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        500..=599 => "InternalError",
        _ => "Unknown",
    }
    .to_owned()
}

/// An `invalid-argument` status (a bad id, a mismatch between id and manifest).
pub fn invalid_argument(message: impl Into<String>) -> Status {
    Status::error(StatusCode::InvalidArgument, "InvalidArgument", message)
}

/// An `illegal-manifest` status (the attributes are not a Kubernetes object).
pub fn illegal_manifest(message: impl Into<String>) -> Status {
    Status::error(StatusCode::IllegalManifest, "IllegalManifest", message)
}

/// An `info` status: a success with something worth knowing.
pub fn info(code: StatusCode, reason: &str, message: impl Into<String>) -> Status {
    Status {
        kind: StatusKind::Info,
        ..Status::error(code, reason, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject() -> Subject {
        Subject {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("web".into()),
            name: "nginx".into(),
        }
    }

    fn cause(field: &str, reason: &str, message: &str) -> Cause {
        Cause {
            field: field.into(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    fn map(err: ApiError, op: Operation) -> Status {
        map_api_error(&err, &subject(), op)
    }

    #[test]
    fn reason_wins_over_code() {
        let s = map(ApiError::api(500, "NotFound", "x"), Operation::Get);
        assert_eq!(s.code, StatusCode::NotFound);
        let s = map(ApiError::api(404, "", "x"), Operation::Get);
        assert_eq!(s.code, StatusCode::NotFound);
        assert_eq!(s.reason, "NotFound");
        let s = map(ApiError::api(409, "", "x"), Operation::Create);
        assert_eq!(s.code, StatusCode::AlreadyExists);
        let s = map(ApiError::api(404, "Weird", "x"), Operation::Resolve);
        assert_eq!(s.code, StatusCode::KindNotInstalled);
        assert!(s.message.contains("apps/v1/Deployment"), "{}", s.message);
        assert!(s.message.contains("CRD"), "{}", s.message);
    }

    #[test]
    fn field_conflicts_list_each_field() {
        let mut err = ApiError::api(409, "Conflict", "Apply failed with 2 conflicts");
        err.causes = vec![
            cause(
                ".spec.replicas",
                FIELD_MANAGER_CONFLICT,
                "conflict with \"kubectl\"",
            ),
            cause(
                ".spec.paused",
                FIELD_MANAGER_CONFLICT,
                "conflict with \"other\"",
            ),
        ];
        assert!(!is_optimistic_conflict(&err));
        let s = map(err, Operation::Patch);
        assert_eq!(s.code, StatusCode::FieldConflict);
        assert_eq!(s.causes.len(), 2);
        assert!(
            s.message
                .contains(".spec.replicas: conflict with \"kubectl\"")
        );
        assert!(s.message.contains("force"));
        assert!(!s.retryable);
    }

    #[test]
    fn plain_conflict_is_retryable() {
        let err = ApiError::api(409, "Conflict", "the object has been modified");
        assert!(is_optimistic_conflict(&err));
        let s = map(err, Operation::Patch);
        assert_eq!(s.code, StatusCode::Conflict);
        assert!(s.retryable);
    }

    #[test]
    fn invalid_lists_causes_and_immutable_names_field() {
        let mut err = ApiError::api(422, "Invalid", "Deployment.apps \"nginx\" is invalid");
        err.causes = vec![
            cause("spec.replicas", "FieldValueInvalid", "must be >= 0"),
            cause("spec.template", "FieldValueRequired", "Required value"),
        ];
        let s = map(err.clone(), Operation::Patch);
        assert_eq!(s.code, StatusCode::Invalid);
        assert!(s.message.contains("\n- spec.replicas: must be >= 0"));
        assert!(s.message.contains("\n- spec.template: Required value"));

        err.causes = vec![cause(
            "spec.selector",
            "FieldValueInvalid",
            "field is immutable",
        )];
        let s = map(err, Operation::Patch);
        assert_eq!(s.code, StatusCode::ImmutableField);
        assert!(
            s.message
                .starts_with("spec.selector of Deployment web/nginx"),
            "{}",
            s.message
        );
    }

    #[test]
    fn forbidden_and_policy() {
        let mut err = ApiError::api(
            403,
            "Forbidden",
            "unable to create new content in namespace web because it is being terminated",
        );
        err.causes = vec![cause(
            "",
            "NamespaceTerminating",
            "namespace web is being terminated",
        )];
        let s = map(err, Operation::Create);
        assert_eq!(s.code, StatusCode::NamespaceTerminating);
        assert!(s.retryable);

        let s = map(
            ApiError::api(403, "Forbidden", "user x cannot patch"),
            Operation::Patch,
        );
        assert_eq!(s.code, StatusCode::PermissionDenied);
        assert_eq!(s.message, "user x cannot patch");

        let mut err = ApiError::api(0, "", "denied: add --allow-kind apps/Deployment");
        err.source = ErrorSource::Policy;
        let s = map(err, Operation::Patch);
        assert_eq!(s.code, StatusCode::PermissionDenied);
        assert_eq!(s.message, "denied: add --allow-kind apps/Deployment");
    }

    #[test]
    fn throttling_server_errors_and_transport() {
        let mut err = ApiError::api(429, "TooManyRequests", "slow down");
        err.retry_after_seconds = Some(3);
        let s = map(err, Operation::Get);
        assert_eq!(s.code, StatusCode::Throttled);
        assert!(s.retryable);
        assert_eq!(s.retry_after_ms, Some(3000));

        let err = ApiError::api(
            500,
            "InternalError",
            "Internal error occurred: failed calling webhook \"validate.example.com\": connection refused",
        );
        let s = map(err, Operation::Patch);
        assert_eq!(s.code, StatusCode::ServerError);
        assert!(s.retryable);
        assert!(
            s.message
                .contains("admission webhook \"validate.example.com\""),
            "{}",
            s.message
        );

        let s = map(ApiError::api(502, "", "bad gateway"), Operation::Get);
        assert_eq!(s.code, StatusCode::ServerError);

        let mut err = ApiError::api(0, "", "connection refused");
        err.source = ErrorSource::Transport;
        let s = map(err, Operation::Get);
        assert_eq!(s.code, StatusCode::Unreachable);
        assert!(s.retryable);

        let mut err = ApiError::api(0, "", "request budget exhausted");
        err.source = ErrorSource::Limit;
        assert_eq!(map(err, Operation::Get).code, StatusCode::LimitExceeded);

        for (code, want) in [
            (400, StatusCode::BadRequest),
            (401, StatusCode::Unauthenticated),
            (405, StatusCode::Unsupported),
            (413, StatusCode::TooLarge),
            (415, StatusCode::Unsupported),
            (503, StatusCode::Unavailable),
            (418, StatusCode::Unknown),
        ] {
            assert_eq!(
                map(ApiError::api(code, "", "m"), Operation::Patch).code,
                want,
                "{code}"
            );
        }
    }
}
