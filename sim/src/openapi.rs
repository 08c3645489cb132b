//! OpenAPI documents: v3 (`/openapi/v3` and `/openapi/v3/{api/v1,apis/GROUP/VERSION}`) and v2
//! (`/openapi/v2`, JSON), as kubectl reads them for `explain` and for finding that the server
//! validates fields itself (`fieldValidation` on PATCH).
//!
//! Each document has the paths of its resources with their operations and query parameters, and
//! the schemas of their kinds: a built-in kind's from its k8s-openapi type (descriptions
//! included), under its OpenAPI definition name and with the `x-kubernetes-group-version-kind`
//! extension clients look kinds up by, with every schema it refers to; a custom resource's from
//! its CRD's `openAPIV3Schema`.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

use crate::kinds::{self, BUILTINS, Builtin};
use crate::registry::ResourceType;
use crate::store::{Key, State};

/// The query parameters of a list or watch.
const LIST_PARAMS: &[&str] = &[
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "resourceVersion",
    "timeoutSeconds",
    "watch",
    "allowWatchBookmarks",
];

/// The query parameters of a write, as kube-apiserver declares them.
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "pretty"];

/// The two OpenAPI versions served.
#[derive(Clone, Copy, PartialEq)]
enum Version {
    V2,
    V3,
}

fn parameters(names: &[&str], version: Version) -> Value {
    Value::Array(
        names
            .iter()
            .map(|n| match version {
                Version::V3 => json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}}),
                Version::V2 => json!({"name": n, "in": "query", "type": "string", "uniqueItems": true}),
            })
            .collect(),
    )
}

fn operation(
    gvk: (&str, &str, &str),
    action: &str,
    id: &str,
    params: &[&str],
    version: Version,
) -> Value {
    let (group, v, kind) = gvk;
    json!({
        "operationId": id,
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": group, "version": v, "kind": kind},
        "parameters": parameters(params, version),
        "responses": {"200": {"description": "OK"}},
    })
}

