//! Watch and health across the wasm boundary against the simulator (issue 4, "Done when"):
//! a Deployment watched to current with progress events, crash-looping Pods and failed Jobs
//! reported with their reason, children's reasons in a Deployment's messages, a watch that
//! outlives 410 Gone and closed streams, and delete-and-wait.

use crate::support::{Runtimes, TestCluster, apply_ok, assert_contains, resource, watch_for};
use krt_host::model::{
    ApplyOptions, DeleteRequest, HealthState, Progress, PropagationPolicy, Resource, Status,
    StatusCode, StatusKind,
};
use krt_host::{ComponentRuntime, Event, EventSink, Runtime};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Records every progress event.
#[derive(Default)]
struct Recorder(Mutex<Vec<Progress>>);

impl EventSink for Recorder {
    fn event(&self, event: &Event<'_>) {
        if let Event::Progress(p) = event {
            self.0.lock().unwrap().push((*p).clone());
        }
    }
}

impl Recorder {
    fn events(&self) -> Vec<Progress> {
        self.0.lock().unwrap().clone()
    }
}

/// A runtime over `cluster` whose progress events the returned recorder keeps.
async fn recording(cluster: &TestCluster) -> (ComponentRuntime, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let rt = cluster.runtime().await.with_events(recorder.clone());
    (rt, recorder)
}

/// Applies `object` and watches it for up to 30 seconds: the watch must end
/// in failure, whose error status it returns.
async fn watch_to_failure(rt: &impl Runtime, object: &Resource) -> Status {
    apply_ok(rt, object).await;
    let watched = rt.watch(object, &watch_for(30_000)).await;
    assert_eq!(
        watched.health.state,
        HealthState::Failed,
        "{:?}",
        watched.health
    );
    let status = watched.status.expect("a failure");
    assert_eq!(status.kind, StatusKind::Error);
    status
}

