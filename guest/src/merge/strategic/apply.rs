//! Patch application (rule M13): merges a strategic merge patch into a live
//! object, executing and removing every directive.

use serde_json::{Map, Value};

use super::Error;
use super::directive::{
    DELETE, DELETE_FROM_PRIMITIVE_LIST, PATCH, REPLACE, RETAIN_KEYS, SET_ELEMENT_ORDER,
};
use super::list::{Elements, elements, enforce_order, key_of, require_key};
use super::schema::{PatchMeta, Schema, Strategy};
use super::value::{key_string, same};

/// Merges `patch` into the map `live` of type `ty`, found at key `field`.
///
/// # Errors
///
/// Malformed directives and merge lists, see [`Error`].
pub(super) fn merge_map(
    mut live: Map<String, Value>,
    patch: &Map<String, Value>,
    schema: &Schema,
    ty: Option<&str>,
    field: &str,
) -> Result<Map<String, Value>, Error> {
    if let Some(directive) = patch.get(PATCH) {
        return match directive.as_str() {
            Some(REPLACE) => {
                let mut rest = patch.clone();
                rest.shift_remove(PATCH);
                merge_map(Map::new(), &rest, schema, ty, field)
            }
            Some(DELETE) => Ok(Map::new()),
            _ => Err(bad_directive(directive, field)),
        };
    }
    if let Some(retained) = patch.get(RETAIN_KEYS) {
        retain_keys(&mut live, patch, retained, field)?;
    }
    // The live lists that `$setElementOrder` will order, before merging.
    let mut ordered = Vec::new();
    for (key, order) in patch {
        if let Some(list_field) = key.strip_prefix(SET_ELEMENT_ORDER) {
            let order = directive_list(order, key, field)?;
            let before = live.get(list_field).and_then(Value::as_array).cloned();
            ordered.push((list_field, order, before.unwrap_or_default()));
        }
    }

    for (key, value) in patch {
        if is_directive(key) {
            continue;
        }
        if value.is_null() {
            live.shift_remove(key);
            continue;
        }
        let meta = schema.field(ty, key);
        let old = live.get_mut(key).map(Value::take);
        let merged = merge_value(old, value, &meta, schema, key)?;
        live.insert(key.clone(), merged);
    }

    for (key, values) in patch {
        if let Some(list_field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let values = directive_list(values, key, field)?;
            if let Some(Value::Array(list)) = live.get_mut(list_field) {
                list.retain(|e| !values.iter().any(|v| same(v, e)));
            }
        }
    }
    for (list_field, order, before) in ordered {
        if let Some(Value::Array(list)) = live.get_mut(list_field) {
            let merge_key = schema.field(ty, list_field).merge_key();
            *list = enforce_order(std::mem::take(list), order, &before, merge_key);
        }
    }
    Ok(live)
}

fn is_directive(key: &str) -> bool {
    key == RETAIN_KEYS
        || key.starts_with(SET_ELEMENT_ORDER)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
}

fn bad_directive(directive: &Value, field: &str) -> Error {
    Error::BadPatchDirective {
        directive: directive
            .as_str()
            .map_or_else(|| directive.to_string(), str::to_owned),
        field: field.to_owned(),
    }
}

fn directive_list<'p>(
    value: &'p Value,
    directive: &str,
    field: &str,
) -> Result<&'p [Value], Error> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| Error::BadDirectiveValue {
            directive: directive.to_owned(),
            field: field.to_owned(),
        })
}

