//! Diff of two normalized objects for previews, with Secret values masked (k8s-semantics §8.2).
//!
//! Both sides go through [`normalize_for_diff`] (D2, D3), then the user's ignore paths are
//! removed (D5). The walk compares maps key by key (sorted), lists with a strategic-merge key
//! as maps keyed by it (D6, order-insensitive, paths like `containers[name=app].image`), other
//! lists index by index (`args[0]`), numbers by value (`1 == 1.0`) and quantities canonically
//! at quantity fields (D4). Secret `data` values are never printed: `***` for an added or
//! removed value, `*** (before)` / `*** (after)` for a changed one, in the changes and in the
//! unified YAML diff alike.

mod drift;
mod ignore;
mod quantity;

pub use drift::{drift, overwritten};

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::merge::strategic::list_merge_key;
use crate::model::{FieldChange, ObjectDiff};
use crate::normalize::{is_secret, normalize_for_diff};
use ignore::key_text;

/// Masked Secret value shown when only one side has it (or both have the same value).
const MASK: &str = "***";
/// Masked old Secret value of a changed key.
const MASK_BEFORE: &str = "*** (before)";
/// Masked new Secret value of a changed key.
const MASK_AFTER: &str = "*** (after)";

/// Diff of two objects (None = absent) after `normalize_for_diff` on both, per D2–D6, ignoring `ignore_paths`.
///
/// An absent side compares as an empty object, so a creation lists each top-level field as
/// added. `unified` is empty when `changes` is.
pub fn diff(before: Option<&Value>, after: Option<&Value>, ignore_paths: &[String]) -> ObjectDiff {
    let prepare = |object: Option<&Value>| {
        object.map(|object| {
            let mut object = normalize_for_diff(object);
            let secret = object.as_object().is_some_and(is_secret);
            if ignore_paths.is_empty() && !secret {
                return object;
            }
            for path in ignore_paths {
                ignore::remove(&mut object, path);
            }
            // Ignoring the last annotation or label leaves an empty map, and a
            // Secret's folded data is normalized once more: as a second pass would.
            normalize_for_diff(&object)
        })
    };
    let (before, after) = (prepare(before), prepare(after));
    let typed = after.as_ref().or(before.as_ref());
    let text = |key| {
        typed
            .and_then(|o| o.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let secret = [&before, &after]
        .into_iter()
        .flatten()
        .any(|o| o.as_object().is_some_and(is_secret));
    let mut walk = Walk {
        api_version: text("apiVersion"),
        kind: text("kind"),
        secret,
        path: Vec::new(),
        fields: Vec::new(),
        changes: Vec::new(),
    };
    let empty = Value::Object(Map::new());
    match (&before, &after) {
        (None, None) => {}
        (Some(b), None) if b.is_object() => walk.compare(Some(b), Some(&empty)),
        (None, Some(a)) if a.is_object() => walk.compare(Some(&empty), Some(a)),
        (b, a) => walk.compare(b.as_ref(), a.as_ref()),
    }
    let unified = if walk.changes.is_empty() {
        String::new()
    } else {
        unified(before, after, secret)
    };
    ObjectDiff {
        changes: walk.changes,
        unified,
    }
}

/// One segment of a change's path.
enum Segment {
    /// A map key: `.key`.
    Key(String),
    /// An item of an atomic list: `[3]`.
    Index(usize),
    /// An item of a merge list: `[name=app]`.
    Item(&'static str, String),
}

/// The state of one comparison.
struct Walk {
    api_version: String,
    kind: String,
    /// Whether the object is a Secret (its `data` is masked).
    secret: bool,
    /// Where the walk is.
    path: Vec<Segment>,
    /// The field names of `path` without list items, for merge keys and quantity fields.
    fields: Vec<String>,
    changes: Vec<FieldChange>,
}

impl Walk {
    /// Compares the values at the current path; `None` = absent.
    fn compare(&mut self, before: Option<&Value>, after: Option<&Value>) {
        match (before, after) {
            (Some(Value::Object(b)), Some(Value::Object(a))) => {
                let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
                keys.sort();
                keys.dedup();
                for key in keys {
                    self.path.push(Segment::Key(key.clone()));
                    self.fields.push(key.clone());
                    self.compare(b.get(key), a.get(key));
                    self.fields.pop();
                    self.path.pop();
                }
            }
            (Some(Value::Array(b)), Some(Value::Array(a))) => self.compare_lists(b, a),
            (Some(b), Some(a)) if self.same_scalar(b, a) => {}
            (None, None) => {}
            (b, a) => self.record(b, a),
        }
    }

    /// Compares two lists: by merge key when the field has one and every item carries a
    /// distinct key, else index by index.
    fn compare_lists(&mut self, before: &[Value], after: &[Value]) {
        let fields: Vec<&str> = self.fields.iter().map(String::as_str).collect();
        let keyed = list_merge_key(&self.api_version, &self.kind, &fields)
            .and_then(|key| Some((key, keyed_items(before, key)?, keyed_items(after, key)?)));
        let Some((key, before, after)) = keyed else {
            for index in 0..before.len().max(after.len()) {
                self.path.push(Segment::Index(index));
                self.compare(before.get(index), after.get(index));
                self.path.pop();
            }
            return;
        };
        let before_map: HashMap<&str, &Value> =
            before.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let after_map: HashMap<&str, &Value> =
            after.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let removed = before
            .iter()
            .filter(|(n, _)| !after_map.contains_key(n.as_str()));
        for (name, _) in after.iter().chain(removed) {
            self.path.push(Segment::Item(key, name.clone()));
            self.compare(
                before_map.get(name.as_str()).copied(),
                after_map.get(name.as_str()).copied(),
            );
            self.path.pop();
        }
    }

    /// Whether two non-container values are equal: numbers by value, quantities canonically
    /// at quantity fields.
    fn same_scalar(&self, before: &Value, after: &Value) -> bool {
        match (before, after) {
            (Value::Number(b), Value::Number(a)) if b != a => {
                let integral = |n: &serde_json::Number| {
                    n.as_i64().map(i128::from).or(n.as_u64().map(i128::from))
                };
                match (integral(b), integral(a)) {
                    (Some(b), Some(a)) => b == a,
                    _ => b.as_f64() == a.as_f64() || self.same_quantity(before, after),
                }
            }
            _ => before == after || self.same_quantity(before, after),
        }
    }

    /// Whether both values are the same quantity at a quantity field.
    fn same_quantity(&self, before: &Value, after: &Value) -> bool {
        quantity::is_quantity_field(&self.fields) && quantity::equal(before, after)
    }

    /// Records a change at the current path, masking Secret data.
    fn record(&mut self, before: Option<&Value>, after: Option<&Value>) {
        let masked = self.secret
            && matches!(
                self.fields.first().map(String::as_str),
                Some("data" | "stringData")
            );
        let render = |value: &Value, tag: &str| {
            if masked {
                mask(value, tag).to_string()
            } else {
                crate::model::json_text(value)
            }
        };
        let (tag_before, tag_after) = match (before, after) {
            (Some(_), Some(_)) => (MASK_BEFORE, MASK_AFTER),
            _ => (MASK, MASK),
        };
        self.changes.push(FieldChange {
            path: self.path_text(),
            before: before.map(|v| render(v, tag_before)),
            after: after.map(|v| render(v, tag_after)),
        });
    }

    /// The current path as text: `spec.template.spec.containers[name=app].ports[0]`.
    fn path_text(&self) -> String {
        let mut text = String::new();
        for segment in &self.path {
            match segment {
                Segment::Key(key) => {
                    if !text.is_empty() {
                        text.push('.');
                    }
                    text.push_str(key);
                }
                Segment::Index(index) => text.push_str(&format!("[{index}]")),
                Segment::Item(key, value) => text.push_str(&format!("[{key}={value}]")),
            }
        }
        text
    }
}

/// The items of a merge list with their keys, `None` when an item is not an object, lacks
/// the key or repeats one.
fn keyed_items<'a>(items: &'a [Value], key: &str) -> Option<Vec<(String, &'a Value)>> {
    let mut seen = HashSet::with_capacity(items.len());
    items
        .iter()
        .map(|item| {
            let name = key_text(item.as_object()?.get(key)?);
            seen.insert(name.clone()).then_some((name, item))
        })
        .collect()
}

/// `value` with every scalar replaced by `tag` (map keys kept).
fn mask(value: &Value, tag: &str) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), mask(v, tag))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| mask(v, tag)).collect()),
        _ => Value::String(tag.to_owned()),
    }
}

