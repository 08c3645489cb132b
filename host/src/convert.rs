//! Conversions between the generated WIT types and the guest library's model
//! types, which the host uses as its Rust API: for the imports, for the
//! `runtime`, `logic` and `observed-apply` exports, and for a middleware's `runtime` import
//! (the next link: its requests come in, its answers go out).

use crate::bindings::{
    host_services as hs, kubernetes as k, logic as l, next as n, observed as o, runtime as rt,
    types as t,
};
use krt_guest::model as m;
use serde::de::IgnoredAny;

/// Maps between two enums with the same variant names.
macro_rules! map_enum {
    ($value:expr, $fm:ident::$ft:ident => $tm:ident::$tt:ident { $($variant:ident),* $(,)? }) => {
        match $value { $($fm::$ft::$variant => $tm::$tt::$variant,)* }
    };
}

/// One variant list for the conversions of `StatusCode` both ways.
macro_rules! status_codes {
    ($value:expr, $fm:ident::$ft:ident => $tm:ident::$tt:ident) => {
        map_enum!($value, $fm::$ft => $tm::$tt {
            Unknown, Unavailable, Unimplemented, Canceled, InvalidArgument, NotFound,
            AlreadyExists, PermissionDenied, Internal, Unauthenticated, IllegalManifest,
            Conflict, FieldConflict, ImmutableField, Throttled, KindNotInstalled, Timeout,
            Invalid, BadRequest, NamespaceTerminating, Unsupported, TooLarge, ServerError,
            Unreachable, LimitExceeded,
        })
    };
}

/// One variant list for the conversions of `HealthState` both ways.
macro_rules! health_states {
    ($value:expr, $fm:ident::$ft:ident => $tm:ident::$tt:ident) => {
        map_enum!($value, $fm::$ft => $tm::$tt { NotFound, Terminating, InProgress, Current, Failed, Unknown })
    };
}

/// One variant list for the conversions of `StatusKind` both ways.
macro_rules! status_kinds {
    ($value:expr, $fm:ident::$ft:ident => $tm:ident::$tt:ident) => {
        map_enum!($value, $fm::$ft => $tm::$tt { Error, Warning, Info })
    };
}

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
        state: health_states!(h.state, t::HealthState => m::HealthState),
        reason: h.reason,
        message: h.message,
    }
}

pub(crate) fn health_to_wit(h: m::Health) -> t::Health {
    t::Health {
        state: health_states!(h.state, m::HealthState => t::HealthState),
        reason: h.reason,
        message: h.message,
    }
}

pub(crate) fn status_from_wit(s: t::Status) -> m::Status {
    m::Status {
        kind: status_kinds!(s.kind, t::StatusKind => m::StatusKind),
        code: status_codes!(s.code, t::StatusCode => m::StatusCode),
        reason: s.reason,
        message: s.message,
        retryable: s.retryable,
        causes: s.causes.into_iter().map(cause_from_wit).collect(),
        retry_after_ms: s.retry_after_ms,
    }
}