/// The paths of one resource type.
fn paths(t: &ResourceType, version: Version, out: &mut Map<String, Value>) {
    let prefix = if t.group.is_empty() {
        format!("/api/{}", t.version)
    } else {
        format!("/apis/{}/{}", t.group, t.version)
    };
    let scope = if t.namespaced {
        "/namespaces/{namespace}"
    } else {
        ""
    };
    let gvk = (t.group.as_str(), t.version.as_str(), t.kind.as_str());
    let op =
        |gvk, action, id: String, params: &[&str]| operation(gvk, action, &id, params, version);
    let id = |verb: &str| format!("{verb}{}", t.kind);
    let collection = format!("{prefix}{scope}/{}", t.plural);
    if !t.verbs.iter().any(|v| v == "get") {
        // A create-only kind (the reviews): a POST of the collection alone.
        out.insert(
            collection,
            json!({"post": op(gvk, "post", id("create"), WRITE_PARAMS)}),
        );
        return;
    }
    let mut patch_params = WRITE_PARAMS.to_vec();
    patch_params.push("force");
    out.insert(
        collection.clone(),
        json!({
            "get": op(gvk, "list", id("list"), LIST_PARAMS),
            "post": op(gvk, "post", id("create"), WRITE_PARAMS),
            "delete": op(gvk, "deletecollection", id("deleteCollection"), &["labelSelector", "fieldSelector", "dryRun", "propagationPolicy"]),
        }),
    );
    out.insert(
        format!("{collection}/{{name}}"),
        json!({
            "get": op(gvk, "get", id("read"), &["pretty"]),
            "put": op(gvk, "put", id("replace"), WRITE_PARAMS),
            "patch": op(gvk, "patch", id("patch"), &patch_params),
            "delete": op(gvk, "delete", id("delete"), &["dryRun", "gracePeriodSeconds", "propagationPolicy"]),
        }),
    );
    let prefixed = |rest: &str| format!("{prefix}{rest}");
    if t.namespaced {
        out.insert(
            prefixed(&format!("/{}", t.plural)),
            json!({"get": op(gvk, "list", format!("list{}ForAllNamespaces", t.kind), LIST_PARAMS)}),
        );
    }
    // apiextensions-apiserver publishes no `watch/` paths for custom resources.
    if !t.custom && t.verbs.iter().any(|v| v == "watch") {
        // The deprecated `watch/` paths, still served (see `Request::resolve_legacy_watch`).
        let watch = format!("{prefix}/watch{scope}/{}", t.plural);
        out.insert(
            watch.clone(),
            json!({"get": op(gvk, "watchlist", id("watch") + "List", LIST_PARAMS)}),
        );
        out.insert(
            format!("{watch}/{{name}}"),
            json!({"get": op(gvk, "watch", id("watch"), LIST_PARAMS)}),
        );
        if t.namespaced {
            out.insert(
                prefixed(&format!("/watch/{}", t.plural)),
                json!({"get": op(gvk, "watchlist", format!("watch{}ListForAllNamespaces", t.kind), LIST_PARAMS)}),
            );
        }
    }
    if !t.custom && t.group.is_empty() {
        match t.plural.as_str() {
            "serviceaccounts" => {
                out.insert(
                    format!("{collection}/{{name}}/token"),
                    json!({"post": op(("authentication.k8s.io", "v1", "TokenRequest"), "post",
                        id("create") + "Token", WRITE_PARAMS)}),
                );
            }
            "namespaces" => {
                out.insert(
                    format!("{collection}/{{name}}/finalize"),
                    json!({"put": op(gvk, "put", id("replace") + "Finalize", WRITE_PARAMS)}),
                );
            }
            _ => {}
        }
    }
    for (sub, gvk) in [
        ("status", t.status_subresource.then_some(gvk)),
        (
            "scale",
            t.scale_subresource
                .then_some(("autoscaling", "v1", "Scale")),
        ),
    ] {
        let Some(gvk) = gvk else { continue };
        let sub_id = |verb: &str| format!("{verb}{}{}", t.kind, capitalized(sub));
        out.insert(
            format!("{collection}/{{name}}/{sub}"),
            json!({
                "get": op(gvk, "get", sub_id("read"), &["pretty"]),
                "put": op(gvk, "put", sub_id("replace"), WRITE_PARAMS),
                "patch": op(gvk, "patch", sub_id("patch"), &patch_params),
            }),
        );
    }
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// `api/v1` or `apis/GROUP/VERSION` for a type.
fn root_of(t: &ResourceType) -> String {
    if t.group.is_empty() {
        format!("api/{}", t.version)
    } else {
        format!("apis/{}/{}", t.group, t.version)
    }
}

fn generator(version: Version) -> SchemaGenerator {
    match version {
        Version::V2 => SchemaSettings::draft07().with(|s| s.meta_schema = None),
        Version::V3 => SchemaSettings::openapi3().with(|s| s.meta_schema = None),
    }
    .into_generator()
}

/// The schemas of the built-in kinds `roots` selects (every one for `None`), with what they
/// refer to and each kind's `x-kubernetes-group-version-kind`.
fn builtin_schemas(roots: Option<&str>, version: Version) -> Map<String, Value> {
    let mut generator = generator(version);
    let chosen: Vec<_> = BUILTINS
        .iter()
        .filter(|b| {
            roots.is_none_or(|root| {
                let own = if b.group.is_empty() {
                    format!("api/{}", b.version)
                } else {
                    format!("apis/{}/{}", b.group, b.version)
                };
                own == root
            })
        })
        .collect();
    let types = crate::registry::builtins();
    let type_of = |b: &Builtin| {
        types
            .iter()
            .find(|t| t.group == b.group && t.version == b.version && t.kind == b.kind)
    };
    // `Scale` is served by the workloads' `scale` subresources; its schema is autoscaling/v1's,
    // in autoscaling/v1's document and in each of theirs.
    let scale = roots.is_none_or(|r| r == "apis/autoscaling/v1")
        || chosen
            .iter()
            .any(|b| type_of(b).is_some_and(|t| t.scale_subresource));
    for b in &chosen {
        (b.define)(&mut generator);
    }
    if scale {
        (kinds::SCALE.define)(&mut generator);
    }
    // A ServiceAccount's `token` subresource takes and answers a TokenRequest.
    if chosen
        .iter()
        .any(|b| b.group.is_empty() && b.kind == "ServiceAccount")
    {
        generator.subschema_for::<k8s_openapi::api::authentication::v1::TokenRequest>();
    }
    let mut definitions = generator.take_definitions(true);
    for b in &chosen {
        if let Some(t) = type_of(b).filter(|t| t.verbs.iter().any(|v| v == "list")) {
            let name = (b.schema_name)();
            definitions.insert(format!("{name}List"), list_schema(t, &name, version));
        }
    }
    let tagged = chosen.iter().copied().chain(scale.then_some(&kinds::SCALE));
    for b in tagged {
        if let Some(schema) = definitions.get_mut((b.schema_name)().as_ref()) {
            schema["x-kubernetes-group-version-kind"] =
                json!([{"group": b.group, "version": b.version, "kind": b.kind}]);
        }
    }
    definitions
}

/// The built-in schemas of every kind (v2), generated once.
fn cached_v2() -> Map<String, Value> {
    static V2: OnceLock<Map<String, Value>> = OnceLock::new();
    V2.get_or_init(|| builtin_schemas(None, Version::V2))
        .clone()
}

/// The built-in schemas of one v3 document root and their hash, generated once.
fn cached_v3(root: &str) -> (Arc<Map<String, Value>>, u64) {
    type Cache = BTreeMap<String, (Arc<Map<String, Value>>, u64)>;
    static V3: OnceLock<Mutex<Cache>> = OnceLock::new();
    let mut cache = V3
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(root.to_string())
        .or_insert_with(|| {
            let schemas = builtin_schemas(Some(root), Version::V3);
            let hash = hash_of(&Value::Object(schemas.clone()));
            (Arc::new(schemas), hash)
        })
        .clone()
}

/// The definition name kube gives a custom resource's schema (`com.example.v1.Widget`).
fn custom_definition_name(t: &ResourceType) -> String {
    let reversed: Vec<&str> = t.group.split('.').rev().collect();
    format!("{}.{}.{}", reversed.join("."), t.version, t.kind)
}

/// A custom resource's schema from its CRD, with its group-version-kind.
fn custom_schema(state: &State, t: &ResourceType, openapi: Version) -> Option<Value> {
    let key = Key::of(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        format!("{}.{}", t.plural, t.group),
    );
    let crd = state.get(&key)?;
    let served = crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == t.version.as_str())?;
    let mut schema = served["schema"]["openAPIV3Schema"].clone();
    if !schema.is_object() {
        return None;
    }
    // Published with the standard metadata, as apiextensions-apiserver does.
    if schema["properties"].is_object() {
        schema["properties"]["metadata"] =
            reference("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", openapi);
    }
    schema["x-kubernetes-group-version-kind"] =
        json!([{"group": t.group, "version": t.version, "kind": t.kind}]);
    Some(schema)
}

