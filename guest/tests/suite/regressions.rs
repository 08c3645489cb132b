//! Inputs that once broke a property (`properties.rs`) or a fuzz target (`fuzz/`), run
//! through the same functions on stable so they stay fixed.

use krt_guest::merge::strategic;
use serde_json::json;

/// Found by `built_in_merges_apply_and_are_idempotent`: a plan holding a directive
/// key. kubectl's three-way merge reads such a key as a directive (table M, M15), so
/// krt does the same: the patch carries it, and applying the patch deletes the list
/// element the plan marked, rather than storing a `$patch` field.
#[test]
fn a_directive_in_a_plan_is_a_directive_as_in_kubectl() {
    let schema = strategic::schema_for("v1", "Pod").unwrap();
    let live = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
    let plan = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "$patch": "delete"}]}});
    let patch = strategic::three_way(None, &plan, &live, schema).unwrap();
    let applied = strategic::apply(&live, &patch, schema).unwrap();
    assert_eq!(
        applied["spec"]["containers"],
        json!([{"name": "a", "image": "x"}]),
        "patch {patch}"
    );
}

/// Found by the `merge` fuzz target: a plan whose merge list (`status.conditions`)
/// holds lists yielded a patch that the strategic merge then refused to apply. The
/// three-way merge now refuses such a plan itself.
#[test]
fn a_merge_list_of_lists_is_refused_when_the_patch_is_computed() {
    let schema = strategic::schema_for("v1", "Pod").unwrap();
    let live = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}});
    let plan = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "status": {"conditions": [[null, null], null]}});
    assert_eq!(
        strategic::three_way(None, &plan, &live, schema),
        Err(strategic::Error::MixedList {
            field: "conditions".into()
        })
    );
}
