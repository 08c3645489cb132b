//! `runtime::apply` against the in-memory cluster: both modes, no-op detection,
//! conflicts and retries, immutable fields, dry runs and id/namespace handling.

#[allow(dead_code, reason = "each test binary uses part of the shared support")]
mod support;

use krt_guest::model::{
    Action, ApiError, ApplyMode, ApplyOptions, ApplyResponse, PatchType, PropagationPolicy,
    Resource, StatusCode,
};
use krt_guest::runtime;
use serde_json::{Value, json};
use support::{
    FakeCluster, FakeHost, Request, Verb, configmap, deployment, field_conflict, resource,
};

fn csa() -> ApplyOptions {
    ApplyOptions {
        mode: ApplyMode::ClientSideThreeWay,
        ..ApplyOptions::default()
    }
}

fn run(
    c: &FakeCluster,
    prior: Option<&Resource>,
    plan: Option<&Resource>,
    o: &ApplyOptions,
) -> ApplyResponse {
    runtime::apply(c, &FakeHost::default(), prior, plan, o)
}

fn ok(r: &ApplyResponse) {
    assert!(r.status.is_none(), "unexpected status: {:?}", r.status);
}

fn patches(c: &FakeCluster) -> Vec<(PatchType, Value, bool)> {
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

fn nginx() -> Value {
    json!([{"name": "nginx", "image": "nginx:1"}])
}

#[test]
fn server_side_creates_then_reports_unchanged_without_writing() {
    let c = FakeCluster::new();
    let plan = deployment("web", 2, nginx());
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
fn server_side_update_returns_the_server_object_and_live_before() {
    let c = FakeCluster::new();
    run(
        &c,
        None,
        Some(&deployment("web", 1, nginx())),
        &ApplyOptions::default(),
    );
    c.clear_log();
    let options = ApplyOptions {
        field_manager: Some("ci".into()),
        force: true,
        ..Default::default()
    };
    let r = run(&c, None, Some(&deployment("web", 3, nginx())), &options);
    ok(&r);
    assert_eq!(r.action, Action::Update);
    assert_eq!(r.live.unwrap()["spec"]["replicas"], 1);
    assert_eq!(r.resource.unwrap().attributes["spec"]["replicas"], 3);
    let stored = c.object("deployments", Some("web"), "web").unwrap();
    assert_eq!(stored["spec"]["replicas"], 3);
    for request in c.log() {
        if let Request::Patch { options, .. } = request {
            assert_eq!(options.field_manager.as_deref(), Some("ci"));
            assert!(options.force);
        }
    }
}

#[test]
fn ignore_paths_make_a_change_count_as_unchanged() {
    let c = FakeCluster::new();
    run(
        &c,
        None,
        Some(&configmap("cfg", json!({"a": "1", "build": "1"}))),
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
        Some(&configmap("cfg", json!({"a": "1", "build": "2"}))),
        &options,
    );
    ok(&r);
    assert_eq!(r.action, Action::Unchanged);
    assert!(!c.wrote());
}

#[test]
fn server_side_dry_run_writes_nothing() {
    let c = FakeCluster::new();
    let dry = ApplyOptions {
        dry_run: true,
        ..Default::default()
    };
    let r = run(&c, None, Some(&deployment("web", 1, nginx())), &dry);
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert!(!c.wrote());
    assert!(c.object("deployments", Some("web"), "web").is_none());

    run(
        &c,
        None,
        Some(&deployment("web", 1, nginx())),
        &ApplyOptions::default(),
    );
    c.clear_log();
    let r = run(&c, None, Some(&deployment("web", 4, nginx())), &dry);
    ok(&r);
    assert_eq!(r.action, Action::Update);
    assert_eq!(r.resource.unwrap().attributes["spec"]["replicas"], 4);
    assert!(!c.wrote());
    assert_eq!(
        c.object("deployments", Some("web"), "web").unwrap()["spec"]["replicas"],
        1
    );
}

#[test]
fn field_manager_conflicts_are_reported_per_field_and_never_swallowed() {
    let c = FakeCluster::new();
    run(
        &c,
        None,
        Some(&deployment("web", 1, nginx())),
        &ApplyOptions::default(),
    );
    c.clear_log();
    c.fail_next(Verb::Patch, field_conflict(".spec.replicas", "kubectl"));
    let r = run(
        &c,
        None,
        Some(&deployment("web", 5, nginx())),
        &ApplyOptions::default(),
    );
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::FieldConflict);
    assert_eq!(status.causes.len(), 1);
    assert_eq!(status.causes[0].field, ".spec.replicas");
    assert!(status.message.contains("kubectl"), "{}", status.message);
    assert!(!c.wrote());
    assert_eq!(r.retries, 0);
}

#[test]
fn dry_run_failures_are_the_resources_error() {
    let c = FakeCluster::new();
    run(
        &c,
        None,
        Some(&deployment("web", 1, nginx())),
        &ApplyOptions::default(),
    );
    c.clear_log();
    let mut invalid = ApiError::api(422, "Invalid", "Deployment.apps \"web\" is invalid");
    invalid.causes = vec![krt_guest::model::Cause {
        field: "spec.replicas".into(),
        reason: "FieldValueInvalid".into(),
        message: "must be greater than or equal to 0".into(),
    }];
    c.fail_next(Verb::Patch, invalid);
    let r = run(
        &c,
        None,
        Some(&deployment("web", -1, nginx())),
        &ApplyOptions {
            dry_run: true,
            ..Default::default()
        },
    );
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::Invalid);
    assert!(
        status.message.contains("spec.replicas: must be greater"),
        "{}",
        status.message
    );
    assert!(r.resource.is_none());
    assert!(!c.wrote());
}