/// `$retainKeys`: every non-null patch key must be listed; live keys that are
/// not listed are removed.
fn retain_keys(
    live: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    retained: &Value,
    field: &str,
) -> Result<(), Error> {
    let retained: Option<Vec<&str>> = directive_list(retained, RETAIN_KEYS, field)?
        .iter()
        .map(Value::as_str)
        .collect();
    let retained = retained.ok_or_else(|| Error::BadDirectiveValue {
        directive: RETAIN_KEYS.to_owned(),
        field: field.to_owned(),
    })?;
    if let Some((key, _)) = patch
        .iter()
        .find(|(k, v)| !v.is_null() && !is_directive(k) && !retained.contains(&k.as_str()))
    {
        return Err(Error::RetainKeysMissing {
            field: field.to_owned(),
            key: key.clone(),
        });
    }
    live.retain(|k, _| retained.contains(&k.as_str()));
    Ok(())
}

/// Merges one patch value into the live value at `field` (absent: `None`).
fn merge_value(
    old: Option<Value>,
    patch: &Value,
    meta: &PatchMeta,
    schema: &Schema,
    field: &str,
) -> Result<Value, Error> {
    match (old, patch) {
        (Some(Value::Object(old)), Value::Object(patch))
            if meta.strategy() != Strategy::Replace =>
        {
            merge_map(old, patch, schema, meta.ty(), field).map(Value::Object)
        }
        (_, Value::Object(patch)) => {
            merge_map(Map::new(), patch, schema, meta.ty(), field).map(Value::Object)
        }
        (old, Value::Array(patch)) if meta.strategy() == Strategy::Merge => {
            let live = match old {
                Some(Value::Array(live)) => live,
                _ => Vec::new(),
            };
            merge_list(live, patch, meta, schema, field).map(Value::Array)
        }
        (_, patch) => Ok(patch.clone()),
    }
}

/// Merges a patch list into the live merge list `field`.
fn merge_list(
    live: Vec<Value>,
    patch: &[Value],
    meta: &PatchMeta,
    schema: &Schema,
    field: &str,
) -> Result<Vec<Value>, Error> {
    match elements(field, &[&live, patch])? {
        Elements::Empty => Ok(live),
        Elements::Scalars => {
            let mut merged: Vec<Value> = Vec::with_capacity(live.len() + patch.len());
            for value in live.iter().chain(patch) {
                if !merged.iter().any(|m| key_string(m) == key_string(value)) {
                    merged.push(value.clone());
                }
            }
            Ok(enforce_order(merged, patch, &live, None))
        }
        Elements::Maps => merge_list_of_maps(live, patch, meta, schema, field),
    }
}

fn merge_list_of_maps(
    live: Vec<Value>,
    patch: &[Value],
    meta: &PatchMeta,
    schema: &Schema,
    field: &str,
) -> Result<Vec<Value>, Error> {
    let key = require_key(meta.merge_key(), field)?;
    let has_key = |element: &Value, k: &str| element.get(key).is_some_and(|v| key_string(v) == k);
    let mut merged = live.clone();
    let mut plain = Vec::new();
    let mut replace = false;
    for element in patch.iter().filter_map(Value::as_object) {
        match element.get(PATCH) {
            None => plain.push(element),
            Some(directive) if directive.as_str() == Some(DELETE) => {
                let k = key_of(element, key, field)?;
                merged.retain(|e| !has_key(e, &k));
            }
            Some(directive) if directive.as_str() == Some(REPLACE) => replace = true,
            Some(directive) => return Err(bad_directive(directive, field)),
        }
    }
    // `$patch: replace` anywhere in the list drops every live element.
    if replace {
        merged.clear();
    }
    for element in &plain {
        let k = key_of(element, key, field)?;
        match merged.iter_mut().find(|e| has_key(e, &k)) {
            Some(Value::Object(existing)) => {
                let old = std::mem::take(existing);
                *existing = merge_map(old, element, schema, meta.ty(), field)?;
            }
            _ => {
                let new = merge_map(Map::new(), element, schema, meta.ty(), field)?;
                merged.push(Value::Object(new));
            }
        }
    }
    let order: Vec<Value> = plain
        .into_iter()
        .map(|e| Value::Object(e.clone()))
        .collect();
    Ok(enforce_order(merged, &order, &live, Some(key)))
}
