//! The delete walk: the stack's resources in reverse dependency order with
//! bounded concurrency. Each is deleted, waited for until it is gone (unless
//! told not to wait), and only then forgotten in the state and its
//! dependencies released: an object held by finalizers past the deadline is
//! `terminating`, stays in the state, and what it depends on is not deleted.

use crate::events::{Event, EventSink, Phase};
use crate::gone::{self, TERMINATING};
use crate::graph::Stack;
use crate::ownership::{self, NotOurs, Owner, Ownership};
use crate::report::{ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use crate::state::Recorder;
use crate::walk;
use krt_guest::model::{
    Action, DeleteRequest, Health, HealthState, PropagationPolicy, ReadOptions, Resource, Status,
    StatusCode,
};
use krt_guest::runtime::{ALREADY_GONE, UID_MISMATCH};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The delete request of krt's destroy and prune: dependents are deleted in the background, as
/// `kubectl delete` asks. Without a policy the server's default applies, and for a batch/v1 Job
/// or a core v1 ReplicationController that default orphans their Pods.
pub fn cascading_delete(default_namespace: Option<String>) -> DeleteRequest {
    DeleteRequest {
        default_namespace,
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteRequest::default()
    }
}

/// How a delete walk deletes.
#[derive(Debug, Clone)]
pub struct DestroySettings {
    /// How each object is deleted.
    pub request: DeleteRequest,
    /// Wait until each deleted object is gone (for at most this long) before
    /// deleting what it depends on; `None` is fire and forget.
    pub wait: Option<Duration>,
    /// Most resources worked on at once (at least one).
    pub concurrency: usize,
    /// The stack whose mark an object must carry to be deleted.
    pub owner: Owner,
    /// Delete objects that are not ours too (`--force-delete-unowned`).
    pub force_unowned: bool,
}

/// Deletes the resources of `stack` that are ours, dependents first, at most
/// `settings.concurrency` at a time.
///
/// Before each delete the live object is checked ([`ownership::check`]): one
/// already gone is `absent`; one without the owner's mark, with another
/// stack's, or with another UID than `state` recorded is `not ours` (unless
/// `force_unowned`): it is not deleted and is forgotten by `state`. An owned object is deleted with its UID
/// as the DELETE's precondition, so that an object replaced in between is
/// left alone (`not ours` too).
///
/// With `wait`, each deleted object is waited for until it is gone before it
/// is removed from `state` and what it depends on is deleted; one still there
/// at the deadline ends `terminating` (an error naming its finalizers) and
/// skips its dependencies. Without, an accepted DELETE is enough (fire and
/// forget): the object is removed from `state`, and one the answer shows
/// still there carries a `Terminating` health. A failed delete skips what
/// that resource depends on. Returns a report per resource, in reverse
/// dependency order.
pub async fn destroy<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    state: &Recorder<'_>,
    settings: &DestroySettings,
    events: &dyn EventSink,
) -> Vec<ResourceReport> {
    let reports = Mutex::new(vec![None; stack.resources.len()]);
    let read = ReadOptions {
        default_namespace: settings.request.default_namespace.clone(),
    };
    let walked = walk::run(stack, true, settings.concurrency, |i| {
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
            delete_one(
                runtime,
                resource,
                state,
                settings,
                read,
                events,
                &mut report,
            )
            .await;
            let report = report.took(started.elapsed());
            events.event(&Event::Finished(&report));
            // An object left alone does not hold back what it depends on: that
            // is the stack's own, to delete like any other.
            let ok = matches!(
                report.result,
                Outcome::Deleted | Outcome::Absent | Outcome::NotOurs
            );
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

/// Checks and deletes one resource, filling in `report` and `state`.
async fn delete_one<R: Runtime>(
    runtime: &R,
    resource: &Resource,
    state: &Recorder<'_>,
    settings: &DestroySettings,
    read: &ReadOptions,
    events: &dyn EventSink,
    report: &mut ResourceReport,
) {
    let not_ours = |report: &mut ResourceReport, why: &NotOurs| {
        report.result = Outcome::NotOurs;
        report.error = Some(ErrorReport::from(&Ownership::not_ours_status(
            &resource.id,
            why,
        )));
        state.remove(&resource.id);
    };
    let uid = state.uid(&resource.id);
    let target =
        match ownership::check(runtime, resource, uid.as_deref(), &settings.owner, read).await {
            Ownership::Unknown(status) => {
                report.result = Outcome::Failed;
                report.error = Some(ErrorReport::from(&status));
                return;
            }
            Ownership::Absent => {
                report.result = Outcome::Absent;
                state.remove(&resource.id);
                return;
            }
            Ownership::NotOurs(why, _) if !settings.force_unowned => {
                not_ours(report, &why);
                return;
            }
            Ownership::NotOurs(_, live) | Ownership::Owned(live) => {
                ownership::pinned(resource, live.as_deref())
            }
        };
    let request = &settings.request;
    let deleted = runtime.delete(&target, request).await;
    let pending = deleted.as_ref().filter(|s| is_pending(s));
    match (&deleted, pending, settings.wait) {
        (Some(status), _, _) if status.reason == UID_MISMATCH => {
            not_ours(report, &NotOurs::Replaced(status.message.clone()));
        }
        (Some(status), _, _) if status.is_error() => {
            report.result = Outcome::Failed;
            report.error = Some(ErrorReport::from(status));
        }
        (Some(status), _, _) if status.reason == ALREADY_GONE => {
            report.result = Outcome::Absent;
            state.remove(&resource.id);
        }
        (_, Some(_), Some(timeout)) if !request.dry_run => {
            match gone::wait_gone(runtime, &target, read, timeout, events).await {
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
}

/// Whether a successful delete's note says the object is still there (being
/// deleted: finalizers or a grace period), rather than that its kind is not
/// served.
fn is_pending(status: &Status) -> bool {
    !status.is_error()
        && status.code != StatusCode::KindNotInstalled
        && status.reason != ALREADY_GONE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse;
    use crate::state::{LocalBackend, State};
    use crate::testing::FakeCluster;

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
        let runtime = FakeCluster::finalizing("v1:ConfigMap:d:dependent", reads);
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
        let settings = DestroySettings {
            request: DeleteRequest::default(),
            wait,
            concurrency: 4,
            owner: Owner::stack("s"),
            force_unowned: false,
        };
        let reports = destroy(&runtime, &stack, &recorder, &settings, &events).await;
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
