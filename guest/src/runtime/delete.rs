//! `runtime.delete`: delete an object; one that is already gone is a success.
//! A foreground delete waits until the object is gone (delete-and-wait).

use super::soften_kind_not_installed;
use crate::cluster::{Cluster, HostServices};
use crate::errors::{self, Operation};
use crate::model::{
    DeleteOptions, DeleteRequest, DeleteResponse, PropagationPolicy, Resource, Status, StatusCode,
};
use crate::target::{Manifest, Target};
use serde_json::Value;

/// How long a foreground delete waits for the object to disappear.
pub const DELETE_WAIT_MS: u32 = 120_000;

/// Deletes the object of `resource`.
///
/// A missing object is a success; a kind the cluster does not serve is a
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
    let target = match Manifest::from_resource(resource)
        .and_then(|m| m.resolve(cluster, options.default_namespace.as_deref()))
    {
        Ok(target) => target,
        Err(status) => {
            return DeleteResponse {
                status: Some(soften_kind_not_installed(status).unwrap_or_else(|s| s)),
            };
        }
    };
    let status = delete_target(
        cluster,
        &target,
        options.dry_run,
        options.propagation_policy,
    )
    .and_then(|pending| match pending {
        Some(_) if options.propagation_policy == Some(PropagationPolicy::Foreground) => {
            wait_gone(cluster, host, &target, DELETE_WAIT_MS).map(|()| None)
        }
        pending => Ok(pending),
    });
    DeleteResponse {
        status: status.unwrap_or_else(Some),
    }
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

/// Sends the delete of a resolved target; `Ok(None)` when gone, `Ok(Some(info))`
/// when deletion is pending.
pub(super) fn delete_target<C: Cluster>(
    cluster: &C,
    target: &Target,
    dry_run: bool,
    propagation_policy: Option<PropagationPolicy>,
) -> Result<Option<Status>, Status> {
    let options = DeleteOptions {
        dry_run,
        propagation_policy,
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
        Err(e) if errors::is_not_found(&e) => Ok(None),
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
