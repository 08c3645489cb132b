//! `runtime.read`: the live object of the plan (or the prior), normalized.

use super::{result_resource, soften_kind_not_installed};
use crate::cluster::Cluster;
use crate::errors::{self, Operation};
use crate::model::{ReadOptions, ReadResponse, Resource};
use crate::target::Manifest;

/// Reads the live object of `plan`, or of `prior` when there is no plan.
///
/// A missing object is `resource: None` with no status; a kind the cluster does
/// not serve is `None` with a `kind-not-installed` warning.
pub fn read<C: Cluster>(
    cluster: &C,
    prior: Option<&Resource>,
    plan: Option<&Resource>,
    options: &ReadOptions,
) -> ReadResponse {
    let Some(request) = plan.or(prior) else {
        return failure(errors::invalid_argument(
            "read needs a plan or a prior resource; both are empty",
        ));
    };
    let manifest = match Manifest::from_resource(request) {
        Ok(m) => m,
        Err(status) => return failure(status),
    };
    let target = match manifest.resolve(cluster, options.default_namespace.as_deref()) {
        Ok(t) => t,
        Err(status) => {
            return match soften_kind_not_installed(status) {
                Ok(warning) => ReadResponse {
                    resource: None,
                    status: Some(warning),
                },
                Err(status) => failure(status),
            };
        }
    };
    match cluster.get_result(&target.api, target.namespace.as_deref(), &target.name) {
        Ok(live) => ReadResponse {
            resource: live.map(|attributes| result_resource(request, attributes)),
            status: None,
        },
        Err(e) if errors::is_not_found(&e) => ReadResponse {
            resource: None,
            status: None,
        },
        Err(e) => failure(errors::map_api_error(&e, &target.subject, Operation::Get)),
    }
}

fn failure(status: crate::model::Status) -> ReadResponse {
    ReadResponse {
        resource: None,
        status: Some(status),
    }
}
