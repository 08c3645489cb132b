//! Kusion's `Runtime` contract for Kubernetes: apply, read, delete and watch,
//! generic over the cluster and host services they reach.

mod apply;
mod children;
mod delete;
mod immutable;
mod last_applied;
mod read;
mod watch;

pub use apply::{LAST_APPLIED_ONLY, apply, apply_observed};
pub use delete::{ALREADY_GONE, DELETE_WAIT_MS, UID_MISMATCH, delete};
pub use read::read;
pub use watch::watch;

use crate::cluster::{Cluster, HostServices};
use crate::model::{Progress, Resource, Status, StatusCode};
use crate::target::{Manifest, Target};
use serde_json::Value;

/// The field manager used when the caller names none.
pub const DEFAULT_FIELD_MANAGER: &str = "krt";

/// How many times a write is retried after an optimistic-concurrency conflict (M11).
pub const MAX_CONFLICT_RETRIES: u32 = 5;

/// Back-off before each new attempt to resolve a kind the cluster does not serve
/// (E3: its CRD may be arriving); the host re-runs discovery on every attempt.
const KIND_RETRY_DELAYS_MS: [u32; 3] = [500, 1000, 2000];

/// Resolves the manifest's kind, retrying `kind-not-installed` with back-off
/// ([`KIND_RETRY_DELAYS_MS`]) before failing with it.
fn resolve_patiently<C: Cluster, H: HostServices>(
    cluster: &C,
    host: &H,
    id: &str,
    manifest: &Manifest,
    default_namespace: Option<&str>,
) -> Result<Target, Status> {
    let mut retries = 0;
    loop {
        match manifest.resolve(cluster, default_namespace) {
            Err(mut status) if status.code == StatusCode::KindNotInstalled => {
                let Some(&delay) = KIND_RETRY_DELAYS_MS.get(retries) else {
                    status.message = format!("{} (retried {retries} times)", status.message);
                    return Err(status);
                };
                retries += 1;
                host.progress(&Progress {
                    id: id.to_owned(),
                    phase: "retrying".into(),
                    message: format!(
                        "{}; retry {retries}/{} in {delay} ms",
                        status.message,
                        KIND_RETRY_DELAYS_MS.len()
                    ),
                    health: None,
                });
                host.sleep(delay);
            }
            other => return other,
        }
    }
}

/// The resource answered for `request`: its `attributes` already normalized, its id, type,
/// dependsOn and extensions copied from the request.
fn result_resource(request: &Resource, attributes: Value) -> Resource {
    Resource {
        id: request.id.clone(),
        type_: request.type_.clone(),
        attributes,
        depends_on: request.depends_on.clone(),
        extensions: request.extensions.clone(),
    }
}

/// The current wall-clock time in Unix seconds, for health rules that age.
pub fn now_unix_secs() -> Option<i64> {
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
