//! `metav1.Status` error responses: every failure the simulator returns is one of these.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};

/// An API error, rendered as a `metav1.Status` body with the matching HTTP code.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{reason} ({code}): {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable reason (`NotFound`, `Conflict`, ...).
    pub reason: &'static str,
    /// Human-readable message, as kube-apiserver words it.
    pub message: String,
    /// `details` of the Status (name, group, kind, causes, retryAfterSeconds).
    pub details: Option<Box<StatusDetails>>,
}

/// What an error is about: the `details` name/group/kind of a Status.
#[derive(Debug, Clone, Default)]
pub struct Subject<'a> {
    /// API group of the resource ("" for core).
    pub group: &'a str,
    /// Plural resource name (`deployments`).
    pub resource: &'a str,
    /// Object name.
    pub name: &'a str,
}

impl Subject<'_> {
    fn qualified_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    /// The `details` of a Status about this subject.
    pub fn details(&self) -> StatusDetails {
        StatusDetails {
            // `omitempty`, all three: the core group is left out, and an options object's
            // empty name.
            name: (!self.name.is_empty()).then(|| self.name.to_string()),
            group: (!self.group.is_empty()).then(|| self.group.to_string()),
            kind: (!self.resource.is_empty()).then(|| self.resource.to_string()),
            ..StatusDetails::default()
        }
    }
}

impl ApiError {
    /// An error with no details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 404 `the server could not find the requested resource`, with empty details: what
    /// kube-apiserver answers for a path no resource serves (`NewGenericServerResponse`).
    pub fn unknown_resource() -> Self {
        Self {
            details: Some(Box::new(StatusDetails::default())),
            ..Self::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )
        }
    }

    /// 404 `<resource> "<name>" not found`.
    pub fn not_found(subject: &Subject<'_>) -> Self {
        Self {
            details: Some(Box::new(subject.details())),
            ..Self::new(
                404,
                "NotFound",
                format!(
                    "{} \"{}\" not found",
                    subject.qualified_resource(),
                    subject.name
                ),
            )
        }
    }

    /// 409 `<resource> "<name>" already exists`.
    pub fn already_exists(subject: &Subject<'_>) -> Self {
        Self {
            details: Some(Box::new(subject.details())),
            ..Self::new(
                409,
                "AlreadyExists",
                format!(
                    "{} \"{}\" already exists",
                    subject.qualified_resource(),
                    subject.name
                ),
            )
        }
    }

    /// 409 Conflict for a stale resourceVersion (optimistic lock).
    pub fn stale(subject: &Subject<'_>) -> Self {
        Self {
            details: Some(Box::new(subject.details())),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                    subject.qualified_resource(),
                    subject.name
                ),
            )
        }
    }

    /// 409 Conflict with a free-form message (failed preconditions, SSA conflicts).
    pub fn conflict(subject: &Subject<'_>, message: String, causes: Vec<StatusCause>) -> Self {
        let mut details = subject.details();
        if !causes.is_empty() {
            details.causes = Some(causes);
        }
        Self {
            details: Some(Box::new(details)),
            ..Self::new(409, "Conflict", message)
        }
    }

    /// 409 Conflict of a server-side apply: its details carry the conflicts and nothing else
    /// (apimachinery's `NewApplyConflict`).
    pub fn apply_conflict(message: String, causes: Vec<StatusCause>) -> Self {
        Self {
            details: Some(Box::new(StatusDetails {
                causes: Some(causes),
                ..StatusDetails::default()
            })),
            ..Self::new(409, "Conflict", message)
        }
    }

    /// 422 Invalid: `<Kind> "<name>" is invalid: <field>: <detail>` with one cause per problem.
    pub fn invalid(kind: &str, subject: &Subject<'_>, causes: Vec<StatusCause>) -> Self {
        // The message names each distinct problem once (`field.ErrorList.ToAggregate`); the
        // causes keep them all.
        let mut parts: Vec<String> = Vec::new();
        for c in &causes {
            let part = format!(
                "{}: {}",
                c.field.as_deref().unwrap_or_default(),
                c.message.as_deref().unwrap_or_default()
            );
            if !parts.contains(&part) {
                parts.push(part);
            }
        }
        let joined = if parts.len() == 1 {
            parts[0].clone()
        } else {
            format!("[{}]", parts.join(", "))
        };
        let qualified = if subject.group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{}", subject.group)
        };
        let mut details = subject.details();
        // `omitempty`: an object without a kind (a review's) names none.
        details.kind = (!kind.is_empty()).then(|| kind.to_string());
        details.causes = Some(causes);
        Self {
            details: Some(Box::new(details)),
            ..Self::new(
                422,
                "Invalid",
                format!("{qualified} \"{}\" is invalid: {joined}", subject.name),
            )
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 403 Forbidden because the namespace is being deleted.
    pub fn namespace_terminating(subject: &Subject<'_>, namespace: &str) -> Self {
        let mut details = subject.details();
        details.causes = Some(vec![StatusCause {
            reason: Some("NamespaceTerminating".into()),
            message: Some(format!("namespace {namespace} is being terminated")),
            field: Some("metadata.namespace".into()),
        }]);
        Self {
            details: Some(Box::new(details)),
            ..Self::new(
                403,
                "Forbidden",
                format!(
                    "{} \"{}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
                    subject.qualified_resource(),
                    subject.name
                ),
            )
        }
    }

    /// 410 Expired for a resourceVersion older than the retained history.
    pub fn expired(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// 415 for a patch type the resource does not support.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {content_type})"
            ),
        )
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Self {
        Self {
            details: Some(Box::default()),
            ..Self::new(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )
        }
    }

    /// Attach `retryAfterSeconds` (also sent as a `Retry-After` header).
    pub fn with_retry_after(mut self, seconds: i32) -> Self {
        self.details
            .get_or_insert_with(Box::default)
            .retry_after_seconds = Some(seconds);
        self
    }

    /// The Status object this error renders as.
    pub fn to_status(&self) -> Status {
        Status {
            code: Some(i32::from(self.code)),
            details: self.details.as_deref().cloned(),
            message: Some(self.message.clone()),
            reason: Some(self.reason.to_string()),
            status: Some("Failure".into()),
            ..Status::default()
        }
    }
}

/// A `FieldValue*` cause for a 422 response.
pub fn cause(reason: &str, field: &str, message: impl Into<String>) -> StatusCause {
    StatusCause {
        reason: Some(reason.to_string()),
        field: Some(field.to_string()),
        message: Some(message.into()),
    }
}