fn deployment(name: &str, replicas: u32, fail: Option<&str>) -> Value {
    let d = krt_testkit::deployment(name)
        .namespace("default")
        .replicas(replicas);
    match fail {
        Some(mode) => d.set(
            "/spec/template/metadata/annotations",
            json!({"sim.krt.dev/fail": mode}),
        ),
        None => d,
    }
    .value()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_is_watched_to_current_with_progress_events() {
    let cluster = TestCluster::start().await;
    let (rt, recorder) = recording(&cluster).await;
    let web = resource(deployment("web", 3, None));
    apply_ok(&rt, &web).await;
    let watched = rt.watch(&web, &watch_for(30_000)).await;
    assert_eq!(watched.status, None, "{:?}", watched.health);
    assert_eq!(watched.health.state, HealthState::Current);
    assert!(watched.health.message.contains('3'), "{:?}", watched.health);
    let events: Vec<Progress> = recorder
        .events()
        .into_iter()
        .filter(|e| e.phase == "waiting")
        .collect();
    assert!(events.iter().all(|e| e.id == web.id), "{events:?}");
    let states: Vec<HealthState> = events
        .iter()
        .filter_map(|e| e.health.as_ref().map(|h| h.state))
        .collect();
    assert!(
        states.contains(&HealthState::InProgress),
        "the rollout was seen in progress: {events:?}"
    );
    assert_eq!(states.last(), Some(&HealthState::Current), "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_looping_pod_is_reported_failed_with_the_reason() {
    let cluster = TestCluster::start_with_simulated_pods(
        "its Pods fail as the sim.krt.dev/fail annotation asks",
    )
    .await;
    let rt = cluster.runtime().await;
    let pod = resource(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "crasher", "namespace": "default",
            "annotations": {"sim.krt.dev/fail": "crash-loop"}},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]}}));
    let status = watch_to_failure(&rt, &pod).await;
    assert_ne!(status.code, StatusCode::Timeout, "failed early: {status:?}");
    assert_contains(&status.message, "CrashLoopBackOff");
    assert!(
        status.message.contains("app"),
        "names the container: {}",
        status.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_job_is_reported_failed_with_the_reason() {
    let cluster = TestCluster::start_with_simulated_pods(
        "its Pods fail as the sim.krt.dev/fail annotation asks",
    )
    .await;
    let (rt, _events) = recording(&cluster).await;
    // The failure is asked for on the Pod template: krt-sim ignores it on the Job's own
    // metadata (its Pods never see it), although its docs say either works.
    let job = resource(json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "default"},
        "spec": {"backoffLimit": 1, "template": {
            "metadata": {"annotations": {"sim.krt.dev/fail": "job"}},
            "spec": {"restartPolicy": "Never",
            "containers": [{"name": "migrate", "image": "busybox"}]}}}}));
    let status = watch_to_failure(&rt, &job).await;
    assert_eq!(status.reason, "BackoffLimitExceeded", "{status:?}");
    assert_contains(&status.message, "Job");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_looping_pods_of_a_deployment_explain_its_progress() {
    let cluster = TestCluster::start_with_simulated_pods(
        "its Pods fail as the sim.krt.dev/fail annotation asks",
    )
    .await;
    let (rt, recorder) = recording(&cluster).await;
    let web = resource(deployment("crashy", 2, Some("crash-loop")));
    apply_ok(&rt, &web).await;
    let watched = rt.watch(&web, &watch_for(3_000)).await;
    let status = watched.status.expect("never current");
    assert_eq!(status.code, StatusCode::Timeout, "{status:?}");
    assert!(
        status.message.contains("CrashLoopBackOff"),
        "the timeout names the Pods' reason: {}",
        status.message
    );
    assert!(
        recorder
            .events()
            .iter()
            .any(|e| e.message.contains("CrashLoopBackOff")
                && e.health
                    .as_ref()
                    .is_some_and(|h| h.message.contains("CrashLoopBackOff"))),
        "{:?}",
        recorder.events()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_outlives_410_gone_and_closed_streams() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "it expires krt-sim's resourceVersions and closes its watches",
    )
    .await;
    let (rt, recorder) = recording(&cluster).await;
    let web = resource(deployment("phoenix", 2, None));
    let done = AtomicBool::new(false);
    let watch = async {
        let watched = rt.watch(&web, &watch_for(30_000)).await;
        done.store(true, Ordering::SeqCst);
        watched
    };
    let chaos = async {
        let mut rounds = 0;
        while !done.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(150)).await;
            // Some history to expire, then forget it and drop every stream.
            let noise = resource(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("noise-{rounds}"), "namespace": "default"}}));
            rt.apply(None, Some(&noise), &ApplyOptions::default()).await;
            cluster.sim().expire_resource_versions();
            cluster.sim().close_watches();
            rounds += 1;
            if rounds == 4 {
                let applied = rt.apply(None, Some(&web), &ApplyOptions::default()).await;
                assert_eq!(applied.status, None);
            }
            assert!(rounds < 200, "the watch never returned");
        }
        rounds
    };
    let (watched, rounds) = tokio::join!(watch, chaos);
    assert!(rounds >= 4, "the Deployment was created mid-watch");
    assert_eq!(watched.status, None, "{:?}", watched.health);
    assert_eq!(watched.health.state, HealthState::Current);
    assert!(
        recorder.events().iter().any(|e| e.phase == "rewatching"),
        "the watch saw its stream expire: {:?}",
        recorder.events()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_delete_waits_until_the_object_is_gone() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let web = resource(deployment("doomed", 2, None));
    apply_ok(&rt, &web).await;
    assert_eq!(rt.watch(&web, &watch_for(30_000)).await.status, None);
    let foreground = DeleteRequest {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..DeleteRequest::default()
    };
    assert_eq!(rt.delete(&web, &foreground).await, None);
    assert!(
        cluster.get_deployment("default", "doomed").await.is_none(),
        "gone when delete returns"
    );
    assert!(
        cluster
            .names("apps/v1", "ReplicaSet", "replicasets", Some("default"))
            .await
            .is_empty(),
        "foreground: dependents went first"
    );

    // A finalizer someone removes a little later: delete waits for it.
    let held = resource(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": "default", "finalizers": ["example.com/hold"]}}));
    apply_ok(&rt, &held).await;
    let release = async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        let api: Api<DynamicObject> = Api::namespaced_with(cluster.client.clone(), "default", &ar);
        api.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("finalizer removed");
    };
    let (deleted, ()) = tokio::join!(rt.delete(&held, &foreground), release);
    assert_eq!(deleted, None);
    assert!(cluster.get_configmap("default", "held").await.is_none());

    // Without foreground the call returns at once and names the pending finalizer.
    let stuck = resource(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "stuck", "namespace": "default", "finalizers": ["example.com/hold"]}}));
    rt.apply(None, Some(&stuck), &ApplyOptions::default()).await;
    let status = rt
        .delete(&stuck, &DeleteRequest::default())
        .await
        .expect("pending");
    assert_eq!(status.kind, StatusKind::Info);
    assert_contains(&status.message, "example.com/hold");
}
