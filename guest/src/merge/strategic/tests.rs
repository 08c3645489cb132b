//! Directive and built-in-kind tests of the public SMP API (Table M is in
//! `guest/tests/suite/merge_table.rs`).

use serde_json::{Value, json};

use super::*;

fn test_schema() -> Schema {
    Schema::new("Root")
        .with_field("Root", "items", PatchMeta::merge_list("name", "Item"))
        .with_field("Root", "tags", PatchMeta::merge_scalars())
        .with_field("Root", "union", PatchMeta::object("Union").retain_keys())
        .with_field("Root", "selector", PatchMeta::replace())
}

fn applied(live: Value, patch: Value) -> Value {
    apply(&live, &patch, &test_schema()).unwrap()
}

#[test]
fn null_deletes_a_key() {
    assert_eq!(
        applied(
            json!({"a": 1, "b": {"c": 1, "d": 2}}),
            json!({"a": null, "b": {"c": null}})
        ),
        json!({"b": {"d": 2}})
    );
}

#[test]
fn patch_replace_replaces_a_map_and_strips_the_directive() {
    assert_eq!(
        applied(
            json!({"m": {"a": 1, "b": 2}}),
            json!({"m": {"$patch": "replace", "c": 3, "gone": null}})
        ),
        json!({"m": {"c": 3}})
    );
}

#[test]
fn patch_delete_empties_a_map() {
    assert_eq!(
        applied(
            json!({"m": {"a": 1}, "x": 1}),
            json!({"m": {"$patch": "delete"}})
        ),
        json!({"m": {}, "x": 1})
    );
}

#[test]
fn patch_delete_and_replace_in_a_merge_list() {
    let live = json!({"items": [{"name": "a"}, {"name": "b", "v": 1}]});
    assert_eq!(
        applied(
            live.clone(),
            json!({"items": [{"name": "a", "$patch": "delete"}]})
        ),
        json!({"items": [{"name": "b", "v": 1}]})
    );
    assert_eq!(
        applied(
            live,
            json!({"items": [{"$patch": "replace"}, {"name": "c", "$setElementOrder/x": []}]})
        ),
        json!({"items": [{"name": "c"}]})
    );
}

#[test]
fn patch_merge_in_a_list_is_rejected() {
    let err = apply(
        &json!({"items": [{"name": "a"}]}),
        &json!({"items": [{"$patch": "merge"}]}),
        &test_schema(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::BadPatchDirective { .. }), "{err}");
}

