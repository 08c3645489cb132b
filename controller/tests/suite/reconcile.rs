//! One controller replica against krt-sim: a Stack becomes Ready, drift is
//! corrected within the interval, what leaves the spec is pruned, a Stack
//! reaching beyond its namespace is Stalled and changes nothing, deleting a
//! Stack deletes its resources, a ClientSide Stack merges three ways, and
//! Stacks run components from ConfigMaps and `--component-dir`s and
//! middleware from ConfigMaps.

use crate::support;

use k8s_openapi::api::events::v1::Event;
use krt_controller::{Grant, Grants};
use krt_guest::normalize::LAST_APPLIED_ANNOTATION as LAST_APPLIED;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Harness, Setup, config_map, is_ready, scrape, stack, tagger_component, until};

/// Long enough for a first reconcile on a loaded 2-core machine.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The `reason`s of the Events about Stack `name` in `team-a`.
async fn event_reasons(h: &Harness, name: &str) -> Vec<String> {
    let events: Api<Event> = Api::namespaced(h.cluster.client.clone(), "team-a");
    let list = events.list(&Default::default()).await.expect("Events list");
    list.items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .filter_map(|e| e.reason)
        .collect()
}

/// Waits for an Event `reason` about Stack `name` in `team-a`. An Event
/// follows the write it tells of: on a loaded machine it may land a moment
/// after what that write changed.
async fn until_event(h: &Harness, name: &str, reason: &str) {
    until(
        &format!("a {reason} Event"),
        Duration::from_secs(5),
        || async {
            let reasons = event_reasons(h, name).await;
            reasons.iter().any(|r| r == reason).then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_of_five_resources_becomes_ready() {
    let h = Harness::start(Grants::default()).await;
    let resources = vec![
        config_map("settings", "a"),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"},
               "stringData": {"token": "s3cret"}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "web"}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
        krt_testkit::deployment("web").value(),
    ];
    h.create(stack("team-a", "web", "1m", resources)).await;
    let ready = h
        .until_condition("team-a", "web", "Ready", "True", READY_WITHIN)
        .await;
    let status = ready.status.expect("a status");
    let ready_condition = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(ready_condition.reason, "ReconciliationSucceeded");
    assert!(
        status.conditions.iter().all(|c| c.type_ == "Ready"),
        "no Reconciling or Stalled once Ready: {:?}",
        status.conditions
    );
    let mut ids: Vec<&str> = status.inventory.iter().map(|e| e.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "apps/v1:Deployment:team-a:web",
            "v1:ConfigMap:team-a:settings",
            "v1:Secret:team-a:token",
            "v1:Service:team-a:web",
            "v1:ServiceAccount:team-a:web",
        ]
    );
    assert_eq!(status.inventory_count, Some(5));
    assert_eq!(status.resources.len(), 5);
    assert!(
        status.resources.iter().all(|r| r.health == "Current"),
        "{:?}",
        status.resources
    );
    let revision = status.last_applied_revision.expect("a revision");
    assert!(revision.starts_with("sha256:"), "{revision}");
    assert_eq!(
        status.last_attempted_revision.as_deref(),
        Some(revision.as_str())
    );
    // Written by the controller, into the Stack's namespace.
    let deployment = h
        .cluster
        .get(
            "apps/v1",
            "Deployment",
            "deployments",
            Some("team-a"),
            "web",
        )
        .await
        .expect("the Deployment exists");
    let managers: Vec<&str> = deployment["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["manager"].as_str())
        .collect();
    assert!(managers.contains(&"krt-controller"), "{managers:?}");
    let reasons = event_reasons(&h, "web").await;
    assert!(reasons.iter().any(|r| r == "Applied"), "{reasons:?}");
    let text = scrape(&h.metrics_url).await;
    assert!(
        text.lines()
            .any(|l| l.starts_with("krt_controller_reconciles_total{result=\"ready\"} ")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l == "krt_controller_resource_writes_total{action=\"created\"} 5"),
        "{text}"
    );
    for metric in [
        "krt_controller_reconcile_duration_seconds_count",
        "krt_controller_queue_depth",
        "krt_controller_shards_held 2",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(metric)),
            "{metric}: {text}"
        );
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubectl_change_to_a_managed_field_is_corrected_within_the_interval() {
    let h = Harness::start(Grants::default()).await;
    let interval = Duration::from_secs(3);
    h.create(stack(
        "team-a",
        "cfg",
        "3s",
        vec![config_map("app", "wanted")],
    ))
    .await;
    h.until_condition("team-a", "cfg", "Ready", "True", READY_WITHIN)
        .await;
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&h.cluster.kubeconfig)
        .args(["-n", "team-a", "patch", "configmap", "app", "--type=merge"])
        .args(["-p", r#"{"data":{"key":"drifted"}}"#])
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let changed = Instant::now();
    let live = h.config_map("team-a", "app").await.unwrap();
    assert_eq!(live["data"]["key"], "drifted", "kubectl's change landed");
    // Due again within one interval of the last reconcile; a second of slack
    // for the reconcile itself.
    until(
        "the drift corrected",
        interval + Duration::from_secs(2),
        || async {
            let live = h.config_map("team-a", "app").await?;
            (live["data"]["key"] == "wanted").then_some(())
        },
    )
    .await;
    assert!(changed.elapsed() <= interval + Duration::from_secs(2));
    // The Event follows the write that corrected the drift; on a loaded
    // machine it may land a moment after the ConfigMap is back.
    until_event(&h, "cfg", "DriftCorrected").await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_removed_from_the_spec_is_pruned() {
    let h = Harness::start(Grants::default()).await;
    let all = vec![
        config_map("a", "1"),
        config_map("b", "2"),
        config_map("c", "3"),
    ];
    h.create(stack("team-a", "trio", "1m", all)).await;
    let first = h
        .until_condition("team-a", "trio", "Ready", "True", READY_WITHIN)
        .await;
    assert_eq!(first.status.unwrap().inventory_count, Some(3));
    let patch = json!({"spec": {"resources": [config_map("a", "1"), config_map("c", "3")]}});
    h.stacks
        .patch("trio", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the spec changes");
    let after = h
        .until_reconciled(
            "b pruned and the Stack Ready again",
            "trio",
            READY_WITHIN,
            is_ready,
        )
        .await;
    assert!(h.config_map("team-a", "b").await.is_none(), "b is deleted");
    assert!(h.config_map("team-a", "a").await.is_some());
    assert!(h.config_map("team-a", "c").await.is_some());
    let ids: Vec<&str> = after.inventory.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(!ids.contains(&"v1:ConfigMap:team-a:b"), "{ids:?}");
    // With prune off, what leaves the spec stays in the cluster and leaves the inventory.
    let patch = json!({"spec": {"prune": false, "resources": [config_map("a", "1")]}});
    h.stacks
        .patch("trio", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the spec changes");
    h.until_reconciled("c orphaned", "trio", READY_WITHIN, |stack| {
        stack.status.as_ref().unwrap().inventory_count == Some(1)
    })
    .await;
    assert!(
        h.config_map("team-a", "c").await.is_some(),
        "c is left alone"
    );
    // The inventory is saved during the apply, and the Event follows it: on
    // a loaded machine it may land a moment after the inventory shrank.
    until_event(&h, "trio", "Orphaned").await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_naming_another_namespace_is_stalled_and_changes_nothing() {
    let grants = Grants {
        grants: vec![Grant {
            stacks: vec!["team-a".into()],
            namespaces: vec!["shared".into()],
            cluster_scoped: false,
        }],
        ..Grants::default()
    };
    let h = Harness::start(grants).await;
    for ns in ["team-b", "shared"] {
        h.cluster.create_namespace(ns).await;
    }
    let reach = |ns: &str, name: &str| {
        krt_testkit::configmap(name)
            .namespace(ns)
            .data(json!({"key": "x"}))
            .value()
    };
    // Its own ConfigMap and one in team-b: nothing at all is written.
    h.create(stack(
        "team-a",
        "greedy",
        "1m",
        vec![config_map("own", "1"), reach("team-b", "theirs")],
    ))
    .await;
    let stalled = h
        .until_condition("team-a", "greedy", "Stalled", "True", READY_WITHIN)
        .await;
    let ready = stalled.condition("Ready").expect("a Ready condition");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "PolicyDenied")
    );
    let message = &stalled.condition("Stalled").unwrap().message;
    assert!(message.contains("team-b"), "{message}");
    assert!(
        message.contains("may touch only its own namespace")
            && message.contains("--grant-namespace team-a=team-b"),
        "{message}"
    );
    assert!(h.config_map("team-b", "theirs").await.is_none());
    assert!(
        h.config_map("team-a", "own").await.is_none(),
        "nothing is written"
    );
    // Cluster-scoped kinds need a grant too.
    h.create(stack(
        "team-a",
        "cluster",
        "1m",
        vec![krt_testkit::namespace("made-by-a").value()],
    ))
    .await;
    let stalled = h
        .until_condition("team-a", "cluster", "Stalled", "True", READY_WITHIN)
        .await;
    let message = &stalled.condition("Stalled").unwrap().message;
    assert!(
        message.contains("--grant-cluster-scoped team-a"),
        "{message}"
    );
    assert!(
        h.cluster
            .get("v1", "Namespace", "namespaces", None, "made-by-a")
            .await
            .is_none()
    );
    // What the controller's configuration grants is allowed.
    h.create(stack(
        "team-a",
        "granted",
        "1m",
        vec![config_map("own", "1"), reach("shared", "common")],
    ))
    .await;
    h.until_condition("team-a", "granted", "Ready", "True", READY_WITHIN)
        .await;
    assert!(h.config_map("shared", "common").await.is_some());
    let reasons = event_reasons(&h, "greedy").await;
    assert!(reasons.iter().any(|r| r == "PolicyDenied"), "{reasons:?}");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_stack_removes_its_resources() {
    let h = Harness::start(Grants::default()).await;
    h.create(stack(
        "team-a",
        "doomed",
        "1m",
        vec![config_map("x", "1"), config_map("y", "2")],
    ))
    .await;
    let ready = h
        .until_condition("team-a", "doomed", "Ready", "True", READY_WITHIN)
        .await;
    assert_eq!(
        ready.metadata.finalizers.as_deref(),
        Some(&["krt.dev/stack".to_owned()][..])
    );
    h.create(stack("team-a", "kept", "1m", vec![config_map("z", "3")]))
        .await;
    h.until_condition("team-a", "kept", "Ready", "True", READY_WITHIN)
        .await;
    h.stacks
        .patch(
            "kept",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"prune": false}})),
        )
        .await
        .unwrap();
    h.until_condition("team-a", "kept", "Ready", "True", READY_WITHIN)
        .await;
    for name in ["doomed", "kept"] {
        h.stacks
            .delete(name, &DeleteParams::default())
            .await
            .expect("the delete is accepted");
    }
    until("both Stacks gone", READY_WITHIN, || async {
        let left = h.stacks.list(&Default::default()).await.ok()?;
        left.items.is_empty().then_some(())
    })
    .await;
    assert!(h.config_map("team-a", "x").await.is_none());
    assert!(h.config_map("team-a", "y").await.is_none());
    assert!(
        h.config_map("team-a", "z").await.is_some(),
        "prune off: the resources of a deleted Stack stay"
    );
    h.stop().await;
}

/// Creates ConfigMap `name` in `team-a` holding `bytes` under the `binaryData` key `key`.
async fn component_config_map(h: &Harness, name: &str, key: &str, bytes: &[u8]) {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::ConfigMap;
    let config_maps: Api<ConfigMap> = Api::namespaced(h.cluster.client.clone(), "team-a");
    let object = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        binary_data: Some([(key.to_owned(), ByteString(bytes.to_vec()))].into()),
        ..Default::default()
    };
    config_maps
        .create(&Default::default(), &object)
        .await
        .expect("ConfigMap created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_runs_the_component_a_config_map_holds_and_an_invalid_one_is_stalled() {
    let h = Harness::start(Grants::default()).await;
    component_config_map(&h, "runtime", "runtime.wasm", krt_host::DEFAULT_COMPONENT).await;
    component_config_map(
        &h,
        "not-a-component",
        "runtime.wasm",
        b"\0asm but not really",
    )
    .await;
    let from = |config_map: &str| json!({"configMap": {"name": config_map, "key": "runtime.wasm"}});

    let mut good = stack("team-a", "custom", "1m", vec![config_map("custom", "a")]);
    good["spec"]["component"] = from("runtime");
    h.create(good).await;
    h.until_condition("team-a", "custom", "Ready", "True", READY_WITHIN)
        .await;
    let written = h.config_map("team-a", "custom").await.expect("applied");
    assert_eq!(written["data"]["key"], "a", "{written}");

    let mut bad = stack("team-a", "broken", "1m", vec![config_map("never", "a")]);
    bad["spec"]["component"] = from("not-a-component");
    h.create(bad).await;
    let stalled = h
        .until_condition("team-a", "broken", "Stalled", "True", READY_WITHIN)
        .await;
    let condition = stalled.condition("Stalled").unwrap();
    assert_eq!(condition.reason, "ComponentInvalid", "{condition:?}");
    assert!(
        condition.message.contains("not-a-component"),
        "the condition names the ConfigMap: {}",
        condition.message
    );
    assert!(
        h.config_map("team-a", "never").await.is_none(),
        "nothing is applied through an invalid component"
    );
    h.stop().await;
}

/// The `operation`s of the managedFields entries of `manager` in `object`.
fn operations(object: &Value, manager: &str) -> Vec<String> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["manager"] == manager)
        .filter_map(|f| f["operation"].as_str().map(str::to_owned))
        .collect()
}