#[test]
fn client_side_removes_dropped_fields_and_keeps_foreign_ones() {
    let c = FakeCluster::new();
    let first = deployment(
        "web",
        1,
        json!([{"name": "nginx", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]),
    );
    let r = run(&c, None, Some(&first), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert!(
        matches!(&c.log()[..], [Request::Resolve(_), Request::Get(_), Request::Create { field_manager: Some(m), dry_run: false, .. }] if m == "krt")
    );

    // Another writer adds a label and a sidecar container.
    let mut live = c.object("deployments", Some("web"), "web").unwrap();
    live["metadata"]["labels"]["team"] = json!("blue");
    live["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "sidecar", "image": "envoy"}));
    c.put("deployments", live);

    let second = deployment("web", 1, json!([{"name": "nginx", "image": "nginx:2"}]));
    c.clear_log();
    let r = run(&c, Some(&first), Some(&second), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Update);
    let sent = patches(&c);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, PatchType::StrategicMerge);
    assert!(
        sent[0].1.pointer("/metadata/resourceVersion").is_some(),
        "{}",
        sent[0].1
    );
    let stored = c.object("deployments", Some("web"), "web").unwrap();
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
    let c = FakeCluster::new();
    let widget = |spec: Value| {
        resource(
            "example.com/v1:Widget:web:w",
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "web"}, "spec": spec}),
        )
    };
    let first = widget(json!({"size": 1, "color": "red"}));
    ok(&run(&c, None, Some(&first), &csa()));
    let mut live = c.object("widgets", Some("web"), "w").unwrap();
    live["spec"]["owner"] = json!("someone");
    c.put("widgets", live);
    c.clear_log();
    let second = widget(json!({"size": 2, "owner": null}));
    let r = run(&c, Some(&first), Some(&second), &csa());
    ok(&r);
    let sent = patches(&c);
    assert_eq!(sent[0].0, PatchType::JsonMerge);
    let spec = &c.object("widgets", Some("web"), "w").unwrap()["spec"];
    assert_eq!(spec, &json!({"size": 2}));
}

#[test]
fn optimistic_conflicts_are_retried_and_counted() {
    let c = FakeCluster::new();
    let first = configmap("cfg", json!({"a": "1"}));
    ok(&run(&c, None, Some(&first), &csa()));
    let conflict = || ApiError::api(409, "Conflict", "the object has been modified");
    c.fail_next(Verb::RealPatch, conflict());
    c.fail_next(Verb::RealPatch, conflict());
    let host = FakeHost::default();
    let second = configmap("cfg", json!({"a": "2"}));
    let r = runtime::apply(&c, &host, Some(&first), Some(&second), &csa());
    ok(&r);
    assert_eq!(r.retries, 2);
    assert_eq!(host.slept.borrow().len(), 2);
    assert!(host.progress.borrow().iter().any(|p| p.phase == "retrying"));
    assert_eq!(
        c.object("configmaps", Some("web"), "cfg").unwrap()["data"]["a"],
        "2"
    );

    for _ in 0..6 {
        c.fail_next(Verb::RealPatch, conflict());
    }
    let third = configmap("cfg", json!({"a": "3"}));
    let r = run(&c, Some(&second), Some(&third), &csa());
    assert_eq!(r.retries, 5);
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::Conflict);
    assert!(status.retryable);
    assert!(status.message.contains("5 retries"), "{}", status.message);
}

