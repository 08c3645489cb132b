//! Inputs that once broke a property (`properties.rs`) or a fuzz target (`fuzz/`), run
//! through the same functions on stable so they stay fixed.

use guest::{json_merge, smp};
use serde_json::{Value, json};

/// Found by `built_in_merges_apply_and_are_idempotent`: a plan holding a directive key
/// yielded a patch the strategic merge refused to apply (and a server would read the
/// key as a directive). Such a plan is now refused when the patch is computed.
#[test]
fn a_plan_holding_a_directive_key_is_refused() {
    let schema = smp::schema_for("v1", "Pod").unwrap();
    let live = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}});
    for (plan, path) in [
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": {"$patch": null}}}),
            "metadata.namespace.$patch",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                   "spec": {"containers": [{"name": "a", "$patch": "delete"}]}}),
            "spec.containers[0].$patch",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"$retainKeys": []}}}),
            "metadata.labels.$retainKeys",
        ),
    ] {
        assert_eq!(
            smp::three_way(None, &plan, &live, schema),
            Err(smp::Error::DirectiveInObject {
                role: "modified",
                path: path.into()
            })
        );
        assert_eq!(
            smp::three_way(Some(&plan), &live, &live, schema),
            Err(smp::Error::DirectiveInObject {
                role: "original",
                path: path.into()
            })
        );
    }
    // A JSON merge patch has no directives: the key is plain data there.
    let patch: Value =
        json_merge::three_way(None, &json!({"a": {"$patch": "delete"}}), &json!({})).unwrap();
    assert_eq!(patch, json!({"a": {"$patch": "delete"}}));
}
