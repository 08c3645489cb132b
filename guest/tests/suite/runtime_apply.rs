//! `runtime::apply` against the simulated cluster: both modes, no-op detection,
//! conflicts and retries, immutable fields, dry runs and id/namespace handling.

#[allow(dead_code, reason = "each test binary uses part of the shared support")]
use crate::support;

use krt_guest::model::{
    Action, ApiError, ApplyMode, ApplyOptions, ApplyResponse, Cause, PatchType, PropagationPolicy,
    Resource, StatusCode,
};
use krt_guest::runtime;
use krt_testkit::{Object, assert_contains, configmap, deployment, namespace, resource};
use serde_json::{Value, json};
use support::{Request, TestCluster, Verb};

fn csa() -> ApplyOptions {
    ApplyOptions {
        mode: ApplyMode::ClientSideThreeWay,
        ..ApplyOptions::default()
    }
}

/// A server-side dry run.
fn dry_run() -> ApplyOptions {
    ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    }
}

fn run(
    c: &TestCluster,
    prior: Option<&Resource>,
    plan: Option<&Resource>,
    o: &ApplyOptions,
) -> ApplyResponse {
    runtime::apply(c, &c.host(), prior, plan, o)
}

fn ok(r: &ApplyResponse) {
    assert!(r.status.is_none(), "unexpected status: {:?}", r.status);
}

fn patches(c: &TestCluster) -> Vec<(PatchType, Value, bool)> {
    c.log()
        .into_iter()
        .filter_map(|r| match r {
            Request::Patch {
                patch_type,
                body,
                options,
                ..
            } => Some((patch_type, body, options.dry_run)),
            _ => None,
        })
        .collect()
}

/// The Deployment `web` in namespace `web` with `replicas` replicas.
fn web(replicas: u32) -> Object {
    deployment("web").namespace("web").replicas(replicas)
}

/// The ConfigMap `cfg` in namespace `web` holding `data`.
fn cfg(data: Value) -> Resource {
    configmap("cfg").namespace("web").data(data).resource()
}

fn stored_web(c: &TestCluster) -> Value {
    c.object("apps/v1", "Deployment", "web", "web")
        .expect("Deployment web/web is stored")
}

fn stored_cfg(c: &TestCluster) -> Option<Value> {
    c.object("v1", "ConfigMap", "web", "cfg")
}

#[test]
fn server_side_creates_then_reports_unchanged_without_writing() {
    let c = TestCluster::new();
    let mut plan = web(2).resource();
    plan.depends_on = vec!["v1:Namespace:web".into()];
    plan.extensions = json!({"note": "kept"});
    let r = run(&c, None, Some(&plan), &ApplyOptions::default());
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert_eq!(r.live, None);
    let res = r.resource.unwrap();
    assert_eq!(res.id, plan.id);
    assert_eq!(res.depends_on, plan.depends_on);
    assert_eq!(res.extensions, plan.extensions);
    assert!(
        res.attributes
            .pointer("/metadata/resourceVersion")
            .is_none()
    );
    assert!(res.attributes.pointer("/metadata/managedFields").is_none());
    let sent = patches(&c);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, PatchType::Apply);
    assert!(!sent[0].2);
    let Some(Request::Patch { options, .. }) = c
        .log()
        .into_iter()
        .find(|r| matches!(r, Request::Patch { .. }))
    else {
        panic!("no patch")
    };
    assert_eq!(options.field_manager.as_deref(), Some("krt"));
    assert!(!options.force);

    c.clear_log();
    let r = run(&c, Some(&res), Some(&plan), &ApplyOptions::default());
    ok(&r);
    assert_eq!(r.action, Action::Unchanged);
    assert!(!c.wrote(), "{:?}", c.log());
    assert_eq!(patches(&c).len(), 1, "only the dry run");
    assert!(r.live.is_some());
}