/// Masks the `data` of both sides the way `kubectl diff` does.
fn mask_secret_data(before: Option<&mut Value>, after: Option<&mut Value>) {
    let data = |side: &Option<&mut Value>| side.as_ref().and_then(|o| o.get("data")).cloned();
    let (old, new) = (data(&before), data(&after));
    for (side, this, other, tag) in [
        (before, &old, &new, MASK_BEFORE),
        (after, &new, &old, MASK_AFTER),
    ] {
        if let (Some(side), Some(this)) = (side.and_then(Value::as_object_mut), this) {
            side.insert("data".to_owned(), masked_data(this, other.as_ref(), tag));
        }
    }
}

/// One side's Secret `data` masked: `tag` for a key whose value differs on the other side,
/// `***` otherwise.
fn masked_data(this: &Value, other: Option<&Value>, tag: &str) -> Value {
    let Some(this) = this.as_object() else {
        return mask(this, MASK);
    };
    let other = other.and_then(Value::as_object);
    Value::Object(
        this.iter()
            .map(|(key, value)| {
                let tag = match other.and_then(|m| m.get(key)) {
                    Some(other) if other != value => tag,
                    _ => MASK,
                };
                (key.clone(), mask(value, tag))
            })
            .collect(),
    )
}

/// A unified diff of both sides rendered as YAML.
fn unified(mut before: Option<Value>, mut after: Option<Value>, secret: bool) -> String {
    if secret {
        mask_secret_data(before.as_mut(), after.as_mut());
    }
    let yaml = |value: Option<Value>| value.map(|v| to_yaml(&v)).unwrap_or_default();
    let (old, new) = (yaml(before), yaml(after));
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header("before", "after")
        .to_string()
}

