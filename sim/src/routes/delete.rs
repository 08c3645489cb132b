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
    gc_finalizers(&target.rt, opts, &mut object);
    let namespace = target.rt.kind == "Namespace" && !target.rt.custom;
    if namespace {
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
        conditions.push(json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionPending",
            "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            "lastTransitionTime": crate::meta::now()}));
        object["status"]["conditions"] = Value::Array(conditions);
    }
    if (namespace || is_crd(&target.rt)) && object["metadata"]["deletionTimestamp"].is_null() {
        // Their registries' own Delete sets the timestamp alone: no grace period, no generation.
        object["metadata"]["deletionTimestamp"] = json!(crate::meta::now());
    }
    lifecycle::mark_deleted(&mut object);
    let gone = lifecycle::ready_to_remove(&object);
    if dry_run {
        return Ok((object, gone));
    }
    if gone {
        let removed = state.remove(key).unwrap_or_else(|| object.clone());
        // Only a Pod's deletion is graceful: its registry stores the marks before it removes the
        // Pod, so the Pod it answers with carries them.
        let pod = !target.rt.custom && target.rt.group.is_empty() && target.rt.kind == "Pod";
        return Ok((if pod { object } else { removed }, true));
    }
    if object == live {
        return Ok((live, false));
    }
    Ok((state.put(key.clone(), object), false))
}

/// What a type's registry does, by default, with the dependents of an object deleted without a
/// `propagationPolicy` (its strategy's `DefaultGarbageCollectionPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GcPolicy {
    /// Dependents are deleted in the background (no finalizer).
    Background,
    /// Dependents are orphaned (the `orphan` finalizer): core v1 ReplicationControllers and
    /// batch/v1 Jobs, for backward compatibility.
    Orphan,
    /// The registry takes no garbage-collection options: Events, and CustomResourceDefinitions,
    /// whose registry's own Delete ignores them.
    Unsupported,
}

fn default_gc_policy(rt: &ResourceType) -> GcPolicy {
    if rt.custom {
        return GcPolicy::Background;
    }
    match (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str()) {
        ("", "v1", "ReplicationController") | ("batch", "v1", "Job") => GcPolicy::Orphan,
        (_, _, "Event") => GcPolicy::Unsupported,
        _ if is_crd(rt) => GcPolicy::Unsupported,
        _ => GcPolicy::Background,
    }
}

/// Sets the garbage-collection finalizers of `object`, deleted with `opts`, as
/// `deletionFinalizersForGarbageCollection` does: `orphan` and `foregroundDeletion` are taken
/// off and put back (last) as the options, else the object's own finalizers, else the type's
/// default ask; an object whose set of finalizers this does not change keeps their order.
fn gc_finalizers(rt: &ResourceType, opts: &DeleteOptions, object: &mut Value) {
    let default = default_gc_policy(rt);
    if default == GcPolicy::Unsupported {
        return;
    }
    let has = |name| lifecycle::has_finalizer(object, name);
    let (orphan, foreground) = match (opts.orphan_dependents, opts.propagation_policy.as_deref()) {
        (Some(orphan), _) => (orphan, false),
        (None, Some(policy)) => (policy == "Orphan", policy == "Foreground"),
        (None, None) if has(lifecycle::ORPHAN) => (true, false),
        (None, None) if has(lifecycle::FOREGROUND) => (false, true),
        (None, None) => (default == GcPolicy::Orphan, false),
    };
    let before: Vec<String> = lifecycle::finalizers(object).map(str::to_owned).collect();
    let mut after: Vec<String> = before
        .iter()
        .filter(|f| *f != lifecycle::ORPHAN && *f != lifecycle::FOREGROUND)
        .cloned()
        .collect();
    after.extend(orphan.then(|| lifecycle::ORPHAN.to_owned()));
    after.extend(foreground.then(|| lifecycle::FOREGROUND.to_owned()));
    let set = |list: &[String]| {
        list.iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
    };
    if set(&before) != set(&after) {
        object["metadata"]["finalizers"] = json!(after);
    }
}

/// The warning a Job's registry adds to a DELETE that leaves the policy to its default, when
/// that default orphans the Job's Pods (batch/v1).
const JOB_ORPHANS: &str = "child pods are preserved by default when jobs are deleted; set \
    propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this \
    warning";

/// The warnings of a DELETE of `rt` with `opts`, added before the object is looked up.
fn delete_warnings(rt: &ResourceType, opts: &DeleteOptions, ctx: &WriteContext) {
    let job_orphans = rt.kind == "Job" && default_gc_policy(rt) == GcPolicy::Orphan;
    if job_orphans && opts.propagation_policy.is_none() && opts.orphan_dependents.is_none() {
        ctx.decoding.warn(JOB_ORPHANS);
    }
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
    delete_warnings(&target.rt, &opts, ctx);
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
    delete_warnings(&target.rt, &opts, ctx);
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
