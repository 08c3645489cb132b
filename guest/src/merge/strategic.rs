//! Strategic merge patch for built-in kinds: merge keys, three-way patch generation and application.
//!
//! [`three_way`] builds the patch kubectl's client-side apply would send
//! (rules M5–M8 of k8s-semantics §8.1); [`apply()`] applies a patch with every
//! directive to a live object (M13), for the offline preview and for the
//! simulator's server side. [`schema_for`] gives the compiled-in metadata of
//! a built-in kind; CRDs and unknown kinds use [`super::json`] instead.

mod apply;
mod builtin;
mod diff;
mod directive;
mod list;
mod schema;
mod union;
mod value;

use serde_json::{Map, Value};

pub use builtin::{list_merge_key, schema_for};
pub use directive::holds_directive;
pub use schema::{PatchMeta, Schema};

/// Why a strategic merge patch cannot be built or applied. `field` names the
/// map key or list field where the problem was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// One of the documents is not a JSON object.
    #[error("the {role} object is not a JSON object")]
    NotAnObject {
        /// `original`, `modified`, `current`, `live` or `patch`.
        role: &'static str,
    },
    /// An element of a merge list of objects lacks the list's merge key.
    #[error("an element of list `{field}` does not contain declared merge key `{key}`")]
    MissingMergeKey {
        /// The list field.
        field: String,
        /// The merge key.
        key: &'static str,
    },
    /// A list of objects has a `merge` strategy but no merge key.
    #[error("list `{field}` holds objects but declares no merge key")]
    NoMergeKey {
        /// The list field.
        field: String,
    },
    /// A merge list mixes objects and scalars, or holds lists.
    #[error("the elements of merge list `{field}` must be all objects or all scalars")]
    MixedList {
        /// The list field.
        field: String,
    },
    /// A `$patch` directive with an unknown value, or `merge` inside a list.
    #[error("unsupported `$patch: {directive}` in `{field}`")]
    BadPatchDirective {
        /// The directive's value.
        directive: String,
        /// The map key or list field holding it.
        field: String,
    },
    /// A `$retainKeys`, `$setElementOrder/*` or `$deleteFromPrimitiveList/*`
    /// directive that is not a list (of strings, for `$retainKeys`).
    #[error("directive `{directive}` in `{field}` must be a list")]
    BadDirectiveValue {
        /// The directive key.
        directive: String,
        /// The map holding it.
        field: String,
    },
    /// A patch key that `$retainKeys` does not list: the patch would set a
    /// field it also clears.
    #[error("`$retainKeys` of `{field}` does not list patched key `{key}`")]
    RetainKeysMissing {
        /// The map holding the directive.
        field: String,
        /// The patched key that is not retained.
        key: String,
    },
}

/// M5–M8 three-way strategic merge patch (overwrite = true, as kubectl).
///
/// `original` is the prior (last-applied) object, `None` on first apply or
/// adoption; `modified` is the plan and `current` the live object. The patch
/// deletes what `original` had and `modified` dropped, sets what `modified`
/// has and `current` lacks or holds differently, and leaves live-only fields
/// alone. `{}` means nothing to send.
///
/// # Errors
///
/// [`Error::NotAnObject`] for non-object inputs; [`Error::MissingMergeKey`]
/// and [`Error::MixedList`] for merge lists that cannot be matched.
pub fn three_way(
    original: Option<&Value>,
    modified: &Value,
    current: &Value,
    schema: &Schema,
) -> Result<Value, Error> {
    let modified = as_object(modified, "modified")?;
    let current = as_object(current, "current")?;
    let empty = Map::new();
    let original = original.map_or(Ok(&empty), |o| as_object(o, "original"))?;
    let delta = diff::diff(current, modified, schema, diff::Mode::AddsAndChanges)?;
    let deletions = diff::diff(original, modified, schema, diff::Mode::Deletions)?;
    let patch = union::merge_patches(deletions, delta, schema, Some(schema.root()));
    // A patch that cannot be applied to `current` (a plan whose merge list
    // holds lists, say) is refused here, with the reason, rather than sent.
    apply::merge_map(current.clone(), &patch, schema, Some(schema.root()), "")?;
    Ok(Value::Object(patch))
}

/// M13: apply a strategic merge patch (including all directives) to `live`; directives never appear in the result.
///
/// # Errors
///
/// [`Error::NotAnObject`] for non-object inputs, and the other variants for
/// malformed directives or merge lists.
pub fn apply(live: &Value, patch: &Value, schema: &Schema) -> Result<Value, Error> {
    let live = as_object(live, "live")?;
    let patch = as_object(patch, "patch")?;
    apply::merge_map(live.clone(), patch, schema, Some(schema.root()), "").map(Value::Object)
}

fn as_object<'a>(value: &'a Value, role: &'static str) -> Result<&'a Map<String, Value>, Error> {
    value.as_object().ok_or(Error::NotAnObject { role })
}

#[cfg(test)]
mod tests;
