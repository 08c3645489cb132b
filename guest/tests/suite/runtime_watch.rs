//! `runtime::watch` against the simulated cluster: Pods go through the simulated kubelet's
//! lifecycle while a watch waits, and streams end as an API server ends them.

#[allow(dead_code, reason = "each test binary uses part of the shared support")]
use crate::support;

use krt_guest::model::{ApiError, ErrorSource, HealthState, Resource, StatusCode, WatchRequest};
use krt_guest::runtime;
use krt_sim::api::Request as SimRequest;
use krt_testkit::{assert_contains, pod};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::rc::Rc;
use support::{Request, TestCluster};

/// The Pod `p` in namespace `web`, as a plan naming it.
fn plan() -> Resource {
    pod("p").namespace("web").resource()
}

/// Stores the Pod `p` (annotated with `annotations`), as another client would.
fn create_pod(c: &TestCluster, annotations: Value) {
    c.put(pod("p").namespace("web").annotations(annotations).value());
}

/// Reports the Pod's `status`, as its kubelet would (the status subresource).
fn report(c: &TestCluster, status: Value) {
    let response = c.sim().cluster().handle(&SimRequest::patch(
        "/api/v1/namespaces/web/pods/p/status",
        "application/merge-patch+json",
        json!({ "status": status }).to_string().into_bytes(),
    ));
    assert_eq!(response.code, 200, "{}", response.body);
}

fn resource_version(c: &TestCluster) -> String {
    let pod = c
        .object("v1", "Pod", "web", "p")
        .expect("the Pod is stored");
    pod["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion")
        .to_owned()
}

fn watches(c: &TestCluster) -> usize {
    c.log()
        .iter()
        .filter(|r| matches!(r, Request::Watch(_)))
        .count()
}

fn within(timeout_ms: u32) -> WatchRequest {
    WatchRequest {
        timeout_ms,
        ..Default::default()
    }
}

/// Watches the Pod for up to `timeout_ms`: it is current, after `expected_watches` watches.
fn assert_turns_current(c: &TestCluster, timeout_ms: u32, expected_watches: usize) {
    let r = runtime::watch(c, &c.host(), &plan(), &within(timeout_ms));
    assert_eq!(r.status, None);
    assert_eq!(r.health.state, HealthState::Current);
    assert_eq!(watches(c), expected_watches);
}

#[test]
fn returns_when_current_with_progress_events() {
    let c = TestCluster::new();
    create_pod(&c, json!({}));
    // The scheduler's step: the Pod is Pending when the watch starts.
    c.sim().cluster().reconcile();
    let host = c.host();
    let r = runtime::watch(&c, &host, &plan(), &within(5_000));
    assert_eq!(r.status, None);
    assert_eq!(r.health.state, HealthState::Current);
    assert!(r.resource.unwrap().attributes.get("status").is_none());
    let progress = host.progress.borrow();
    assert_eq!(progress.len(), 2, "{progress:?}");
    let state = |i: usize| progress[i].health.as_ref().unwrap().state;
    assert_eq!(state(0), HealthState::InProgress);
    assert_eq!(state(1), HealthState::Current);
    let Some(Request::Watch(options)) =
        c.log().into_iter().find(|r| matches!(r, Request::Watch(_)))
    else {
        panic!("no watch")
    };
    assert_eq!(options.field_selector.as_deref(), Some("metadata.name=p"));
    assert!(options.resource_version.is_some());
}

#[test]
fn already_current_objects_need_no_watch() {
    let c = TestCluster::new();
    create_pod(&c, json!({}));
    // Scheduled, then running and ready.
    c.sim().cluster().reconcile();
    c.sim().cluster().reconcile();
    assert_turns_current(&c, 1_000, 0);
}

#[test]
fn failed_objects_end_the_watch_with_the_reason() {
    let c = TestCluster::new();
    create_pod(&c, json!({"sim.krt.dev/fail": "crash-loop"}));
    let r = runtime::watch(&c, &c.host(), &plan(), &within(5_000));
    assert_eq!(r.health.state, HealthState::Failed);
    let status = r.status.unwrap();
    assert!(status.is_error());
    assert_contains(&status.message, "CrashLoopBackOff");
}

