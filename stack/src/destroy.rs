//! The delete walk: the stack's resources in reverse dependency order with
//! bounded concurrency, each forgotten in the state once it is gone.

use crate::events::{Event, EventSink, Phase};
use crate::graph::Stack;
use crate::report::{ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use crate::state::Recorder;
use crate::walk;
use krt_guest::model::{Action, DeleteRequest};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Deletes the resources of `stack`, dependents first, at most `concurrency`
/// at a time, removing each from `state` once it is deleted; a failed delete
/// skips what that resource depends on. Returns a report per resource, in
/// reverse dependency order.
pub async fn destroy<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    state: &Recorder<'_>,
    request: &DeleteRequest,
    concurrency: usize,
    events: &dyn EventSink,
) -> Vec<ResourceReport> {
    let reports = Mutex::new(vec![None; stack.resources.len()]);
    let walked = walk::run(stack, true, concurrency, |i| {
        let reports = &reports;
        async move {
            let started = Instant::now();
            let resource = &stack.resources[i];
            events.event(&Event::Started {
                id: &resource.id,
                phase: Phase::Deleting,
            });
            let mut report = ResourceReport::new(&resource.id, Outcome::Deleted);
            report.action = Some(Action::Delete);
            match runtime.delete(resource, request).await {
                Some(status) if status.is_error() => {
                    report.result = Outcome::Failed;
                    report.error = Some(ErrorReport::from(&status));
                }
                _ => state.remove(&resource.id),
            }
            let report = report.took(started.elapsed());
            events.event(&Event::Finished(&report));
            let ok = report.result == Outcome::Deleted;
            reports.lock().unwrap_or_else(PoisonError::into_inner)[i] = Some(report);
            ok
        }
    });
    let outcomes = state.saving(walked).await;
    let mut reports = reports.into_inner().unwrap_or_else(PoisonError::into_inner);
    walk::skipped(stack, &outcomes, &mut reports, events);
    stack
        .order
        .iter()
        .rev()
        .filter_map(|&i| reports[i].take())
        .collect()
}
