//! POST, PUT and PATCH (JSON merge, JSON patch, strategic merge, server-side apply), all ending
//! in one commit pipeline: server-set metadata, status rules, defaulting, validation, generation,
//! managedFields, no-op detection and `dryRun`.

use serde_json::{Map, Value, json};

use super::read;
use super::target::Target;
use crate::auth::UserInfo;
use crate::decode::{Decoding, Source};
use crate::registry::ResourceType;
use crate::request::{Params, flag, parse_body};
use crate::ssa::{self, Schema, Writer};
use crate::status::{ApiError, Subject};
use crate::store::{Key, State, Store};
use crate::{canonical, defaults, lifecycle, meta, rbac, validation};

/// Query parameters of a write.
pub struct WriteContext {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`, or the user agent's product name.
    pub manager: String,
    /// Whether `fieldManager` was given explicitly.
    pub explicit_manager: bool,
    /// `force` (server-side apply).
    pub force: bool,
    /// `fieldValidation` and the warnings of decoding the written object.
    pub decoding: Decoding,
    /// Who writes (RBAC's escalation checks apply to them); `None` for a trusted caller.
    pub user: Option<UserInfo>,
    /// The API version the client addressed, when not the stored one's
    /// ([`crate::request::Request::addressed_version`]): the writer's managedFields entry is
    /// in it.
    pub addressed_version: Option<String>,
}

impl WriteContext {
    /// Reads the write parameters.
    ///
    /// # Errors
    /// 400 for an unknown `dryRun` value.
    pub fn new(params: &Params, user_agent: &str) -> Result<Self, ApiError> {
        let dry_run = match params.get("dryRun").map(String::as_str) {
            None | Some("") => false,
            Some("All") => true,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "unsupported dryRun value {other:?}, only \"All\" is"
                )));
            }
        };
        let explicit = params.get("fieldManager").filter(|m| !m.is_empty());
        Ok(Self {
            dry_run,
            manager: explicit.cloned().unwrap_or_else(|| {
                user_agent
                    .split('/')
                    .next()
                    .unwrap_or("unknown")
                    .to_string()
            }),
            explicit_manager: explicit.is_some(),
            force: flag(params, "force"),
            decoding: Decoding::new(params.get("fieldValidation").map(String::as_str)),
            user: None,
            addressed_version: None,
        })
    }

    fn writer<'a>(&'a self, api_version: &'a str, subresource: Option<&'a str>) -> Writer<'a> {
        Writer {
            manager: &self.manager,
            api_version: self.addressed_version.as_deref().unwrap_or(api_version),
            subresource,
            now: meta::now_secs(),
        }
    }
}

/// How managedFields were (or are to be) maintained for a write.
enum Ownership {
    /// Server-side apply already computed them.
    Applied,
    /// A non-apply write: record it as an `Update` by the context's manager.
    Update,
}

fn schema_of(state: &State, rt: &ResourceType) -> Schema {
    let structural = rt
        .custom
        .then(|| crate::crd::schema_of(state, rt))
        .flatten();
    Schema::new(&rt.api_version(), &rt.kind, rt.custom)
        .with_status_subresource(rt.status_subresource)
        .with_status_metadata(rt.status_metadata.written_fields())
        .with_structural(structural)
}

/// Whether `rt` is `certificates.k8s.io`'s CertificateSigningRequest.
fn is_certificate_request(rt: &ResourceType) -> bool {
    !rt.custom && rt.group == "certificates.k8s.io" && rt.kind == "CertificateSigningRequest"
}

/// A new CertificateSigningRequest names who asked for it, whatever it says (the registry's
/// `PrepareForCreate`): the requesting user's name, UID, groups and extra.
fn requested_by(object: &mut Value, user: Option<&UserInfo>) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["username", "uid", "groups", "extra"] {
        spec.remove(field);
    }
    let Some(user) = user else {
        return;
    };
    spec.insert("username".into(), json!(user.username));
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        spec.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
}

/// Fills apiVersion/kind and checks they name this resource.
fn check_type(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    if !object.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON or YAML object",
        ));
    }
    for (field, want) in [("apiVersion", rt.api_version()), ("kind", rt.kind.clone())] {
        match object.get(field).and_then(Value::as_str) {
            None | Some("") => object[field] = Value::String(want),
            Some(got) if got == want => {}
            Some(got) => {
                return Err(ApiError::bad_request(format!(
                    "the {field} of the object ({got}) does not match the {field} of the request ({want})"
                )));
            }
        }
    }
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    Ok(())
}

/// The namespace must exist and not be terminating.
fn check_namespace(state: &State, target: &Target, name: &str) -> Result<(), ApiError> {
    let Some(ns) = target.namespace.as_deref().filter(|_| target.rt.namespaced) else {
        return Ok(());
    };
    let key = Key::of("", "namespaces", "", ns);
    let subject = Subject {
        group: "",
        resource: "namespaces",
        name: ns,
    };
    let namespace = state
        .get(&key)
        .ok_or_else(|| ApiError::not_found(&subject))?;
    if !namespace["metadata"]["deletionTimestamp"].is_null() {
        let subject = Subject {
            group: &target.rt.group,
            resource: &target.rt.plural,
            name,
        };
        return Err(ApiError::namespace_terminating(&subject, ns));
    }
    Ok(())
}

/// The namespace in the body must agree with the path's.
fn check_object_namespace(target: &Target, object: &mut Value) -> Result<(), ApiError> {
    if !target.rt.namespaced {
        if let Some(m) = object["metadata"].as_object_mut() {
            m.remove("namespace");
        }
        return Ok(());
    }
    let path_ns = target.namespace.as_deref().unwrap_or_default();
    match object["metadata"]["namespace"].as_str() {
        None | Some("") => object["metadata"]["namespace"] = Value::String(path_ns.to_string()),
        Some(ns) if ns == path_ns => {}
        Some(_) => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    Ok(())
}

/// The object a write sends: its type checked and decoded as `source`.
fn typed_body(
    target: &Target,
    ctx: &WriteContext,
    body: &[u8],
    source: Source,
) -> Result<Value, ApiError> {
    let mut object = parse_body(body)?;
    check_type(&target.rt, &mut object)?;
    ctx.decoding.decode(&target.rt, &mut object, source)?;
    Ok(object)
}

/// Reports and drops the fields a custom resource's schema does not declare (its decoding
/// needs the CRD, found in `state`); nothing for a built-in kind, whose type decoded it.
fn custom_unknown(
    state: &State,
    target: &Target,
    ctx: &WriteContext,
    object: &mut Value,
    source: Source,
) -> Result<(), ApiError> {
    if !target.rt.custom || target.subresource.is_some() {
        return Ok(());
    }
    let unknown = crate::crd::unknown_fields(state, &target.rt, object);
    ctx.decoding
        .custom_unknown(&target.rt, object, source, unknown)
}

/// The object a create or replace sends: typed as [`typed_body`] and in the path's namespace.
fn decoded_body(
    target: &Target,
    ctx: &WriteContext,
    body: &[u8],
    source: Source,
) -> Result<Value, ApiError> {
    let mut object = typed_body(target, ctx, body, source)?;
    check_object_namespace(target, &mut object)?;
    Ok(object)
}

/// The object's name is the path's: filled in when missing, 400 when another.
fn check_object_name(target: &Target, object: &mut Value) -> Result<(), ApiError> {
    let name = target.name.as_deref().unwrap_or_default();
    match object["metadata"]["name"].as_str() {
        None | Some("") => object["metadata"]["name"] = Value::String(name.to_string()),
        Some(n) if n == name => {}
        Some(n) => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
    }
    Ok(())
}

/// Decodes the JSON patch `body` and applies it to `object` with `apply`, its errors answered
/// as kube-apiserver answers them.
pub(super) fn apply_json_patch(
    object: &mut Value,
    body: &[u8],
    apply: impl FnOnce(&mut Value, &json_patch::Patch) -> Result<(), json_patch::PatchError>,
) -> Result<(), ApiError> {
    let ops: json_patch::Patch = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding JSON patch: {e}")))?;
    apply(object, &ops).map_err(|e| {
        ApiError::new(
            422,
            "Invalid",
            format!("the JSON patch could not be applied: {e}"),
        )
    })
}

/// POST: create an object.
pub fn create(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    body: &[u8],
) -> Result<(u16, Value), ApiError> {
    let mut object = decoded_body(target, ctx, body, Source::Create)?;
    let mut name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if name.is_empty()
        && let Some(prefix) = object["metadata"]["generateName"]
            .as_str()
            .filter(|p| !p.is_empty())
    {
        name = format!("{prefix}{}", meta::name_suffix());
        object["metadata"]["name"] = Value::String(name.clone());
    }
    let mut state = store.lock();
    custom_unknown(&state, target, ctx, &mut object, Source::Create)?;
    check_namespace(&state, target, &name)?;
    validation::check_name(&target.rt, &name, &object)?;
    let key = target.key_of(&name);
    let subject = Subject {
        group: &target.rt.group,
        resource: &target.rt.plural,
        name: &name,
    };
    if state.get(&key).is_some() {
        return Err(ApiError::already_exists(&subject));
    }
    let stored = commit(
        &mut state,
        target,
        &key,
        None,
        object,
        ctx,
        Ownership::Update,
    )?;
    Ok((201, stored))
}

/// PUT: replace an object (or its status).
pub fn update(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    body: &[u8],
) -> Result<(u16, Value), ApiError> {
    let mut object = decoded_body(target, ctx, body, Source::Update)?;
    check_object_name(target, &mut object)?;
    let mut state = store.lock();
    custom_unknown(&state, target, ctx, &mut object, Source::Update)?;
    let key = target.key();
    let live = read::existing(&state, target, &key)?;
    replace(&mut state, target, &key, &live, object, ctx)
}

/// PATCH with any of the four patch types.
pub fn patch(
    store: &Store,
    target: &Target,
    ctx: &WriteContext,
    content_type: &str,
    body: &[u8],
) -> Result<(u16, Value), ApiError> {
    let name = target.name.as_deref().unwrap_or_default();
    let key = target.key_of(name);
    if content_type == "application/apply-patch+yaml" {
        let config = apply_config(target, ctx, body)?;
        let mut state = store.lock();
        let live = state.get(&key).cloned();
        return server_side_apply(&mut state, target, &key, live, ctx, &config);
    }
    if ctx.force {
        return Err(patch_options_invalid(
            "FieldValueForbidden",
            "force",
            "Forbidden: may not be specified for non-apply patch",
        ));
    }
    let mut state = store.lock();
    let live = read::existing(&state, target, &key)?;
    let mut object = live.clone();
    match content_type {
        "application/merge-patch+json" => {
            let patch = parse_body(body)?;
            krt_guest::merge::json::apply(&mut object, &patch);
        }
        "application/strategic-merge-patch+json" if !target.rt.custom => {
            let patch = parse_body(body)?;
            match krt_guest::merge::strategic::schema_for(&target.rt.api_version(), &target.rt.kind)
            {
                Some(schema) => {
                    object = krt_guest::merge::strategic::apply(&object, &patch, schema).map_err(
                        |e| {
                            ApiError::bad_request(format!(
                                "error applying strategic merge patch: {e}"
                            ))
                        },
                    )?;
                }
                None => krt_guest::merge::json::apply(&mut object, &patch),
            }
        }
        "application/json-patch+json" => apply_json_patch(&mut object, body, json_patch_apply)?,
        other => return Err(ApiError::unsupported_media_type(other)),
    }
    ctx.decoding
        .decode(&target.rt, &mut object, Source::Patch)?;
    custom_unknown(&state, target, ctx, &mut object, Source::Patch)?;
    object["metadata"]["name"] = Value::String(name.to_string());
    check_object_namespace(target, &mut object)?;
    replace(&mut state, target, &key, &live, object, ctx)
}

/// Records the fields of `object`, created by `request` and answered without being stored (an
/// access or token review), as its manager's: kube-apiserver's create handler runs its field manager on
/// every create.
///
/// # Errors
/// 400 for an unknown `dryRun` value.
pub(crate) fn record_answered_create(
    request: &crate::request::Request,
    rt: &ResourceType,
    object: &mut Value,
) -> Result<(), ApiError> {
    let ctx = WriteContext::new(&request.params, &request.user_agent)?;
    let api_version = rt.api_version();
    let writer = ctx.writer(&api_version, None);
    let schema = Schema::new(&api_version, &rt.kind, false);
    // The request is what was written: the answer's status is the registry's.
    let status = object.as_object_mut().and_then(|o| o.remove("status"));
    ssa::record_update(None, object, &schema, &writer);
    if let Some(status) = status {
        object["status"] = status;
    }
    Ok(())
}

/// Sets `to[field]` to `from[field]`, or removes it from `to` when `from` has none.
fn copy_field(from: &Value, to: &mut Value, field: &str) {
    match from.get(field) {
        Some(value) => to[field] = value.clone(),
        None => {
            if let Some(map) = to.as_object_mut() {
                map.remove(field);
            }
        }
    }
}

/// 422 Invalid for the request's `PatchOptions` (its query), with one cause.
fn patch_options_invalid(reason: &'static str, field: &str, message: &str) -> ApiError {
    let subject = Subject {
        group: "meta.k8s.io",
        resource: "",
        name: "",
    };
    ApiError::invalid(
        "PatchOptions",
        &subject,
        vec![crate::status::cause(reason, field, message)],
    )
}

/// The configuration an apply request sends, checked as far as it can be without the live
/// object (done before taking the store's lock).
fn apply_config(target: &Target, ctx: &WriteContext, body: &[u8]) -> Result<Value, ApiError> {
    if !ctx.explicit_manager {
        return Err(patch_options_invalid(
            "FieldValueRequired",
            "fieldManager",
            "Required value: is required for apply patch",
        ));
    }
    let mut config = typed_body(target, ctx, body, Source::Apply)?;
    if !config["metadata"]["managedFields"].is_null() {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    check_object_name(target, &mut config)?;
    check_object_namespace(target, &mut config)?;
    if target.subresource.is_none()
        && target.rt.status_subresource
        && let Some(m) = config.as_object_mut()
    {
        m.remove("status");
    }
    Ok(config)
}

fn server_side_apply(
    state: &mut State,
    target: &Target,
    key: &Key,
    live: Option<Value>,
    ctx: &WriteContext,
    config: &Value,
) -> Result<(u16, Value), ApiError> {
    let name = target.name.as_deref().unwrap_or_default();
    let created = live.is_none();
    let base = match &live {
        Some(l) => l.clone(),
        None => {
            check_namespace(state, target, name)?;
            validation::check_name(&target.rt, name, config)?;
            let mut metadata = Map::new();
            metadata.insert("name".into(), Value::String(name.to_string()));
            if let Some(ns) = config["metadata"].get("namespace") {
                metadata.insert("namespace".into(), ns.clone());
            }
            json!({"apiVersion": target.rt.api_version(), "kind": target.rt.kind, "metadata": metadata})
        }
    };
    let api_version = target.rt.api_version();
    let writer = ctx.writer(&api_version, target.subresource.as_deref());
    let schema = schema_of(state, &target.rt);
    let mut config = config.clone();
    if target.rt.custom {
        crate::crd::prune(state, &target.rt, &mut config);
    }
    let config = &config;
    let conflict = |conflicts: Vec<ssa::Conflict>| {
        ApiError::apply_conflict(
            ssa::conflict_message(&conflicts),
            ssa::conflict_causes(&conflicts),
        )
    };
    let mut merged = match ssa::server_side_apply(&base, config, &schema, &writer, ctx.force) {
        Ok(merged) => merged,
        Err(conflicts)
            if ssa::upgrades_client_side_apply(&base, &conflicts, &schema, &ctx.manager) =>
        {
            ssa::server_side_apply(&base, config, &schema, &writer, true).map_err(conflict)?
        }
        Err(conflicts) => return Err(conflict(conflicts)),
    };
    ssa::sync_last_applied(&mut merged, config, &ctx.manager);
    let stored = commit(
        state,
        target,
        key,
        live.as_ref(),
        merged,
        ctx,
        Ownership::Applied,
    )?;
    Ok((if created { 201 } else { 200 }, stored))
}

/// Whether `a` and `b` are equal but for what the server re-stamps (`metadata.managedFields`
/// and `metadata.resourceVersion`), to detect no-op writes without copying either.
fn same_content(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    a.len() == b.len()
        && a.iter()
            .all(|(key, value)| match (key.as_str(), b.get(key)) {
                ("metadata", Some(other)) => same_metadata(value, other),
                (_, other) => other == Some(value),
            })
}

fn same_metadata(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let kept = |m: &'_ Map<String, Value>| {
        m.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "managedFields" | "resourceVersion"))
            .count()
    };
    kept(a) == kept(b)
        && a.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "managedFields" | "resourceVersion"))
            .all(|(k, v)| b.get(k) == Some(v))
}

/// The commit pipeline shared by every write; returns what was (or, for dry-run, would be) stored.
/// Commits `object` over the stored `live` as an Update: 200 with what was stored.
fn replace(
    state: &mut State,
    target: &Target,
    key: &Key,
    live: &Value,
    object: Value,
    ctx: &WriteContext,
) -> Result<(u16, Value), ApiError> {
    let stored = commit(
        state,
        target,
        key,
        Some(live),
        object,
        ctx,
        Ownership::Update,
    )?;
    Ok((200, stored))
}

fn commit(
    state: &mut State,
    target: &Target,
    key: &Key,
    live: Option<&Value>,
    mut object: Value,
    ctx: &WriteContext,
    ownership: Ownership,
) -> Result<Value, ApiError> {
    let rt = &target.rt;
    let subresource = target.subresource.as_deref();
    if let Some(live) = live {
        if let Some(rv) = object["metadata"]["resourceVersion"]
            .as_str()
            .filter(|rv| !rv.is_empty())
            && live["metadata"]["resourceVersion"].as_str() != Some(rv)
        {
            return Err(ApiError::stale(&target.subject()));
        }
        for field in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ] {
            copy_field(&live["metadata"], &mut object["metadata"], field);
        }
        match subresource {
            Some("status") => {
                let mut only_status = live.clone();
                copy_field(
                    &object["metadata"],
                    &mut only_status["metadata"],
                    "managedFields",
                );
                for field in rt.status_metadata.written_fields() {
                    copy_field(&object["metadata"], &mut only_status["metadata"], field);
                }
                copy_field(&object, &mut only_status, "status");
                object = only_status;
            }
            _ if rt.status_subresource => copy_field(live, &mut object, "status"),
            _ => {}
        }
    } else {
        let m = object["metadata"]
            .as_object_mut()
            .expect("checked by check_type");
        for field in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            m.remove(field);
        }
        m.insert("uid".into(), Value::String(meta::uid()));
        m.insert("creationTimestamp".into(), Value::String(meta::now()));
        if rt.tracks_generation() {
            m.insert("generation".into(), json!(1));
        } else {
            m.remove("generation");
        }
        if rt.status_subresource
            && let Some(o) = object.as_object_mut()
        {
            o.remove("status");
        }
        if is_certificate_request(rt) {
            requested_by(&mut object, ctx.user.as_ref());
        }
    }
    if let (Some(live), None) = (live, subresource)
        && is_certificate_request(rt)
    {
        // Certificate requests are immutable after creation, but through subresources.
        object["spec"] = live["spec"].clone();
    }
    canonical::normalize(rt, &mut object)?;
    if rt.custom {
        crate::crd::admit(state, rt, live, &mut object)?;
    }
    defaults::apply(rt, &mut object, live);
    if !rt.custom {
        ssa::fill_zero_structs(&rt.api_version(), &rt.kind, &mut object);
    }
    crate::decode::omit_empty(rt, &mut object);
    if !rt.custom {
        ssa::write_nulls(&rt.api_version(), &rt.kind, &mut object);
    }
    // The field manager sees the object as decoded and defaulted; what admission and the
    // registry add after it is nobody's.
    if let Ownership::Update = ownership {
        let api_version = rt.api_version();
        let writer = ctx.writer(&api_version, subresource);
        ssa::record_update(live, &mut object, &schema_of(state, rt), &writer);
    }
    defaults::admit(rt, &mut object, live, state);
    let namespace = target.namespace.as_deref().unwrap_or_default();
    rbac::escalation::check(state, ctx.user.as_ref(), rt, namespace, live, &object)?;
    validation::check(rt, live, &object)?;
    super::admission::validate(state, rt, live, &object)?;
    // An EndpointSlice's registry also counts a change of its labels, a Deployment's one of its
    // annotations (they are copied to its ReplicaSets) (`PrepareForUpdate`).
    let counted = match (rt.custom, rt.kind.as_str()) {
        (false, "EndpointSlice") => Some("labels"),
        (false, "Deployment") => Some("annotations"),
        _ => None,
    };
    if let Some(live) = live
        && rt.tracks_generation()
        && (validation::spec_changed(live, &object)
            || counted.is_some_and(|m| live["metadata"][m] != object["metadata"][m]))
    {
        let generation = live["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
        object["metadata"]["generation"] = json!(generation);
    }
    if let Some(live) = live
        && same_content(live, &object)
        && ssa::ownership(live) == ssa::ownership(&object)
    {
        return Ok(live.clone());
    }
    if ctx.dry_run {
        if live.is_none()
            && let Some(m) = object["metadata"].as_object_mut()
        {
            m.remove("resourceVersion");
        }
        return Ok(object);
    }
    if lifecycle::ready_to_remove(&object) {
        // The answer is what was written (the last finalizer gone), not what was stored.
        state.remove(key);
        return Ok(object);
    }
    Ok(state.put(key.clone(), object))
}

/// Applies a JSON patch as kube-apiserver's (evanphx/json-patch) does: all or
/// nothing, and a `test` of `null` passes where the path is missing (kube-rs's
/// finalizer helper tests `/metadata/finalizers` so before adding the first).
fn json_patch_apply(
    object: &mut Value,
    ops: &json_patch::Patch,
) -> Result<(), json_patch::PatchError> {
    let mut patched = object.clone();
    for (i, op) in ops.0.iter().enumerate() {
        if let json_patch::PatchOperation::Test(test) = op
            && test.value.is_null()
            && patched.pointer(test.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(&mut patched, std::slice::from_ref(op)).map_err(|mut e| {
            e.operation = i;
            e
        })?;
    }
    *object = patched;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_patch_test_of_null_passes_on_a_missing_path_only() {
        let ops: json_patch::Patch = serde_json::from_value(json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["a/b"]},
        ]))
        .unwrap();
        let mut object = json!({"metadata": {"name": "x"}});
        json_patch_apply(&mut object, &ops).unwrap();
        assert_eq!(object["metadata"]["finalizers"], json!(["a/b"]));
        let before = object.clone();
        let err = json_patch_apply(&mut object, &ops).unwrap_err();
        assert_eq!(err.operation, 0);
        assert_eq!(object, before, "nothing is applied");
    }

    #[test]
    fn content_ignores_only_what_the_server_restamps() {
        let live = json!({"metadata": {"name": "a", "resourceVersion": "5",
            "managedFields": [{"manager": "x"}]}, "data": {"k": "v"}});
        let restamped =
            json!({"data": {"k": "v"}, "metadata": {"resourceVersion": "6", "name": "a"}});
        assert!(same_content(&live, &restamped));
        let relabelled =
            json!({"metadata": {"name": "a", "labels": {"l": "1"}}, "data": {"k": "v"}});
        assert!(!same_content(&live, &relabelled));
        let changed = json!({"metadata": {"name": "a"}, "data": {"k": "w"}});
        assert!(!same_content(&live, &changed));
        let extra = json!({"metadata": {"name": "a"}, "data": {"k": "v"}, "status": {}});
        assert!(!same_content(&live, &extra));
    }
}