fn hash_of(value: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    value.to_string().hash(&mut h);
    h.finish()
}

/// The paths and custom resource schemas of a v3 document root.
fn served_parts(state: &State, root: &str) -> (Map<String, Value>, Map<String, Value>) {
    let mut paths_out = Map::new();
    let mut custom = Map::new();
    for t in state.resource_types().filter(|t| root_of(t) == root) {
        paths(t, Version::V3, &mut paths_out);
        insert_custom_schemas(state, t, Version::V3, &mut custom);
    }
    // A group version's discovery path is kube-apiserver's own, not a CRD's.
    let builtin = state
        .resource_types()
        .any(|t| root_of(t) == root && !t.custom);
    if builtin {
        paths_out.insert(format!("/{root}/"), resources_path());
    }
    if !paths_out.is_empty() {
        custom.extend(meta_schemas(Version::V3, builtin));
    }
    (paths_out, custom)
}

/// A custom resource type's schema and its list's, when `t` is one with a schema.
fn insert_custom_schemas(
    state: &State,
    t: &ResourceType,
    version: Version,
    out: &mut Map<String, Value>,
) {
    if let Some(schema) = t.custom.then(|| custom_schema(state, t, version)).flatten() {
        let name = custom_definition_name(t);
        out.insert(format!("{name}List"), list_schema(t, &name, version));
        out.insert(name, schema);
    }
}

/// The path of a group version's discovery document (`GET /apis/apps/v1/`).
fn resources_path() -> Value {
    json!({"get": {"operationId": "getAPIResources", "responses": {"200": {"description": "OK"}}}})
}

/// The `$ref` of the definition `name` in a document of `version`.
fn ref_to(name: &str, version: Version) -> Value {
    match version {
        Version::V2 => json!({"$ref": format!("#/definitions/{name}")}),
        Version::V3 => json!({"$ref": format!("#/components/schemas/{name}")}),
    }
}

/// Where a property's schema is the definition `name` (v3 wraps the `$ref` in `allOf`, as
/// kube-openapi does, so that a description can stand beside it).
fn reference(name: &str, version: Version) -> Value {
    match version {
        Version::V2 => ref_to(name, version),
        Version::V3 => json!({"allOf": [ref_to(name, version)]}),
    }
}

/// The schema of a list of `t` (`io.k8s.api.apps.v1.DeploymentList`), whose items are the
/// definition `item`.
fn list_schema(t: &ResourceType, item: &str, version: Version) -> Value {
    let items = ref_to(item, version);
    json!({
        "description": format!("{}List is a list of {}.", t.kind, t.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"type": "array", "items": items},
            "kind": {"type": "string"},
            "metadata": reference("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", version),
        },
        "x-kubernetes-group-version-kind": [{"group": t.group, "version": t.version, "kind": format!("{}List", t.kind)}],
    })
}

