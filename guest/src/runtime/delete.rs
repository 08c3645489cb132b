//! `runtime.delete`: delete an object; one that is already gone is a success.

use super::soften_kind_not_installed;
use crate::cluster::Cluster;
use crate::errors::{self, Operation};
use crate::model::{
    DeleteOptions, DeleteRequest, DeleteResponse, PropagationPolicy, Resource, Status, StatusCode,
};
use crate::target::{Manifest, Target};
use serde_json::Value;

/// Deletes the object of `resource`.
///
/// A missing object is a success; a kind the cluster does not serve is a
/// success with a `kind-not-installed` warning; an object that still exists
/// after the call (finalizers, graceful deletion) is a success with an `info`
/// status naming the pending finalizers.
pub fn delete<C: Cluster>(
    cluster: &C,
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
    );
    DeleteResponse {
        status: status.unwrap_or_else(Some),
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
