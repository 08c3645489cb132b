//! DELETE of one object or a collection: preconditions, `propagationPolicy`, finalizers.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, StatusDetails};
use serde_json::{Value, json};

use super::read::{existing, filter};
use super::target::Target;
use super::write::WriteContext;
use crate::registry::ResourceType;
use crate::request::Params;
use crate::status::ApiError;
use crate::store::{Key, State, Store};
use crate::{crd, lifecycle};

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

/// Deletes (or starts deleting) the object at `key`; returns the object as it was removed or is
/// now stored, and whether it is gone (or, for a dry run, would be).
fn delete_one(
    state: &mut State,
    target: &Target,
    key: &Key,
    opts: &DeleteOptions,
    dry_run: bool,
) -> Result<(Value, bool), ApiError> {
    let subject = target.subject();
    let live = existing(state, target, key)?;
    if let Some(pre) = &opts.preconditions {
        for (field, want, meta_field) in [
            ("UID", &pre.uid, "uid"),
            ("ResourceVersion", &pre.resource_version, "resourceVersion"),
        ] {
            let have = live["metadata"][meta_field].as_str().unwrap_or_default();
            if let Some(want) = want.as_deref().filter(|w| *w != have) {
                return Err(ApiError::conflict(
                    &subject,
                    format!(
                        "Precondition failed: {field} in precondition: {want}, {field} in object meta: {have}"
                    ),
                    Vec::new(),
                ));
            }
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
    if is_crd(&target.rt) && object["metadata"]["deletionTimestamp"].is_null() {
        lifecycle::add_finalizer(&mut object, crd::CLEANUP_FINALIZER);
        let conditions = object["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut conditions: Vec<Value> = conditions
            .into_iter()
            .filter(|c| c["type"] != "Terminating")
            .collect();
        conditions.push(json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress",
            "message": "CustomResource deletion is in progress", "lastTransitionTime": crate::meta::now()}));
        object["status"]["conditions"] = Value::Array(conditions);
    }
    lifecycle::mark_deleted(&mut object);
    let gone = lifecycle::ready_to_remove(&object);
    if dry_run {
        return Ok((object, gone));
    }
    if gone {
        return Ok((state.remove(key).unwrap_or(object), true));
    }
    if object == live {
        return Ok((live, false));
    }
    Ok((state.put(key.clone(), object), false))
}

fn is_crd(rt: &ResourceType) -> bool {
    !rt.custom && rt.kind == "CustomResourceDefinition"
}

/// Whether kube-apiserver answers an immediate delete of this type with the deleted object
/// rather than a `Status` of `Success`: the registries built with `ReturnDeletedObject`, as a
/// real server's answers show them (custom resources answer with a `Status`).
fn returns_deleted_object(rt: &ResourceType) -> bool {
    let kind = rt.kind.as_str();
    match (rt.custom, rt.group.as_str()) {
        (true, _) => false,
        (false, "") => matches!(
            kind,
            "Pod"
                | "Service"
                | "ServiceAccount"
                | "PodTemplate"
                | "ResourceQuota"
                | "ReplicationController"
        ),
        (false, "storage.k8s.io") => matches!(
            kind,
            "StorageClass" | "CSIDriver" | "CSINode" | "VolumeAttachment"
        ),
        (false, "resource.k8s.io") => true,
        _ => false,
    }
}

/// DELETE one object.
pub fn delete(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    params: &Params,
    body: &[u8],
) -> Result<(u16, Value), ApiError> {
    let opts = options(params, body)?;
    let dry_run = ctx.dry_run
        || opts
            .dry_run
            .as_ref()
            .is_some_and(|d| d.iter().any(|x| x == "All"));
    let key = target.key();
    let (object, gone) = delete_one(&mut store.lock(), target, &key, &opts, dry_run)?;
    if gone && !returns_deleted_object(&target.rt) {
        let details = StatusDetails {
            uid: object["metadata"]["uid"].as_str().map(str::to_owned),
            ..target.subject().details()
        };
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details});
        return Ok((200, status));
    }
    // kube-apiserver answers 202 only when the object stays and the client explicitly asked
    // for dependents not to be orphaned.
    let accepted = !gone && opts.orphan_dependents == Some(false);
    Ok((if accepted { 202 } else { 200 }, object))
}

/// DELETE a collection (with selectors).
pub fn delete_collection(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    params: &Params,
) -> Result<(u16, Value), ApiError> {
    let opts = options(params, &[])?;
    let filter = filter(&target.rt, params)?;
    let mut state = store.lock();
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
        items.push(delete_one(&mut state, &one, &key, &opts, ctx.dry_run)?.0);
    }
    let body = json!({"kind": format!("{}List", target.rt.kind), "apiVersion": target.rt.api_version(),
        "metadata": {"resourceVersion": state.resource_version().to_string()}, "items": items});
    Ok((200, body.clone()))
}
