//! The delete walk: the stack's resources in reverse dependency order with
//! bounded concurrency. Each is deleted, waited for until it is gone (unless
//! told not to wait), and only then forgotten in the state and its
//! dependencies released: an object held by finalizers past the deadline is
//! `terminating`, stays in the state, and what it depends on is not deleted.

use crate::events::{Event, EventSink, Phase};
use crate::gone::{self, TERMINATING};
use crate::graph::Stack;
use crate::report::{ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use crate::state::Recorder;
use crate::walk;
use krt_guest::model::{
    Action, DeleteRequest, Health, HealthState, ReadOptions, Status, StatusCode,
};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Deletes the resources of `stack`, dependents first, at most `concurrency`
/// at a time.
///
/// With `wait`, each deleted object is waited for until it is gone (for at
/// most `wait`) before it is removed from `state` and what it depends on is
/// deleted; one still there at the deadline ends `terminating` (an error
/// naming its finalizers) and skips its dependencies. Without, an accepted
/// DELETE is enough (fire and forget): the object is removed from `state`,
/// and one the answer shows still there carries a `Terminating` health.
/// A failed delete skips what that resource depends on. Returns a report per
/// resource, in reverse dependency order.
pub async fn destroy<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    state: &Recorder<'_>,
    request: &DeleteRequest,
    wait: Option<Duration>,
    concurrency: usize,
    events: &dyn EventSink,
) -> Vec<ResourceReport> {
    let reports = Mutex::new(vec![None; stack.resources.len()]);
    let read = ReadOptions {
        default_namespace: request.default_namespace.clone(),
    };
    let walked = walk::run(stack, true, concurrency, |i| {
        let (reports, read) = (&reports, &read);
        async move {
            let started = Instant::now();
            let resource = &stack.resources[i];
            events.event(&Event::Started {
                id: &resource.id,
                phase: Phase::Deleting,
            });
            let mut report = ResourceReport::new(&resource.id, Outcome::Deleted);
            report.action = Some(Action::Delete);
            let deleted = runtime.delete(resource, request).await;
            let pending = deleted.as_ref().filter(|s| is_pending(s));
            match (&deleted, pending, wait) {
                (Some(status), _, _) if status.is_error() => {
                    report.result = Outcome::Failed;
                    report.error = Some(ErrorReport::from(status));
                }
                (_, Some(_), Some(timeout)) if !request.dry_run => {
                    match gone::wait_gone(runtime, resource, read, timeout, events).await {
                        Ok(()) => state.remove(&resource.id),
                        Err(status) => {
                            report.result = if status.reason == TERMINATING {
                                report.health = Some(Health::new(
                                    HealthState::Terminating,
                                    TERMINATING,
                                    &status.message,
                                ));
                                Outcome::Terminating
                            } else {
                                Outcome::Failed
                            };
                            report.error = Some(ErrorReport::from(&status));
                        }
                    }
                }
                (_, Some(status), _) => {
                    report.health = Some(Health::new(
                        HealthState::Terminating,
                        &status.reason,
                        &status.message,
                    ));
                    state.remove(&resource.id);
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

/// Whether a successful delete's note says the object is still there (being
/// deleted: finalizers or a grace period), rather than that its kind is not
/// served.
fn is_pending(status: &Status) -> bool {
    !status.is_error() && status.code != StatusCode::KindNotInstalled
}
