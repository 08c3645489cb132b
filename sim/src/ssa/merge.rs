//! Merging an applied configuration into the live object, by list type: maps merge per key,
//! list-maps per item key, sets by value, atomic lists and scalars are replaced.

use serde_json::Value;

use super::fieldset;
use super::schema::{ListType, Schema};

/// `live` with `config` merged in (server-side apply's merge step).
pub fn merge_config(live: &Value, config: &Value, schema: &Schema) -> Value {
    merge_at(live, config, schema, &mut Vec::new())
}

fn merge_at<'a>(
    live: &Value,
    config: &'a Value,
    schema: &Schema,
    names: &mut Vec<&'a str>,
) -> Value {
    match (live, config) {
        (Value::Object(l), Value::Object(c)) if !schema.is_atomic_map(names) => {
            let mut out = l.clone();
            for (k, v) in c {
                if v.is_null() {
                    out.remove(k);
                    continue;
                }
                names.push(k);
                let merged = match l.get(k) {
                    Some(lv) => merge_at(lv, v, schema, names),
                    None => without_nulls(v),
                };
                names.pop();
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(c)) => match schema.list_type(names) {
            ListType::Atomic => without_nulls(config),
            ListType::Set => {
                let mut out = l.clone();
                for item in c {
                    if !out.contains(item) {
                        out.push(item.clone());
                    }
                }
                Value::Array(out)
            }
            ListType::Map(keys) => {
                let mut out = l.clone();
                for item in c {
                    let key = fieldset::item_key(item, &keys);
                    let existing = key.as_ref().and_then(|k| {
                        out.iter()
                            .position(|o| fieldset::item_key(o, &keys).as_ref() == Some(k))
                    });
                    match existing {
                        Some(i) => out[i] = merge_at(&out[i], item, schema, names),
                        None => out.push(without_nulls(item)),
                    }
                }
                Value::Array(out)
            }
        },
        _ => without_nulls(config),
    }
}

fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merges_list_maps_by_key_and_replaces_atomic_lists() {
        let schema = Schema::new("apps/v1", "Deployment", false);
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "x", "args": ["1", "2"]}, {"name": "sidecar", "image": "s"}]}}}});
        let config = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "y", "args": ["3"]}]}}}});
        let merged = merge_config(&live, &config, &schema);
        assert_eq!(
            merged["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a", "image": "y", "args": ["3"]}, {"name": "sidecar", "image": "s"}])
        );
    }

    #[test]
    fn custom_resource_lists_are_replaced_and_sets_union() {
        let schema = Schema::new("example.com/v1", "Widget", true);
        let live = json!({"metadata": {"finalizers": ["a"]}, "spec": {"items": [1, 2]}});
        let config = json!({"metadata": {"finalizers": ["b"]}, "spec": {"items": [3]}});
        let merged = merge_config(&live, &config, &schema);
        assert_eq!(
            merged,
            json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"items": [3]}})
        );
    }
}
