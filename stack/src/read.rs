//! Reading live objects: each target's normalized live object, its health
//! and its drift from the recorded state, all as the runtime judges them.

use crate::graph::Targets;
use crate::report::{DiffReport, ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use futures::StreamExt;
use krt_guest::model::{Health, HealthState, ReadOptions, Resource};

/// Reads every target, `concurrency` at a time, in order: `current` with the
/// live object, its health and its drift from the recorded version (when
/// there is one and it drifted), `missing`, or `failed`.
pub async fn read<R: Runtime>(
    runtime: &R,
    targets: &Targets,
    options: &ReadOptions,
    concurrency: usize,
) -> Vec<ResourceReport> {
    // The reads are made before they are streamed (not by `StreamExt::map`),
    // so that the walk's future is `Send` for every lifetime of `targets`, as
    // a spawned task (a controller's reconcile) needs.
    let reads: Vec<_> = targets
        .iter()
        .map(|(resource, recorded)| read_one(runtime, resource, recorded.as_ref(), options))
        .collect();
    futures::stream::iter(reads)
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// Reads one target.
async fn read_one<R: Runtime>(
    runtime: &R,
    resource: &Resource,
    recorded: Option<&Resource>,
    options: &ReadOptions,
) -> ResourceReport {
    let r = runtime.read(recorded, Some(resource), options).await;
    if let Some(status) = r.status.as_ref().filter(|s| s.is_error()) {
        let mut report = ResourceReport::new(&resource.id, Outcome::Failed);
        report.error = Some(ErrorReport::from(status));
        return report;
    }
    let Some(live) = r.resource else {
        return ResourceReport::new(&resource.id, Outcome::Missing);
    };
    let mut report = ResourceReport::new(&resource.id, Outcome::Current);
    report.health = Some(
        runtime
            .health(&live.attributes)
            .await
            .unwrap_or_else(|status| {
                Health::new(HealthState::Unknown, status.reason, status.message)
            }),
    );
    if let Some(recorded) = recorded {
        match runtime
            .drift(&recorded.attributes, Some(&live.attributes), &[])
            .await
        {
            Ok(diff) if !diff.changes.is_empty() => {
                report.diff = Some(DiffReport::from(&diff));
            }
            Ok(_) => {}
            Err(status) => report.error = Some(ErrorReport::from(&status)),
        }
    }
    report.object = Some(live.attributes);
    report
}