#[test]
fn create_races_are_retried() {
    let c = FakeCluster::new();
    c.fail_next(
        Verb::Create,
        ApiError::api(409, "AlreadyExists", "configmaps \"cfg\" already exists"),
    );
    let r = run(&c, None, Some(&configmap("cfg", json!({"a": "1"}))), &csa());
    ok(&r);
    assert_eq!(r.retries, 1);
    assert_eq!(r.action, Action::Create);
}

#[test]
fn immutable_changes_are_reported_or_replaced() {
    let c = FakeCluster::new();
    c.0.borrow_mut().enforce_immutable_selector = true;
    let first = deployment("web", 1, nginx());
    ok(&run(&c, None, Some(&first), &csa()));
    let mut second = deployment("web", 1, nginx());
    second.attributes["spec"]["selector"]["matchLabels"]["tier"] = json!("front");
    second.attributes["spec"]["template"]["metadata"]["labels"]["tier"] = json!("front");
    c.clear_log();
    let r = run(&c, Some(&first), Some(&second), &csa());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::ImmutableField);
    assert!(
        status.message.contains("spec.selector"),
        "{}",
        status.message
    );
    let stored = c.object("deployments", Some("web"), "web").unwrap();
    assert!(
        stored["spec"]["selector"]["matchLabels"]
            .get("tier")
            .is_none()
    );

    let host = FakeHost::default();
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
    let stored = c.object("deployments", Some("web"), "web").unwrap();
    assert_eq!(stored["spec"]["selector"]["matchLabels"]["tier"], "front");
    assert!(
        host.progress
            .borrow()
            .iter()
            .any(|p| p.phase == "replacing")
    );
}

#[test]
fn known_immutable_fields_are_detected_from_the_dry_run() {
    let c = FakeCluster::new();
    let first = deployment("web", 1, nginx());
    ok(&run(&c, None, Some(&first), &ApplyOptions::default()));
    let mut second = deployment("web", 1, nginx());
    second.attributes["spec"]["selector"]["matchLabels"]["tier"] = json!("front");
    c.clear_log();
    let r = run(&c, None, Some(&second), &ApplyOptions::default());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::ImmutableField);
    assert_eq!(status.causes[0].field, "spec.selector");
    assert!(!c.wrote());

    let options = ApplyOptions {
        replace_on_immutable: true,
        ..Default::default()
    };
    let r = run(&c, None, Some(&second), &options);
    ok(&r);
    assert_eq!(r.action, Action::Replace);
}

#[test]
fn offline_dry_run_only_reads() {
    let c = FakeCluster::new();
    let offline = ApplyOptions {
        dry_run: true,
        offline: true,
        ..csa()
    };
    let plan = deployment("web", 1, nginx());
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
            Some(&deployment("web", 7, nginx())),
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
}

#[test]
fn bad_ids_and_manifests_make_no_requests() {
    let c = FakeCluster::new();
    let mut plan = configmap("cfg", json!({}));
    plan.id = "v1:ConfigMap:other:cfg".into();
    let r = run(&c, None, Some(&plan), &ApplyOptions::default());
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::InvalidArgument);
    assert!(
        status.message.contains("'other'") && status.message.contains("'web'"),
        "{}",
        status.message
    );

    let plan = resource(
        "v1:ConfigMap:web:x",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
    );
    let r = run(&c, None, Some(&plan), &ApplyOptions::default());
    assert_eq!(r.status.unwrap().code, StatusCode::IllegalManifest);

    let r = run(&c, None, None, &ApplyOptions::default());
    assert_eq!(r.status.unwrap().code, StatusCode::InvalidArgument);
    assert!(c.log().is_empty(), "{:?}", c.log());
}

#[test]
fn unknown_kinds_name_the_missing_crd() {
    let c = FakeCluster::new();
    let plan = resource(
        "example.org/v2:Gadget:web:g",
        json!({"apiVersion": "example.org/v2", "kind": "Gadget", "metadata": {"name": "g"}}),
    );
    let host = FakeHost::default();
    let status = runtime::apply(&c, &host, None, Some(&plan), &ApplyOptions::default())
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::KindNotInstalled);
    assert!(
        status.message.contains("example.org/v2/Gadget"),
        "{}",
        status.message
    );
    assert!(
        status.message.contains("retried 3 times"),
        "{}",
        status.message
    );
    assert_eq!(*host.slept.borrow(), [500, 1000, 2000], "backs off");
    assert_eq!(host.progress.borrow().len(), 3);
    assert!(!c.wrote());

    // A preview does not wait for a CRD.
    let host = FakeHost::default();
    let dry = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    let status = runtime::apply(&c, &host, None, Some(&plan), &dry)
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::KindNotInstalled);
    assert!(host.slept.borrow().is_empty());
}

