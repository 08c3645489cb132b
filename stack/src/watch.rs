//! Waiting for resources to become healthy, with progress.

use crate::events::{Event, EventSink, Phase};
use crate::graph::Targets;
use crate::report::{ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use futures::StreamExt;
use krt_guest::model::{StatusCode, WatchRequest};
use std::time::Instant;

/// Follows every target until it is healthy, failed, or the request's
/// timeout passes, `concurrency` at a time: `current`, `failed` or
/// `timed-out`, with the last health, in order.
pub async fn watch<R: Runtime>(
    runtime: &R,
    targets: &Targets,
    request: &WatchRequest,
    concurrency: usize,
    events: &dyn EventSink,
) -> Vec<ResourceReport> {
    futures::stream::iter(targets)
        .map(|(resource, _)| async move {
            let started = Instant::now();
            events.event(&Event::Started {
                id: &resource.id,
                phase: Phase::Waiting,
            });
            let w = runtime.watch(resource, request).await;
            let mut r = ResourceReport::new(&resource.id, Outcome::Current);
            r.health = Some(w.health);
            if let Some(status) = w.status.as_ref().filter(|s| s.is_error()) {
                r.result = if status.code == StatusCode::Timeout {
                    Outcome::TimedOut
                } else {
                    Outcome::Failed
                };
                r.error = Some(ErrorReport::from(status));
            }
            let r = r.took(started.elapsed());
            events.event(&Event::Finished(&r));
            r
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}
