//! `runtime::watch` against scripted watch streams.

#[allow(dead_code, reason = "each test binary uses part of the shared support")]
mod support;

use krt_guest::model::{ApiError, EventType, HealthState, StatusCode, WatchEvent, WatchRequest};
use krt_guest::runtime;
use serde_json::{Value, json};
use support::{FakeCluster, FakeHost, Request, resource};

fn pod(ready: bool, waiting: Option<&str>) -> Value {
    let mut status = json!({
        "phase": if ready { "Running" } else { "Pending" },
        "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
    });
    if let Some(reason) = waiting {
        status["phase"] = json!("Running");
        status["containerStatuses"] = json!([{"name": "app", "ready": false, "restartCount": 3, "state": {"waiting": {"reason": reason, "message": "back-off restarting"}}}]);
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "web", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"containers": [{"name": "app", "image": "app"}], "restartPolicy": "Always"},
        "status": status,
    })
}

fn plan() -> krt_guest::model::Resource {
    resource(
        "v1:Pod:web:p",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "web"}}),
    )
}

fn modified(object: Value) -> Result<Option<WatchEvent>, ApiError> {
    Ok(Some(WatchEvent {
        type_: EventType::Modified,
        object,
    }))
}

fn watches(c: &FakeCluster) -> usize {
    c.log()
        .iter()
        .filter(|r| matches!(r, Request::Watch(_)))
        .count()
}

#[test]
fn returns_when_current_with_progress_events() {
    let c = FakeCluster::new();
    c.put("pods", pod(false, None));
    c.script_watch(vec![Ok(None), modified(pod(true, None))]);
    let host = FakeHost::default();
    let r = runtime::watch(
        &c,
        &host,
        &plan(),
        &WatchRequest {
            timeout_ms: 5_000,
            ..Default::default()
        },
    );
    assert_eq!(r.status, None);
    assert_eq!(r.health.state, HealthState::Current);
    assert!(r.resource.unwrap().attributes.get("status").is_none());
    let progress = host.progress.borrow();
    assert_eq!(progress.len(), 2, "{progress:?}");
    assert_eq!(
        progress[0].health.as_ref().unwrap().state,
        HealthState::InProgress
    );
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
    let c = FakeCluster::new();
    c.put("pods", pod(true, None));
    let r = runtime::watch(
        &c,
        &FakeHost::default(),
        &plan(),
        &WatchRequest {
            timeout_ms: 1_000,
            ..Default::default()
        },
    );
    assert_eq!(r.status, None);
    assert_eq!(watches(&c), 0);
}

#[test]
fn failed_objects_end_the_watch_with_the_reason() {
    let c = FakeCluster::new();
    c.put("pods", pod(false, None));
    c.script_watch(vec![modified(pod(false, Some("CrashLoopBackOff")))]);
    let r = runtime::watch(
        &c,
        &FakeHost::default(),
        &plan(),
        &WatchRequest {
            timeout_ms: 5_000,
            ..Default::default()
        },
    );
    assert_eq!(r.health.state, HealthState::Failed);
    let status = r.status.unwrap();
    assert!(status.is_error());
    assert!(
        status.message.contains("CrashLoopBackOff"),
        "{}",
        status.message
    );
}

#[test]
fn a_timeout_is_never_a_success() {
    let c = FakeCluster::new();
    c.put("pods", pod(false, None));
    let r = runtime::watch(
        &c,
        &FakeHost::default(),
        &plan(),
        &WatchRequest {
            timeout_ms: 50,
            ..Default::default()
        },
    );
    let status = r.status.unwrap();
    assert_eq!(status.code, StatusCode::Timeout);
    assert_eq!(r.health.state, HealthState::InProgress);
    assert!(
        status.message.contains(&r.health.message),
        "{}",
        status.message
    );
}

#[test]
fn gone_and_closed_streams_are_rewatched() {
    let c = FakeCluster::new();
    c.put("pods", pod(false, None));
    c.script_watch(vec![Err(ApiError::api(
        410,
        "Gone",
        "too old resource version",
    ))]);
    let mut closed = ApiError::api(0, "", "stream closed");
    closed.source = krt_guest::model::ErrorSource::Transport;
    c.script_watch(vec![Err(closed)]);
    c.script_watch(vec![modified(pod(true, None))]);
    let r = runtime::watch(
        &c,
        &FakeHost::default(),
        &plan(),
        &WatchRequest {
            timeout_ms: 5_000,
            ..Default::default()
        },
    );
    assert_eq!(r.status, None);
    assert_eq!(watches(&c), 3);
}

#[test]
fn deleted_objects_are_not_found_until_the_timeout() {
    let c = FakeCluster::new();
    c.put("pods", pod(false, None));
    c.script_watch(vec![Ok(Some(WatchEvent {
        type_: EventType::Deleted,
        object: pod(false, None),
    }))]);
    let r = runtime::watch(
        &c,
        &FakeHost::default(),
        &plan(),
        &WatchRequest {
            timeout_ms: 50,
            ..Default::default()
        },
    );
    assert_eq!(r.health.state, HealthState::NotFound);
    assert_eq!(r.resource, None);
    assert_eq!(r.status.unwrap().code, StatusCode::Timeout);
}

#[test]
fn a_stream_that_delivered_is_resumed_and_one_that_did_not_is_relisted() {
    let c = FakeCluster::new();
    c.put("pods", pod(false, None));
    let mut seen = pod(false, Some("ContainerCreating"));
    seen["metadata"]["resourceVersion"] = json!("41");
    let gone = || Err(ApiError::api(410, "Expired", "too old resource version"));
    // Delivers version 41, then expires: resume from 41.
    c.script_watch(vec![modified(seen), gone()]);
    // Resuming from 41 fails at once: read the object again, then watch from its version.
    c.script_watch(vec![gone()]);
    c.script_watch(vec![modified(pod(true, None))]);
    let host = FakeHost::default();
    let r = runtime::watch(
        &c,
        &host,
        &plan(),
        &WatchRequest {
            timeout_ms: 5_000,
            ..Default::default()
        },
    );
    assert_eq!(r.status, None);
    let log = c.log();
    let steps: Vec<String> = log
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
    let initial = c.object("pods", Some("web"), "p").unwrap()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        steps,
        [
            "get".to_owned(),
            format!("watch@{initial}"),
            "watch@41".to_owned(),
            "get".to_owned(),
            format!("watch@{initial}"),
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
            && rewatching[0].contains("resuming from resourceVersion 41")
    );
    assert!(rewatching[1].contains("reading it again"), "{rewatching:?}");
}
