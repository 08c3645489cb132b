//! What decoding an object into kube-apiserver's Go types and encoding it back does to it:
//! resource quantities come back canonical (`1024Mi` → `1Gi`, see [`crate::quantity`]), a
//! Secret's `stringData` is folded into base64 `data`, and a malformed quantity, which cannot be
//! decoded at all, is a 400.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use crate::quantity::{self, QuantityError};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// Where a PodSpec sits in each kind that has one.
fn pod_spec_root(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Pod" => "spec",
        "Deployment"
        | "ReplicaSet"
        | "StatefulSet"
        | "DaemonSet"
        | "Job"
        | "ReplicationController" => "spec.template.spec",
        "PodTemplate" => "template.spec",
        "CronJob" => "spec.jobTemplate.spec.template.spec",
        _ => return None,
    })
}

/// `ResourceList` fields below a PodSpec (rounded up to milli-units as well).
const POD_SPEC_RESOURCE_LISTS: &[&str] = &[
    "containers[].resources.limits",
    "containers[].resources.requests",
    "initContainers[].resources.limits",
    "initContainers[].resources.requests",
    "ephemeralContainers[].resources.limits",
    "ephemeralContainers[].resources.requests",
    "resources.limits",
    "resources.requests",
    "overhead",
    "volumes[].ephemeral.volumeClaimTemplate.spec.resources.requests",
    "volumes[].ephemeral.volumeClaimTemplate.spec.resources.limits",
];

/// Single `Quantity` fields below a PodSpec.
const POD_SPEC_QUANTITIES: &[&str] = &["volumes[].emptyDir.sizeLimit"];

/// `ResourceList` fields of kinds without a PodSpec, or besides it.
fn resource_lists(kind: &str) -> &'static [&'static str] {
    match kind {
        "PersistentVolumeClaim" => &[
            "spec.resources.requests",
            "spec.resources.limits",
            "status.capacity",
            "status.allocatedResources",
        ],
        "StatefulSet" => &[
            "spec.volumeClaimTemplates[].spec.resources.requests",
            "spec.volumeClaimTemplates[].spec.resources.limits",
        ],
        "PersistentVolume" => &["spec.capacity"],
        "ResourceQuota" => &["spec.hard", "status.hard", "status.used"],
        "LimitRange" => &[
            "spec.limits[].max",
            "spec.limits[].min",
            "spec.limits[].default",
            "spec.limits[].defaultRequest",
            "spec.limits[].maxLimitRequestRatio",
        ],
        "Node" => &["status.capacity", "status.allocatable"],
        _ => &[],
    }
}

/// Single `Quantity` fields of kinds without a PodSpec.
fn quantities(kind: &str) -> &'static [&'static str] {
    match kind {
        "HorizontalPodAutoscaler" => &[
            "spec.metrics[].resource.target.value",
            "spec.metrics[].resource.target.averageValue",
            "spec.metrics[].pods.target.value",
            "spec.metrics[].pods.target.averageValue",
            "spec.metrics[].object.target.value",
            "spec.metrics[].object.target.averageValue",
            "spec.metrics[].external.target.value",
            "spec.metrics[].external.target.averageValue",
            "spec.metrics[].containerResource.target.value",
            "spec.metrics[].containerResource.target.averageValue",
        ],
        _ => &[],
    }
}

/// Calls `f` on every value at `path` below `node` (`a.b`; `a[]` walks each item of list `a`).
fn each_at(
    node: &mut Value,
    path: &str,
    f: &mut dyn FnMut(&mut Value) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let (head, rest) = path.split_once('.').unwrap_or((path, ""));
    let children: Vec<&mut Value> = match head.strip_suffix("[]") {
        Some(list) => match node.get_mut(list).and_then(Value::as_array_mut) {
            Some(items) => items.iter_mut().collect(),
            None => Vec::new(),
        },
        None => node.get_mut(head).into_iter().collect(),
    };
    for child in children {
        if rest.is_empty() {
            if !child.is_null() {
                f(child)?;
            }
        } else {
            each_at(child, rest, f)?;
        }
    }
    Ok(())
}

/// An error as the decoder reports it: `<Kind> in version "<v>" cannot be handled as a <Kind>: …`.
fn undecodable(rt: &ResourceType, why: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: {why}",
        kind = rt.kind,
        version = rt.version,
    ))
}

