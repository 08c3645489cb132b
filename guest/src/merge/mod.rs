//! Client-side merging: the three-way patch kubectl's apply would send
//! (M4–M9) and applying a patch locally, as the server would, for offline
//! previews (M13). [`three_way`] is the one entry point: it picks
//! [`strategic`] merge for built-in kinds and [`json`] merge patch (RFC 7386)
//! for CRDs and unknown kinds.

pub mod json;
pub mod strategic;

use crate::errors;
use crate::model::{Patch, PatchType, Status};

use serde_json::{Map, Value};

fn kind_of(object: &Value) -> (&str, &str) {
    let field = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
    (field("apiVersion"), field("kind"))
}

/// The three-way patch from `original` (last applied) to `modified` (the plan)
/// given `current` (the live object, `None` when absent), in the format the
/// kind of `modified` takes. The body is `{}` when nothing would change.
///
/// # Errors
/// `illegal-manifest` when an input is not an object, a merge key is missing
/// or the identity (apiVersion, kind, name) changed between prior and plan.
pub fn three_way(
    original: Option<&Value>,
    modified: &Value,
    current: Option<&Value>,
) -> Result<Patch, Status> {
    let empty = Value::Object(Map::new());
    let current = current.unwrap_or(&empty);
    let (api_version, kind) = kind_of(modified);
    let failed = |e: &dyn std::fmt::Display| {
        errors::illegal_manifest(format!(
            "cannot compute the patch for {kind} '{}': {e}",
            modified
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("?")
        ))
    };
    match strategic::schema_for(api_version, kind) {
        Some(schema) => strategic::three_way(original, modified, current, schema)
            .map(|body| Patch {
                type_: PatchType::StrategicMerge,
                body,
            })
            .map_err(|e| failed(&e)),
        None => json::three_way(original, modified, current)
            .map(|body| Patch {
                type_: PatchType::JsonMerge,
                body,
            })
            .map_err(|e| failed(&e)),
    }
}

/// Applies `patch` to `live` locally, as the server would (M13); used only for
/// offline previews. `body` of an apply patch is merged like a strategic merge
/// patch for built-in kinds and a JSON merge patch otherwise.
///
/// # Errors
/// `illegal-manifest` when the strategic merge patch cannot be applied.
pub fn apply_locally(live: &Value, patch_type: PatchType, body: &Value) -> Result<Value, Status> {
    let (api_version, kind) = kind_of(live);
    let schema = match patch_type {
        PatchType::JsonMerge | PatchType::JsonPatch => None,
        PatchType::StrategicMerge | PatchType::Apply => strategic::schema_for(api_version, kind),
    };
    match schema {
        Some(schema) => strategic::apply(live, body, schema).map_err(|e| {
            errors::illegal_manifest(format!("cannot apply the patch to {kind} locally: {e}"))
        }),
        None => {
            let mut out = live.clone();
            json::apply(&mut out, body);
            Ok(out)
        }
    }
}

/// Whether a patch body changes nothing (`{}`).
pub fn is_empty(body: &Value) -> bool {
    body.as_object().is_some_and(Map::is_empty)
}