#[test]
fn a_controller_write_between_the_read_and_the_dry_run_is_not_reported_as_ours() {
    let c = TestCluster::new();
    let plan = web(2).resource();
    let created = run(&c, None, Some(&plan), &ApplyOptions::default())
        .resource
        .unwrap();
    // A controller writes the object after this apply read it and before its dry run: the
    // dry run answers from the newer object, with the controller's annotation.
    let mut newer = stored_web(&c);
    newer["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "1"});
    let version: u64 = newer["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap();
    newer["metadata"]["resourceVersion"] = json!((version + 1).to_string());
    c.answer_next_dry_run(newer);
    c.clear_log();
    let r = run(&c, Some(&created), Some(&plan), &ApplyOptions::default());
    ok(&r);
    assert_eq!(r.action, Action::Unchanged);
    assert_eq!(r.retries, 0, "not an optimistic-concurrency conflict");
    assert!(!c.wrote(), "{:?}", c.log());
    let reads = c
        .log()
        .iter()
        .filter(|r| matches!(r, Request::Get { .. }))
        .count();
    assert_eq!(
        reads, 2,
        "read again once the dry run showed a newer object"
    );
    assert_eq!(patches(&c).len(), 2, "a dry run against each read");
}

#[test]
fn server_side_update_returns_the_server_object_and_live_before() {
    let c = TestCluster::new();
    run(&c, None, Some(&web(1).resource()), &ApplyOptions::default());
    c.clear_log();
    let options = ApplyOptions {
        field_manager: Some("ci".into()),
        force: true,
        ..Default::default()
    };
    let r = run(&c, None, Some(&web(3).resource()), &options);
    ok(&r);
    assert_eq!(r.action, Action::Update);
    assert_eq!(r.live.unwrap()["spec"]["replicas"], 1);
    assert_eq!(r.resource.unwrap().attributes["spec"]["replicas"], 3);
    assert_eq!(stored_web(&c)["spec"]["replicas"], 3);
    for request in c.log() {
        if let Request::Patch { options, .. } = request {
            assert_eq!(options.field_manager.as_deref(), Some("ci"));
            assert!(options.force);
        }
    }
}

#[test]
fn ignore_paths_make_a_change_count_as_unchanged() {
    let c = TestCluster::new();
    run(
        &c,
        None,
        Some(&cfg(json!({"a": "1", "build": "1"}))),
        &ApplyOptions::default(),
    );
    c.clear_log();
    let options = ApplyOptions {
        ignore_paths: vec!["data.build".into()],
        ..Default::default()
    };
    let r = run(
        &c,
        None,
        Some(&cfg(json!({"a": "1", "build": "2"}))),
        &options,
    );
    ok(&r);
    assert_eq!(r.action, Action::Unchanged);
    assert!(!c.wrote());
    assert_eq!(stored_cfg(&c).unwrap()["data"]["build"], "1");
}

#[test]
fn server_side_dry_run_writes_nothing() {
    let c = TestCluster::new();
    let r = run(&c, None, Some(&web(1).resource()), &dry_run());
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert!(!c.wrote());
    assert!(c.object("apps/v1", "Deployment", "web", "web").is_none());

    run(&c, None, Some(&web(1).resource()), &ApplyOptions::default());
    c.clear_log();
    let r = run(&c, None, Some(&web(4).resource()), &dry_run());
    ok(&r);
    assert_eq!(r.action, Action::Update);
    assert_eq!(r.resource.unwrap().attributes["spec"]["replicas"], 4);
    assert!(!c.wrote());
    assert_eq!(stored_web(&c)["spec"]["replicas"], 1);
}

#[test]
fn field_manager_conflicts_are_reported_per_field_and_never_swallowed() {
    let c = TestCluster::new();
    run(&c, None, Some(&web(1).resource()), &ApplyOptions::default());
    // kubectl takes `spec.replicas` over with a forced server-side apply.
    c.apply_as(
        "kubectl",
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "web"}, "spec": {"replicas": 3}}),
    );
    c.clear_log();
    let r = run(&c, None, Some(&web(5).resource()), &ApplyOptions::default());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::FieldConflict);
    assert_eq!(status.causes.len(), 1, "{:?}", status.causes);
    assert_eq!(status.causes[0].field, ".spec.replicas");
    assert_contains(&status.message, "kubectl");
    assert!(!c.wrote());
    assert_eq!(r.retries, 0);
    assert_eq!(stored_web(&c)["spec"]["replicas"], 3);
}

