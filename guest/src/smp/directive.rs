//! The directive keys of a strategic merge patch (k8s-semantics §1.3).

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
