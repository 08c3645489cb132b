//! Three-way JSON merge patch (RFC 7386) for CRDs and unknown kinds (rule M9).
//!
//! Lists are atomic here: any change sends the whole new list. Built-in kinds use
//! the strategic merge patch of [`super::strategic`] instead.

use serde_json::{Map, Value};

/// Why a three-way JSON merge patch cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// One of the three documents is not a JSON object.
    #[error("the {role} object is not a JSON object")]
    NotAnObject {
        /// `original`, `modified` or `current`.
        role: &'static str,
    },
    /// `apiVersion`, `kind` or `metadata.name` differs between the prior and the
    /// planned object: that is a replace, not a patch (rule M0).
    #[error("{field} differs between the prior and the planned object; it cannot be patched")]
    IdentityChanged {
        /// `apiVersion`, `kind` or `metadata.name`.
        field: &'static str,
    },
}

/// RFC 7386 diff from `from` to `to` (nulls for removed keys; arrays atomic).
///
/// Applying the result to `from` with [`apply`] yields `to`. A key whose value is an
/// object on both sides is diffed recursively and left out when nothing changed; an
/// object that is new in `to` (even `{}`) is sent as a value.
pub fn diff(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(from), Value::Object(to)) => Value::Object(diff_maps(from, to)),
        _ => to.clone(),
    }
}

fn diff_maps(from: &Map<String, Value>, to: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = Map::new();
    for (key, new) in to {
        match (from.get(key), new) {
            (Some(Value::Object(old)), Value::Object(new)) => {
                let sub = diff_maps(old, new);
                if !sub.is_empty() {
                    patch.insert(key.clone(), Value::Object(sub));
                }
            }
            (Some(old), new) if old == new => {}
            (_, new) => {
                patch.insert(key.clone(), new.clone());
            }
        }
    }
    for key in from.keys().filter(|key| !to.contains_key(*key)) {
        patch.insert(key.clone(), Value::Null);
    }
    patch
}

/// RFC 7386 application of `patch` to `target`.
///
/// Same result as `json_patch::merge`, but removals keep the order of the
/// remaining keys (so a preview shows the object in its original order).
pub fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in patch {
            if value.is_null() {
                map.shift_remove(key);
            } else {
                apply(map.entry(key.as_str()).or_insert(Value::Null), value);
            }
        }
    }
}

/// M9: patch = deletions(original→modified, nulls only) ∪ additions/changes(current→modified, nulls dropped).
///
/// `original` is the prior (last-applied) object, `None` on first apply or
/// adoption (then nothing is deleted). Keys only in `current` survive; keys that
/// were in `original` and are gone from `modified` become `null`; keys of
/// `modified` that differ from `current` are sent. An explicit `null` in
/// `modified` deletes the key when `original` had it. Returns `{}` when
/// nothing needs to be sent.
///
/// # Errors
///
/// [`Error::NotAnObject`] when an input is not a JSON object, and
/// [`Error::IdentityChanged`] when `apiVersion`, `kind` or `metadata.name`
/// differ between `original` and `modified`.
pub fn three_way(
    original: Option<&Value>,
    modified: &Value,
    current: &Value,
) -> Result<Value, Error> {
    let modified_map = as_object(modified, "modified")?;
    let current_map = as_object(current, "current")?;
    let mut patch = Value::Object(Map::new());
    if let Some(original) = original {
        let original_map = as_object(original, "original")?;
        check_identity(original, modified)?;
        patch = Value::Object(keep_only_nulls(diff_maps(original_map, modified_map)));
    }
    let additions = drop_nulls(diff_maps(current_map, modified_map));
    apply(&mut patch, &Value::Object(additions));
    Ok(patch)
}

fn as_object<'a>(value: &'a Value, role: &'static str) -> Result<&'a Map<String, Value>, Error> {
    value.as_object().ok_or(Error::NotAnObject { role })
}

fn check_identity(original: &Value, modified: &Value) -> Result<(), Error> {
    for (field, pointer) in [
        ("apiVersion", "/apiVersion"),
        ("kind", "/kind"),
        ("metadata.name", "/metadata/name"),
    ] {
        if original.pointer(pointer) != modified.pointer(pointer) {
            return Err(Error::IdentityChanged { field });
        }
    }
    Ok(())
}

/// Keeps only the `null`s of a patch (and the objects leading to them).
fn keep_only_nulls(patch: Map<String, Value>) -> Map<String, Value> {
    patch
        .into_iter()
        .filter_map(|(key, value)| match value {
            Value::Null => Some((key, Value::Null)),
            Value::Object(sub) if !sub.is_empty() => {
                let sub = keep_only_nulls(sub);
                (!sub.is_empty()).then(|| (key, Value::Object(sub)))
            }
            _ => None,
        })
        .collect()
}

/// Drops the `null`s of a patch; an object left empty by that is dropped too,
/// but an object that was `{}` already is a value and stays.
fn drop_nulls(patch: Map<String, Value>) -> Map<String, Value> {
    patch
        .into_iter()
        .filter_map(|(key, value)| match value {
            Value::Null => None,
            Value::Object(sub) if !sub.is_empty() => {
                let sub = drop_nulls(sub);
                (!sub.is_empty()).then(|| (key, Value::Object(sub)))
            }
            value => Some((key, value)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_then_apply_round_trips() {
        let from = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}, "gone": true});
        let to = json!({"a": 2, "b": {"c": [2], "d": "x", "e": {}}, "new": null});
        let patch = diff(&from, &to);
        assert_eq!(
            patch,
            json!({"a": 2, "b": {"c": [2], "e": {}}, "new": null, "gone": null})
        );
        let mut doc = from.clone();
        apply(&mut doc, &patch);
        assert_eq!(doc, json!({"a": 2, "b": {"c": [2], "d": "x", "e": {}}}));
    }

    #[test]
    fn apply_keeps_key_order_on_removal() {
        let mut doc = json!({"a": 1, "b": 2, "c": 3, "d": 4});
        apply(&mut doc, &json!({"b": null}));
        let keys: Vec<_> = doc.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "c", "d"]);
    }

    #[test]
    fn explicit_empty_object_is_sent_as_a_value() {
        let patch = three_way(None, &json!({"spec": {}}), &json!({"other": 1})).unwrap();
        assert_eq!(patch, json!({"spec": {}}));
    }

    #[test]
    fn refuses_identity_changes() {
        let original = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"}});
        let modified = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "b"}});
        assert_eq!(
            three_way(Some(&original), &modified, &original),
            Err(Error::IdentityChanged {
                field: "metadata.name"
            })
        );
    }

    #[test]
    fn refuses_non_objects() {
        assert_eq!(
            three_way(None, &json!([1]), &json!({})),
            Err(Error::NotAnObject { role: "modified" })
        );
    }
}
