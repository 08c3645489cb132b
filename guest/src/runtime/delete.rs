//! `runtime.delete`: delete an object; one that is already gone is a success.
//! A foreground delete waits until the object is gone (delete-and-wait). A
//! resource that names its `metadata.uid` deletes only the object with that
//! UID (the DELETE carries it as a precondition).

use super::soften_kind_not_installed;
use crate::cluster::{Cluster, HostServices};
use crate::errors::{self, Operation};
use crate::model::{
    DeleteOptions, DeleteRequest, DeleteResponse, Preconditions, PropagationPolicy, Resource,
    Status, StatusCode,
};
use crate::target::Target;
use serde_json::Value;

/// How long a foreground delete waits for the object to disappear.
pub const DELETE_WAIT_MS: u32 = 120_000;

/// The reason of the `info` status (code `not-found`) of a delete whose
/// object was already gone: nothing was deleted.
pub const ALREADY_GONE: &str = "AlreadyGone";

/// The reason of the error (code `conflict`) of a delete whose resource names
/// a `metadata.uid` that the live object of that name does not have: it is
/// another object, and it was not deleted.
pub const UID_MISMATCH: &str = "UidMismatch";

/// Deletes the object of `resource`; when its attributes name a
/// `metadata.uid`, only the object with that UID.
///
/// A missing object is a success with an `info` status ([`ALREADY_GONE`]); a
/// live object with another UID is not deleted ([`UID_MISMATCH`]); a kind the cluster does not serve is a
/// success with a `kind-not-installed` warning. With propagation policy
/// `foreground` the call waits (up to [`DELETE_WAIT_MS`]) until the object and
/// its dependents are gone, and fails with `timeout` naming the finalizers that
/// still block it; otherwise an object that still exists after the call
/// (finalizers, graceful deletion) is a success with an `info` status naming
/// the pending finalizers.
pub fn delete<C: Cluster, H: HostServices>(
    cluster: &C,
    host: &H,
    resource: &Resource,
    options: &DeleteRequest,
) -> DeleteResponse {
    let target = match Target::of(resource, cluster, options.default_namespace.as_deref()) {
        Ok(target) => target,
        Err(status) => {
            return DeleteResponse {
                status: Some(soften_kind_not_installed(status).unwrap_or_else(|s| s)),
            };
        }
    };
    let uid = resource.attributes["metadata"]["uid"]
        .as_str()
        .map(str::to_owned);
    let deleted = delete_target(
        cluster,
        &target,
        options.dry_run,
        options.propagation_policy,
        uid,
    );
    let status = match deleted {
        Err(status) => Some(status),
        Ok(Some(pending))
            if pending.reason != ALREADY_GONE
                && options.propagation_policy == Some(PropagationPolicy::Foreground) =>
        {
            wait_gone(cluster, host, &target, DELETE_WAIT_MS).err()
        }
        Ok(note) => note,
    };
    DeleteResponse { status }
}

/// Polls (with back-off, 0.1 s doubling to 1 s) until the object is gone or
/// `limit_ms` of sleeping passed; then fails with `timeout` naming the pending
/// finalizers. Time is counted in requested sleeps, so a fake host's instant
/// sleeps keep tests fast and the host's clamp keeps the wait inside the call.
pub(super) fn wait_gone<C: Cluster, H: HostServices>(
    cluster: &C,
    host: &H,
    target: &Target,
    limit_ms: u32,
) -> Result<(), Status> {
    let mut waited = 0u32;
    let mut delay = 100u32;
    loop {
        let current = cluster
            .get(&target.api, target.namespace.as_deref(), &target.name)
            .map_err(|e| errors::map_api_error(&e, &target.subject, Operation::Get))?;
        let Some(current) = current else {
            return Ok(());
        };
        if waited >= limit_ms {
            let pending = finalizers(&current);
            return Err(Status {
                retryable: true,
                ..Status::error(
                    StatusCode::Timeout,
                    "DeletionTimeout",
                    format!(
                        "{} was deleted but still exists after {} s{}",
                        target.subject,
                        limit_ms / 1000,
                        if pending.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "; it is blocked by these finalizers: {}",
                                pending.join(", ")
                            )
                        }
                    ),
                )
            });
        }
        host.sleep(delay);
        waited = waited.saturating_add(delay);
        delay = (delay * 2).min(1000);
    }
}

/// Sends the delete of a resolved target (of the object with `uid`, when
/// given); `Ok(None)` when gone, `Ok(Some(info))` when deletion is pending or
/// (reason [`ALREADY_GONE`]) there was nothing to delete.
pub(super) fn delete_target<C: Cluster>(
    cluster: &C,
    target: &Target,
    dry_run: bool,
    propagation_policy: Option<PropagationPolicy>,
    uid: Option<String>,
) -> Result<Option<Status>, Status> {
    let options = DeleteOptions {
        dry_run,
        propagation_policy,
        preconditions: uid.clone().map(|uid| Preconditions {
            uid: Some(uid),
            resource_version: None,
        }),
        ..DeleteOptions::default()
    };
    match cluster.delete(
        &target.api,
        target.namespace.as_deref(),
        &target.name,
        &options,
    ) {
        Ok(Some(remaining)) if !dry_run => Ok(Some(pending(target, &remaining))),
        Ok(_) => Ok(None),
        Err(e) if errors::is_not_found(&e) => Ok(Some(errors::info(
            StatusCode::NotFound,
            ALREADY_GONE,
            format!("{} was already gone; nothing was deleted", target.subject),
        ))),
        Err(e) if e.code == 409 && uid.is_some() => Err(Status::error(
            StatusCode::Conflict,
            UID_MISMATCH,
            format!(
                "{} is another object than the one with UID {}; it was not deleted ({})",
                target.subject,
                uid.unwrap_or_default(),
                e.message
            ),
        )),
        Err(e) => Err(errors::map_api_error(
            &e,
            &target.subject,
            Operation::Delete,
        )),
    }
}

/// The finalizers listed in `metadata.finalizers`.
pub(super) fn finalizers(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn pending(target: &Target, remaining: &Value) -> Status {
    let finalizers = finalizers(remaining);
    if finalizers.is_empty() {
        errors::info(
            StatusCode::Unknown,
            "DeletionPending",
            format!(
                "{} is being deleted (graceful termination in progress)",
                target.subject
            ),
        )
    } else {
        errors::info(
            StatusCode::Unknown,
            "FinalizersPending",
            format!(
                "{} is being deleted; it stays until these finalizers are removed: {}",
                target.subject,
                finalizers.join(", ")
            ),
        )
    }
}
