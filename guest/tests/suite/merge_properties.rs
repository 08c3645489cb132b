//! Properties of the three-way merges over random prior / plan / live
//! objects of the Table M test type: the patch applied to live yields the
//! plan on every planned field and removes what the plan dropped; applying
//! it twice changes nothing; once applied, nothing more is sent.

use krt_guest::merge::{self, strategic};
use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use serde_json::{Map, Value, json};
use strategic::{PatchMeta, Schema};

const NAMES: [&str; 4] = ["n0", "n1", "n2", "n3"];

fn schema() -> Schema {
    Schema::new("Item")
        .with_field("Item", "mergingList", PatchMeta::merge_list("name", "Item"))
        .with_field("Item", "mergingIntList", PatchMeta::merge_scalars())
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0..3i64).prop_map(Value::from),
        select(vec!["a", "b"]).prop_map(Value::from)
    ]
}

fn element_body() -> impl Strategy<Value = (Option<Value>, Option<Value>)> {
    (
        proptest::option::of(scalar()),
        proptest::option::of(scalar()),
    )
}

/// A merge list with unique names in random order.
fn merging_list() -> impl Strategy<Value = Value> {
    (
        subsequence(NAMES.to_vec(), 0..=NAMES.len()).prop_shuffle(),
        proptest::collection::vec(element_body(), NAMES.len()),
    )
        .prop_map(|(names, bodies)| {
            let elements = names.into_iter().zip(bodies).map(|(name, (value, other))| {
                let mut element = Map::new();
                element.insert("name".into(), json!(name));
                element.extend(value.map(|v| ("value".into(), v)));
                element.extend(other.map(|v| ("other".into(), v)));
                Value::Object(element)
            });
            Value::Array(elements.collect())
        })
}

fn document() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(scalar()),
        proptest::option::of(scalar()),
        proptest::option::of(proptest::collection::btree_map(
            select(vec!["k0", "k1", "k2"]),
            scalar(),
            0..3,
        )),
        proptest::option::of(merging_list()),
        proptest::option::of(subsequence((0..5).collect::<Vec<i64>>(), 0..5).prop_shuffle()),
        proptest::option::of(proptest::collection::vec(0..3i64, 0..3)),
    )
        .prop_map(|(name, value, simple_map, merging, ints, atomic)| {
            let mut doc = Map::new();
            doc.extend(name.map(|v| ("name".into(), v)));
            doc.extend(value.map(|v| ("value".into(), v)));
            doc.extend(simple_map.map(|m| ("simpleMap".into(), json!(m))));
            doc.extend(merging.map(|v| ("mergingList".into(), v)));
            doc.extend(ints.map(|v| ("mergingIntList".into(), json!(v))));
            doc.extend(atomic.map(|v| ("nonMergingIntList".into(), json!(v))));
            Value::Object(doc)
        })
}

/// `Some(merge key)` of a merge list (`Some(None)` for scalars), `None` when atomic.
fn merge_list(field: &str, strategic: bool) -> Option<Option<&'static str>> {
    match field {
        "mergingList" if strategic => Some(Some("name")),
        "mergingIntList" if strategic => Some(None),
        _ => None,
    }
}

fn identity(element: &Value, key: Option<&str>) -> Value {
    key.map_or_else(|| element.clone(), |k| element[k].clone())
}