#[test]
fn dry_run_failures_are_the_resources_error() {
    let c = TestCluster::new();
    run(&c, None, Some(&web(1).resource()), &ApplyOptions::default());
    c.clear_log();
    // Pod template labels the selector does not match: the server's dry run refuses them.
    let invalid = web(1).set("/spec/template/metadata/labels", json!({"app": "other"}));
    let r = run(&c, None, Some(&invalid.resource()), &dry_run());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::Invalid);
    assert_contains(
        &status.message,
        "spec.template.metadata.labels: Invalid value",
    );
    assert!(r.resource.is_none());
    assert!(!c.wrote());
    assert!(
        patches(&c).iter().all(|(_, _, dry_run)| *dry_run),
        "{:?}",
        c.log()
    );
}

#[test]
fn client_side_removes_dropped_fields_and_keeps_foreign_ones() {
    let c = TestCluster::new();
    let first = web(1)
        .containers(
            json!([{"name": "nginx", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]),
        )
        .resource();
    let r = run(&c, None, Some(&first), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert!(
        matches!(&c.log()[..], [Request::Resolve(_), Request::Get(_), Request::Create { field_manager: Some(m), dry_run: false, .. }] if m == "krt"),
        "{:?}",
        c.log()
    );

    // Another writer adds a label and a sidecar container.
    let mut containers = stored_web(&c)["spec"]["template"]["spec"]["containers"].clone();
    containers
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "sidecar", "image": "envoy"}));
    c.edit(
        "apps/v1",
        "Deployment",
        "web",
        "web",
        json!({"metadata": {"labels": {"team": "blue"}},
            "spec": {"template": {"spec": {"containers": containers}}}}),
    );

    let second = web(1)
        .containers(json!([{"name": "nginx", "image": "nginx:2"}]))
        .resource();
    c.clear_log();
    let r = run(&c, Some(&first), Some(&second), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Update);
    // What the server would store decides: the patch is dry-run, then sent as it was.
    let sent = patches(&c);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(
        (sent[0].2, sent[1].2),
        (true, false),
        "dry run, then the write"
    );
    assert_eq!(sent[0].1, sent[1].1);
    assert_eq!(sent[1].0, PatchType::StrategicMerge);
    assert!(
        sent[1].1.pointer("/metadata/resourceVersion").is_some(),
        "{}",
        sent[1].1
    );
    let stored = stored_web(&c);
    assert_eq!(stored["metadata"]["labels"]["team"], "blue");
    let containers = stored["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    let nginx = containers.iter().find(|c| c["name"] == "nginx").unwrap();
    assert_eq!(nginx["image"], "nginx:2");
    assert!(nginx.get("env").is_none(), "dropped field removed: {nginx}");
    assert!(
        containers.iter().any(|c| c["name"] == "sidecar"),
        "foreign container kept"
    );

    // The same plan again changes nothing and sends nothing.
    c.clear_log();
    let r = run(&c, Some(&second), Some(&second), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Unchanged);
    assert!(patches(&c).is_empty());
    assert!(!c.wrote());
}

#[test]
fn client_side_uses_json_merge_for_custom_resources_and_null_deletes() {
    let c = TestCluster::new();
    c.install_crd("example.com", "v1", "Widget", "widgets");
    let widget = |spec: Value| {
        resource(json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "web"}, "spec": spec}))
    };
    let first = widget(json!({"size": 1, "color": "red"}));
    ok(&run(&c, None, Some(&first), &csa()));
    c.edit(
        "example.com/v1",
        "Widget",
        "web",
        "w",
        json!({"spec": {"owner": "someone"}}),
    );
    c.clear_log();
    let second = widget(json!({"size": 2, "owner": null}));
    let r = run(&c, Some(&first), Some(&second), &csa());
    ok(&r);
    let sent = patches(&c);
    assert_eq!(sent[0].0, PatchType::JsonMerge);
    let stored = c.object("example.com/v1", "Widget", "web", "w").unwrap();
    assert_eq!(stored["spec"], json!({"size": 2}));
}

