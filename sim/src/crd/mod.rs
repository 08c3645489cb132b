//! Custom resources under their CRD's structural schema, as apiextensions-apiserver treats
//! them: fields the schema does not declare are pruned (unless
//! `x-kubernetes-preserve-unknown-fields`), `default`s are filled in, and what violates the
//! schema is a 422 naming the field.

mod structural;

use serde_json::Value;

use crate::kinds::Step;
use crate::registry::ResourceType;
use crate::status::{ApiError, Subject};
use crate::store::{Key, State};

pub use structural::Node;

/// The finalizer apiextensions-apiserver puts on a CRD being deleted, removed once every custom
/// resource of it is gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The key of the CRD serving `rt`.
pub fn crd_key(rt: &ResourceType) -> Key {
    Key::of(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        format!("{}.{}", rt.plural, rt.group),
    )
}

/// The `openAPIV3Schema` of `rt`'s version in its CRD.
pub fn schema_of(state: &State, rt: &ResourceType) -> Option<Value> {
    let crd = state.get(&crd_key(rt))?;
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == rt.version.as_str())
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .filter(|s| s.is_object())
}

/// Removes from an applied configuration of `rt` what its CRD's schema does not declare (the
/// API server prunes the configuration before it merges it).
pub fn prune(state: &State, rt: &ResourceType, config: &mut Value) {
    if let Some(schema) = schema_of(state, rt) {
        let mut defaulted = config.clone();
        Node(&schema).prune_and_default(&mut defaulted, true);
        prune_like(config, &defaulted);
    }
}

/// The fields of the custom resource `object` of `rt` its CRD's schema does not declare (none
/// without a schema).
pub fn unknown_fields(state: &State, rt: &ResourceType, object: &Value) -> Vec<Vec<Step>> {
    schema_of(state, rt).map_or_else(Vec::new, |schema| {
        Node(&schema).unknown_fields(object, true)
    })
}

/// Keeps in `config` only what `pruned` (its pruned and defaulted copy) kept.
fn prune_like(config: &mut Value, pruned: &Value) {
    match (config, pruned) {
        (Value::Object(c), Value::Object(p)) => {
            c.retain(|k, _| p.contains_key(k));
            for (k, v) in c.iter_mut() {
                prune_like(v, &p[k]);
            }
        }
        (Value::Array(c), Value::Array(p)) => {
            for (v, q) in c.iter_mut().zip(p) {
                prune_like(v, q);
            }
        }
        _ => {}
    }
}

/// Prunes, defaults and validates the custom resource `object` of `rt` against its CRD; a new
/// one is refused while the CRD is being deleted.
///
/// # Errors
/// 405 for a create under a terminating CRD; 422 Invalid listing the schema violations.
pub fn admit(
    state: &State,
    rt: &ResourceType,
    live: Option<&Value>,
    object: &mut Value,
) -> Result<(), ApiError> {
    let terminating = state
        .get(&crd_key(rt))
        .is_some_and(|crd| !crd["metadata"]["deletionTimestamp"].is_null());
    if live.is_none() && terminating {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "create not allowed while custom resource definition is terminating",
        ));
    }
    let Some(schema) = schema_of(state, rt) else {
        return Ok(());
    };
    let root = Node(&schema);
    root.prune_and_default(object, true);
    let causes = root.validate(object);
    if causes.is_empty() {
        return Ok(());
    }
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    Err(ApiError::invalid(
        &rt.kind,
        &Subject {
            group: &rt.group,
            resource: &rt.plural,
            name,
        },
        causes,
    ))
}
