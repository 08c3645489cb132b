//! kube-apiserver's own schemas of the built-in kinds, as a real server serves them in its
//! OpenAPI v3 documents (`schemas.json`, recorded with the differential table:
//! `KRT_E2E_KUBECONFIG=… cargo test -p krt-tests --test differential -- --record`), kept to what
//! server-side apply reads: types, properties, items, map values, references, `default` and the
//! `x-kubernetes-*` markers.
//!
//! The API server builds its server-side apply types from these documents (kube-openapi's
//! `schemaconv`); [`Node`] reads them the same way: a list's type comes from
//! `x-kubernetes-list-type` (or, without one, from its strategic-merge patch strategy), a map is
//! atomic by `x-kubernetes-map-type`, a struct declares its fields, and a non-pointer struct
//! field, present in the kind's Go zero value, carries `default: {}`.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::schema::ListType;

/// The recorded schemas, by OpenAPI definition name, and the definition of each kind.
struct Recorded {
    schemas: Map<String, Value>,
    by_kind: HashMap<(String, String, String), String>,
}

static RECORDED: LazyLock<Recorded> = LazyLock::new(|| {
    let mut file: Value =
        serde_json::from_str(include_str!("schemas.json")).expect("schemas.json is JSON");
    let schemas = match file["schemas"].take() {
        Value::Object(schemas) => schemas,
        _ => Map::new(),
    };
    let mut by_kind = HashMap::new();
    for (name, schema) in &schemas {
        let gvks = schema["x-kubernetes-group-version-kind"].as_array();
        for gvk in gvks.into_iter().flatten() {
            let part = |k: &str| gvk[k].as_str().unwrap_or_default().to_string();
            by_kind.insert((part("group"), part("version"), part("kind")), name.clone());
        }
    }
    Recorded { schemas, by_kind }
});

/// The recorded definition of a kind at `api_version` (`apps/v1`, `v1`), when the server
/// serves it.
pub fn kind(api_version: &str, kind: &str) -> Option<Node> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let recorded = &*RECORDED;
    let key = (group.to_string(), version.to_string(), kind.to_string());
    let def = recorded.schemas.get(recorded.by_kind.get(&key)?)?;
    Some(Node::Typed { field: def, def })
}

/// The recorded definition `name` (`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`).
pub fn definition(name: &str) -> Option<Node> {
    let def = RECORDED.schemas.get(name)?;
    Some(Node::Typed { field: def, def })
}

/// A place in a kind's schema.
#[derive(Debug, Clone, Copy)]
pub enum Node {
    /// Declared: the field's own schema (which carries its markers and `default`) and the
    /// definition it refers to (the same schema when it is inline).
    Typed {
        /// The schema at the field.
        field: &'static Value,
        /// What `field` refers to.
        def: &'static Value,
    },
    /// Free-form below a `type: object` with no declared shape, or a field no schema declares:
    /// maps are granular, lists atomic (structured-merge-diff's deduced type).
    Deduced,
}

/// The name of the definition `schema` refers to (`$ref`, or a single `allOf` of one).
fn reference(schema: &Value) -> Option<&str> {
    schema["$ref"]
        .as_str()
        .or_else(|| match schema["allOf"].as_array().map(Vec::as_slice) {
            Some([one]) => one["$ref"].as_str(),
            _ => None,
        })
        .and_then(|r| r.rsplit('/').next())
}