#[test]
fn optimistic_conflicts_are_retried_and_counted() {
    let c = TestCluster::new();
    let first = cfg(json!({"a": "1"}));
    ok(&run(&c, None, Some(&first), &csa()));
    let conflict = || ApiError::api(409, "Conflict", "the object has been modified");
    c.fail_next(Verb::RealPatch, conflict());
    c.fail_next(Verb::RealPatch, conflict());
    let host = c.host();
    let second = cfg(json!({"a": "2"}));
    let r = runtime::apply(&c, &host, Some(&first), Some(&second), &csa());
    ok(&r);
    assert_eq!(r.retries, 2);
    assert_eq!(host.slept.borrow().len(), 2);
    assert!(host.progress.borrow().iter().any(|p| p.phase == "retrying"));
    assert_eq!(stored_cfg(&c).unwrap()["data"]["a"], "2");

    for _ in 0..6 {
        c.fail_next(Verb::RealPatch, conflict());
    }
    let third = cfg(json!({"a": "3"}));
    let r = run(&c, Some(&second), Some(&third), &csa());
    assert_eq!(r.retries, 5);
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::Conflict);
    assert!(status.retryable);
    assert_contains(&status.message, "5 retries");
    assert_eq!(stored_cfg(&c).unwrap()["data"]["a"], "2");
}

#[test]
fn create_races_are_retried() {
    let c = TestCluster::new();
    c.fail_next(
        Verb::Create,
        ApiError::api(409, "AlreadyExists", "configmaps \"cfg\" already exists"),
    );
    let r = run(&c, None, Some(&cfg(json!({"a": "1"}))), &csa());
    ok(&r);
    assert_eq!(r.retries, 1);
    assert_eq!(r.action, Action::Create);
    assert_eq!(stored_cfg(&c).unwrap()["data"]["a"], "1");
}

#[test]
fn immutable_changes_are_reported_or_replaced() {
    let c = TestCluster::new();
    let first = web(1).resource();
    ok(&run(&c, None, Some(&first), &csa()));
    let second = web(1)
        .set("/spec/selector/matchLabels/tier", json!("front"))
        .set("/spec/template/metadata/labels/tier", json!("front"))
        .resource();
    c.clear_log();
    let r = run(&c, Some(&first), Some(&second), &csa());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::ImmutableField);
    assert_contains(&status.message, "spec.selector");
    let stored = stored_web(&c);
    assert!(
        stored["spec"]["selector"]["matchLabels"]
            .get("tier")
            .is_none()
    );

    let host = c.host();
    let options = ApplyOptions {
        replace_on_immutable: true,
        ..csa()
    };
    let r = runtime::apply(&c, &host, Some(&first), Some(&second), &options);
    ok(&r);
    assert_eq!(r.action, Action::Replace);
    let log = c.log();
    assert!(log.iter().any(|r| matches!(r, Request::Delete { options, .. } if options.propagation_policy == Some(PropagationPolicy::Foreground))));
    assert!(
        log.iter()
            .any(|r| matches!(r, Request::Create { dry_run: false, .. }))
    );
    let stored = stored_web(&c);
    assert_eq!(stored["spec"]["selector"]["matchLabels"]["tier"], "front");
    assert!(
        host.progress
            .borrow()
            .iter()
            .any(|p| p.phase == "replacing")
    );
}

/// Stores the immutable ConfigMap `web/cfg` with `a: "1"`; returns its change to `a: "2"`.
fn stored_immutable_cfg(c: &TestCluster) -> Resource {
    let immutable = |data: Value| {
        configmap("cfg")
            .namespace("web")
            .data(data)
            .set("/immutable", json!(true))
            .resource()
    };
    ok(&run(
        c,
        None,
        Some(&immutable(json!({"a": "1"}))),
        &ApplyOptions::default(),
    ));
    immutable(json!({"a": "2"}))
}

/// Applies `change` to the immutable `data`: refused with the field named and nothing
/// written. Returns the cause.
fn refused_immutable(c: &TestCluster, change: &Resource) -> Cause {
    c.clear_log();
    let r = run(c, None, Some(change), &ApplyOptions::default());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::ImmutableField);
    assert_eq!(status.causes[0].field, "data");
    assert!(!c.wrote());
    assert_eq!(stored_cfg(c).unwrap()["data"]["a"], "1");
    status.causes[0].clone()
}

