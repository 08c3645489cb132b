//! Field sets: the paths a manager owns, and their FieldsV1 trie encoding
//! (`f:spec`, `k:{"name":"app"}`, `v:"x"`, `.` for a node that is itself a member).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::ops::Bound::{Excluded, Unbounded};

use serde_json::{Map, Value};

use super::schema::{ListType, Schema};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathElement {
    /// A map field, `f:<name>`.
    Field(String),
    /// An associative-list item by its keys, `k:<canonical JSON object>`.
    Key(String),
    /// A set-list item by value, `v:<JSON>`.
    Value(String),
}

/// A path from the object root.
pub type Path = Vec<PathElement>;

/// A set of owned paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet(pub BTreeSet<Path>);

/// Metadata fields no manager ever owns (apimachinery `stripmeta.go`).
const UNOWNED_METADATA: &[&str] = &[
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
];

impl FieldSet {
    /// The paths an applied configuration sets (structured-merge-diff's `ToFieldSet`):
    /// leaves, list items, atomic maps and lists, nulls and empty objects, and the keys of
    /// `map[string]T` maps; not non-empty maps themselves, and not `apiVersion`, `kind` or
    /// server-owned metadata.
    pub fn of_object(object: &Value, schema: &Schema) -> Self {
        let mut set = FieldSet::default();
        if let Some(map) = object.as_object() {
            for (k, v) in map {
                if k == "apiVersion" || k == "kind" {
                    continue;
                }
                if k == "metadata" {
                    if let Some(meta) = v.as_object() {
                        for (mk, mv) in meta {
                            if is_owned_metadata(mk) {
                                let path = vec![field(k), field(mk)];
                                walk(
                                    mv,
                                    &path,
                                    &mut vec![k.as_str(), mk.as_str()],
                                    schema,
                                    &mut set,
                                );
                                if is_empty(mv) {
                                    set.0.insert(path);
                                }
                            }
                        }
                    }
                    continue;
                }
                walk(v, &[field(k)], &mut vec![k.as_str()], schema, &mut set);
                if is_empty(v) {
                    set.0.insert(vec![field(k)]);
                }
            }
        }
        set
    }

    /// Decodes a FieldsV1 trie.
    pub fn from_fields_v1(trie: &Value) -> Self {
        let mut set = FieldSet::default();
        decode(trie, &mut Vec::new(), &mut set);
        set
    }

    /// Encodes as a FieldsV1 trie.
    pub fn to_fields_v1(&self) -> Value {
        let mut root = Map::new();
        for path in &self.0 {
            let mut node = &mut root;
            for el in path {
                node = node
                    .entry(encode_element(el))
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
                    .expect("trie nodes are objects");
            }
            // A member that also has children carries ".".
            let below = self.0.range::<Path, _>((Excluded(path), Unbounded)).next();
            if below.is_some_and(|p| p.starts_with(path)) {
                node.insert(".".into(), Value::Object(Map::new()));
            }
        }
        Value::Object(root)
    }

    /// Whether the set holds `path` itself.
    pub fn contains(&self, path: &Path) -> bool {
        self.0.contains(path)
    }

    /// Whether the set holds `path` or anything below it.
    pub fn touches(&self, path: &Path) -> bool {
        self.0
            .range(path.clone()..)
            .next()
            .is_some_and(|p| p.starts_with(path))
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Paths in `self` and not in `other`.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        FieldSet(self.0.difference(&other.0).cloned().collect())
    }
}

/// Whether a manager can own the metadata field `name` (apimachinery's `stripmeta.go` leaves
/// out the server-owned ones).
pub fn is_owned_metadata(name: &str) -> bool {
    !UNOWNED_METADATA.contains(&name)
}

fn field(name: &str) -> PathElement {
    PathElement::Field(name.to_string())
}

/// A null or an empty object: set as itself (structured-merge-diff's leaf for what has no
/// children).
fn is_empty(value: &Value) -> bool {
    value.is_null() || value.as_object().is_some_and(Map::is_empty)
}

fn walk<'a>(
    value: &'a Value,
    path: &[PathElement],
    names: &mut Vec<&'a str>,
    schema: &Schema,
    set: &mut FieldSet,
) {
    match value {
        Value::Object(_) if schema.is_atomic_map(names) => {
            set.0.insert(path.to_vec());
        }
        Value::Object(map) => {
            let keyed = schema.has_map_keys(names);
            for (k, v) in map {
                let mut child = path.to_vec();
                child.push(field(k));
                names.push(k);
                walk(v, &child, names, schema, set);
                names.pop();
                // A null or an empty object is set as itself; so is every key of a map.
                if keyed || is_empty(v) {
                    set.0.insert(child);
                }
            }
        }
        Value::Array(items) => match schema.list_type(names) {
            ListType::Atomic => {
                set.0.insert(path.to_vec());
            }
            ListType::Set => {
                for item in items {
                    let mut child = path.to_vec();
                    child.push(PathElement::Value(item.to_string()));
                    set.0.insert(child);
                }
            }
            ListType::Map(keys) => {
                for item in items {
                    let Some(key) = item_key(item, &keys) else {
                        continue;
                    };
                    let mut child = path.to_vec();
                    child.push(key);
                    set.0.insert(child.clone());
                    walk(item, &child, names, schema, set);
                }
            }
        },
        _ => {
            set.0.insert(path.to_vec());
        }
    }
}

