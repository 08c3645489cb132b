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

/// Applies `config` as `manager` to a Deployment with the default writer.
fn apply(live: &Value, config: &Value, manager: &str, force: bool) -> Result<Value, Vec<Conflict>> {
    server_side_apply(live, config, &schema(), &writer(manager), force)
}

/// The Deployment after manager "a" applied two nginx replicas to the skeleton.
fn applied_by_a() -> Value {
    apply(&skeleton(), &deploy(2, "nginx"), "a", false).unwrap()
}

/// The field set of the first managed-fields entry.
fn first_fields(object: &Value) -> &Value {
    &object["metadata"]["managedFields"][0]["fieldsV1"]
}

#[test]
fn first_apply_records_the_applied_fields() {
    let out = applied_by_a();
    assert_eq!(out["spec"]["replicas"], 2);
    assert_eq!(
        *first_fields(&out),
        json!({"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
    assert_eq!(managers(&out), vec![("a".into(), "Apply".into())]);
}

#[test]
fn reapplying_the_same_config_changes_nothing_but_time() {
    let once = applied_by_a();
    let twice = apply(&once, &deploy(2, "nginx"), "a", false).unwrap();
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
    let a = applied_by_a();
    let err = apply(&a, &deploy(3, "nginx"), "b", false).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(
        (err[0].owner.as_str(), err[0].field.as_str()),
        ("\"a\"", ".spec.replicas")
    );
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.replicas"
    );
    let forced = apply(&a, &deploy(3, "nginx"), "b", true).unwrap();
    assert_eq!(forced["spec"]["replicas"], 3);
    let a_fields = &first_fields(&forced)["f:spec"];
    assert!(
        a_fields.get("f:replicas").is_none(),
        "a lost .spec.replicas: {a_fields}"
    );
}

#[test]
fn same_value_is_shared_and_survives_one_manager_dropping_it() {
    let a = applied_by_a();
    let both = apply(&a, &deploy(2, "nginx"), "b", false).unwrap();
    assert_eq!(managers(&both).len(), 2);
    let mut without_replicas = deploy(2, "nginx");
    without_replicas["spec"]
        .as_object_mut()
        .unwrap()
        .remove("replicas");
    let after = apply(&both, &without_replicas, "a", false).unwrap();
    assert_eq!(after["spec"]["replicas"], 2, "b still owns it");
    let gone = apply(&after, &without_replicas, "b", false).unwrap();
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
    let a = apply(&skeleton(), &two, "a", false).unwrap();
    let one = apply(&a, &deploy(1, "nginx"), "a", false).unwrap();
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
        "Apply failed with 2 conflicts: conflicts with \"m1\":\n- .a\nconflicts with \"m2\":\n- .b"
    );
    assert_eq!(
        conflict_causes(&conflicts)[0].reason.as_deref(),
        Some("FieldManagerConflict")
    );
}

#[test]
fn updates_take_changed_fields_from_appliers() {
    let a = applied_by_a();
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
    let err = apply(&scaled, &deploy(2, "nginx"), "a", false).unwrap_err();
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

/// Applies a ConfigMap holding `data` over `live` with `writer`; `None` starts from a bare one.
fn cm_apply(
    live: Option<&Value>,
    data: Value,
    writer: &Writer<'_>,
    force: bool,
) -> Result<Value, Vec<Conflict>> {
    let skeleton = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let schema = Schema::new("v1", "ConfigMap", false);
    server_side_apply(
        live.unwrap_or(&skeleton),
        &configmap(data),
        &schema,
        writer,
        force,
    )
}

#[test]
fn applied_maps_own_their_keys_and_updated_new_maps_themselves() {
    let schema = Schema::new("v1", "ConfigMap", false);
    let applied = cm_apply(None, json!({"k": "v"}), &cm_writer("a"), false).unwrap();
    assert_eq!(*first_fields(&applied), json!({"f:data": {"f:k": {}}}));
    let mut created = configmap(json!({"k": "v"}));
    record_update(None, &mut created, &schema, &cm_writer("kubectl-create"));
    assert_eq!(
        *first_fields(&created),
        json!({"f:data": {".": {}, "f:k": {}}})
    );
}

#[test]
fn a_forced_apply_that_takes_every_field_removes_the_loser_and_entries_sort_apply_first() {
    let schema = Schema::new("v1", "ConfigMap", false);
    let first = cm_apply(None, json!({"k": "1"}), &cm_writer("a"), false).unwrap();
    let taken = cm_apply(Some(&first), json!({"k": "2"}), &cm_writer("b"), true).unwrap();
    assert_eq!(managers(&taken), vec![("b".into(), "Apply".into())]);
    let mut updated = taken.clone();
    updated["data"]["other"] = json!("x");
    record_update(Some(&taken), &mut updated, &schema, &cm_writer("editor"));
    let later = Writer {
        now: 1_800_000_000,
        ..cm_writer("z")
    };
    let again = cm_apply(
        Some(&updated),
        json!({"k": "2", "more": "y"}),
        &later,
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
    let mut live = deploy(1, "nginx");
    record_update(None, &mut live, &schema, &writer("kubectl-create"));
    let mut with_status = live.clone();
    with_status["status"] = json!({"replicas": 1});
    let status_writer = Writer {
        subresource: Some("status"),
        ..writer("controller")
    };
    record_update(Some(&live), &mut with_status, &schema, &status_writer);
    let entries = with_status["metadata"]["managedFields"].as_array().unwrap();
    let controller = entries
        .iter()
        .find(|e| e["manager"] == "controller")
        .unwrap();
    assert_eq!(
        controller["fieldsV1"],
        json!({"f:status": {"f:replicas": {}}})
    );
    assert_eq!(controller["subresource"], "status");
    let mut created = deploy(1, "nginx");
    created["status"] = json!({});
    record_update(None, &mut created, &schema, &writer("kubectl-create"));
    assert!(first_fields(&created)["f:status"].is_null(), "{created}");
}

#[test]
fn an_object_nobody_owns_anything_of_stays_untracked_until_an_apply() {
    let schema = Schema::new("v1", "ConfigMap", false);
    let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let mut labelled = live.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    record_update(
        Some(&live),
        &mut labelled,
        &schema,
        &writer("kubectl-label"),
    );
    assert!(
        labelled["metadata"]["managedFields"].is_null(),
        "{labelled}"
    );
    let applied = server_side_apply(
        &labelled,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}),
        &schema,
        &writer("krt"),
        false,
    )
    .unwrap();
    assert_eq!(applied["metadata"]["managedFields"][0]["manager"], "krt");
}

#[test]
fn a_certificate_requests_spec_is_nobodys() {
    let schema = Schema::new("certificates.k8s.io/v1", "CertificateSigningRequest", false);
    let mut created = json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "c"}, "spec": {"request": "cg==", "signerName": "example.com/x"}});
    record_update(None, &mut created, &schema, &writer("kubectl-create"));
    assert!(created["metadata"]["managedFields"].is_null(), "{created}");
}
