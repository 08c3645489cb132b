use serde_json::{Value, json};

use super::*;

fn writer(manager: &str) -> Writer<'_> {
    Writer {
        manager,
        api_version: "apps/v1",
        subresource: None,
        now: 1_700_000_000,
    }
}

fn schema() -> Schema {
    Schema::new("apps/v1", "Deployment", false)
}

fn skeleton() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}})
}

fn deploy(replicas: i64, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "app", "image": image}]}}}})
}

fn managers(object: &Value) -> Vec<(String, String)> {
    ownership(object)
        .into_iter()
        .map(|e| {
            (
                e.manager.unwrap_or_default(),
                e.operation.unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn first_apply_records_the_applied_fields() {
    let out = server_side_apply(
        &skeleton(),
        &deploy(2, "nginx"),
        &schema(),
        &writer("a"),
        false,
    )
    .unwrap();
    assert_eq!(out["spec"]["replicas"], 2);
    assert_eq!(
        out["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
    assert_eq!(managers(&out), vec![("a".into(), "Apply".into())]);
}

#[test]
fn reapplying_the_same_config_changes_nothing_but_time() {
    let once = server_side_apply(
        &skeleton(),
        &deploy(2, "nginx"),
        &schema(),
        &writer("a"),
        false,
    )
    .unwrap();
    let twice =
        server_side_apply(&once, &deploy(2, "nginx"), &schema(), &writer("a"), false).unwrap();
    assert_eq!(ownership(&once), ownership(&twice));
    let strip = |mut v: Value| {
        v["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        v
    };
    assert_eq!(strip(once), strip(twice));
}

#[test]
fn a_changed_field_owned_by_another_manager_conflicts_unless_forced() {
    let a = server_side_apply(
        &skeleton(),
        &deploy(2, "nginx"),
        &schema(),
        &writer("a"),
        false,
    )
    .unwrap();
    let err =
        server_side_apply(&a, &deploy(3, "nginx"), &schema(), &writer("b"), false).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(
        (err[0].owner.as_str(), err[0].field.as_str()),
        ("\"a\"", ".spec.replicas")
    );
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.replicas"
    );
    let forced = server_side_apply(&a, &deploy(3, "nginx"), &schema(), &writer("b"), true).unwrap();
    assert_eq!(forced["spec"]["replicas"], 3);
    let a_fields = &forced["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
    assert!(
        a_fields.get("f:replicas").is_none(),
        "a lost .spec.replicas: {a_fields}"
    );
}

#[test]
fn same_value_is_shared_and_survives_one_manager_dropping_it() {
    let a = server_side_apply(
        &skeleton(),
        &deploy(2, "nginx"),
        &schema(),
        &writer("a"),
        false,
    )
    .unwrap();
    let both = server_side_apply(&a, &deploy(2, "nginx"), &schema(), &writer("b"), false).unwrap();
    assert_eq!(managers(&both).len(), 2);
    let mut without_replicas = deploy(2, "nginx");
    without_replicas["spec"]
        .as_object_mut()
        .unwrap()
        .remove("replicas");
    let after =
        server_side_apply(&both, &without_replicas, &schema(), &writer("a"), false).unwrap();
    assert_eq!(after["spec"]["replicas"], 2, "b still owns it");
    let gone =
        server_side_apply(&after, &without_replicas, &schema(), &writer("b"), false).unwrap();
    assert!(
        gone["spec"].get("replicas").is_none(),
        "nobody owns it any more"
    );
}

#[test]
fn dropped_list_items_are_removed_and_other_items_kept() {
    let mut two = deploy(1, "nginx");
    two["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "app", "image": "nginx"}, {"name": "log", "image": "busybox"}]);
    let a = server_side_apply(&skeleton(), &two, &schema(), &writer("a"), false).unwrap();
    let one = server_side_apply(&a, &deploy(1, "nginx"), &schema(), &writer("a"), false).unwrap();
    assert_eq!(
        one["spec"]["template"]["spec"]["containers"],
        json!([{"name": "app", "image": "nginx"}])
    );
}

#[test]
fn multiple_conflicts_group_by_manager() {
    let conflicts = vec![
        Conflict {
            owner: "\"m2\"".into(),
            field: ".b".into(),
            path: Path::new(),
        },
        Conflict {
            owner: "\"m1\"".into(),
            field: ".a".into(),
            path: Path::new(),
        },
    ];
    assert_eq!(
        conflict_message(&conflicts),
        "Apply failed with 2 conflicts: conflicts with \"m1\"\n- .a\nconflicts with \"m2\"\n- .b"
    );
    assert_eq!(
        conflict_causes(&conflicts)[0].reason.as_deref(),
        Some("FieldManagerConflict")
    );
}

#[test]
fn updates_take_changed_fields_from_appliers() {
    let a = server_side_apply(
        &skeleton(),
        &deploy(2, "nginx"),
        &schema(),
        &writer("a"),
        false,
    )
    .unwrap();
    let mut scaled = a.clone();
    scaled["spec"]["replicas"] = json!(5);
    record_update(Some(&a), &mut scaled, &schema(), &writer("kubectl-scale"));
    let entries = ownership(&scaled);
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1].manager.as_deref(), Some("kubectl-scale"));
    assert_eq!(
        entries[1].fields_v1.as_ref().unwrap().0,
        json!({"f:spec": {"f:replicas": {}}})
    );
    let err = server_side_apply(&scaled, &deploy(2, "nginx"), &schema(), &writer("a"), false)
        .unwrap_err();
    assert_eq!(err[0].owner, "\"kubectl-scale\" using apps/v1");
}

/// A ConfigMap as `kubectl apply` (client-side) leaves it: the fields and the last-applied
/// annotation owned by an Update of `kubectl-client-side-apply`.
fn client_side_applied(mode: &str) -> Value {
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "d"}, "data": {"mode": mode}});
    let mut live = config.clone();
    live["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": config.to_string()});
    let cm = Schema::new("v1", "ConfigMap", false);
    record_update(None, &mut live, &cm, &writer("kubectl-client-side-apply"));
    live
}

#[test]
fn kubectl_server_side_apply_takes_over_client_side_fields() {
    let cm = Schema::new("v1", "ConfigMap", false);
    let live = client_side_applied("fast");
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "d"}, "data": {"mode": "slow"}});
    let conflicts = server_side_apply(&live, &config, &cm, &writer("kubectl"), false).unwrap_err();
    assert!(upgrades_client_side_apply(
        &live, &conflicts, &cm, "kubectl"
    ));
    assert!(
        !upgrades_client_side_apply(&live, &conflicts, &cm, "other"),
        "only kubectl's default manager upgrades"
    );
    let mut applied = server_side_apply(&live, &config, &cm, &writer("kubectl"), true).unwrap();
    sync_last_applied(&mut applied, &config, "kubectl");
    let last: Value = serde_json::from_str(
        applied["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["data"]["mode"], "slow");
    let entries = ownership(&applied);
    let csa = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("kubectl-client-side-apply"))
        .unwrap();
    assert!(
        csa.fields_v1.as_ref().unwrap().0["f:data"]
            .get("f:mode")
            .is_none()
    );
}

