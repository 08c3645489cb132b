//! The `scale` subresource of the workloads that serve one (`…/deployments/NAME/scale`): an
//! `autoscaling/v1` `Scale` read off the workload, and PUT or PATCH of it, which set the
//! workload's `spec.replicas` through the write pipeline (managedFields name the `scale`
//! subresource, as kube-apiserver records them).

use serde_json::{Value, json};

use super::read;
use super::target::Target;
use super::write::{self, WriteContext};
use crate::decode::Source;
use crate::kinds;
use crate::request::parse_body;
use crate::selectors;
use crate::status::{ApiError, Subject, cause};
use crate::store::Store;

/// The `Scale` of a workload object.
fn scale_of(object: &Value) -> Value {
    let meta = &object["metadata"];
    let mut metadata = json!({});
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta.get(field) {
            metadata[field] = v.clone();
        }
    }
    let selector = &object["spec"]["selector"];
    // A LabelSelector has matchLabels/matchExpressions; a ReplicationController's is a map.
    let selector =
        if selector.get("matchLabels").is_some() || selector.get("matchExpressions").is_some() {
            selectors::label_selector_string(selector)
        } else {
            selectors::label_selector_string(&json!({ "matchLabels": selector }))
        };
    let mut spec = json!({});
    if let Some(n) = object["spec"]["replicas"].as_i64().filter(|n| *n != 0) {
        spec["replicas"] = json!(n);
    }
    let mut status = json!({"replicas": object["status"]["replicas"].as_i64().unwrap_or(0)});
    if !selector.is_empty() {
        status["selector"] = Value::String(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    })
}

/// GET the workload's `Scale`.
pub fn get(store: &Store, target: &Target) -> Result<(u16, Value), ApiError> {
    let (code, object) = read::get(store, target)?;
    Ok((code, scale_of(&object)))
}

/// PUT a `Scale`: sets the workload's replicas.
pub fn update(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    body: &[u8],
) -> Result<(u16, Value), ApiError> {
    let scale = parse_body(body)?;
    let (_, live) = read::get(store, target)?;
    apply(store, target, ctx, &live, scale, Source::Update)
}

/// PATCH a `Scale` (JSON merge, strategic merge or JSON patch): sets the workload's replicas.
pub fn patch(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    content_type: &str,
    body: &[u8],
) -> Result<(u16, Value), ApiError> {
    let (_, live) = read::get(store, target)?;
    let mut scale = scale_of(&live);
    match content_type {
        // A Scale has no lists, so a strategic merge patch merges as a JSON merge patch does.
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            krt_guest::merge::json::apply(&mut scale, &parse_body(body)?);
        }
        "application/json-patch+json" => {
            write::apply_json_patch(&mut scale, body, |scale, ops| json_patch::patch(scale, ops))?;
        }
        other => return Err(ApiError::unsupported_media_type(other)),
    }
    // A patch is applied to the object as it is when written: the resourceVersion read here is
    // a precondition only when the patch itself sets one.
    if scale["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]
        && let Some(meta) = scale["metadata"].as_object_mut()
    {
        meta.remove("resourceVersion");
    }
    apply(store, target, ctx, &live, scale, Source::Patch)
}

/// Writes `scale`'s replicas to the workload `live`.
fn apply(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    live: &Value,
    mut scale: Value,
    source: Source,
) -> Result<(u16, Value), ApiError> {
    let name = target.name.as_deref().unwrap_or_default();
    if !scale.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON or YAML object",
        ));
    }
    for (field, want) in [("apiVersion", "autoscaling/v1"), ("kind", "Scale")] {
        match scale[field].as_str() {
            None | Some("") => scale[field] = json!(want),
            Some(got) if got == want => {}
            Some(got) => {
                return Err(ApiError::bad_request(format!(
                    "the {field} of the object ({got}) does not match the {field} of the request ({want})"
                )));
            }
        }
    }
    ctx.decoding
        .decode_as(&target.rt, &kinds::SCALE, &mut scale, source)?;
    if let Some(n) = scale["metadata"]["name"].as_str().filter(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        )));
    }
    let replicas = scale["spec"]["replicas"].as_i64().unwrap_or(0);
    if replicas < 0 {
        let subject = Subject {
            group: "autoscaling",
            resource: "scale",
            name,
        };
        return Err(ApiError::invalid(
            "Scale",
            &subject,
            vec![cause(
                "FieldValueInvalid",
                "spec.replicas",
                format!("Invalid value: {replicas}: must be greater than or equal to 0"),
            )],
        ));
    }
    let mut object = live.clone();
    object["spec"]["replicas"] = json!(replicas);
    // A Scale without a resourceVersion updates unconditionally, as the workloads' strategies
    // allow; one with a resourceVersion must name the live object's.
    match scale["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty())
    {
        Some(rv) => object["metadata"]["resourceVersion"] = json!(rv),
        None => {
            if let Some(meta) = object["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
            }
        }
    }
    let body = serde_json::to_vec(&object).unwrap_or_default();
    let (code, stored) = write::update(store, target, ctx, &body)?;
    Ok((code, scale_of(&stored)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_carry_replicas_and_the_selector_as_a_string() {
        let deploy = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u", "resourceVersion": "7"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"tier": "fe", "app": "web"},
                "matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]}]}},
            "status": {"replicas": 2}});
        let scale = scale_of(&deploy);
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(
            scale["status"],
            json!({"replicas": 2, "selector": "app=web,env in (a,b),tier=fe"})
        );
        assert_eq!(scale["metadata"]["resourceVersion"], "7");
        let rc =
            json!({"metadata": {"name": "rc"}, "spec": {"replicas": 0, "selector": {"app": "x"}}});
        let scale = scale_of(&rc);
        assert_eq!(scale["spec"], json!({}));
        assert_eq!(scale["status"], json!({"replicas": 0, "selector": "app=x"}));
    }
}
