//! The union of the two halves of a three-way patch (rule M5): the deletions
//! (prior → plan) and the additions and changes (live → plan).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::directive::{PATCH, RETAIN_KEYS, SET_ELEMENT_ORDER};
use super::schema::{PatchMeta, Schema};
use super::value::key_string;

/// M5: the union of the `deletions` and `delta` patches of a map of type
/// `ty`. `delta` wins on scalars; directives present on both sides are equal
/// and kept once; merge-list elements are matched by merge key and merged,
/// ordered by `$setElementOrder`, with `$patch: delete` elements last. A list
/// that `delta` orders with `$setElementOrder` loses the plan's own `$patch`
/// elements (upstream `removeDirectives`).
pub(super) fn merge_patches(
    mut deletions: Map<String, Value>,
    delta: Map<String, Value>,
    schema: &Schema,
    ty: Option<&str>,
) -> Map<String, Value> {
    let orders: HashMap<String, Value> = delta
        .iter()
        .chain(deletions.iter())
        .filter_map(|(k, v)| Some((k.strip_prefix(SET_ELEMENT_ORDER)?.to_owned(), v.clone())))
        .collect();
    for (key, value) in delta {
        let is_directive = key == RETAIN_KEYS || key.starts_with(SET_ELEMENT_ORDER);
        let meta = schema.field(ty, &key);
        let value = match value {
            Value::Array(list) if orders.contains_key(&key) => Value::Array(
                list.into_iter()
                    .filter(|e| !is_patch_directive(e))
                    .collect(),
            ),
            value => value,
        };
        match (deletions.get_mut(&key), value) {
            (Some(_), _) if is_directive => {}
            (Some(Value::Object(existing)), Value::Object(value)) => {
                *existing = merge_patches(std::mem::take(existing), value, schema, meta.ty());
            }
            (Some(Value::Array(existing)), Value::Array(value)) => {
                let order = orders.get(&key).and_then(Value::as_array);
                *existing =
                    merge_patch_lists(std::mem::take(existing), value, &meta, schema, order);
            }
            (_, value) => {
                deletions.insert(key, value);
            }
        }
    }
    deletions
}

fn is_patch_directive(element: &Value) -> bool {
    element.get(PATCH).is_some()
}

/// Merges the list patches of one merge list: elements with the same merge
/// key (or equal scalars) are merged, the rest kept.
fn merge_patch_lists(
    deletions: Vec<Value>,
    delta: Vec<Value>,
    meta: &PatchMeta,
    schema: &Schema,
    order: Option<&Vec<Value>>,
) -> Vec<Value> {
    let identity = |e: &Value| match (e, meta.merge_key()) {
        (Value::Object(m), Some(key)) => m.get(key).map(key_string),
        (scalar, _) => Some(key_string(scalar)),
    };
    let mut merged = delta;
    for element in deletions {
        let id = identity(&element);
        let found = merged
            .iter_mut()
            .find(|m| id.is_some() && identity(m) == id && !is_patch_directive(m));
        match (found, element) {
            (Some(Value::Object(m)), Value::Object(e)) if !e.contains_key(PATCH) => {
                *m = merge_patches(e, std::mem::take(m), schema, meta.ty());
            }
            (Some(_), e) if !is_patch_directive(&e) => {}
            (_, e) => merged.push(e),
        }
    }
    if let Some(order) = order {
        let ids: Vec<_> = order.iter().map(identity).collect();
        merged.sort_by_key(|e| {
            ids.iter()
                .position(|i| *i == identity(e))
                .unwrap_or(usize::MAX)
        });
    }
    let (mut elements, mut directives): (Vec<_>, Vec<_>) =
        merged.into_iter().partition(|e| !is_patch_directive(e));
    elements.append(&mut directives);
    elements
}
