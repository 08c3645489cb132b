//! Conversions between the generated WIT types and the guest library's model
//! types, which the host uses as its Rust API.

use crate::bindings::{
    host_services as hs, kubernetes as k, logic as l, runtime as rt, types as t,
};
use krt_guest::model as m;

pub(crate) fn cause_to_wit(c: m::Cause) -> t::Cause {
    t::Cause {
        field: c.field,
        reason: c.reason,
        message: c.message,
    }
}

fn cause_from_wit(c: t::Cause) -> m::Cause {
    m::Cause {
        field: c.field,
        reason: c.reason,
        message: c.message,
    }
}

pub(crate) fn api_error_to_wit(e: m::ApiError) -> k::ApiError {
    k::ApiError {
        source: match e.source {
            m::ErrorSource::Api => k::ErrorSource::Api,
            m::ErrorSource::Transport => k::ErrorSource::Transport,
            m::ErrorSource::Timeout => k::ErrorSource::Timeout,
            m::ErrorSource::Policy => k::ErrorSource::Policy,
            m::ErrorSource::Limit => k::ErrorSource::Limit,
        },
        code: e.code,
        reason: e.reason,
        message: e.message,
        causes: e.causes.into_iter().map(cause_to_wit).collect(),
        retry_after_seconds: e.retry_after_seconds,
    }
}

pub(crate) fn api_resource_to_wit(r: m::ApiResource) -> k::ApiResource {
    k::ApiResource {
        group: r.group,
        version: r.version,
        kind: r.kind,
        plural: r.plural,
        namespaced: r.namespaced,
    }
}

pub(crate) fn patch_type_from_wit(p: t::PatchType) -> m::PatchType {
    match p {
        t::PatchType::JsonMerge => m::PatchType::JsonMerge,
        t::PatchType::StrategicMerge => m::PatchType::StrategicMerge,
        t::PatchType::Apply => m::PatchType::Apply,
        t::PatchType::JsonPatch => m::PatchType::JsonPatch,
    }
}

fn propagation_from_wit(p: t::PropagationPolicy) -> m::PropagationPolicy {
    match p {
        t::PropagationPolicy::Background => m::PropagationPolicy::Background,
        t::PropagationPolicy::Foreground => m::PropagationPolicy::Foreground,
        t::PropagationPolicy::Orphan => m::PropagationPolicy::Orphan,
    }
}

fn propagation_to_wit(p: m::PropagationPolicy) -> t::PropagationPolicy {
    match p {
        m::PropagationPolicy::Background => t::PropagationPolicy::Background,
        m::PropagationPolicy::Foreground => t::PropagationPolicy::Foreground,
        m::PropagationPolicy::Orphan => t::PropagationPolicy::Orphan,
    }
}

pub(crate) fn delete_options_from_wit(o: k::DeleteOptions) -> m::DeleteOptions {
    m::DeleteOptions {
        dry_run: o.dry_run,
        propagation_policy: o.propagation_policy.map(propagation_from_wit),
        preconditions: o.preconditions.map(|p| m::Preconditions {
            uid: p.uid,
            resource_version: p.resource_version,
        }),
        grace_period_seconds: o.grace_period_seconds,
    }
}

pub(crate) fn event_type_to_wit(e: m::EventType) -> k::EventType {
    match e {
        m::EventType::Added => k::EventType::Added,
        m::EventType::Modified => k::EventType::Modified,
        m::EventType::Deleted => k::EventType::Deleted,
        m::EventType::Bookmark => k::EventType::Bookmark,
    }
}

pub(crate) fn log_level_from_wit(l: hs::LogLevel) -> m::LogLevel {
    match l {
        hs::LogLevel::Trace => m::LogLevel::Trace,
        hs::LogLevel::Debug => m::LogLevel::Debug,
        hs::LogLevel::Info => m::LogLevel::Info,
        hs::LogLevel::Warn => m::LogLevel::Warn,
        hs::LogLevel::Error => m::LogLevel::Error,
    }
}

pub(crate) fn health_from_wit(h: t::Health) -> m::Health {
    m::Health {
        state: match h.state {
            t::HealthState::NotFound => m::HealthState::NotFound,
            t::HealthState::Terminating => m::HealthState::Terminating,
            t::HealthState::InProgress => m::HealthState::InProgress,
            t::HealthState::Current => m::HealthState::Current,
            t::HealthState::Failed => m::HealthState::Failed,
            t::HealthState::Unknown => m::HealthState::Unknown,
        },
        reason: h.reason,
        message: h.message,
    }
}