/// The `k:` element of a list-map item: its key fields, sorted by name.
pub fn item_key<S: AsRef<str>>(item: &Value, keys: &[S]) -> Option<PathElement> {
    let mut sorted: Vec<&str> = keys.iter().map(AsRef::as_ref).collect();
    sorted.sort_unstable();
    let mut map = Map::new();
    for k in sorted {
        match item.get(k) {
            Some(v) => {
                map.insert(k.to_string(), v.clone());
            }
            // The server defaults `protocol` before keys are compared.
            None if k == "protocol" => {
                map.insert(k.to_string(), Value::String("TCP".into()));
            }
            None => {}
        }
    }
    if map.is_empty() {
        return None;
    }
    Some(PathElement::Key(Value::Object(map).to_string()))
}

fn encode_element(el: &PathElement) -> String {
    match el {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Key(json) => format!("k:{json}"),
        PathElement::Value(json) => format!("v:{json}"),
    }
}

fn decode(node: &Value, path: &mut Path, set: &mut FieldSet) {
    let Some(map) = node.as_object() else {
        return;
    };
    if map.is_empty() && !path.is_empty() {
        set.0.insert(path.clone());
        return;
    }
    for (k, child) in map {
        if k == "." {
            set.0.insert(path.clone());
            continue;
        }
        let el = if let Some(name) = k.strip_prefix("f:") {
            PathElement::Field(name.to_string())
        } else if let Some(json) = k.strip_prefix("k:") {
            // Re-canonicalise so that key order never matters.
            let parsed: Value = serde_json::from_str(json).unwrap_or(Value::Null);
            let keys: Vec<&str> = parsed
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            item_key(&parsed, &keys).unwrap_or_else(|| PathElement::Key(json.to_string()))
        } else if let Some(json) = k.strip_prefix("v:") {
            PathElement::Value(json.to_string())
        } else {
            continue;
        };
        path.push(el);
        decode(child, path, set);
        path.pop();
    }
}

/// A path as apimachinery prints it: `.spec.containers[name="app"].image`.
pub fn display(path: &Path) -> String {
    let mut out = String::new();
    for el in path {
        match el {
            PathElement::Field(name) => {
                let _ = write!(out, ".{name}");
            }
            PathElement::Key(json) => {
                let parsed: Value = serde_json::from_str(json).unwrap_or(Value::Null);
                let parts: Vec<String> = parsed
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let _ = write!(out, "[{}]", parts.join(","));
            }
            PathElement::Value(json) => {
                let _ = write!(out, "[={json}]");
            }
        }
    }
    out
}

/// Removes the value at `path` from `object` (a no-op when absent).
pub fn remove(object: &mut Value, path: &[PathElement]) {
    let Some((last, parent_path)) = path.split_last() else {
        return;
    };
    let mut node = object;
    for el in parent_path {
        let next = match el {
            PathElement::Field(name) => node.get_mut(name),
            PathElement::Key(json) => {
                let Ok(key) = serde_json::from_str::<Value>(json) else {
                    return;
                };
                node.as_array_mut()
                    .and_then(|a| a.iter_mut().find(|item| matches_key(item, &key)))
            }
            PathElement::Value(json) => {
                let Ok(value) = serde_json::from_str::<Value>(json) else {
                    return;
                };
                node.as_array_mut()
                    .and_then(|a| a.iter_mut().find(|item| **item == value))
            }
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    match last {
        PathElement::Field(name) => {
            if let Some(map) = node.as_object_mut() {
                map.remove(name);
            }
        }
        PathElement::Key(json) => {
            if let (Ok(key), Some(items)) =
                (serde_json::from_str::<Value>(json), node.as_array_mut())
            {
                items.retain(|item| !matches_key(item, &key));
            }
        }
        PathElement::Value(json) => {
            if let (Ok(value), Some(items)) =
                (serde_json::from_str::<Value>(json), node.as_array_mut())
            {
                items.retain(|item| *item != value);
            }
        }
    }
}

fn matches_key(item: &Value, key: &Value) -> bool {
    let tcp = Value::String("TCP".into());
    key.as_object().is_some_and(|k| {
        k.iter().all(|(name, v)| match item.get(name) {
            Some(got) => got == v,
            None => name == "protocol" && *v == tcp,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment_schema() -> Schema {
        Schema::new("apps/v1", "Deployment", false)
    }

    #[test]
    fn records_leaves_items_and_granular_maps() {
        let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "app", "image": "nginx", "args": ["a"]}]}}}});
        let trie = FieldSet::of_object(&obj, &deployment_schema()).to_fields_v1();
        assert_eq!(
            trie,
            json!({"f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:replicas": {}, "f:selector": {},
                    "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                        ".": {}, "f:args": {}, "f:image": {}, "f:name": {}}}}}}})
        );
    }

    #[test]
    fn trie_round_trips_and_paths_display_like_apimachinery() {
        let trie = json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}}},
            "f:spec": {"f:ports": {"k:{\"protocol\":\"TCP\",\"port\":80}": {".": {}, "f:port": {}}}}});
        let set = FieldSet::from_fields_v1(&trie);
        assert_eq!(set.0.len(), 3);
        let item = set
            .0
            .iter()
            .find(|p| p.len() == 3 && p[1] == field("ports"))
            .expect("list item");
        assert_eq!(display(item), ".spec.ports[port=80,protocol=\"TCP\"]");
        let reencoded = FieldSet::from_fields_v1(&set.to_fields_v1());
        assert_eq!(reencoded, set);
    }

    #[test]
    fn remove_follows_keys_and_values() {
        let mut obj = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}]},
            "metadata": {"finalizers": ["f1", "f2"]}});
        let image = vec![
            field("spec"),
            field("containers"),
            item_key(&json!({"name": "a"}), &["name"]).unwrap(),
            field("image"),
        ];
        remove(&mut obj, &image);
        remove(
            &mut obj,
            &[
                field("metadata"),
                field("finalizers"),
                PathElement::Value("\"f1\"".into()),
            ],
        );
        assert_eq!(
            obj,
            json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "metadata": {"finalizers": ["f2"]}})
        );
    }
}