/// Applies `change` with `replace_on_immutable`: the object is replaced.
fn replaced_immutable(c: &TestCluster, change: &Resource) {
    let options = ApplyOptions {
        replace_on_immutable: true,
        ..Default::default()
    };
    let r = run(c, None, Some(change), &options);
    ok(&r);
    assert_eq!(r.action, Action::Replace);
    assert_eq!(stored_cfg(c).unwrap()["data"]["a"], "2");
}

#[test]
fn immutable_fields_the_server_refuses_are_reported_or_replaced() {
    let c = TestCluster::new();
    let second = stored_immutable_cfg(&c);
    // The dry run is refused as kube-apiserver refuses it (422, `data: Forbidden: field is
    // immutable when `immutable` is set`): krt reports the field and writes nothing.
    let cause = refused_immutable(&c, &second);
    assert_eq!(
        cause.message,
        "Forbidden: field is immutable when `immutable` is set"
    );
    replaced_immutable(&c, &second);
}

#[test]
fn known_immutable_fields_are_detected_from_the_dry_run() {
    let c = TestCluster::new();
    let second = stored_immutable_cfg(&c);
    // A server whose dry run lets the change through (its validation lacks the rule):
    // krt's own list of immutable fields finds the change in the dry-run result.
    let mut accepted = stored_cfg(&c).unwrap();
    accepted["data"]["a"] = json!("2");
    c.answer_next_dry_run(accepted.clone());
    let cause = refused_immutable(&c, &second);
    assert_eq!(
        (cause.reason.as_str(), cause.message.as_str()),
        ("FieldValueInvalid", "field is immutable"),
        "found by krt's list, not reported by the server"
    );

    c.answer_next_dry_run(accepted);
    replaced_immutable(&c, &second);
}

#[test]
fn offline_dry_run_only_reads() {
    let c = TestCluster::new();
    let offline = ApplyOptions {
        dry_run: true,
        offline: true,
        ..csa()
    };
    let plan = web(1).resource();
    let r = run(&c, None, Some(&plan), &offline);
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert_eq!(r.resource.unwrap().attributes["spec"]["replicas"], 1);

    ok(&run(&c, None, Some(&plan), &csa()));
    for mode in [ApplyMode::ClientSideThreeWay, ApplyMode::ServerSide] {
        c.clear_log();
        let r = run(
            &c,
            Some(&plan),
            Some(&web(7).resource()),
            &ApplyOptions {
                mode,
                ..offline.clone()
            },
        );
        ok(&r);
        assert_eq!(r.action, Action::Update);
        assert_eq!(r.resource.unwrap().attributes["spec"]["replicas"], 7);
        assert!(
            c.log()
                .iter()
                .all(|r| matches!(r, Request::Resolve(_) | Request::Get(_))),
            "{:?}",
            c.log()
        );
    }
    assert_eq!(stored_web(&c)["spec"]["replicas"], 1);
}

#[test]
fn bad_ids_and_manifests_make_no_requests() {
    let c = TestCluster::new();
    let mut plan = cfg(json!({}));
    plan.id = "v1:ConfigMap:other:cfg".into();
    let r = run(&c, None, Some(&plan), &ApplyOptions::default());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::InvalidArgument);
    assert_contains(&status.message, "'other'");
    assert_contains(&status.message, "'web'");

    let mut nameless = configmap("x").namespace("web").resource();
    nameless.attributes["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("name");
    let r = run(&c, None, Some(&nameless), &ApplyOptions::default());
    assert_eq!(r.status.unwrap().code, StatusCode::IllegalManifest);

    let r = run(&c, None, None, &ApplyOptions::default());
    assert_eq!(r.status.unwrap().code, StatusCode::InvalidArgument);
    assert!(c.log().is_empty(), "{:?}", c.log());
}