fn canonical_quantity(rt: &ResourceType, value: &mut Value, milli: bool) -> Result<(), ApiError> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err(undecodable(rt, QuantityError::Format)),
    };
    let canonical = quantity::canonical(text.trim(), milli).map_err(|e| undecodable(rt, e))?;
    *value = Value::String(canonical);
    Ok(())
}

fn canonical_quantities(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    let mut lists: Vec<String> = resource_lists(&rt.kind)
        .iter()
        .map(|p| p.to_string())
        .collect();
    let mut singles: Vec<String> = quantities(&rt.kind).iter().map(|p| p.to_string()).collect();
    if let Some(root) = pod_spec_root(&rt.kind) {
        lists.extend(
            POD_SPEC_RESOURCE_LISTS
                .iter()
                .map(|p| format!("{root}.{p}")),
        );
        singles.extend(POD_SPEC_QUANTITIES.iter().map(|p| format!("{root}.{p}")));
    }
    for path in &lists {
        each_at(object, path, &mut |list| {
            for value in list.as_object_mut().into_iter().flat_map(Map::values_mut) {
                canonical_quantity(rt, value, true)?;
            }
            Ok(())
        })?;
    }
    for path in &singles {
        each_at(object, path, &mut |value| {
            canonical_quantity(rt, value, false)
        })?;
    }
    Ok(())
}

/// Folds `stringData` into `data` (its keys win), as the conversion of a v1 Secret does (`data`
/// that is not base64 was refused by decoding).
fn secret(object: &mut Value) {
    let Some(Value::Object(string_data)) =
        object.as_object_mut().and_then(|o| o.remove("stringData"))
    else {
        return;
    };
    if !object["data"].is_object() {
        object["data"] = Value::Object(Map::new());
    }
    for (key, value) in string_data {
        let text = value.as_str().unwrap_or_default();
        object["data"][key] = Value::String(STANDARD.encode(text));
    }
}

/// Puts `object` of type `rt` in the form kube-apiserver stores it.
///
/// # Errors
/// 400 BadRequest for what the API server cannot decode.
pub fn normalize(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    if rt.custom {
        return Ok(());
    }
    if rt.kind == "Secret" && rt.group.is_empty() {
        secret(object);
    }
    canonical_quantities(rt, object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtins;
    use serde_json::json;

    fn rt(kind: &str) -> ResourceType {
        builtins().into_iter().find(|t| t.kind == kind).unwrap()
    }

    #[test]
    fn quantities_in_templates_and_claims_are_stored_canonical() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "a",
            "resources": {"limits": {"memory": "1024Mi", "cpu": "1000m"}, "requests": {"cpu": 0.5}}}],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "2048Mi"}}]}}}});
        normalize(&rt("Deployment"), &mut d).unwrap();
        let c = &d["spec"]["template"]["spec"]["containers"][0]["resources"];
        assert_eq!(c["limits"], json!({"memory": "1Gi", "cpu": "1"}));
        assert_eq!(c["requests"]["cpu"], "500m");
        assert_eq!(
            d["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
            "2Gi"
        );
        let mut pvc = json!({"spec": {"resources": {"requests": {"storage": "1000Mi"}}}});
        normalize(&rt("PersistentVolumeClaim"), &mut pvc).unwrap();
        assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1000Mi");
        let mut bad = json!({"spec": {"resources": {"requests": {"storage": "lots"}}}});
        let err = normalize(&rt("PersistentVolumeClaim"), &mut bad).unwrap_err();
        assert_eq!(err.code, 400);
        assert!(err.message.starts_with("PersistentVolumeClaim in version \"v1\" cannot be handled as a PersistentVolumeClaim: quantities must match"), "{}", err.message);
    }

    #[test]
    fn secrets_fold_string_data() {
        let mut s =
            json!({"data": {"a": "YQ==", "b": "Yg=="}, "stringData": {"b": "bee", "c": "sea"}});
        normalize(&rt("Secret"), &mut s).unwrap();
        assert_eq!(s, json!({"data": {"a": "YQ==", "b": "YmVl", "c": "c2Vh"}}));
    }
}