/// The definition `schema` refers to, or itself.
fn resolve(schema: &'static Value) -> &'static Value {
    reference(schema)
        .and_then(|name| RECORDED.schemas.get(name))
        .unwrap_or(schema)
}

/// The definition of a resource quantity.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Calls `f` on every resource quantity in `object`, a built-in kind at `api_version`, with
/// whether it is a value of a map of quantities (a `ResourceList`), as the recorded schema
/// places them; the first error stops the walk.
pub fn each_quantity<E>(
    api_version: &str,
    kind: &str,
    object: &mut Value,
    f: &mut dyn FnMut(&mut Value, bool) -> Result<(), E>,
) -> Result<(), E> {
    match self::kind(api_version, kind) {
        Some(Node::Typed { def, .. }) => quantities_in(def, object, f),
        _ => Ok(()),
    }
}

fn quantities_in<E>(
    def: &'static Value,
    value: &mut Value,
    f: &mut dyn FnMut(&mut Value, bool) -> Result<(), E>,
) -> Result<(), E> {
    let is_quantity = |schema: &Value| reference(schema) == Some(QUANTITY);
    match value {
        Value::Object(map) => match (def["properties"].as_object(), &def["additionalProperties"]) {
            (Some(properties), _) => {
                for (name, field) in properties {
                    match map.get_mut(name) {
                        Some(Value::Null) | None => {}
                        Some(v) if is_quantity(field) => f(v, false)?,
                        Some(v) => quantities_in(resolve(field), v, f)?,
                    }
                }
            }
            (None, values) if is_quantity(values) => {
                for v in map.values_mut().filter(|v| !v.is_null()) {
                    f(v, true)?;
                }
            }
            (None, values) if values.is_object() => {
                for v in map.values_mut() {
                    quantities_in(resolve(values), v, f)?;
                }
            }
            _ => {}
        },
        Value::Array(items) if def["items"].is_object() => {
            let item = &def["items"];
            for v in items.iter_mut().filter(|v| !v.is_null()) {
                match is_quantity(item) {
                    true => f(v, false)?,
                    false => quantities_in(resolve(item), v, f)?,
                }
            }
        }
        _ => {}
    }
    Ok(())
}

impl Node {
    fn of(field: &'static Value) -> Node {
        Node::Typed {
            field,
            def: resolve(field),
        }
    }

    /// A marker of the field, or else of its definition.
    fn marker(&self, name: &str) -> Option<&'static Value> {
        match *self {
            Node::Typed { field, def } => field.get(name).or_else(|| def.get(name)),
            Node::Deduced => None,
        }
    }

    fn def(&self) -> Option<&'static Value> {
        match *self {
            Node::Typed { def, .. } => Some(def),
            Node::Deduced => None,
        }
    }

    /// The field `name` of this node; the items of a list are stepped into first, as paths of
    /// field names skip them.
    pub fn child(&self, name: &str) -> Node {
        let Some(def) = self.def() else {
            return Node::Deduced;
        };
        let def = match def.get("items") {
            Some(items) => resolve(items),
            None => def,
        };
        if let Some(field) = def["properties"].get(name) {
            return Node::of(field);
        }
        match def.get("additionalProperties") {
            Some(values) if values.is_object() => Node::of(values),
            _ => Node::Deduced,
        }
    }

    /// How the list here merges (kube-openapi's `getListElementRelationship`): by
    /// `x-kubernetes-list-type`, else by the strategic-merge patch strategy, else atomic.
    pub fn list_type(&self) -> ListType {
        let text = |name| self.marker(name).and_then(Value::as_str);
        match text("x-kubernetes-list-type") {
            Some("set") => return ListType::Set,
            Some("map") => {
                let keys = self.marker("x-kubernetes-list-map-keys");
                let keys = keys.and_then(Value::as_array).into_iter().flatten();
                return ListType::Map(keys.filter_map(Value::as_str).map(str::to_string).collect());
            }
            Some(_) => return ListType::Atomic,
            None => {}
        }
        match text("x-kubernetes-patch-strategy") {
            Some("merge" | "merge,retainKeys") => match text("x-kubernetes-patch-merge-key") {
                Some(key) => ListType::Map(vec![key.to_string()]),
                None => ListType::Set,
            },
            _ => ListType::Atomic,
        }
    }

    /// The items of the list here, or this node: what an object found at a list's path is.
    fn element(&self) -> Node {
        match self.def().and_then(|def| def.get("items")) {
            Some(items) => Node::of(items),
            None => *self,
        }
    }

    /// Whether the map here (or each map item of the list here) is owned and replaced whole:
    /// `x-kubernetes-map-type: atomic`, or an object of no declared shape in a built-in kind (a
    /// `RawExtension`, such as a ControllerRevision's `data`, which kube-apiserver owns as one
    /// field).
    pub fn is_atomic_map(&self) -> bool {
        let node = self.element();
        if node.marker("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
            return true;
        }
        node.def().is_some_and(|def| {
            def["type"] == "object"
                && def.get("properties").is_none()
                && def.get("additionalProperties").is_none()
        })
    }

    /// Whether the keys of the object here (or of each item of the list here) are map keys (a
    /// `map[string]T`, or a free-form object) rather than a struct's declared fields.
    pub fn has_map_keys(&self) -> bool {
        let node = self.element();
        node.def().is_none_or(|def| def.get("properties").is_none())
    }

    /// Whether the field here is in its parent's Go zero value: a non-pointer struct
    /// (`default: {}`), or a list, map or struct pointer the parent requires (serialized, as
    /// `null`, even when empty).
    pub fn in_zero_value(&self, required: bool) -> bool {
        let Node::Typed { field, def } = *self else {
            return false;
        };
        let empty_object = field["default"].as_object().is_some_and(Map::is_empty);
        let container = matches!(def["type"].as_str(), Some("array" | "object"));
        empty_object || (required && container)
    }

    /// Whether this struct requires the field `name`.
    pub fn requires(&self, name: &str) -> bool {
        let def = self.def().map(|def| def.get("items").map_or(def, resolve));
        def.and_then(|d| d["required"].as_array())
            .is_some_and(|r| r.iter().any(|n| n == name))
    }
}

