//! One controller replica against krt-sim: a Stack becomes Ready, drift is
//! corrected within the interval, what leaves the spec is pruned, a Stack
//! reaching beyond its namespace is Stalled and changes nothing, and
//! deleting a Stack deletes its resources.

mod support;

use k8s_openapi::api::events::v1::Event;
use krt_controller::{Grant, Grants};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;
use std::time::{Duration, Instant};
use support::{Harness, config_map, stack, until};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

/// The controller's metrics, scraped over HTTP.
async fn scrape(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (address, path) = rest.split_once('/').expect("a path");
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("the metrics port answers");
    let request = format!("GET /{path} HTTP/1.0\r\nHost: {address}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("a response");
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");
    response
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
    let reasons = event_reasons(&h, "cfg").await;
    assert!(reasons.iter().any(|r| r == "DriftCorrected"), "{reasons:?}");
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
    let after = until(
        "b pruned and the Stack Ready again",
        READY_WITHIN,
        || async {
            let stack = h.stacks.get("trio").await.ok()?;
            let status = stack.status.clone()?;
            (status.observed_generation == stack.metadata.generation
                && stack.condition("Ready").is_some_and(|c| c.status == "True"))
            .then_some(status)
        },
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
    until("c orphaned", READY_WITHIN, || async {
        let stack = h.stacks.get("trio").await.ok()?;
        let status = stack.status.clone()?;
        (status.observed_generation == stack.metadata.generation
            && status.inventory_count == Some(1))
        .then_some(())
    })
    .await;
    assert!(
        h.config_map("team-a", "c").await.is_some(),
        "c is left alone"
    );
    let reasons = event_reasons(&h, "trio").await;
    assert!(reasons.iter().any(|r| r == "Orphaned"), "{reasons:?}");
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

/// Creates ConfigMap `name` in `team-a` holding `bytes` under `runtime.wasm`.
async fn component_config_map(h: &Harness, name: &str, bytes: &[u8]) {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::ConfigMap;
    let config_maps: Api<ConfigMap> = Api::namespaced(h.cluster.client.clone(), "team-a");
    let object = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        binary_data: Some([("runtime.wasm".to_owned(), ByteString(bytes.to_vec()))].into()),
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
    component_config_map(&h, "runtime", krt_host::DEFAULT_COMPONENT).await;
    component_config_map(&h, "not-a-component", b"\0asm but not really").await;
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