#[test]
fn a_timeout_is_never_a_success() {
    let c = TestCluster::new();
    create_pod(&c, json!({}));
    // Running but never ready: nothing moves it on.
    report(
        &c,
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}),
    );
    let r = runtime::watch(&c, &c.host(), &plan(), &within(50));
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::Timeout);
    assert_eq!(r.health.state, HealthState::InProgress);
    assert_contains(&status.message, &r.health.message);
}

#[test]
fn gone_and_closed_streams_are_rewatched() {
    let c = TestCluster::new();
    create_pod(&c, json!({}));
    c.end_next_watch(0, ApiError::api(410, "Gone", "too old resource version"));
    let mut closed = ApiError::api(0, "", "stream closed");
    closed.source = ErrorSource::Transport;
    c.end_next_watch(0, closed);
    assert_turns_current(&c, 5_000, 3);
}

#[test]
fn deleted_objects_are_not_found_until_the_timeout() {
    let c = TestCluster::new();
    create_pod(&c, json!({}));
    // Another client deletes the Pod once the watch has read it.
    let other = c.clone();
    let mut deleted = false;
    let host = c.host().on_progress(move |_| {
        if !std::mem::replace(&mut deleted, true) {
            other.remove("v1", "Pod", "web", "p");
        }
    });
    let r = runtime::watch(&c, &host, &plan(), &within(50));
    assert_eq!(r.health.state, HealthState::NotFound);
    assert_eq!(r.resource, None);
    assert_eq!(r.status.unwrap().code, StatusCode::Timeout);
    assert_eq!(watches(&c), 1, "{:?}", c.log());
}

#[test]
fn a_stream_that_delivered_is_resumed_and_one_that_did_not_is_relisted() {
    let c = TestCluster::new();
    create_pod(&c, json!({}));
    let initial = resource_version(&c);
    // The first stream expires after delivering one event (the Pod scheduled).
    c.end_next_watch(1, ApiError::api(410, "Expired", "too old resource version"));
    // Then another client changes the Pod and the server compacts its history, so resuming
    // from the delivered version fails at once (410) and the Pod must be read again.
    let versions = Rc::new(RefCell::new(None));
    let (other, seen) = (c.clone(), versions.clone());
    let host = c.host().on_progress(move |p| {
        if p.phase == "rewatching" && seen.borrow().is_none() {
            let delivered = resource_version(&other);
            other.edit(
                "v1",
                "Pod",
                "web",
                "p",
                json!({"metadata": {"labels": {"seen": "yes"}}}),
            );
            other.sim().cluster().expire_resource_versions();
            *seen.borrow_mut() = Some((delivered, resource_version(&other)));
        }
    });
    let r = runtime::watch(&c, &host, &plan(), &within(5_000));
    assert_eq!(r.status, None);
    let (delivered, edited) = versions.borrow().clone().expect("the first stream ended");
    assert_ne!(delivered, initial);
    let steps: Vec<String> = c
        .log()
        .iter()
        .filter_map(|r| match r {
            Request::Get(_) => Some("get".to_owned()),
            Request::Watch(o) => Some(format!(
                "watch@{}",
                o.resource_version.as_deref().unwrap_or("now")
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps,
        [
            "get".to_owned(),
            format!("watch@{initial}"),
            format!("watch@{delivered}"),
            "get".to_owned(),
            format!("watch@{edited}"),
        ]
    );
    let rewatching: Vec<String> = host
        .progress
        .borrow()
        .iter()
        .filter(|p| p.phase == "rewatching")
        .map(|p| p.message.clone())
        .collect();
    assert_eq!(rewatching.len(), 2, "{rewatching:?}");
    assert!(
        rewatching[0].contains("410 Gone")
            && rewatching[0].contains(&format!("resuming from resourceVersion {delivered}")),
        "{rewatching:?}"
    );
    assert!(rewatching[1].contains("reading it again"), "{rewatching:?}");
}