/// A host whose second sleep is when the CRD of `Gadget` becomes served.
struct CrdArrives<'a>(&'a FakeCluster, FakeHost);

impl krt_guest::cluster::HostServices for CrdArrives<'_> {
    fn log(&self, level: krt_guest::model::LogLevel, message: &str, fields: &[(&str, &str)]) {
        self.1.log(level, message, fields);
    }
    fn progress(&self, event: &krt_guest::model::Progress) {
        self.1.progress(event);
    }
    fn sleep(&self, ms: u32) {
        self.1.sleep(ms);
        if self.1.slept.borrow().len() == 2 {
            self.0
                .0
                .borrow_mut()
                .kinds
                .push(krt_guest::model::ApiResource {
                    group: "example.org".into(),
                    version: "v2".into(),
                    kind: "Gadget".into(),
                    plural: "gadgets".into(),
                    namespaced: true,
                });
        }
    }
}

#[test]
fn a_crd_arriving_during_the_back_off_is_used() {
    let c = FakeCluster::new();
    let plan = resource(
        "example.org/v2:Gadget:web:g",
        json!({"apiVersion": "example.org/v2", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"a": 1}}),
    );
    let host = CrdArrives(&c, FakeHost::default());
    let r = runtime::apply(&c, &host, None, Some(&plan), &ApplyOptions::default());
    ok(&r);
    assert_eq!(r.action, Action::Create);
    assert_eq!(*host.1.slept.borrow(), [500, 1000]);
    assert!(c.object("gadgets", Some("web"), "g").is_some());
}

#[test]
fn client_side_records_the_plan_and_uses_it_when_there_is_no_prior() {
    let c = FakeCluster::new();
    let v1 = configmap("cfg", json!({"a": "1", "b": "2"}));
    ok(&run(&c, None, Some(&v1), &csa()));
    let live = c.object("configmaps", Some("web"), "cfg").unwrap();
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
    let v2 = configmap("cfg", json!({"a": "1"}));
    let r = run(&c, None, Some(&v2), &csa());
    ok(&r);
    assert_eq!(r.action, Action::Update);
    assert_eq!(
        c.object("configmaps", Some("web"), "cfg").unwrap()["data"],
        json!({"a": "1"})
    );
}

#[test]
fn client_side_quantities_in_another_unit_make_no_request() {
    let c = FakeCluster::new();
    let with = |memory: &str| {
        deployment(
            "web",
            1,
            json!([{"name": "app", "image": "app", "resources": {"requests": {"memory": memory}}}]),
        )
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
    let c = FakeCluster::new();
    let plan = resource(
        "v1:ConfigMap:cfg",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}}),
    );
    let options = ApplyOptions {
        default_namespace: Some("team".into()),
        ..csa()
    };
    let r = run(&c, None, Some(&plan), &options);
    ok(&r);
    assert!(c.object("configmaps", Some("team"), "cfg").is_some());
    assert_eq!(
        r.resource.unwrap().attributes["metadata"]["namespace"],
        "team"
    );
    let r = run(&c, None, Some(&plan), &csa());
    ok(&r);
    assert!(c.object("configmaps", Some("default"), "cfg").is_some());
}

#[test]
fn a_missing_plan_deletes_the_prior() {
    let c = FakeCluster::new();
    let prior = configmap("cfg", json!({"a": "1"}));
    ok(&run(&c, None, Some(&prior), &csa()));
    let r = run(&c, Some(&prior), None, &csa());
    ok(&r);
    assert_eq!(r.action, Action::Delete);
    assert!(r.resource.is_none());
    assert_eq!(r.live.unwrap()["data"]["a"], "1");
    assert!(c.object("configmaps", Some("web"), "cfg").is_none());
    // Already gone: still a success.
    let r = run(&c, Some(&prior), None, &csa());
    ok(&r);
    assert_eq!(r.action, Action::Delete);
}

#[test]
fn server_errors_are_mapped_with_retry_hints() {
    let c = FakeCluster::new();
    let mut throttled = ApiError::api(429, "TooManyRequests", "slow down");
    throttled.retry_after_seconds = Some(2);
    c.fail_next(Verb::Get, throttled);
    let status = run(
        &c,
        None,
        Some(&configmap("cfg", json!({}))),
        &ApplyOptions::default(),
    )
    .status
    .unwrap();
    assert_eq!(status.code, StatusCode::Throttled);
    assert!(status.retryable);
    assert_eq!(status.retry_after_ms, Some(2000));
    assert!(
        status.message.contains("ConfigMap web/cfg"),
        "{}",
        status.message
    );
}
