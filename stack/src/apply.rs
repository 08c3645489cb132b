//! The apply walk: each planned resource in dependency order with bounded
//! concurrency, waiting for each to become healthy before its dependents
//! start and recording each in the state as it goes; then the delete walk
//! for recorded resources that left the input.

use crate::destroy::destroy;
use crate::events::{Event, EventSink, Phase};
use crate::graph::Stack;
use crate::plan::{Plan, Planned};
use crate::report::{ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use crate::state::{Recorder, StateBackend, StateError};
use crate::walk;
use krt_guest::model::{Action, ApplyOptions, DeleteRequest, Resource, StatusCode, WatchRequest};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// The error reason of a resource not attempted because the API server had
/// become unreachable.
pub const NOT_ATTEMPTED: &str = "NotAttempted";

/// How an apply walk writes and waits.
#[derive(Debug, Clone)]
pub struct ApplySettings {
    /// How each resource is written (not a dry run).
    pub options: ApplyOptions,
    /// Most resources worked on at once (at least one).
    pub concurrency: usize,
    /// Wait for each written resource to become healthy; `None` does not wait.
    pub wait: Option<WatchRequest>,
    /// How recorded resources that left the input are deleted.
    pub delete: DeleteRequest,
    /// Delete recorded resources that left the input; `false` forgets them
    /// from the state and leaves them in the cluster (orphans them).
    pub prune: bool,
}

impl Default for ApplySettings {
    /// Server-side apply as `krt`, 16 resources at a time, each waited for
    /// up to 5 minutes to become healthy, pruning, as `krt apply` does.
    fn default() -> Self {
        ApplySettings {
            options: ApplyOptions::default(),
            concurrency: 16,
            wait: Some(WatchRequest {
                timeout_ms: 300_000,
                ..WatchRequest::default()
            }),
            delete: DeleteRequest::default(),
            prune: true,
        }
    }
}

/// The shared context of one apply walk.
struct Walk<'a, R> {
    runtime: &'a R,
    state: &'a Recorder<'a>,
    events: &'a dyn EventSink,
    settings: &'a ApplySettings,
    /// The first resource that found the API server unreachable: once set, the
    /// resources not started yet are not attempted.
    unreachable: Mutex<Option<String>>,
}

impl<R: Runtime> Walk<'_, R> {
    fn unreachable(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.unreachable
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies one resource, records it, waits for its health.
    async fn apply_one(&self, resource: &Resource, planned: &Planned) -> ResourceReport {
        let started = Instant::now();
        let action = planned.action.unwrap_or(Action::Unchanged);
        let mut report = ResourceReport::new(&resource.id, Outcome::Unchanged);
        report.action = Some(action);
        if let Some(first) = self.unreachable().as_ref() {
            report.result = Outcome::Skipped;
            report.error = Some(ErrorReport {
                code: StatusCode::Unreachable,
                reason: NOT_ATTEMPTED.into(),
                message: format!("not attempted: the API server became unreachable (at {first})"),
            });
            return report;
        }
        let fail = |mut report: ResourceReport, status: &krt_guest::model::Status| {
            if status.code == StatusCode::Unreachable {
                self.unreachable()
                    .get_or_insert_with(|| resource.id.clone());
            }
            report.result = if status.code == StatusCode::Timeout {
                Outcome::TimedOut
            } else {
                Outcome::Failed
            };
            report.error = Some(ErrorReport::from(status));
            report.took(started.elapsed())
        };
        if action == Action::Unchanged {
            // Adopt an unchanged object the state does not know yet.
            self.state.put(resource);
            return report.took(started.elapsed());
        }
        let phase = match action {
            Action::Create => Phase::Creating,
            Action::Replace => Phase::Replacing,
            _ => Phase::Updating,
        };
        self.events.event(&Event::Started {
            id: &resource.id,
            phase,
        });
        let prior = self.state.get(&resource.id);
        let r = self
            .runtime
            .apply(prior.as_ref(), Some(resource), &self.settings.options)
            .await;
        if let Some(status) = r.status.as_ref().filter(|s| s.is_error()) {
            return fail(report, status);
        }
        report.result = Outcome::of_action(r.action);
        report.diff = (!planned.diff.changes.is_empty()).then(|| (&planned.diff).into());
        self.state.put(resource);
        let Some(request) = &self.settings.wait else {
            return report.took(started.elapsed());
        };
        self.events.event(&Event::Written {
            id: &resource.id,
            result: report.result,
        });
        self.events.event(&Event::Started {
            id: &resource.id,
            phase: Phase::Waiting,
        });
        let w = self.runtime.watch(resource, request).await;
        report.health = Some(w.health);
        match w.status.as_ref().filter(|s| s.is_error()) {
            Some(status) => fail(report, status),
            None => report.took(started.elapsed()),
        }
    }
}