/// Waits until Stack `name` of `team-a` has reconciled its current
/// generation to Ready.
async fn until_ready_again(h: &Harness, name: &str) {
    h.until_reconciled(
        &format!("Stack {name} Ready at its new generation"),
        name,
        READY_WITHIN,
        is_ready,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_side_stack_merges_three_ways_and_keeps_what_others_added() {
    let h = Harness::start(Grants::default()).await;
    let settings = |data: Value| krt_testkit::configmap("client").data(data).value();
    let mut client = stack(
        "team-a",
        "client",
        "1m",
        vec![settings(json!({"key": "a", "extra": "x"}))],
    );
    client["spec"]["mode"] = json!("ClientSide");
    h.create(client).await;
    h.until_condition("team-a", "client", "Ready", "True", READY_WITHIN)
        .await;
    let live = h.config_map("team-a", "client").await.expect("applied");
    assert_eq!(live["data"], json!({"key": "a", "extra": "x"}), "{live}");
    let recorded = live["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .unwrap_or_else(|| panic!("the last applied configuration is recorded: {live}"));
    let recorded: Value = serde_json::from_str(recorded).expect("the record is JSON");
    assert_eq!(
        recorded["data"],
        json!({"key": "a", "extra": "x"}),
        "{recorded}"
    );
    // Written with a create/patch as the controller's manager, not server-side applied.
    assert_eq!(operations(&live, "krt-controller"), ["Update"], "{live}");

    // Another manager adds a field, as `kubectl patch` does.
    let config_maps: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(h.cluster.client.clone(), "team-a");
    let by_kubectl = PatchParams {
        field_manager: Some("kubectl-patch".into()),
        ..PatchParams::default()
    };
    config_maps
        .patch(
            "client",
            &by_kubectl,
            &Patch::Merge(json!({"data": {"added": "by-kubectl"}})),
        )
        .await
        .expect("the patch lands");

    // The Stack drops `extra`: the next reconcile removes it and leaves `added`.
    let patch = json!({"spec": {"resources": [settings(json!({"key": "a"}))]}});
    h.stacks
        .patch("client", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the spec changes");
    until_ready_again(&h, "client").await;
    let live = h.config_map("team-a", "client").await.expect("still there");
    assert_eq!(
        live["data"],
        json!({"key": "a", "added": "by-kubectl"}),
        "the removed field is gone and the other manager's field stays: {live}"
    );
    let recorded: Value = serde_json::from_str(
        live["metadata"]["annotations"][LAST_APPLIED]
            .as_str()
            .expect("still recorded"),
    )
    .expect("the record is JSON");
    assert_eq!(recorded["data"], json!({"key": "a"}), "{recorded}");
    assert_eq!(operations(&live, "krt-controller"), ["Update"], "{live}");
    assert_eq!(operations(&live, "kubectl-patch"), ["Update"], "{live}");
    h.stop().await;
}

/// A Stack `name` of one ConfigMap `name`, running the component at `path`.
fn stack_with_component_path(name: &str, path: &str) -> Value {
    let mut s = stack("team-a", name, "1m", vec![config_map(name, "from-dir")]);
    s["spec"]["component"] = json!({"path": path});
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_runs_a_component_from_a_component_dir_and_paths_outside_are_stalled() {
    let temp = krt_testkit::temp_dir("component-dir");
    let dir = temp.path().join("components");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("runtime.wasm"), krt_host::DEFAULT_COMPONENT).unwrap();
    // A valid component just outside the directory: were an escape allowed,
    // the Stacks below would become Ready.
    let outside = temp.path().join("outside.wasm");
    std::fs::write(&outside, krt_host::DEFAULT_COMPONENT).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("link.wasm")).unwrap();
    let h = Harness::start_with(Setup {
        component_dirs: vec![dir.clone()],
        ..Setup::default()
    })
    .await;

    let inside = dir.join("runtime.wasm");
    for (name, path) in [
        ("relative", "runtime.wasm"),
        ("absolute", inside.to_str().unwrap()),
    ] {
        h.create(stack_with_component_path(name, path)).await;
    }
    let outside = outside.to_str().unwrap();
    let refused = [
        (
            "dotdot",
            "../outside.wasm",
            "is not under the controller's component directories",
        ),
        (
            "abs-outside",
            outside,
            "is not under the controller's component directories",
        ),
        ("symlink", "link.wasm", "resolves outside"),
        (
            "missing",
            "absent.wasm",
            "names no file in the controller's component directories",
        ),
    ];
    for (name, path, _) in refused {
        h.create(stack_with_component_path(name, path)).await;
    }
    for name in ["relative", "absolute"] {
        let ready = h
            .until_condition("team-a", name, "Ready", "True", READY_WITHIN)
            .await;
        let written = h.config_map("team-a", name).await.expect("applied");
        assert_eq!(written["data"]["key"], "from-dir", "{written}");
        let ids: Vec<String> = ready
            .status
            .unwrap()
            .inventory
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, [format!("v1:ConfigMap:team-a:{name}")]);
    }
    let dir_name = dir.display().to_string();
    for (name, path, why) in refused {
        let stalled = h
            .until_condition("team-a", name, "Stalled", "True", READY_WITHIN)
            .await;
        let condition = stalled.condition("Stalled").unwrap();
        assert_eq!(condition.reason, "InvalidSpec", "{name}: {condition:?}");
        for part in ["spec.component", path, why, dir_name.as_str()] {
            assert!(
                condition.message.contains(part),
                "{name}: the message names {part:?}: {}",
                condition.message
            );
        }
        let ready = stalled.condition("Ready").unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "InvalidSpec")
        );
        assert!(
            h.config_map("team-a", name).await.is_none(),
            "{name}: nothing is written"
        );
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middleware_chain_from_a_config_map_tags_every_object_and_a_missing_key_fails() {
    let tagger = tagger_component().await;
    let h = Harness::start(Grants::default()).await;
    component_config_map(&h, "rules", "tagger.wasm", &tagger).await;
    let through = |key: &str| json!([{"configMap": {"name": "rules", "key": key}}]);

    let mut tagged = stack(
        "team-a",
        "tagged",
        "1m",
        vec![
            config_map("tagged-a", "1"),
            config_map("tagged-b", "2"),
            krt_testkit::configmap("tagged-web")
                .annotations(json!({"team": "web"}))
                .value(),
        ],
    );
    tagged["spec"]["middleware"] = through("tagger.wasm");
    h.create(tagged).await;
    h.until_condition("team-a", "tagged", "Ready", "True", READY_WITHIN)
        .await;
    for name in ["tagged-a", "tagged-b"] {
        let live = h.config_map("team-a", name).await.expect("applied");
        assert_eq!(
            live["metadata"]["annotations"]["team"], "platform",
            "the tagger annotated {name}: {live}"
        );
    }
    let web = h.config_map("team-a", "tagged-web").await.expect("applied");
    assert_eq!(
        web["metadata"]["annotations"]["team"], "web",
        "a team annotation of the plan is kept: {web}"
    );

    let mut broken = stack(
        "team-a",
        "untagged",
        "1m",
        vec![config_map("never-tagged", "1")],
    );
    broken["spec"]["middleware"] = through("absent.wasm");
    h.create(broken).await;
    let failed = h
        .until_condition("team-a", "untagged", "Ready", "False", READY_WITHIN)
        .await;
    let ready = failed.condition("Ready").unwrap();
    assert_eq!(ready.reason, "SourceNotFound", "{ready:?}");
    // A ConfigMap's key may appear later, so this is a failure retried every
    // interval, not Stalled (which waits for the Stack or the controller's
    // configuration to change).
    assert!(failed.condition("Stalled").is_none(), "{:?}", failed.status);
    let retrying = failed
        .condition("Reconciling")
        .expect("Reconciling while it retries");
    assert_eq!(
        (retrying.status.as_str(), retrying.reason.as_str()),
        ("True", "ProgressingWithRetry")
    );
    for part in [
        "ConfigMap team-a/rules",
        "`absent.wasm`",
        "spec.middleware[0]",
    ] {
        assert!(
            ready.message.contains(part),
            "the message names {part}: {}",
            ready.message
        );
    }
    assert!(
        h.config_map("team-a", "never-tagged").await.is_none(),
        "nothing is written without the chain"
    );
    h.stop().await;
}

/// Replaces ConfigMap `team-a/<name>` with another object of the same name,
/// created directly by someone else with `labels`.
async fn someone_replaces(h: &Harness, name: &str, labels: Value) {
    let api = h
        .cluster
        .api("v1", "ConfigMap", "configmaps", Some("team-a"));
    api.delete(name, &DeleteParams::default())
        .await
        .expect("deleted directly");
    let theirs = krt_testkit::configmap(name)
        .namespace("team-a")
        .labels(labels)
        .data(json!({"owner": "someone else"}));
    h.cluster.create("configmaps", theirs.value()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prune_and_the_stack_deletion_leave_alone_what_the_stack_does_not_own() {
    let h = Harness::start(Grants::default()).await;
    let both = vec![config_map("a", "1"), config_map("b", "2")];
    h.create(stack("team-a", "mixed", "1h", both)).await;
    let ready = h
        .until_condition("team-a", "mixed", "Ready", "True", READY_WITHIN)
        .await;
    let a = h.config_map("team-a", "a").await.expect("a applied");
    assert_eq!(a["metadata"]["labels"]["krt.dev/stack"], "team-a.mixed");
    let inventory = ready.status.unwrap().inventory;
    let entry = inventory
        .iter()
        .find(|e| e.id == "v1:ConfigMap:team-a:a")
        .expect("a in the inventory");
    assert_eq!(entry.uid.as_deref(), a["metadata"]["uid"].as_str());

    // b is replaced by someone else's ConfigMap, then leaves the spec: the
    // prune leaves theirs alone and says so in a Warning Event.
    someone_replaces(&h, "b", json!({})).await;
    let patch = json!({"spec": {"resources": [config_map("a", "1")]}});
    h.stacks
        .patch("mixed", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the spec changes");
    let after = h
        .until_reconciled("b out of the inventory", "mixed", READY_WITHIN, is_ready)
        .await;
    assert_eq!(after.inventory_count, Some(1));
    let theirs = h.config_map("team-a", "b").await.expect("their b survives");
    assert_eq!(theirs["data"]["owner"], "someone else");
    let reasons = event_reasons(&h, "mixed").await;
    assert!(reasons.iter().any(|r| r == "NotOurs"), "{reasons:?}");

    // a is replaced too, even with the Stack's label copied: another UID.
    // Deleting the Stack leaves it alone, and the Stack goes.
    someone_replaces(&h, "a", json!({"krt.dev/stack": "team-a.mixed"})).await;
    h.stacks
        .delete("mixed", &DeleteParams::default())
        .await
        .expect("the delete is accepted");
    until("the Stack gone", READY_WITHIN, || async {
        h.stacks
            .get_opt("mixed")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    let theirs = h.config_map("team-a", "a").await.expect("their a survives");
    assert_eq!(theirs["data"]["owner"], "someone else");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_runs_middleware_from_a_registry_with_its_pull_secret_and_signatures() {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::Secret;
    use krt_host::oci::{
        OciOptions, OciReference, OciStore, RegistryCredentials, generate_key_pair,
    };
    use krt_testkit::{RegistrySetup, TestRegistry};
    let Some(registry) = TestRegistry::start(RegistrySetup {
        tls: false,
        basic_auth: Some(("krt".into(), "s3cret".into())),
        token: false,
        elsewhere: false,
    }) else {
        return;
    };
    let temp = krt_testkit::temp_dir("oci-stack");
    let docker = temp.path().join("docker");
    registry.login(&docker, "s3cret");
    let config_json = std::fs::read(docker.join(".docker/config.json")).unwrap();
    let (private, public) = generate_key_pair(b"").unwrap();
    let public_file = temp.path().join("cosign.pub");
    std::fs::write(&public_file, public).unwrap();
    // The publisher: pushes the tagger twice (two digests) and signs the first.
    let publisher = OciStore::new(OciOptions {
        cache_dir: None,
        credentials: RegistryCredentials::anonymous()
            .with_document("test".into(), config_json.clone()),
        ..OciOptions::default()
    })
    .unwrap();
    let tagger = tagger_component().await;
    let signed_tag = OciReference::parse(&registry.reference("team/tagger:signed")).unwrap();
    let unsigned_tag = OciReference::parse(&registry.reference("team/tagger:unsigned")).unwrap();
    let signed = publisher
        .push("tagger", tagger.clone(), &signed_tag)
        .await
        .unwrap();
    publisher
        .sign(&signed_tag, "cosign.key", private.as_bytes(), b"")
        .await
        .unwrap();
    let unsigned = publisher
        .push("tagger", tagger, &unsigned_tag)
        .await
        .unwrap();
    assert_ne!(signed.digest, unsigned.digest);

    let h = Harness::start_with(Setup {
        grants: Grants {
            verification: vec![krt_controller::VerificationRule {
                stacks: vec!["team-*".into()],
                references: vec![format!("oci://{}/team/*", registry.host)],
                keys: vec![public_file],
            }],
            ..Grants::default()
        },
        registries: Some(OciOptions {
            cache_dir: Some(temp.path().join("oci-cache")),
            ..OciOptions::default()
        }),
        ..Setup::default()
    })
    .await;
    let secrets: Api<Secret> = Api::namespaced(h.cluster.client.clone(), "team-a");
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("regcred".into()),
            ..Default::default()
        },
        type_: Some("kubernetes.io/dockerconfigjson".into()),
        data: Some([(".dockerconfigjson".to_owned(), ByteString(config_json))].into()),
        ..Default::default()
    };
    secrets
        .create(&Default::default(), &secret)
        .await
        .expect("pull Secret created");
    // In team-b the pull Secret is its `default` ServiceAccount's, as a Pod's would be.
    h.cluster.create_namespace("team-b").await;
    let team_b: Api<Secret> = Api::namespaced(h.cluster.client.clone(), "team-b");
    team_b
        .create(&Default::default(), &secret)
        .await
        .expect("pull Secret created");
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(h.cluster.client.clone(), "team-b");
    let pulls = json!({"imagePullSecrets": [{"name": "regcred"}]});
    until("team-b's default ServiceAccount", READY_WITHIN, || async {
        accounts
            .patch("default", &PatchParams::default(), &Patch::Merge(&pulls))
            .await
            .ok()
    })
    .await;
    let from = |name: &str, tag: &OciReference, secret: bool| {
        let mut s = stack(
            "team-a",
            name,
            "1m",
            vec![config_map(&format!("{name}-cm"), "1")],
        );
        s["spec"]["middleware"] = json!([{"oci": {"ref": tag.to_string()}}]);
        if secret {
            s["spec"]["imagePullSecrets"] = json!([{"name": "regcred"}]);
        }
        s
    };
    h.create(from("signed", &signed_tag, true)).await;
    h.create(from("no-secret", &signed_tag, false)).await;
    h.create(from("unsigned", &unsigned_tag, true)).await;
    let mut via_account = from("via-account", &signed_tag, false);
    via_account["metadata"]["namespace"] = json!("team-b");
    h.create(via_account).await;

    let ready = h
        .until_condition("team-a", "signed", "Ready", "True", READY_WITHIN)
        .await;
    let live = h.config_map("team-a", "signed-cm").await.expect("applied");
    assert_eq!(
        live["metadata"]["annotations"]["team"], "platform",
        "the registry's tagger ran: {live}"
    );
    let pinned = signed_tag.pinned(&signed.digest).to_string();
    assert_eq!(
        ready.status.unwrap().components,
        [pinned, "built-in".to_owned()]
    );
    h.until_condition("team-b", "via-account", "Ready", "True", READY_WITHIN)
        .await;
    assert!(h.config_map("team-b", "via-account-cm").await.is_some());

    for (name, reason, parts) in [
        (
            "no-secret",
            "ComponentUnavailable",
            vec![
                format!("registry {} refused access", registry.host),
                "anonymous access".to_owned(),
            ],
        ),
        (
            "unsigned",
            "ComponentUnverified",
            vec![
                unsigned.digest.clone(),
                "cosign.pub".to_owned(),
                "no signatures".to_owned(),
            ],
        ),
    ] {
        let failed = h
            .until_condition("team-a", name, "Ready", "False", READY_WITHIN)
            .await;
        let condition = failed.condition("Ready").unwrap();
        assert_eq!(condition.reason, reason, "{name}: {condition:?}");
        for part in parts {
            assert!(
                condition.message.contains(&part),
                "{name}: no `{part}` in {}",
                condition.message
            );
        }
        assert!(
            h.config_map("team-a", &format!("{name}-cm"))
                .await
                .is_none(),
            "{name}: nothing applied"
        );
    }
    h.stop().await;
}