/// Adds, empty, the non-pointer struct fields an object of a built-in kind is stored with
/// (`default: {}` in the recorded schemas; Go serializes them even when zero): a CronJob's
/// `jobTemplate.spec.template.metadata`, an EndpointSlice endpoint's `conditions`, a container's
/// `resources`. The top-level `status` is left to the kind's defaults.
pub fn fill_zero_structs(api_version: &str, kind: &str, object: &mut Value) {
    let (Some(Node::Typed { def, .. }), Some(map)) =
        (self::kind(api_version, kind), object.as_object_mut())
    else {
        return;
    };
    for (name, field) in def["properties"].as_object().into_iter().flatten() {
        if name != "status" {
            fill_field(field, map, name);
        }
    }
}

fn fill_field(field: &'static Value, map: &mut Map<String, Value>, name: &str) {
    if field["default"].as_object().is_some_and(Map::is_empty) && !map.contains_key(name) {
        map.insert(name.to_string(), Value::Object(Map::new()));
    }
    if let Some(value) = map.get_mut(name) {
        fill_value(resolve(field), value);
    }
}

fn fill_value(def: &'static Value, value: &mut Value) {
    match value {
        Value::Object(map) => match (def["properties"].as_object(), &def["additionalProperties"]) {
            (Some(properties), _) => {
                for (name, field) in properties {
                    fill_field(field, map, name);
                }
            }
            (None, values) if values.is_object() => {
                map.values_mut()
                    .for_each(|v| fill_value(resolve(values), v));
            }
            _ => {}
        },
        Value::Array(items) if def["items"].is_object() => {
            items
                .iter_mut()
                .for_each(|item| fill_value(resolve(&def["items"]), item));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn zero_structs_are_filled_where_go_serializes_them() {
        let container = json!({"name": "report", "image": "busybox:1.36"});
        let mut cron = json!({"spec": {"schedule": "0 3 * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [container]}}}}}});
        fill_zero_structs("batch/v1", "CronJob", &mut cron);
        let job = &cron["spec"]["jobTemplate"];
        assert_eq!(job["metadata"], json!({}));
        assert_eq!(job["spec"]["template"]["metadata"], json!({}));
        assert_eq!(
            job["spec"]["template"]["spec"]["containers"][0]["resources"],
            json!({})
        );
        assert_eq!(cron["metadata"], json!({}));
        assert!(
            cron.get("status").is_none(),
            "status is the defaults' to set"
        );
    }

    #[test]
    fn list_types_come_from_markers_then_patch_strategies() {
        let pod_spec = kind("v1", "Pod").unwrap().child("spec");
        assert_eq!(
            pod_spec.child("containers").list_type(),
            ListType::Map(vec!["name".into()])
        );
        assert_eq!(
            pod_spec.child("containers").child("args").list_type(),
            ListType::Atomic
        );
        let meta = definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta").unwrap();
        assert_eq!(meta.child("finalizers").list_type(), ListType::Set);
        assert!(meta.child("labels").has_map_keys());
        assert!(!pod_spec.has_map_keys());
        assert!(
            !pod_spec.child("containers").has_map_keys(),
            "an item is a struct"
        );
        assert!(pod_spec.child("nodeSelector").is_atomic_map());
        let revision = kind("apps/v1", "ControllerRevision").unwrap();
        assert!(
            revision.child("data").is_atomic_map(),
            "a RawExtension is owned whole"
        );
        assert!(kind("example.com/v1", "Widget").is_none());
    }
}