/// The `meta/v1` schemas a document's operations use: lists' metadata, delete options,
/// `Status` errors and patches; for a group version of built-in kinds (`builtin`) also watch
/// events and discovery's resource lists, and for one of custom resources `ObjectMeta`, which
/// their schemas refer to.
fn meta_schemas(version: Version, builtin: bool) -> Map<String, Value> {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
    static SCHEMAS: OnceLock<[Map<String, Value>; 4]> = OnceLock::new();
    let all = SCHEMAS.get_or_init(|| {
        [
            (Version::V2, true),
            (Version::V2, false),
            (Version::V3, true),
            (Version::V3, false),
        ]
        .map(|(version, builtin)| {
            let mut generator = generator(version);
            generator.subschema_for::<meta::ListMeta>();
            generator.subschema_for::<meta::DeleteOptions>();
            generator.subschema_for::<meta::Status>();
            generator.subschema_for::<meta::Patch>();
            if builtin {
                generator.subschema_for::<meta::WatchEvent<meta::Status>>();
                generator.subschema_for::<meta::APIResourceList>();
            } else {
                generator.subschema_for::<meta::ObjectMeta>();
            }
            generator.take_definitions(true)
        })
    });
    let index = match version {
        Version::V2 => 0,
        Version::V3 => 2,
    } + usize::from(!builtin);
    all[index].clone()
}

fn document(state: &State, root: &str) -> Option<Value> {
    let (paths, custom) = served_parts(state, root);
    if paths.is_empty() {
        return None;
    }
    let (builtin, _) = cached_v3(root);
    let mut schemas = Map::clone(&builtin);
    schemas.extend(custom);
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": crate::deprecation::git_version()},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// `/openapi/v3`: the document of every served group/version, with a content hash.
pub fn index(state: &State) -> Value {
    let roots: BTreeMap<String, ()> = state.resource_types().map(|t| (root_of(t), ())).collect();
    let paths: Map<String, Value> = roots
        .into_keys()
        .map(|root| {
            // The document is made of the root's types, their CRDs' schemas and the built-in
            // schemas: hash those rather than the document.
            let mut h = DefaultHasher::new();
            cached_v3(&root).1.hash(&mut h);
            for t in state.resource_types().filter(|t| root_of(t) == root) {
                format!("{t:?}").hash(&mut h);
                if let Some(schema) = t
                    .custom
                    .then(|| custom_schema(state, t, Version::V3))
                    .flatten()
                {
                    schema.to_string().hash(&mut h);
                }
            }
            let url = format!("/openapi/v3/{root}?hash={:016X}", h.finish());
            (root, json!({"serverRelativeURL": url}))
        })
        .collect();
    json!({ "paths": paths })
}

/// `/openapi/v3/{prefix}/{rest}` (`api` + `v1`, or `apis` + `GROUP/VERSION`); `None` when
/// nothing is served there.
pub fn group_version(state: &State, prefix: &str, rest: &str) -> Option<Value> {
    document(state, &format!("{prefix}/{rest}"))
}

/// `/openapi/v2`: one Swagger 2.0 document of every served resource.
pub fn v2(state: &State) -> Value {
    let mut out = Map::new();
    let mut definitions = cached_v2();
    definitions.extend(meta_schemas(Version::V2, true));
    definitions.extend(meta_schemas(Version::V2, false));
    for t in state.resource_types() {
        paths(t, Version::V2, &mut out);
        if !t.custom {
            out.insert(format!("/{}/", root_of(t)), resources_path());
        }
        insert_custom_schemas(state, t, Version::V2, &mut definitions);
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": crate::deprecation::git_version()},
        "paths": out,
        "definitions": definitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn documents_carry_paths_and_schemas_of_their_kinds() {
        let store = Store::new(10);
        let state = store.lock();
        let index = index(&state);
        let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap();
        assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="), "{url}");
        let doc = group_version(&state, "apis", "apps/v1").unwrap();
        let patch =
            &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"]["kind"],
            "Deployment"
        );
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        );
        let schemas = &doc["components"]["schemas"];
        let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deployment["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
        );
        let replicas = &schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"];
        assert_eq!(
            (&replicas["type"], &replicas["format"]),
            (&json!("integer"), &json!("int32"))
        );
        assert!(schemas["io.k8s.api.core.v1.PodSpec"].is_object());
        assert!(
            doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["put"]
                .is_object()
        );
        assert!(group_version(&state, "apis", "nope/v1").is_none());
        assert!(doc["paths"]["/apis/apps/v1/deployments/{name}"].is_null());
        let v2 = v2(&state);
        let policy = &v2["definitions"]["io.k8s.api.networking.v1.NetworkPolicy"];
        assert_eq!(
            policy["x-kubernetes-group-version-kind"][0]["kind"],
            "NetworkPolicy"
        );
        let spec = &policy["properties"]["spec"];
        assert!(
            spec["allOf"][0]["$ref"]
                .as_str()
                .unwrap()
                .starts_with("#/definitions/")
        );
    }
}