/// Applies `plan` (made for `stack`): every resource in dependency order, at
/// most `settings.concurrency` at a time, each recorded in `state` once
/// written; a failed resource skips what depends on it. Then deletes the
/// plan's recorded resources that left the input, dependents first (or, when
/// `settings.prune` is off, only forgets them).
///
/// Returns a report per resource: the stack's, in dependency order, then the
/// deletes. Call [`Recorder::flush`] afterwards to save what is not saved yet.
pub async fn apply<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    plan: &Plan,
    state: &Recorder<'_>,
    settings: &ApplySettings,
    events: &dyn EventSink,
) -> Vec<ResourceReport> {
    let walk = Walk {
        runtime,
        state,
        events,
        settings,
        unreachable: Mutex::new(None),
    };
    let reports = Mutex::new(vec![None; stack.resources.len()]);
    let planned = &plan.planned;
    let walked = walk::run(stack, false, settings.concurrency, |i| {
        let (walk, reports) = (&walk, &reports);
        async move {
            let report = walk.apply_one(&stack.resources[i], &planned[i]).await;
            events.event(&Event::Finished(&report));
            let ok = !matches!(report.result, Outcome::Failed | Outcome::TimedOut);
            reports.lock().unwrap_or_else(PoisonError::into_inner)[i] = Some(report);
            ok
        }
    });
    let outcomes = state.saving(walked).await;
    let mut reports = reports.into_inner().unwrap_or_else(PoisonError::into_inner);
    walk::skipped(stack, &outcomes, &mut reports, events);
    let mut all: Vec<ResourceReport> = stack
        .order
        .iter()
        .filter_map(|&i| reports[i].take())
        .collect();
    if !settings.prune {
        for orphan in &plan.deletes {
            state.remove(&orphan.id);
        }
    } else if !plan.deletes.is_empty() {
        let deletes = Stack::recorded(plan.deletes.clone());
        let mut deleted = destroy(
            runtime,
            &deletes,
            state,
            &settings.delete,
            settings.concurrency,
            events,
        )
        .await;
        all.append(&mut deleted);
    }
    all
}

/// A whole run: the plan, and what applying it did (empty when the plan
/// failed, and then nothing was written).
#[derive(Debug, Clone)]
pub struct Applied {
    /// The plan.
    pub plan: Plan,
    /// A report per resource, as [`apply`] returns them.
    pub reports: Vec<ResourceReport>,
}

/// Plans and applies `stack` as the state of stack `name` in `backend`
/// records it: takes the stack's lock, plans, applies when no dry run failed,
/// saves the state and releases the lock. What `krt apply --yes` does,
/// without the printing.
///
/// # Errors
/// The state could not be locked, read or saved.
pub async fn plan_and_apply<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    backend: &dyn StateBackend,
    name: &str,
    settings: &ApplySettings,
    events: &dyn EventSink,
) -> Result<Applied, StateError> {
    let lock = backend.lock(name).await?;
    let state = backend.load(name).await?;
    let plan = crate::plan(
        runtime,
        stack,
        &state,
        &settings.options,
        settings.concurrency,
    )
    .await;
    let mut reports = Vec::new();
    if !plan.failed() {
        let recorder = Recorder::new(backend, state);
        reports = apply(runtime, stack, &plan, &recorder, settings, events).await;
        recorder.flush().await?;
    }
    lock.release().await?;
    Ok(Applied { plan, reports })
}
