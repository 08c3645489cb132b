//! Turning what went wrong in a guest call into a [`Status`] that names the
//! link (`who`: the runtime component or a middleware), the limit or fault and
//! the export: traps, limit hits, the wall-clock deadline, oversized responses
//! and results that are not valid resources.

use crate::bindings::types as t;
use crate::convert::{check_json, invalid_json, resource_from_wit};
use crate::state::{HostState, LimitHit};
use krt_guest::model::{Resource, Status, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;
use wasmtime::Trap;

/// A failed guest call (trap, limit hit or host error) as a status.
pub(crate) fn classify(
    who: &str,
    export: &str,
    err: &wasmtime::Error,
    state: &HostState,
) -> Status {
    if let Some(LimitHit::Deadline(timeout)) = state.limit_hit() {
        return deadline(who, export, timeout, state);
    }
    let text = format!("{err:#}");
    let stderr = state.stderr();
    let (code, reason, what) = match (state.limit_hit(), err.downcast_ref::<Trap>()) {
        (Some(hit), _) => (
            StatusCode::LimitExceeded,
            limit_reason(hit),
            format!("hit {hit}"),
        ),
        (None, Some(Trap::StackOverflow)) => (
            StatusCode::LimitExceeded,
            "GuestStackOverflow",
            "overflowed its stack".into(),
        ),
        (None, Some(Trap::OutOfFuel)) => (
            StatusCode::LimitExceeded,
            "GuestOutOfFuel",
            "ran out of fuel".into(),
        ),
        (None, Some(Trap::UnreachableCodeReached)) if !stderr.is_empty() => {
            (StatusCode::Internal, "GuestPanic", "panicked".into())
        }
        (None, Some(_)) => (StatusCode::Internal, "GuestTrap", "trapped".into()),
        (None, None) => (StatusCode::Internal, "GuestFailure", "failed".into()),
    };
    let mut message = format!("{who} {what} in {export}: {text}");
    if !stderr.is_empty() {
        message.push_str("; guest stderr: ");
        message.push_str(&stderr);
    }
    Status::error(code, reason, message)
}

fn limit_reason(hit: LimitHit) -> &'static str {
    match hit {
        LimitHit::Memory(_) => "GuestMemoryLimit",
        LimitHit::Table(_) => "GuestTableLimit",
        LimitHit::Cpu(_) => "GuestCpuLimit",
        LimitHit::HostCalls(_) => "GuestHostCallLimit",
        LimitHit::Output(_) => "GuestOutputLimit",
        LimitHit::Deadline(_) => "CallTimeout",
    }
}

/// The wall-clock deadline passed (the guest may have been blocked in a host call).
pub(crate) fn deadline(who: &str, export: &str, timeout: Duration, state: &HostState) -> Status {
    Status {
        retryable: true,
        ..Status::error(
            StatusCode::Timeout,
            "CallTimeout",
            format!(
                "{export} of {who} did not finish within its wall-clock limit of {timeout:?} \
                 ({:?} of guest execution, {:?} in {} host calls)",
                state.krt.guest_time(),
                state.krt.host_time,
                state.krt.host_calls
            ),
        )
    }
}

/// The guest returned more than `limit` bytes.
pub(crate) fn too_large(who: &str, export: &str, size: usize, limit: usize) -> Status {
    Status::error(
        StatusCode::LimitExceeded,
        "GuestResponseLimit",
        format!("{who} returned {size} bytes from {export}, more than its limit of {limit} bytes"),
    )
}

/// A result that is not what the contract promises.
pub(crate) fn invalid_result(who: &str, export: &str, problem: impl std::fmt::Display) -> Status {
    Status::error(
        StatusCode::Internal,
        "GuestInvalidResult",
        format!("{who} returned an invalid result from {export}: {problem}"),
    )
}

/// A returned resource, checked: JSON attributes that form a Kubernetes object.
pub(crate) fn returned_resource(
    who: &str,
    export: &str,
    r: t::Resource,
) -> Result<Resource, Status> {
    let resource = resource_from_wit(r).map_err(|e| invalid_result(who, export, e))?;
    let a = &resource.attributes;
    let text = |field: &str| a[field].as_str().is_some_and(|s| !s.is_empty());
    if !a.is_object() || !text("apiVersion") || !text("kind") {
        return Err(not_an_object(who, export, &resource.id));
    }
    Ok(resource)
}

/// A returned resource checked as [`returned_resource`] checks it, without
/// building its values: for an answer that goes on as it is.
pub(crate) fn check_returned_resource(
    who: &str,
    export: &str,
    r: &t::Resource,
) -> Result<(), Status> {
    let invalid = |e| invalid_result(who, export, e);
    let is_object = if r.attributes.trim_start().starts_with('{') {
        match serde_json::from_str::<Head>(&r.attributes) {
            Ok(head) => head.is_kubernetes_object(),
            Err(e) if e.is_data() => false,
            Err(e) => return Err(invalid(invalid_json(r, "attributes", e))),
        }
    } else {
        check_json(r, "attributes", &r.attributes).map_err(invalid)?;
        false
    };
    if !is_object {
        return Err(not_an_object(who, export, &r.id));
    }
    check_json(r, "extensions", &r.extensions).map_err(invalid)
}

/// The fields of a JSON object that make it a Kubernetes object; the others
/// are checked as JSON and skipped.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "apiVersion")]
    api_version: Option<Value>,
    kind: Option<Value>,
}

impl Head {
    /// Whether `apiVersion` and `kind` are both text, not empty.
    fn is_kubernetes_object(&self) -> bool {
        let text = |v: &Option<Value>| {
            v.as_ref()
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        };
        text(&self.api_version) && text(&self.kind)
    }
}

fn not_an_object(who: &str, export: &str, id: &str) -> Status {
    invalid_result(
        who,
        export,
        format!("resource {id} is not a Kubernetes object (attributes need apiVersion and kind)"),
    )
}

/// Bytes of a returned resource.
pub(crate) fn resource_size(r: &t::Resource) -> usize {
    r.id.len()
        + r.type_.len()
        + r.attributes.len()
        + r.extensions.len()
        + r.depends_on.iter().map(String::len).sum::<usize>()
}

/// Bytes of a returned status.
pub(crate) fn status_size(s: &t::Status) -> usize {
    s.reason.len()
        + s.message.len()
        + s.causes
            .iter()
            .map(|c| c.field.len() + c.reason.len() + c.message.len())
            .sum::<usize>()
}
