//! kube-apiserver's validating admission that reads other objects: a PodGroup is created only
//! when the Workload it names is there, not being deleted, and holds the template it names
//! (the `PodGroupWorkloadExists` plugin).

use serde_json::Value;

use crate::rbac::forbidden_error;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::store::{Key, State};

/// Refuses the creation of `object` (`live` is `None`) as kube-apiserver's admission does.
pub fn validate(
    state: &State,
    rt: &ResourceType,
    live: Option<&Value>,
    object: &Value,
) -> Result<(), ApiError> {
    if live.is_some()
        || rt.custom
        || (rt.group.as_str(), rt.kind.as_str()) != ("scheduling.k8s.io", "PodGroup")
    {
        return Ok(());
    }
    let reference = &object["spec"]["podGroupTemplateRef"]["workload"];
    let Some(workload_name) = reference["workloadName"].as_str() else {
        return Ok(());
    };
    let template = reference["podGroupTemplateName"]
        .as_str()
        .unwrap_or_default();
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let rejected = |cause: String| {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        Err(forbidden_error(
            &rt.group,
            &rt.plural,
            name,
            format!("PodGroup rejected: {cause}"),
        ))
    };
    let key = Key::of("scheduling.k8s.io", "workloads", namespace, workload_name);
    let Some(workload) = state.get(&key) else {
        return rejected(format!("Workload {workload_name:?} not found"));
    };
    if !workload["metadata"]["deletionTimestamp"].is_null() {
        return rejected(format!("Workload {workload_name:?} is being deleted"));
    }
    let templates = workload["spec"]["podGroupTemplates"].as_array();
    if templates
        .into_iter()
        .flatten()
        .any(|t| t["name"] == template)
    {
        return Ok(());
    }
    rejected(format!(
        "PodGroupTemplate {template:?} not found in Workload {workload_name:?}"
    ))
}
