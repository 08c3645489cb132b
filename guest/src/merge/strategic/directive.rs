//! The directive keys of a strategic merge patch (k8s-semantics §1.3).

use serde_json::Value;

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

/// Whether `value` holds a directive key (`$patch`, `$retainKeys`,
/// `$setElementOrder/…`, `$deleteFromPrimitiveList/…`) at any depth. kubectl's
/// three-way merge reads such a key in a plan as a directive (table M, M15), so
/// an object holding one is a patch in disguise rather than plain data.
pub fn holds_directive(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, v)| {
            key == PATCH
                || key == RETAIN_KEYS
                || key.starts_with(SET_ELEMENT_ORDER)
                || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
                || holds_directive(v)
        }),
        Value::Array(items) => items.iter().any(holds_directive),
        _ => false,
    }
}