#[test]
fn conflicts_outside_the_last_applied_configuration_still_fail() {
    let cm = Schema::new("v1", "ConfigMap", false);
    let mut live = client_side_applied("fast");
    let mut edited = live.clone();
    edited["data"]["extra"] = json!("by hand");
    record_update(Some(&live), &mut edited, &cm, &writer("kubectl-edit"));
    live = edited;
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "d"}, "data": {"mode": "fast", "extra": "mine"}});
    let conflicts = server_side_apply(&live, &config, &cm, &writer("kubectl"), false).unwrap_err();
    assert_eq!(conflicts[0].field, ".data.extra");
    assert!(!upgrades_client_side_apply(
        &live, &conflicts, &cm, "kubectl"
    ));
}

fn configmap(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data})
}

fn cm_writer(manager: &str) -> Writer<'_> {
    Writer {
        api_version: "v1",
        ..writer(manager)
    }
}

#[test]
fn applied_maps_own_their_keys_and_updated_new_maps_themselves() {
    let schema = Schema::new("v1", "ConfigMap", false);
    let skeleton = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let applied = server_side_apply(
        &skeleton,
        &configmap(json!({"k": "v"})),
        &schema,
        &cm_writer("a"),
        false,
    )
    .unwrap();
    assert_eq!(
        applied["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {"f:k": {}}})
    );
    let mut created = configmap(json!({"k": "v"}));
    record_update(None, &mut created, &schema, &cm_writer("kubectl-create"));
    assert_eq!(
        created["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:k": {}}})
    );
}

#[test]
fn a_forced_apply_that_takes_every_field_removes_the_loser_and_entries_sort_apply_first() {
    let schema = Schema::new("v1", "ConfigMap", false);
    let skeleton = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let first = server_side_apply(
        &skeleton,
        &configmap(json!({"k": "1"})),
        &schema,
        &cm_writer("a"),
        false,
    )
    .unwrap();
    let taken = server_side_apply(
        &first,
        &configmap(json!({"k": "2"})),
        &schema,
        &cm_writer("b"),
        true,
    )
    .unwrap();
    assert_eq!(managers(&taken), vec![("b".into(), "Apply".into())]);
    let mut updated = taken.clone();
    updated["data"]["other"] = json!("x");
    record_update(Some(&taken), &mut updated, &schema, &cm_writer("editor"));
    let again = server_side_apply(
        &updated,
        &configmap(json!({"k": "2", "more": "y"})),
        &schema,
        &Writer {
            now: 1_800_000_000,
            ..cm_writer("z")
        },
        false,
    )
    .unwrap();
    assert_eq!(
        managers(&again),
        vec![
            ("b".into(), "Apply".into()),
            ("z".into(), "Apply".into()),
            ("editor".into(), "Update".into())
        ]
    );
}

#[test]
fn status_writes_own_only_status_and_main_writes_no_status() {
    let schema = Schema::new("apps/v1", "Deployment", false).with_status_subresource(true);
    let live = deploy(1, "nginx");
    let mut with_status = live.clone();
    with_status["status"] = json!({"replicas": 1});
    let status_writer = Writer {
        subresource: Some("status"),
        ..writer("controller")
    };
    record_update(Some(&live), &mut with_status, &schema, &status_writer);
    assert_eq!(
        with_status["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:status": {"f:replicas": {}}})
    );
    assert_eq!(
        with_status["metadata"]["managedFields"][0]["subresource"],
        "status"
    );
    let mut created = deploy(1, "nginx");
    created["status"] = json!({});
    record_update(None, &mut created, &schema, &writer("kubectl-create"));
    assert!(
        created["metadata"]["managedFields"][0]["fieldsV1"]["f:status"].is_null(),
        "{created}"
    );
}
