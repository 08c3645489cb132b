//! structured-merge-diff's `TypedValue.Compare`: the paths a write added, modified and removed.
//! Leaves (scalars, atomic maps and lists, and maps or lists empty on both sides) are compared
//! by value; a map or list item that appears or goes is itself added or removed, which is how an
//! `Update` manager comes to own a new map as a member (`".": {}`) besides its keys.
//!
//! The object before a create is the Go zero value of the kind, in which non-pointer structs
//! (`spec`, `spec.template`, `spec.strategy`, ...) exist, empty ([`Schema::is_zero_struct`]):
//! those are never added.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::fieldset::{FieldSet, Path, PathElement, item_key};
use super::schema::{ListType, Schema};

/// What changed between two objects.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Paths present only after.
    pub added: FieldSet,
    /// Leaves whose value changed.
    pub modified: FieldSet,
    /// Paths present only before.
    pub removed: FieldSet,
}

/// Compares `before` with `after` (whole objects; `apiVersion`, `kind` and server-owned
/// metadata skipped).
pub fn compare(before: &Value, after: &Value, schema: &Schema) -> Comparison {
    let mut out = Comparison::default();
    let empty = Map::new();
    let (b, a) = (
        before.as_object().unwrap_or(&empty),
        after.as_object().unwrap_or(&empty),
    );
    for key in union(b, a) {
        if key == "apiVersion" || key == "kind" {
            continue;
        }
        let path = vec![PathElement::Field(key.to_string())];
        let mut names = vec![key];
        if key == "metadata" {
            let (bm, am) = (
                b.get(key).and_then(Value::as_object).unwrap_or(&empty),
                a.get(key).and_then(Value::as_object).unwrap_or(&empty),
            );
            for mk in union(bm, am) {
                if super::fieldset::is_owned_metadata(mk) {
                    let mut child = path.clone();
                    child.push(PathElement::Field(mk.to_string()));
                    names.push(mk);
                    walk(
                        bm.get(mk),
                        am.get(mk),
                        &child,
                        &mut names,
                        schema,
                        &mut out,
                        true,
                    );
                    names.pop();
                }
            }
            continue;
        }
        walk(
            b.get(key),
            a.get(key),
            &path,
            &mut names,
            schema,
            &mut out,
            true,
        );
    }
    out
}

fn union<'a>(a: &'a Map<String, Value>, b: &'a Map<String, Value>) -> Vec<&'a str> {
    let mut keys: Vec<&str> = a.keys().map(String::as_str).collect();
    keys.extend(b.keys().map(String::as_str).filter(|k| !a.contains_key(*k)));
    keys
}

fn leaf(before: Option<&Value>, after: Option<&Value>, path: &Path, out: &mut Comparison) {
    match (before, after) {
        (None, Some(_)) => {
            out.added.0.insert(path.clone());
        }
        (Some(_), None) => {
            out.removed.0.insert(path.clone());
        }
        (Some(b), Some(a)) if a != b => {
            out.modified.0.insert(path.clone());
        }
        _ => {}
    }
}

fn is_empty(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

fn walk<'a>(
    before: Option<&'a Value>,
    after: Option<&'a Value>,
    path: &Path,
    names: &mut Vec<&'a str>,
    schema: &Schema,
    out: &mut Comparison,
    parent_before: bool,
) {
    // The zero value of a kind has its non-pointer structs, empty, wherever their parent is
    // (`parent_before`): not inside a list item the write adds.
    static ZERO: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));
    let field = matches!(path.last(), Some(PathElement::Field(_)));
    let zero = field && parent_before && schema.is_zero_struct(names);
    let null = field && parent_before && schema.is_zero_null(names);
    let before = before
        .or_else(|| zero.then_some(&*ZERO))
        .or_else(|| null.then_some(&Value::Null));
    let parent = before.is_some();
    let shape = after.filter(|v| !v.is_null()).or(before);
    let container = matches!(shape, Some(Value::Object(_) | Value::Array(_)));
    let atomic = match shape {
        Some(Value::Object(_)) => schema.is_atomic_map(names),
        Some(Value::Array(_)) => schema.list_type(names) == ListType::Atomic,
        _ => true,
    };
    if !container || atomic || (is_empty(before) && is_empty(after)) {
        leaf(before, after, path, out);
        return;
    }
    match shape {
        Some(Value::Object(_)) => {
            static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
            let b = before.and_then(Value::as_object).unwrap_or(&EMPTY);
            let a = after.and_then(Value::as_object).unwrap_or(&EMPTY);
            for key in union(b, a) {
                let mut child = path.clone();
                child.push(PathElement::Field(key.to_string()));
                names.push(key);
                walk(b.get(key), a.get(key), &child, names, schema, out, parent);
                names.pop();
            }
        }
        Some(Value::Array(_)) => items(before, after, path, names, schema, out),
        _ => {}
    }
    match (before, after) {
        (None, Some(_)) => {
            out.added.0.insert(path.clone());
        }
        (Some(_), None) => {
            out.removed.0.insert(path.clone());
        }
        _ => {}
    }
}

/// The items of a set or map list, matched by value or by key.
fn items<'a>(
    before: Option<&'a Value>,
    after: Option<&'a Value>,
    path: &Path,
    names: &mut Vec<&'a str>,
    schema: &Schema,
    out: &mut Comparison,
) {
    let element = |item: &Value| match schema.list_type(names) {
        ListType::Map(keys) => item_key(item, &keys),
        _ => Some(PathElement::Value(item.to_string())),
    };
    let keyed = |list: Option<&'a Value>| -> Vec<(PathElement, &'a Value)> {
        list.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|item| element(item).map(|k| (k, item)))
            .collect()
    };
    let (b, a) = (keyed(before), keyed(after));
    let mut seen = Vec::new();
    for (key, _) in b.iter().chain(a.iter()) {
        if seen.contains(key) {
            continue;
        }
        seen.push(key.clone());
        let find = |list: &[(PathElement, &'a Value)]| {
            list.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
        };
        let mut child = path.clone();
        child.push(key.clone());
        walk(find(&b), find(&a), &child, names, schema, out, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn new_maps_are_added_but_zero_value_structs_are_not() {
        let schema = Schema::new("apps/v1", "Deployment", false);
        let created = json!({"metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%"}},
                "template": {"spec": {"containers": [{"name": "a", "resources": {}}]}}}});
        let c = compare(&json!({}), &created, &schema);
        let trie = c.added.to_fields_v1();
        assert_eq!(
            trie,
            json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {"f:replicas": {}, "f:strategy": {"f:type": {},
                    "f:rollingUpdate": {".": {}, "f:maxSurge": {}}},
                    "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {
                        ".": {}, "f:name": {}, "f:resources": {}}}}}}})
        );
        let mut changed = created.clone();
        changed["spec"]["replicas"] = json!(2);
        changed["metadata"]["labels"] = json!({});
        let c = compare(&created, &changed, &schema);
        assert_eq!(
            c.modified.to_fields_v1(),
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert_eq!(
            c.removed.to_fields_v1(),
            json!({"f:metadata": {"f:labels": {"f:app": {}}}})
        );
        assert!(c.added.is_empty());
    }
}
