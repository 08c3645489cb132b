//! DELETE of one object or a collection: preconditions, `propagationPolicy`, finalizers.

use axum::http::StatusCode;
use axum::response::Response;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions;
use serde_json::{Value, json};

use super::read::filter;
use super::write::WriteContext;
use super::{Params, Target, json};
use crate::cluster::Cluster;
use crate::lifecycle;
use crate::status::ApiError;
use crate::store::{Key, State};

fn options(params: &Params, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let mut opts: DeleteOptions = if body.iter().all(u8::is_ascii_whitespace) {
        DeleteOptions::default()
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
    };
    if let Some(p) = params.get("propagationPolicy") {
        opts.propagation_policy = Some(p.clone());
    }
    if opts.orphan_dependents == Some(true) && opts.propagation_policy.is_none() {
        opts.propagation_policy = Some("Orphan".into());
    }
    if let Some(policy) = opts.propagation_policy.as_deref()
        && !matches!(policy, "Orphan" | "Background" | "Foreground")
    {
        return Err(ApiError::bad_request(format!(
            "invalid propagationPolicy {policy:?}"
        )));
    }
    Ok(opts)
}

/// Deletes (or starts deleting) the object at `key`; returns what the response shows.
fn delete_one(
    state: &mut State,
    target: &Target,
    key: &Key,
    opts: &DeleteOptions,
    dry_run: bool,
) -> Result<Value, ApiError> {
    let subject = target.subject();
    let live = state
        .get(key)
        .cloned()
        .ok_or_else(|| ApiError::not_found(&subject))?;
    if let Some(pre) = &opts.preconditions {
        let uid = live["metadata"]["uid"].as_str().unwrap_or_default();
        if let Some(want) = pre.uid.as_deref().filter(|w| *w != uid) {
            return Err(ApiError::conflict(
                &subject,
                format!(
                    "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
                ),
                Vec::new(),
            ));
        }
        let rv = live["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if let Some(want) = pre.resource_version.as_deref().filter(|w| *w != rv) {
            return Err(ApiError::conflict(
                &subject,
                format!(
                    "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
                ),
                Vec::new(),
            ));
        }
    }
    let mut object = live.clone();
    match opts.propagation_policy.as_deref() {
        Some("Foreground") => lifecycle::add_finalizer(&mut object, lifecycle::FOREGROUND),
        Some("Orphan") => lifecycle::add_finalizer(&mut object, lifecycle::ORPHAN),
        _ => {}
    }
    if target.rt.kind == "Namespace" && !target.rt.custom {
        object["status"]["phase"] = json!("Terminating");
    }
    lifecycle::mark_deleted(&mut object);
    if dry_run {
        return Ok(object);
    }
    if lifecycle::ready_to_remove(&object) {
        return Ok(state.remove(key).unwrap_or(object));
    }
    if object == live {
        return Ok(live);
    }
    Ok(state.put(key.clone(), object))
}

/// DELETE one object.
pub fn delete(
    cluster: &Cluster,
    target: &Target,
    ctx: &WriteContext,
    params: &Params,
    body: &[u8],
) -> Result<Response, ApiError> {
    let opts = options(params, body)?;
    let dry_run = ctx.dry_run
        || opts
            .dry_run
            .as_ref()
            .is_some_and(|d| d.iter().any(|x| x == "All"));
    let key = Key::new(
        &target.rt,
        target.namespace.as_deref().unwrap_or_default(),
        target.name.as_deref().unwrap_or_default(),
    );
    let object = delete_one(&mut cluster.store.lock(), target, &key, &opts, dry_run)?;
    let code = if object["metadata"]["deletionTimestamp"].is_null() || dry_run {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok(json(code, &object))
}

/// DELETE a collection (with selectors).
pub fn delete_collection(
    cluster: &Cluster,
    target: &Target,
    ctx: &WriteContext,
    params: &Params,
) -> Result<Response, ApiError> {
    let opts = options(params, &[])?;
    let filter = filter(params)?;
    let mut state = cluster.store.lock();
    let keys: Vec<Key> = state
        .list(
            &target.rt.group,
            &target.rt.plural,
            target.namespace.as_deref(),
        )
        .into_iter()
        .filter(|(_, o)| filter.matches(o))
        .map(|(k, _)| k.clone())
        .collect();
    let mut items = Vec::new();
    for key in keys {
        let one = Target {
            name: Some(key.name.clone()),
            ..target.clone()
        };
        items.push(delete_one(&mut state, &one, &key, &opts, ctx.dry_run)?);
    }
    let body = json!({"kind": format!("{}List", target.rt.kind), "apiVersion": target.rt.api_version(),
        "metadata": {"resourceVersion": state.resource_version().to_string()}, "items": items});
    Ok(json(StatusCode::OK, &body))
}