#[test]
fn retain_keys_clears_unlisted_keys_and_checks_the_patch() {
    assert_eq!(
        applied(
            json!({"union": {"type": "A", "a": {"x": 1}}}),
            json!({"union": {"$retainKeys": ["b", "type"], "type": "B", "b": {}}})
        ),
        json!({"union": {"type": "B", "b": {}}})
    );
    let err = apply(
        &json!({}),
        &json!({"union": {"$retainKeys": ["type"], "b": 1}}),
        &test_schema(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        Error::RetainKeysMissing {
            field: "union".into(),
            key: "b".into()
        }
    );
}

#[test]
fn delete_from_primitive_list_and_set_element_order() {
    assert_eq!(
        applied(
            json!({"tags": ["x", "y", "z", "live"]}),
            json!({
                "tags": ["new"],
                "$deleteFromPrimitiveList/tags": ["y"],
                "$setElementOrder/tags": ["z", "new", "x"]
            })
        ),
        json!({"tags": ["z", "new", "x", "live"]})
    );
}

#[test]
fn set_element_order_reorders_objects() {
    assert_eq!(
        applied(
            json!({"items": [{"name": "a"}, {"name": "b"}, {"name": "c", "v": 1}]}),
            json!({"$setElementOrder/items": [{"name": "c"}, {"name": "a"}, {"name": "b"}]})
        ),
        json!({"items": [{"name": "c", "v": 1}, {"name": "a"}, {"name": "b"}]})
    );
}

#[test]
fn replace_strategy_replaces_the_map_only_when_it_differs() {
    let schema = test_schema();
    let prior = json!({"selector": {"a": "1"}});
    let plan = json!({"selector": {"b": "2"}});
    let live = json!({"selector": {"a": "1", "extra": "x"}});
    let patch = three_way(Some(&prior), &plan, &live, &schema).unwrap();
    assert_eq!(patch, json!({"selector": {"b": "2"}}));
    assert_eq!(apply(&live, &patch, &schema).unwrap(), plan);
    assert_eq!(
        three_way(Some(&plan), &plan, &plan, &schema).unwrap(),
        json!({})
    );
}

#[test]
fn server_only_elements_do_not_force_a_patch() {
    let schema = test_schema();
    let plan = json!({"items": [{"name": "a"}, {"name": "b"}], "tags": ["x"]});
    let live = json!({
        "items": [{"name": "a"}, {"name": "injected"}, {"name": "b"}],
        "tags": ["controller", "x"]
    });
    assert_eq!(
        three_way(Some(&plan), &plan, &live, &schema).unwrap(),
        json!({})
    );
}

#[test]
fn missing_merge_key_is_an_error() {
    let err = three_way(
        None,
        &json!({"items": [{"value": 1}]}),
        &json!({"items": [{"name": "a"}]}),
        &test_schema(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "an element of list `items` does not contain declared merge key `name`"
    );
}

/// A Deployment we applied before, changed by a controller and by us.
#[test]
fn deployment_merges_containers_env_and_ports() {
    let schema = schema_for("apps/v1", "Deployment").unwrap();
    let prior = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [
            {"name": "app", "image": "app:1",
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
             "ports": [{"containerPort": 80}]},
            {"name": "old", "image": "old:1"}
        ]}}}
    });
    let plan = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "app", "image": "app:2",
             "env": [{"name": "A", "value": "1"}, {"name": "C", "value": "3"}],
             "ports": [{"containerPort": 80}, {"containerPort": 443}]}
        ]}}}
    });
    let live = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "team": "ops"}},
        "spec": {"replicas": 2, "strategy": {"type": "RollingUpdate"},
         "template": {"spec": {"containers": [
            {"name": "app", "image": "app:1", "imagePullPolicy": "IfNotPresent",
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
             "ports": [{"containerPort": 80, "protocol": "TCP"}]},
            {"name": "old", "image": "old:1"},
            {"name": "sidecar", "image": "mesh:1"}
        ]}}}
    });
    let patch = three_way(Some(&prior), &plan, &live, schema).unwrap();
    assert_eq!(
        patch,
        json!({"spec": {"replicas": 3, "template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}],
            "containers": [
                {"name": "app", "image": "app:2",
                 "$setElementOrder/env": [{"name": "A"}, {"name": "C"}],
                 "env": [{"name": "C", "value": "3"}, {"name": "B", "$patch": "delete"}],
                 "$setElementOrder/ports": [{"containerPort": 80}, {"containerPort": 443}],
                 "ports": [{"containerPort": 443}]},
                {"name": "old", "$patch": "delete"}
            ]
        }}}})
    );
    let result = apply(&live, &patch, schema).unwrap();
    assert_eq!(
        result,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web", "team": "ops"}},
            "spec": {"replicas": 3, "strategy": {"type": "RollingUpdate"},
             "template": {"spec": {"containers": [
                {"name": "app", "image": "app:2", "imagePullPolicy": "IfNotPresent",
                 "env": [{"name": "A", "value": "1"}, {"name": "C", "value": "3"}],
                 "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}]},
                {"name": "sidecar", "image": "mesh:1"}
            ]}}}
        })
    );
    // Applied: nothing more to send.
    assert_eq!(
        three_way(Some(&plan), &plan, &result, schema).unwrap(),
        json!({})
    );
}

#[test]
fn deployment_strategy_switch_clears_the_old_union_member() {
    let schema = schema_for("apps/v1", "Deployment").unwrap();
    let plan = json!({"spec": {"strategy": {"type": "Recreate"}}});
    let live = json!({"spec": {"strategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%"}}}});
    let patch = three_way(None, &plan, &live, schema).unwrap();
    assert_eq!(
        patch,
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})
    );
    assert_eq!(apply(&live, &patch, schema).unwrap(), plan);
}