/// A `Gadget` in namespace `web`, a kind the cluster does not serve until its CRD is installed.
fn gadget() -> Resource {
    resource(json!({"apiVersion": "example.org/v2", "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "web"}, "spec": {"a": 1}}))
}

#[test]
fn unknown_kinds_name_the_missing_crd() {
    let c = TestCluster::new();
    let plan = gadget();
    let host = c.host();
    let status = runtime::apply(&c, &host, None, Some(&plan), &ApplyOptions::default())
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::KindNotInstalled);
    assert_contains(&status.message, "example.org/v2/Gadget");
    assert_contains(&status.message, "retried 3 times");
    assert_eq!(*host.slept.borrow(), [500, 1000, 2000], "backs off");
    assert_eq!(host.progress.borrow().len(), 3);
    assert!(!c.wrote());

    // A preview does not wait for a CRD.
    let host = c.host();
    let status = runtime::apply(&c, &host, None, Some(&plan), &dry_run())
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::KindNotInstalled);
    assert!(host.slept.borrow().is_empty());
}

#[test]
fn a_crd_arriving_during_the_back_off_is_used() {
    let c = TestCluster::new();
    let installer = c.clone();
    // The CRD of `Gadget` is installed during the second back-off.
    let host = c.host().on_sleep(move |sleeps| {
        if sleeps == 2 {
            installer.install_crd("example.org", "v2", "Gadget", "gadgets");
        }
    });
    let r = runtime::apply(&c, &host, None, Some(&gadget()), &ApplyOptions::default());
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert_eq!(*host.slept.borrow(), [500, 1000]);
    let stored = c.object("example.org/v2", "Gadget", "web", "g").unwrap();
    assert_eq!(stored["spec"]["a"], 1);
}

#[test]
fn client_side_records_the_plan_and_uses_it_when_there_is_no_prior() {
    let c = TestCluster::new();
    let v1 = cfg(json!({"a": "1", "b": "2"}));
    ok(&run(&c, None, Some(&v1), &csa()));
    let live = stored_cfg(&c).unwrap();
    let recorded: Value = serde_json::from_str(
        live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(recorded["data"], json!({"a": "1", "b": "2"}));

    // No prior: the annotation is the original, so nothing to do, then `b` is removed.
    c.clear_log();
    let again = run(&c, None, Some(&v1), &csa());
    ok(&again);
    assert_eq!(again.action, Action::Unchanged);
    assert!(!c.wrote(), "{:?}", c.log());
    let v2 = cfg(json!({"a": "1"}));
    let r = run(&c, None, Some(&v2), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Update);
    assert_eq!(stored_cfg(&c).unwrap()["data"], json!({"a": "1"}));
}

#[test]
fn client_side_quantities_in_another_unit_make_no_request() {
    let c = TestCluster::new();
    let with = |memory: &str| {
        web(1)
            .containers(json!([{"name": "app", "image": "app",
                "resources": {"requests": {"memory": memory}}}]))
            .resource()
    };
    ok(&run(&c, None, Some(&with("1024Mi")), &csa()));
    c.clear_log();
    let r = run(&c, Some(&with("1024Mi")), Some(&with("1Gi")), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Unchanged);
    assert!(!c.wrote(), "{:?}", c.log());
    let r = run(&c, Some(&with("1024Mi")), Some(&with("2Gi")), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Update);
}

#[test]
fn namespaces_default_from_options_and_are_written_into_the_object() {
    let c = TestCluster::new();
    c.put(namespace("team").value());
    let plan = configmap("cfg").resource();
    let options = ApplyOptions {
        default_namespace: Some("team".into()),
        ..csa()
    };
    let r = run(&c, None, Some(&plan), &options);
    ok(&r);
    assert!(c.object("v1", "ConfigMap", "team", "cfg").is_some());
    assert_eq!(
        r.resource.unwrap().attributes["metadata"]["namespace"],
        "team"
    );
    let r = run(&c, None, Some(&plan), &csa());
    ok(&r);
    assert!(c.object("v1", "ConfigMap", "default", "cfg").is_some());
}

#[test]
fn a_missing_plan_deletes_the_prior() {
    let c = TestCluster::new();
    let prior = cfg(json!({"a": "1"}));
    ok(&run(&c, None, Some(&prior), &csa()));
    let r = run(&c, Some(&prior), None, &csa());
    ok(&r);
    assert_eq!(r.action, Action::Delete);
    assert!(r.resource.is_none());
    assert_eq!(r.live.unwrap()["data"]["a"], "1");
    assert!(stored_cfg(&c).is_none());
    // Already gone: still a success.
    let r = run(&c, Some(&prior), None, &csa());
    ok(&r);
    assert_eq!(r.action, Action::Delete);
}

#[test]
fn server_errors_are_mapped_with_retry_hints() {
    let c = TestCluster::new();
    let mut throttled = ApiError::api(429, "TooManyRequests", "slow down");
    throttled.retry_after_seconds = Some(2);
    c.fail_next(Verb::Get, throttled);
    let status = run(&c, None, Some(&cfg(json!({}))), &ApplyOptions::default())
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::Throttled);
    assert!(status.retryable);
    assert_eq!(status.retry_after_ms, Some(2000));
    assert_contains(&status.message, "ConfigMap web/cfg");
}

/// A StatefulSet as charts write it: a claim template with a quantity in
/// another unit, a port with no protocol, an empty securityContext.
fn stateful_set() -> Resource {
    resource(json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "web"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
                "securityContext": {},
                "containers": [{"name": "db", "image": "postgres:16",
                    "ports": [{"name": "pg", "containerPort": 5432}],
                    "resources": {"requests": {"memory": "1024Mi", "cpu": "1000m"}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1024Mi"}}}}]
        }
    }))
}

/// A NetworkPolicy whose port names no protocol.
fn network_policy() -> Resource {
    resource(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "db", "namespace": "web"},
        "spec": {"podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{"ports": [{"port": 5432}]}]}
    }))
}