/// YAML text of a value (pretty JSON, itself YAML, if the serializer refuses it).
fn to_yaml(value: &Value) -> String {
    serde_saphyr::to_string(value)
        .or_else(|_| serde_json::to_string_pretty(value).map(|s| s + "\n"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(d: &ObjectDiff) -> Vec<&str> {
        d.changes.iter().map(|c| c.path.as_str()).collect()
    }

    #[test]
    fn numbers_compare_by_value() {
        let d = diff(
            Some(&json!({"a": 1, "b": 2})),
            Some(&json!({"a": 1.0, "b": 3})),
            &[],
        );
        assert_eq!(paths(&d), ["b"]);
        assert_eq!(d.changes[0].before.as_deref(), Some("2"));
        assert_eq!(d.changes[0].after.as_deref(), Some("3"));
    }

    #[test]
    fn root_values_that_are_not_objects() {
        let d = diff(Some(&json!([1])), None, &[]);
        assert_eq!(
            d.changes,
            [FieldChange {
                path: String::new(),
                before: Some("[1]".into()),
                after: None
            }]
        );
        assert!(diff(None, None, &[]).changes.is_empty());
        assert!(
            diff(Some(&json!("x")), Some(&json!("x")), &[])
                .unified
                .is_empty()
        );
    }

    #[test]
    fn masks_nested_values() {
        assert_eq!(
            mask(&json!({"a": [1, {"b": null}]}), MASK),
            json!({"a": ["***", {"b": "***"}]})
        );
    }
}
