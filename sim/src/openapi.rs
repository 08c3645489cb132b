//! OpenAPI v3 documents (`/openapi/v3` and `/openapi/v3/{api/v1,apis/GROUP/VERSION}`): the paths
//! of every served resource with the operations and query parameters a client checks for, such
//! as `fieldValidation` on PATCH (kubectl's validation then relies on the server). No schemas:
//! clients that look for one fall back to their compiled-in types.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;
use crate::store::State;

/// The query parameters of a write, as kube-apiserver declares them.
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "pretty"];

fn parameters(names: &[&str]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|n| json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}}))
            .collect(),
    )
}

fn operation(t: &ResourceType, action: &str, id: &str, params: &[&str]) -> Value {
    json!({
        "operationId": id,
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": t.group, "version": t.version, "kind": t.kind},
        "parameters": parameters(params),
        "responses": {"200": {"description": "OK"}},
    })
}

/// The paths of one resource type.
fn paths(t: &ResourceType, out: &mut Map<String, Value>) {
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
    let id = |verb: &str| format!("{verb}{}", t.kind);
    let collection = format!("{prefix}{scope}/{}", t.plural);
    let mut patch_params = WRITE_PARAMS.to_vec();
    patch_params.push("force");
    out.insert(
        collection.clone(),
        json!({
            "get": operation(t, "list", &id("list"), &["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "timeoutSeconds", "watch", "allowWatchBookmarks"]),
            "post": operation(t, "post", &id("create"), WRITE_PARAMS),
            "delete": operation(t, "deletecollection", &id("deleteCollection"), &["labelSelector", "fieldSelector", "dryRun", "propagationPolicy"]),
        }),
    );
    out.insert(
        format!("{collection}/{{name}}"),
        json!({
            "get": operation(t, "get", &id("read"), &["pretty"]),
            "put": operation(t, "put", &id("replace"), WRITE_PARAMS),
            "patch": operation(t, "patch", &id("patch"), &patch_params),
            "delete": operation(t, "delete", &id("delete"), &["dryRun", "gracePeriodSeconds", "propagationPolicy"]),
        }),
    );
    if t.status_subresource {
        out.insert(
            format!("{collection}/{{name}}/status"),
            json!({
                "get": operation(t, "get", &id("readStatus"), &["pretty"]),
                "put": operation(t, "put", &id("replaceStatus"), WRITE_PARAMS),
                "patch": operation(t, "patch", &id("patchStatus"), &patch_params),
            }),
        );
    }
}

/// `api/v1` or `apis/GROUP/VERSION` for a type.
fn root_of(t: &ResourceType) -> String {
    if t.group.is_empty() {
        format!("api/{}", t.version)
    } else {
        format!("apis/{}/{}", t.group, t.version)
    }
}

fn hash(doc: &Value) -> String {
    let mut h = DefaultHasher::new();
    doc.to_string().hash(&mut h);
    format!("{:016X}", h.finish())
}

fn document(state: &State, root: &str) -> Option<Value> {
    let mut out = Map::new();
    for t in state.resource_types().filter(|t| root_of(t) == root) {
        paths(t, &mut out);
    }
    (!out.is_empty()).then(|| {
        json!({
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.33.0-krt-sim"},
            "paths": out,
            "components": {"schemas": {}},
        })
    })
}

/// `/openapi/v3`: the document of every served group/version, with a content hash.
pub fn index(state: &State) -> Value {
    let roots: BTreeMap<String, ()> = state.resource_types().map(|t| (root_of(t), ())).collect();
    let paths: Map<String, Value> = roots
        .into_keys()
        .filter_map(|root| {
            let doc = document(state, &root)?;
            let url = format!("/openapi/v3/{root}?hash={}", hash(&doc));
            Some((root, json!({"serverRelativeURL": url})))
        })
        .collect();
    json!({ "paths": paths })
}

/// `/openapi/v3/{prefix}/{rest}` (`api` + `v1`, or `apis` + `GROUP/VERSION`); `None` when
/// nothing is served there.
pub fn group_version(state: &State, prefix: &str, rest: &str) -> Option<Value> {
    document(state, &format!("{prefix}/{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn patch_operations_declare_field_validation_for_their_kind() {
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
        assert!(group_version(&state, "apis", "nope/v1").is_none());
        assert!(doc["paths"]["/apis/apps/v1/deployments/{name}"].is_null());
    }
}
