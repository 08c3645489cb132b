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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse;
    use crate::state::{LocalBackend, State};
    use krt_guest::model::{
        ApplyOptions, ApplyResponse, ObjectDiff, ReadResponse, Resource, WatchRequest,
        WatchResponse,
    };
    use serde_json::{Value, json};

    /// A cluster where the delete of `held` is accepted but the object stays
    /// (held by a finalizer) for `reads_until_gone` reads; everything else
    /// goes at once. Records the order of deletes.
    struct Finalizing {
        held: &'static str,
        reads_until_gone: Mutex<usize>,
        deleted: Mutex<Vec<String>>,
    }

    impl Runtime for Finalizing {
        async fn apply(
            &self,
            _: Option<&Resource>,
            _: Option<&Resource>,
            _: &ApplyOptions,
        ) -> ApplyResponse {
            unreachable!("destroy does not apply")
        }
        async fn read(
            &self,
            _: Option<&Resource>,
            plan: Option<&Resource>,
            _: &ReadOptions,
        ) -> ReadResponse {
            let plan = plan.expect("the deleted resource");
            assert_eq!(plan.id, self.held, "only a pending delete is waited for");
            let mut left = self.reads_until_gone.lock().unwrap();
            let resource = (*left > 0).then(|| {
                *left -= 1;
                let mut r = plan.clone();
                r.attributes["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
                r.attributes["metadata"]["finalizers"] = json!(["example.com/hold"]);
                r
            });
            ReadResponse {
                resource,
                status: None,
            }
        }
        async fn delete(&self, resource: &Resource, _: &DeleteRequest) -> Option<Status> {
            self.deleted.lock().unwrap().push(resource.id.clone());
            (resource.id == self.held).then(|| {
                krt_guest::errors::info(StatusCode::Unknown, "FinalizersPending", "pending")
            })
        }
        async fn watch(&self, _: &Resource, _: &WatchRequest) -> WatchResponse {
            unreachable!("destroy does not watch")
        }
        async fn diff(
            &self,
            _: Option<&Value>,
            _: Option<&Value>,
            _: &[String],
        ) -> Result<ObjectDiff, Status> {
            Ok(ObjectDiff::default())
        }
        async fn drift(
            &self,
            _: &Value,
            _: Option<&Value>,
            _: &[String],
        ) -> Result<ObjectDiff, Status> {
            Ok(ObjectDiff::default())
        }
        async fn health(&self, _: &Value) -> Result<Health, Status> {
            unreachable!("destroy asks no health")
        }
    }

    /// ConfigMap `base`, and `dependent` that depends on it.
    fn stack() -> Stack {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base, namespace: d}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dependent, namespace: d, \
             annotations: {krt.dev/depends-on: 'v1:ConfigMap:d:base'}}\n";
        Stack::new(parse("s.yaml", text).unwrap()).unwrap()
    }

    /// Destroys [`stack`] with `held` staying for `reads` reads: the reports,
    /// the deletes in order, and the IDs left in the state.
    async fn run(
        reads: usize,
        wait: Option<Duration>,
    ) -> (Vec<ResourceReport>, Vec<String>, Vec<String>) {
        let stack = stack();
        let runtime = Finalizing {
            held: "v1:ConfigMap:d:dependent",
            reads_until_gone: Mutex::new(reads),
            deleted: Mutex::default(),
        };
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let mut state = State::empty("s");
        for r in &stack.resources {
            state.put(r.clone());
        }
        crate::state::StateBackend::save(&backend, &mut state)
            .await
            .unwrap();
        let recorder = Recorder::new(&backend, state);
        let progress = Mutex::new(Vec::new());
        let events = |e: &Event<'_>| {
            if let Event::Progress(p) = e {
                progress.lock().unwrap().push(p.message.clone());
            }
        };
        let reports = destroy(
            &runtime,
            &stack,
            &recorder,
            &DeleteRequest::default(),
            wait,
            4,
            &events,
        )
        .await;
        recorder.flush().await.unwrap();
        let left = backend_ids(&backend).await;
        if reads > 0 && wait.is_some() {
            assert!(
                progress.lock().unwrap()[0].contains("held by finalizers: example.com/hold"),
                "{progress:?}"
            );
        }
        (reports, runtime.deleted.into_inner().unwrap(), left)
    }

    async fn backend_ids(backend: &LocalBackend) -> Vec<String> {
        use crate::state::StateBackend;
        let state = backend.load("s").await.unwrap();
        state.resources.iter().map(|r| r.id.clone()).collect()
    }

    fn results(reports: &[ResourceReport]) -> Vec<(&str, Outcome)> {
        reports.iter().map(|r| (r.id.as_str(), r.result)).collect()
    }

    #[tokio::test]
    async fn a_dependency_is_deleted_once_its_dependent_is_gone() {
        let (reports, deleted, left) = run(3, Some(Duration::from_secs(30))).await;
        assert_eq!(
            results(&reports),
            [
                ("v1:ConfigMap:d:dependent", Outcome::Deleted),
                ("v1:ConfigMap:d:base", Outcome::Deleted)
            ]
        );
        assert_eq!(deleted, ["v1:ConfigMap:d:dependent", "v1:ConfigMap:d:base"]);
        assert!(left.is_empty(), "{left:?}");
    }

    #[tokio::test]
    async fn one_still_held_at_the_deadline_is_terminating_and_keeps_its_dependency() {
        let (reports, deleted, left) = run(usize::MAX, Some(Duration::from_millis(300))).await;
        assert_eq!(
            results(&reports),
            [
                ("v1:ConfigMap:d:dependent", Outcome::Terminating),
                ("v1:ConfigMap:d:base", Outcome::Skipped)
            ]
        );
        let error = reports[0].error.as_ref().unwrap();
        assert_eq!(error.reason, TERMINATING);
        assert!(
            error
                .message
                .ends_with("held by finalizers: example.com/hold"),
            "{}",
            error.message
        );
        assert_eq!(deleted, ["v1:ConfigMap:d:dependent"], "base is not deleted");
        assert_eq!(left.len(), 2, "both stay recorded: {left:?}");
        assert_eq!(crate::Verdict::of(&reports), crate::Verdict::TimedOut);
    }

    #[tokio::test]
    async fn without_waiting_an_accepted_delete_is_enough() {
        let (reports, deleted, left) = run(usize::MAX, None).await;
        assert_eq!(
            results(&reports),
            [
                ("v1:ConfigMap:d:dependent", Outcome::Deleted),
                ("v1:ConfigMap:d:base", Outcome::Deleted)
            ]
        );
        assert_eq!(
            reports[0].health.as_ref().map(|h| h.state),
            Some(HealthState::Terminating)
        );
        assert_eq!(deleted.len(), 2);
        assert!(left.is_empty());
    }
}
