//! The directive keys of a strategic merge patch (k8s-semantics §1.3).

use serde_json::{Map, Value};

/// `"$patch": "replace" | "delete"` inside a map or a merge-list element.
pub(super) const PATCH: &str = "$patch";
/// `"$retainKeys": [..]`: the keys a retainKeys map keeps.
pub(super) const RETAIN_KEYS: &str = "$retainKeys";
/// `"$setElementOrder/<field>": [..]`: the final order of a merge list.
pub(super) const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
/// `"$deleteFromPrimitiveList/<field>": [..]`: values removed from a scalar list.
pub(super) const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// `$patch` values.
pub(super) const REPLACE: &str = "replace";
/// `$patch` value that deletes a map or a merge-list element.
pub(super) const DELETE: &str = "delete";

/// The `$setElementOrder` key of list `field`.
pub(super) fn set_order_key(field: &str) -> String {
    format!("{SET_ELEMENT_ORDER}{field}")
}

/// The `$deleteFromPrimitiveList` key of list `field`.
pub(super) fn delete_from_key(field: &str) -> String {
    format!("{DELETE_FROM_PRIMITIVE_LIST}{field}")
}

/// Whether `key` is a directive key.
fn is_directive(key: &str) -> bool {
    key == PATCH
        || key == RETAIN_KEYS
        || key.starts_with(SET_ELEMENT_ORDER)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
}

/// The dotted path of the first directive key inside `map`, if any: an object
/// carrying one would be read as a directive once it is part of a patch.
pub(super) fn find(map: &Map<String, Value>) -> Option<String> {
    map.iter().find_map(|(key, value)| {
        if is_directive(key) {
            return Some(key.clone());
        }
        let inner = match value {
            Value::Object(map) => find(map),
            Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
                v.as_object()
                    .and_then(find)
                    .map(|path| format!("[{i}].{path}"))
            }),
            _ => None,
        };
        inner.map(|path| match path.starts_with('[') {
            true => format!("{key}{path}"),
            false => format!("{key}.{path}"),
        })
    })
}
