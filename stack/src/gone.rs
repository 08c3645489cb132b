//! Waiting until a deleted object is gone, not just until its DELETE was
//! accepted: reads with back-off, a progress message while it is Terminating,
//! and a `terminating` failure naming what still holds it at the deadline.

use crate::events::{Event, EventSink};
use crate::runtime::Runtime;
use krt_guest::model::{Health, HealthState, Progress, ReadOptions, Resource, Status, StatusCode};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The error reason of an object still terminating at the deadline.
pub const TERMINATING: &str = "Terminating";

/// The first pause between two reads; it doubles up to [`MAX_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(100);
/// The longest pause between two reads.
const MAX_POLL: Duration = Duration::from_secs(1);
/// How often the progress message says again how long it has waited.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// What holds a terminating object: its `metadata.finalizers`, then (a
/// Namespace's) `spec.finalizers`.
pub fn finalizers(object: &Value) -> Vec<String> {
    ["/metadata/finalizers", "/spec/finalizers"]
        .iter()
        .filter_map(|p| object.pointer(p).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Whether `object` is being deleted (has a `deletionTimestamp`).
pub fn is_terminating(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// What holds `object`, as words: `held by finalizers: a, b`, or that its
/// deletion is in progress.
pub(crate) fn held_by(object: &Value) -> String {
    let held = finalizers(object);
    if held.is_empty() {
        "its deletion is in progress".to_owned()
    } else {
        format!("held by finalizers: {}", held.join(", "))
    }
}

/// Waits until the object of `resource` is gone, for at most `timeout`,
/// reporting `Terminating` progress to `events` while it is there. Fails with
/// a `timeout` status (reason [`TERMINATING`]) naming what holds it when the
/// time is up, or with the read's error.
pub async fn wait_gone<R: Runtime>(
    runtime: &R,
    resource: &Resource,
    options: &ReadOptions,
    timeout: Duration,
    events: &dyn EventSink,
) -> Result<(), Status> {
    let started = Instant::now();
    let mut pause = FIRST_POLL;
    let mut said = String::new();
    loop {
        let read = runtime.read(None, Some(resource), options).await;
        if let Some(status) = read.status.filter(Status::is_error) {
            return Err(status);
        }
        let Some(live) = read.resource else {
            return Ok(());
        };
        // A resource pinned to a UID is gone once another object has its name.
        let uid = |r: &Resource| r.attributes["metadata"]["uid"].as_str().map(str::to_owned);
        if let (Some(deleted), Some(now)) = (uid(resource), uid(&live))
            && deleted != now
        {
            return Ok(());
        }
        let waited = started.elapsed();
        let live = &live.attributes;
        if waited >= timeout {
            return Err(Status {
                retryable: true,
                ..Status::error(
                    StatusCode::Timeout,
                    TERMINATING,
                    format!(
                        "{} is still terminating after {}, {}",
                        resource.id,
                        humantime::format_duration(Duration::from_millis(
                            timeout.as_millis() as u64
                        )),
                        held_by(live)
                    ),
                )
            });
        }
        let shown = Duration::from_secs(
            waited.as_secs() / PROGRESS_EVERY.as_secs() * PROGRESS_EVERY.as_secs(),
        );
        let message = format!(
            "{} is terminating, {} ({}s)",
            resource.id,
            held_by(live),
            shown.as_secs()
        );
        if message != said {
            events.event(&Event::Progress(&Progress {
                id: resource.id.clone(),
                phase: "terminating".into(),
                message: message.clone(),
                health: Some(Health::new(HealthState::Terminating, TERMINATING, &message)),
            }));
            said = message;
        }
        tokio::time::sleep(pause.min(timeout.saturating_sub(waited))).await;
        pause = (pause * 2).min(MAX_POLL);
    }
}