#[test]
fn client_side_whole_list_replaces_of_defaulted_lists_are_unchanged_and_not_sent() {
    // volumeClaimTemplates and NetworkPolicy ports have no patch strategy: the
    // three-way patch replaces them whole, so it is never empty; the server's dry
    // run defaults them back, and that decides.
    let c = TestCluster::new();
    for plan in [stateful_set(), network_policy()] {
        let r = run(&c, None, Some(&plan), &csa());
        ok(&r);
        assert_eq!(r.action, Action::Create);
        for dry_run in [true, false] {
            c.clear_log();
            let options = ApplyOptions { dry_run, ..csa() };
            let r = run(&c, Some(&plan), Some(&plan), &options);
            ok(&r);
            assert_eq!(
                r.action,
                Action::Unchanged,
                "{} (dry run: {dry_run})",
                plan.id
            );
            assert!(!c.wrote(), "{:?}", c.log());
        }
    }
}

#[test]
fn client_side_moves_the_recorded_configuration_forward_as_a_noted_update() {
    let c = TestCluster::new();
    let with_policy = network_policy();
    let mut plan = with_policy.clone();
    // The server's own default, written out, then left out again.
    plan.attributes["spec"]["policyTypes"] = json!(["Ingress"]);
    ok(&run(&c, None, Some(&plan), &csa()));
    let before = c
        .object("networking.k8s.io/v1", "NetworkPolicy", "web", "db")
        .unwrap();

    c.clear_log();
    let preview = run(
        &c,
        Some(&plan),
        Some(&with_policy),
        &ApplyOptions {
            dry_run: true,
            ..csa()
        },
    );
    assert_eq!(preview.action, Action::Update);
    let note = preview.status.expect("a note");
    assert!(!note.is_error(), "{note:?}");
    assert_eq!(note.reason, runtime::LAST_APPLIED_ONLY);
    assert_contains(&note.message, "spec.policyTypes");
    assert!(!c.wrote());

    let r = run(&c, Some(&plan), Some(&with_policy), &csa());
    assert_eq!(r.action, Action::Update);
    assert_eq!(
        r.status.map(|s| s.reason),
        Some(runtime::LAST_APPLIED_ONLY.into())
    );
    let after = c
        .object("networking.k8s.io/v1", "NetworkPolicy", "web", "db")
        .unwrap();
    assert_eq!(
        after["spec"], before["spec"],
        "the server keeps its default"
    );
    assert_eq!(
        after["metadata"]["generation"],
        before["metadata"]["generation"]
    );
    let recorded: Value = serde_json::from_str(
        after["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(recorded["spec"].get("policyTypes").is_none(), "{recorded}");

    // Recorded: the same plan again writes nothing (the whole-list replace of
    // `ingress` still costs a dry run).
    c.clear_log();
    let r = run(&c, Some(&with_policy), Some(&with_policy), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Unchanged);
    assert!(!c.wrote(), "{:?}", c.log());
}