pub(crate) fn status_to_wit(s: m::Status) -> t::Status {
    t::Status {
        kind: status_kinds!(s.kind, m::StatusKind => t::StatusKind),
        code: status_codes!(s.code, m::StatusCode => t::StatusCode),
        reason: s.reason,
        message: s.message,
        retryable: s.retryable,
        causes: s.causes.into_iter().map(cause_to_wit).collect(),
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
    let attributes =
        serde_json::from_str(&r.attributes).map_err(|e| invalid_json(&r, "attributes", e))?;
    let extensions =
        serde_json::from_str(&r.extensions).map_err(|e| invalid_json(&r, "extensions", e))?;
    Ok(m::Resource {
        id: r.id,
        type_: r.type_,
        attributes,
        depends_on: r.depends_on,
        extensions,
    })
}

/// Checks that a resource a guest handed over is JSON where
/// [`resource_from_wit`] needs it, without building its values: what passes
/// here converts there.
pub(crate) fn check_resource(r: &t::Resource) -> Result<(), String> {
    check_json(r, "attributes", &r.attributes)?;
    check_json(r, "extensions", &r.extensions)
}

/// Checks that `field` of resource `r` is JSON, without building its value.
pub(crate) fn check_json(r: &t::Resource, field: &str, text: &str) -> Result<(), String> {
    serde_json::from_str::<IgnoredAny>(text)
        .map(drop)
        .map_err(|e| invalid_json(r, field, e))
}

/// Why `field` of resource `r` does not convert.
pub(crate) fn invalid_json(r: &t::Resource, field: &str, e: serde_json::Error) -> String {
    format!("guest returned invalid {field} JSON for {}: {e}", r.id)
}

pub(crate) fn apply_options_to_wit(o: &m::ApplyOptions) -> rt::ApplyOptions {
    rt::ApplyOptions {
        dry_run: o.dry_run,
        mode: map_enum!(o.mode, m::ApplyMode => rt::ApplyMode { ServerSide, ClientSideThreeWay }),
        field_manager: o.field_manager.clone(),
        force: o.force,
        replace_on_immutable: o.replace_on_immutable,
        default_namespace: o.default_namespace.clone(),
        offline: o.offline,
        ignore_paths: o.ignore_paths.clone(),
    }
}

pub(crate) fn action_from_wit(a: rt::Action) -> m::Action {
    map_enum!(a, rt::Action => m::Action { Create, Update, Unchanged, Delete, Replace })
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

// ---- the next link: what a middleware hands on, and the answer it gets ----
//
// The import's types and the export's are generated apart with the same
// fields: these move each field across, and convert no JSON.

pub(crate) fn apply_options_from_next(o: n::ApplyOptions) -> rt::ApplyOptions {
    rt::ApplyOptions {
        dry_run: o.dry_run,
        mode: map_enum!(o.mode, n::ApplyMode => rt::ApplyMode { ServerSide, ClientSideThreeWay }),
        field_manager: o.field_manager,
        force: o.force,
        replace_on_immutable: o.replace_on_immutable,
        default_namespace: o.default_namespace,
        offline: o.offline,
        ignore_paths: o.ignore_paths,
    }
}

pub(crate) fn read_options_from_next(o: n::ReadOptions) -> rt::ReadOptions {
    rt::ReadOptions {
        default_namespace: o.default_namespace,
    }
}

pub(crate) fn delete_options_from_next(o: n::DeleteOptions) -> rt::DeleteOptions {
    rt::DeleteOptions {
        dry_run: o.dry_run,
        propagation_policy: o.propagation_policy,
        default_namespace: o.default_namespace,
    }
}

pub(crate) fn watch_options_from_next(o: n::WatchOptions) -> rt::WatchOptions {
    rt::WatchOptions {
        timeout_ms: o.timeout_ms,
        default_namespace: o.default_namespace,
    }
}

pub(crate) fn apply_answer_to_next(r: rt::ApplyResponse) -> n::ApplyResponse {
    n::ApplyResponse {
        resource: r.resource,
        live: r.live,
        action: map_enum!(r.action, rt::Action => n::Action { Create, Update, Unchanged, Delete, Replace }),
        status: r.status,
        retries: r.retries,
    }
}

pub(crate) fn read_answer_to_next(r: rt::ReadResponse) -> n::ReadResponse {
    n::ReadResponse {
        resource: r.resource,
        status: r.status,
    }
}

pub(crate) fn watch_answer_to_next(r: rt::WatchResponse) -> n::WatchResponse {
    n::WatchResponse {
        resource: r.resource,
        health: r.health,
        status: r.status,
    }
}

/// A model answer (a failure the host made) as the next link's answer.
pub(crate) fn apply_response_to_next(r: m::ApplyResponse) -> n::ApplyResponse {
    n::ApplyResponse {
        resource: r.resource.as_ref().map(resource_to_wit),
        live: r.live.map(|live| live.to_string()),
        action: map_enum!(r.action, m::Action => n::Action { Create, Update, Unchanged, Delete, Replace }),
        status: r.status.map(status_to_wit),
        retries: r.retries,
    }
}

/// A model answer (a failure the host made) as the next link's answer.
pub(crate) fn read_response_to_next(r: m::ReadResponse) -> n::ReadResponse {
    n::ReadResponse {
        resource: r.resource.as_ref().map(resource_to_wit),
        status: r.status.map(status_to_wit),
    }
}

/// A model answer (a failure the host made) as the next link's answer.
pub(crate) fn watch_response_to_next(r: m::WatchResponse) -> n::WatchResponse {
    n::WatchResponse {
        resource: r.resource.as_ref().map(resource_to_wit),
        health: health_to_wit(r.health),
        status: r.status.map(status_to_wit),
    }
}

pub(crate) fn observation_to_wit(observation: &m::Observation) -> o::Observation {
    match observation {
        m::Observation::Absent => o::Observation::Absent,
        m::Observation::Seen(text) => o::Observation::Seen(text.clone()),
    }
}

pub(crate) fn observation_from_wit(observation: o::Observation) -> m::Observation {
    match observation {
        o::Observation::Absent => m::Observation::Absent,
        o::Observation::Seen(text) => m::Observation::Seen(text),
    }
}
