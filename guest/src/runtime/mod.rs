//! Kusion's `Runtime` contract for Kubernetes: apply, read, delete and watch,
//! generic over the cluster and host services they reach.

mod apply;
mod delete;
mod immutable;
pub mod patch;
mod read;
mod watch;

pub use apply::apply;
pub use delete::delete;
pub use read::read;
pub use watch::watch;

use crate::model::{Resource, Status, StatusCode};
use crate::normalize;
use serde_json::Value;

/// The field manager used when the caller names none.
pub const DEFAULT_FIELD_MANAGER: &str = "krt";

/// How many times a write is retried after an optimistic-concurrency conflict (M11).
pub const MAX_CONFLICT_RETRIES: u32 = 5;

/// The resource to return: `object` normalized, with id, type, dependsOn and
/// extensions copied from the request.
fn result_resource(request: &Resource, object: &Value) -> Resource {
    Resource {
        id: request.id.clone(),
        type_: request.type_.clone(),
        attributes: normalize::normalize(object),
        depends_on: request.depends_on.clone(),
        extensions: request.extensions.clone(),
    }
}

/// The current wall-clock time in Unix seconds, for health rules that age.
pub(crate) fn now_unix_secs() -> Option<i64> {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_secs()).ok())
}

/// Turns a "kind not served" error into a warning (read and delete tolerate it).
fn soften_kind_not_installed(status: Status) -> Result<Status, Status> {
    if status.code == StatusCode::KindNotInstalled {
        Ok(Status::warning(status.code, status.reason, status.message))
    } else {
        Err(status)
    }
}
