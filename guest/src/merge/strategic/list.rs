//! Merge-list helpers shared by patch generation and application: element
//! kinds, merge-key values and the final element order.

use serde_json::{Map, Value};

use super::Error;
use super::value::key_string;

/// What a merge list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Elements {
    /// No elements at all.
    Empty,
    /// Objects, matched by merge key.
    Maps,
    /// Scalars, merged as a set.
    Scalars,
}

/// The common element kind of `lists`.
///
/// # Errors
///
/// [`Error::MixedList`] when objects and scalars are mixed or an element is a list.
pub(super) fn elements(field: &str, lists: &[&[Value]]) -> Result<Elements, Error> {
    let mut kind = Elements::Empty;
    for element in lists.iter().flat_map(|list| list.iter()) {
        let this = match element {
            Value::Object(_) => Elements::Maps,
            Value::Array(_) => return Err(mixed(field)),
            _ => Elements::Scalars,
        };
        if kind != Elements::Empty && kind != this {
            return Err(mixed(field));
        }
        kind = this;
    }
    Ok(kind)
}

fn mixed(field: &str) -> Error {
    Error::MixedList {
        field: field.to_owned(),
    }
}

/// The merge key of a list of objects.
///
/// # Errors
///
/// [`Error::NoMergeKey`] when the schema declares none.
pub(super) fn require_key(
    merge_key: Option<&'static str>,
    field: &str,
) -> Result<&'static str, Error> {
    merge_key.ok_or_else(|| Error::NoMergeKey {
        field: field.to_owned(),
    })
}

/// The string form of `element`'s merge-key value.
///
/// # Errors
///
/// [`Error::MissingMergeKey`] when the element lacks the key.
pub(super) fn key_of(
    element: &Map<String, Value>,
    key: &'static str,
    field: &str,
) -> Result<String, Error> {
    element
        .get(key)
        .map(key_string)
        .ok_or_else(|| Error::MissingMergeKey {
            field: field.to_owned(),
            key,
        })
}

/// How an element is recognised in an order list: its merge-key value for
/// objects, its own value for scalars.
fn identity(element: &Value, merge_key: Option<&str>) -> Option<String> {
    match (element, merge_key) {
        (Value::Object(map), Some(key)) => map.get(key).map(key_string),
        (Value::Object(_), None) => None,
        (scalar, _) => Some(key_string(scalar)),
    }
}

fn position(ids: &[Option<String>], element: &Value, merge_key: Option<&str>) -> Option<usize> {
    let id = identity(element, merge_key)?;
    ids.iter().position(|i| i.as_deref() == Some(id.as_str()))
}

/// Orders a merged list the way the API server does: the elements named in
/// `order` (a `$setElementOrder` list, or the patch list) come in that order;
/// the others (server-only) keep their relative `live` order and are
/// interleaved by their `live` position (upstream `normalizeElementOrder`).
pub(super) fn enforce_order(
    merged: Vec<Value>,
    order: &[Value],
    live: &[Value],
    merge_key: Option<&str>,
) -> Vec<Value> {
    let order_ids: Vec<_> = order.iter().map(|e| identity(e, merge_key)).collect();
    let live_ids: Vec<_> = live.iter().map(|e| identity(e, merge_key)).collect();
    let (mut patched, mut server_only): (Vec<_>, Vec<_>) = merged
        .into_iter()
        .partition(|e| position(&order_ids, e, merge_key).is_some());
    patched.sort_by_key(|e| position(&order_ids, e, merge_key));
    server_only.sort_by_key(|e| position(&live_ids, e, merge_key).unwrap_or(usize::MAX));

    // Upstream `mergeSortedSlice`: a server-only element goes first only when
    // both it and the next patched element are live and it was live before it.
    let mut result = Vec::with_capacity(patched.len() + server_only.len());
    let mut patched = patched.into_iter().peekable();
    let mut server_only = server_only.into_iter().peekable();
    loop {
        let take_server = match (server_only.peek(), patched.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(s), Some(p)) => matches!(
                (position(&live_ids, s, merge_key), position(&live_ids, p, merge_key)),
                (Some(s), Some(p)) if s < p
            ),
        };
        let next = if take_server {
            server_only.next()
        } else {
            patched.next()
        };
        result.extend(next);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vec(v: Value) -> Vec<Value> {
        v.as_array().unwrap().clone()
    }

    #[test]
    fn server_only_items_are_interleaved_by_live_position() {
        let merged = vec(json!([1, 2, 4, 3]));
        let ordered = enforce_order(merged, &vec(json!([1, 2, 3])), &vec(json!([1, 2, 4])), None);
        assert_eq!(ordered, vec(json!([1, 2, 3, 4])));
        let merged = vec(json!([1, 4, 2, 3]));
        let ordered = enforce_order(merged, &vec(json!([3, 1, 2])), &vec(json!([1, 4, 2])), None);
        assert_eq!(ordered, vec(json!([3, 1, 4, 2])));
    }

    #[test]
    fn rejects_mixed_lists() {
        assert!(elements("f", &[&vec(json!([1, {"a": 1}]))]).is_err());
        assert!(elements("f", &[&vec(json!([[1]]))]).is_err());
        assert_eq!(
            elements("f", &[&[], &vec(json!(["a"]))]),
            Ok(Elements::Scalars)
        );
    }
}