/// `result` holds everything `plan` says, and merge lists hold the plan's
/// elements in the plan's order.
fn covers(result: &Value, plan: &Value, field: &str, strategic: bool) -> Result<(), String> {
    match (result, plan, merge_list(field, strategic)) {
        (Value::Object(r), Value::Object(p), _) => p.iter().try_for_each(|(k, v)| {
            let r = r.get(k).ok_or_else(|| format!("`{k}` is missing"))?;
            covers(r, v, k, strategic)
        }),
        (Value::Array(r), Value::Array(p), Some(key)) => {
            let mut last = None;
            for element in p {
                let id = identity(element, key);
                let at = r
                    .iter()
                    .position(|e| identity(e, key) == id)
                    .ok_or_else(|| format!("`{field}` lacks {id}"))?;
                if last.is_some_and(|last| at < last) {
                    return Err(format!("`{field}` has {id} out of order"));
                }
                last = Some(at);
                if key.is_some() {
                    covers(&r[at], element, field, strategic)?;
                }
            }
            Ok(())
        }
        (r, p, _) if r == p => Ok(()),
        (r, p, _) => Err(format!("`{field}` is {r}, planned {p}")),
    }
}

/// Whatever `prior` had and `plan` dropped is gone from `result`.
fn dropped_are_gone(
    result: &Value,
    prior: &Value,
    plan: &Value,
    field: &str,
    strategic: bool,
) -> Result<(), String> {
    match (result, prior, plan, merge_list(field, strategic)) {
        (Value::Object(r), Value::Object(o), Value::Object(p), _) => {
            o.iter()
                .try_for_each(|(k, old)| match (p.get(k), r.get(k)) {
                    (None, Some(_)) => Err(format!("dropped `{k}` survives")),
                    (Some(new), Some(r)) => dropped_are_gone(r, old, new, k, strategic),
                    _ => Ok(()),
                })
        }
        (Value::Array(r), Value::Array(o), Value::Array(p), Some(key)) => {
            for old in o {
                let id = identity(old, key);
                let planned = p.iter().find(|e| identity(e, key) == id);
                let live = r.iter().find(|e| identity(e, key) == id);
                match (planned, live) {
                    (None, Some(_)) => return Err(format!("dropped {id} of `{field}` survives")),
                    (Some(new), Some(live)) if key.is_some() => {
                        dropped_are_gone(live, old, new, field, strategic)?;
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn smp_apply(live: &Value, patch: &Value) -> Value {
    strategic::apply(live, patch, &schema()).expect("apply")
}

fn merge_apply(live: &Value, patch: &Value) -> Value {
    let mut result = live.clone();
    merge::json::apply(&mut result, patch);
    result
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn smp_patch_yields_the_plan(prior in document(), plan in document(), live in document()) {
        let schema = schema();
        let patch = strategic::three_way(Some(&prior), &plan, &live, &schema).unwrap();
        let result = smp_apply(&live, &patch);
        covers(&result, &plan, "", true).map_err(|e| TestCaseError::fail(format!("{e}; patch {patch}, result {result}")))?;
        dropped_are_gone(&result, &prior, &plan, "", true).map_err(|e| TestCaseError::fail(format!("{e}; patch {patch}, result {result}")))?;
        prop_assert_eq!(smp_apply(&result, &patch), result.clone(), "applying twice, patch {}", patch);
        prop_assert_eq!(strategic::three_way(Some(&plan), &plan, &result, &schema).unwrap(), json!({}), "converged, result {}", result);
        prop_assert_eq!(strategic::three_way(Some(&plan), &plan, &plan, &schema).unwrap(), json!({}));
    }

    #[test]
    fn json_merge_patch_yields_the_plan(prior in document(), plan in document(), live in document()) {
        let patch = merge::json::three_way(Some(&prior), &plan, &live).unwrap();
        let result = merge_apply(&live, &patch);
        covers(&result, &plan, "", false).map_err(|e| TestCaseError::fail(format!("{e}; patch {patch}, result {result}")))?;
        dropped_are_gone(&result, &prior, &plan, "", false).map_err(|e| TestCaseError::fail(format!("{e}; patch {patch}, result {result}")))?;
        prop_assert_eq!(merge_apply(&result, &patch), result.clone());
        prop_assert_eq!(merge::json::three_way(Some(&plan), &plan, &result).unwrap(), json!({}));
        prop_assert_eq!(merge::json::three_way(Some(&plan), &plan, &plan).unwrap(), json!({}));
    }
}
