//! Table M of k8s-semantics §9.2 (rows M1–M55, from upstream
//! `strategicpatch` and `jsonmergepatch` tests): every row's three-way patch
//! and the live object after applying it.

use krt_guest::merge::{self, strategic};
use serde_json::Value;
use strategic::{PatchMeta, Schema};

/// One row of `fixtures/table_m.json`.
#[derive(serde::Deserialize)]
struct Row {
    id: String,
    case: String,
    flavour: Flavour,
    /// `by-key`: the position of server-only merge-list items is unspecified
    /// (§8.2 D6), so lists of objects are compared sorted by `name`.
    #[serde(rename = "listOrder")]
    list_order: Option<String>,
    original: Value,
    modified: Value,
    current: Value,
    patch: Value,
    result: Value,
}

#[derive(serde::Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum Flavour {
    Strategic,
    JsonMerge,
}

/// The upstream test type `MergeItem` and its `RetainKeysMergeItem`.
fn merge_item_schema() -> Schema {
    const ITEM: &str = "MergeItem";
    const RETAIN: &str = "RetainKeysMergeItem";
    Schema::new(ITEM)
        .with_field(ITEM, "mergingList", PatchMeta::merge_list("name", ITEM))
        .with_field(ITEM, "mergingIntList", PatchMeta::merge_scalars())
        .with_field(ITEM, "mergeItemPtr", PatchMeta::merge_list("name", ITEM))
        .with_field(ITEM, "replacingItem", PatchMeta::replace())
        .with_field(
            ITEM,
            "retainKeysMap",
            PatchMeta::object(RETAIN).retain_keys(),
        )
        .with_field(
            ITEM,
            "retainKeysMergingList",
            PatchMeta::merge_list("name", ITEM).retain_keys(),
        )
        .with_field(RETAIN, "mergingIntList", PatchMeta::merge_scalars())
        .with_field(RETAIN, "mergingList", PatchMeta::merge_list("name", ITEM))
}

/// Sorts every list of objects by its `name`, recursively.
fn sort_lists_by_name(value: &mut Value) {
    match value {
        Value::Object(map) => map.values_mut().for_each(sort_lists_by_name),
        Value::Array(list) => {
            list.iter_mut().for_each(sort_lists_by_name);
            if list.iter().all(|e| e.get("name").is_some()) {
                list.sort_by_key(|e| e["name"].to_string());
            }
        }
        _ => {}
    }
}

fn run(row: &Row, schema: &Schema) -> Result<(Value, Value), String> {
    let original = Some(&row.original).filter(|o| !o.is_null());
    match row.flavour {
        Flavour::Strategic => {
            let patch = strategic::three_way(original, &row.modified, &row.current, schema)
                .map_err(|e| format!("three_way: {e}"))?;
            let result = strategic::apply(&row.current, &patch, schema)
                .map_err(|e| format!("apply: {e}"))?;
            Ok((patch, result))
        }
        Flavour::JsonMerge => {
            let patch = merge::json::three_way(original, &row.modified, &row.current)
                .map_err(|e| format!("three_way: {e}"))?;
            let mut result = row.current.clone();
            merge::json::apply(&mut result, &patch);
            Ok((patch, result))
        }
    }
}

#[test]
fn table_m() {
    let text = include_str!("../fixtures/table_m.json");
    let rows: Vec<Row> = serde_json::from_str(text).expect("table_m.json parses");
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let expected: Vec<String> = (1..=55).map(|i| format!("M{i}")).collect();
    assert_eq!(ids, expected, "every row of Table M, in order");

    let schema = merge_item_schema();
    let mut failures = Vec::new();
    for row in &rows {
        let (mut patch, mut result) = match run(row, &schema) {
            Ok(outcome) => outcome,
            Err(e) => {
                failures.push(format!("{} {}: {e}", row.id, row.case));
                continue;
            }
        };
        let (mut want_patch, mut want_result) = (row.patch.clone(), row.result.clone());
        if row.list_order.as_deref() == Some("by-key") {
            for v in [&mut patch, &mut result, &mut want_patch, &mut want_result] {
                sort_lists_by_name(v);
            }
        }
        if patch != want_patch {
            failures.push(format!(
                "{} {}: patch\n   got  {patch}\n   want {want_patch}",
                row.id, row.case
            ));
        }
        if result != want_result {
            failures.push(format!(
                "{} {}: result\n   got  {result}\n   want {want_result}",
                row.id, row.case
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