pub(crate) fn status_from_wit(s: t::Status) -> m::Status {
    use m::StatusCode as M;
    use t::StatusCode as T;
    m::Status {
        kind: match s.kind {
            t::StatusKind::Error => m::StatusKind::Error,
            t::StatusKind::Warning => m::StatusKind::Warning,
            t::StatusKind::Info => m::StatusKind::Info,
        },
        code: match s.code {
            T::Unknown => M::Unknown,
            T::Unavailable => M::Unavailable,
            T::Unimplemented => M::Unimplemented,
            T::Canceled => M::Canceled,
            T::InvalidArgument => M::InvalidArgument,
            T::NotFound => M::NotFound,
            T::AlreadyExists => M::AlreadyExists,
            T::PermissionDenied => M::PermissionDenied,
            T::Internal => M::Internal,
            T::Unauthenticated => M::Unauthenticated,
            T::IllegalManifest => M::IllegalManifest,
            T::Conflict => M::Conflict,
            T::FieldConflict => M::FieldConflict,
            T::ImmutableField => M::ImmutableField,
            T::Throttled => M::Throttled,
            T::KindNotInstalled => M::KindNotInstalled,
            T::Timeout => M::Timeout,
            T::Invalid => M::Invalid,
            T::BadRequest => M::BadRequest,
            T::NamespaceTerminating => M::NamespaceTerminating,
            T::Unsupported => M::Unsupported,
            T::TooLarge => M::TooLarge,
            T::ServerError => M::ServerError,
            T::Unreachable => M::Unreachable,
            T::LimitExceeded => M::LimitExceeded,
        },
        reason: s.reason,
        message: s.message,
        retryable: s.retryable,
        causes: s.causes.into_iter().map(cause_from_wit).collect(),
        retry_after_ms: s.retry_after_ms,
    }
}

pub(crate) fn resource_to_wit(r: &m::Resource) -> t::Resource {
    t::Resource {
        id: r.id.clone(),
        type_: r.type_.clone(),
        attributes: r.attributes.to_string(),
        depends_on: r.depends_on.clone(),
        extensions: if r.extensions.is_null() {
            "{}".to_string()
        } else {
            r.extensions.to_string()
        },
    }
}

/// Parses a resource coming back from the guest; its JSON was produced by the
/// guest, so a parse failure is reported, not trusted.
pub(crate) fn resource_from_wit(r: t::Resource) -> Result<m::Resource, String> {
    let attributes = serde_json::from_str(&r.attributes)
        .map_err(|e| format!("guest returned invalid attributes JSON for {}: {e}", r.id))?;
    let extensions = serde_json::from_str(&r.extensions)
        .map_err(|e| format!("guest returned invalid extensions JSON for {}: {e}", r.id))?;
    Ok(m::Resource {
        id: r.id,
        type_: r.type_,
        attributes,
        depends_on: r.depends_on,
        extensions,
    })
}

pub(crate) fn apply_options_to_wit(o: &m::ApplyOptions) -> rt::ApplyOptions {
    rt::ApplyOptions {
        dry_run: o.dry_run,
        mode: match o.mode {
            m::ApplyMode::ServerSide => rt::ApplyMode::ServerSide,
            m::ApplyMode::ClientSideThreeWay => rt::ApplyMode::ClientSideThreeWay,
        },
        field_manager: o.field_manager.clone(),
        force: o.force,
        replace_on_immutable: o.replace_on_immutable,
        default_namespace: o.default_namespace.clone(),
        offline: o.offline,
        ignore_paths: o.ignore_paths.clone(),
    }
}

pub(crate) fn action_from_wit(a: rt::Action) -> m::Action {
    match a {
        rt::Action::Create => m::Action::Create,
        rt::Action::Update => m::Action::Update,
        rt::Action::Unchanged => m::Action::Unchanged,
        rt::Action::Delete => m::Action::Delete,
        rt::Action::Replace => m::Action::Replace,
    }
}

pub(crate) fn delete_request_to_wit(o: &m::DeleteRequest) -> rt::DeleteOptions {
    rt::DeleteOptions {
        dry_run: o.dry_run,
        propagation_policy: o.propagation_policy.map(propagation_to_wit),
        default_namespace: o.default_namespace.clone(),
    }
}

pub(crate) fn diff_from_wit(d: l::ObjectDiff) -> m::ObjectDiff {
    m::ObjectDiff {
        changes: d
            .changes
            .into_iter()
            .map(|c| m::FieldChange {
                path: c.path,
                before: c.before,
                after: c.after,
            })
            .collect(),
        unified: d.unified,
    }
}
