//! The apply walk: each planned resource in dependency order with bounded
//! concurrency, waiting for each as its [`Wait`] says (by default until it
//! is healthy) before its dependents start and recording each in the state
//! as it goes; then the delete walk for recorded resources that left the input.

use crate::destroy::{DestroySettings, destroy};
use crate::events::{Event, EventSink, Phase};
use crate::gone;
use crate::graph::Stack;
use crate::ownership::Owner;
use crate::plan::{Plan, Planned};
use crate::report::{ErrorReport, Outcome, ResourceReport};
use crate::run::Run;
use crate::runtime::Runtime;
use crate::state::{ClusterIdentity, Recorder, State, StateBackend, StateError};
use crate::wait::{Wait, WaitFor, WaitSpec};
use crate::walk;
use krt_guest::model::{
    Action, ApplyOptions, DeleteRequest, HealthState, ReadOptions, Resource, StatusCode,
    WatchRequest,
};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The error reason of a resource not attempted because the API server had
/// become unreachable.
pub const NOT_ATTEMPTED: &str = "NotAttempted";

/// How long a terminating object planned to be created again is waited for
/// when written resources are not waited for ([`ApplySettings::wait`] is `None`).
pub const GONE_WAIT: Duration = Duration::from_secs(300);

/// How an apply walk writes and waits.
#[derive(Debug, Clone)]
pub struct ApplySettings {
    /// How each resource is written (not a dry run).
    pub options: ApplyOptions,
    /// Most resources worked on at once (at least one).
    pub concurrency: usize,
    /// Wait for each written resource to become healthy (for at most the
    /// request's timeout, unless the resource's `krt.dev/timeout` says
    /// otherwise), and for each deleted one to be gone before what it depends
    /// on is deleted; `None` waits for neither.
    pub wait: Option<WatchRequest>,
    /// The kinds waited for until healthy when a resource's `krt.dev/wait`
    /// does not say; the others are only written ([`Wait::Exists`]).
    pub wait_for: WaitFor,
    /// How recorded resources that left the input are deleted.
    pub delete: DeleteRequest,
    /// Delete recorded resources that left the input; `false` forgets them
    /// from the state and leaves them in the cluster (orphans them).
    pub prune: bool,
    /// The stack whose mark the resources carry (see [`Owner::mark_all`]):
    /// only objects with it are pruned.
    pub owner: Owner,
    /// Prune objects that are not ours too (`--force-delete-unowned`).
    pub force_delete_unowned: bool,
    /// The cluster the run is against: [`plan_and_apply`] refuses a state
    /// that describes another one ([`State::bind`](crate::State::bind)), and
    /// records it in a state that names none. `None` skips the check.
    pub cluster: Option<ClusterIdentity>,
}

impl Default for ApplySettings {
    /// Server-side apply as `krt`, 64 resources at a time, each waited for
    /// up to 5 minutes to become healthy, pruning what stack `default` owns,
    /// as `krt apply` does.
    fn default() -> Self {
        ApplySettings {
            options: ApplyOptions::default(),
            concurrency: 64,
            wait: Some(WatchRequest {
                timeout_ms: 300_000,
                ..WatchRequest::default()
            }),
            wait_for: WaitFor::All,
            delete: DeleteRequest::default(),
            prune: true,
            owner: Owner::stack("default"),
            force_delete_unowned: false,
            cluster: None,
        }
    }
}

impl ApplySettings {
    /// The [`plan`](crate::plan()) of `stack` over `state` as these settings
    /// would apply it: with their options, concurrency and owner.
    pub async fn plan<R: Runtime>(&self, runtime: &R, stack: &Stack, state: &State) -> Plan {
        crate::plan(
            runtime,
            stack,
            state,
            &self.options,
            self.concurrency,
            &self.owner,
        )
        .await
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

    /// Waits until the terminating live object of `resource` is gone, as
    /// long as written resources are waited for (or [`GONE_WAIT`] when they
    /// are not), so that it can be created again.
    async fn wait_gone(&self, resource: &Resource) -> Result<(), krt_guest::model::Status> {
        let timeout = self.settings.wait.as_ref().map_or(GONE_WAIT, |w| {
            Duration::from_millis(u64::from(w.timeout_ms))
        });
        let read = ReadOptions {
            default_namespace: self.settings.options.default_namespace.clone(),
        };
        gone::wait_gone(self.runtime, resource, &read, timeout, self.events).await
    }

    /// Applies one resource, records it, waits as its [`Wait`] says.
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
            self.state.put(resource, planned.uid.as_deref());
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
        if planned.terminating
            && let Err(status) = self.wait_gone(resource).await
        {
            return fail(report, &status);
        }
        let prior = self.state.get(&resource.id);
        // A terminating object's observation is stale by the time it is gone.
        let observation = planned
            .observation
            .as_ref()
            .filter(|_| !planned.terminating);
        let r = self
            .runtime
            .apply_observed(
                prior.as_ref(),
                Some(resource),
                observation,
                &self.settings.options,
            )
            .await
            .response;
        if let Some(status) = r.status.as_ref().filter(|s| s.is_error()) {
            return fail(report, status);
        }
        report.result = Outcome::of_action(r.action);
        report.diff = (!planned.diff.changes.is_empty()).then(|| (&planned.diff).into());
        let uid = r.resource.as_ref().and_then(|w| uid_of(&w.attributes));
        self.state.put(resource, uid);
        let Some(request) = &self.settings.wait else {
            return report.took(started.elapsed());
        };
        self.events.event(&Event::Written {
            id: &resource.id,
            result: report.result,
        });
        // Stack::new checked the settings of every input resource.
        let spec = WaitSpec::of(resource).unwrap_or_default();
        let kind = resource.attributes["kind"].as_str().unwrap_or_default();
        let wait = spec
            .wait
            .unwrap_or_else(|| self.settings.wait_for.wait_of(kind));
        if wait != Wait::Healthy {
            report.wait = Some(wait);
            return report.took(started.elapsed());
        }
        // The write's answer is the object without its status: when that is
        // already current, its health does not depend on the status, so
        // reading it again could only say the same.
        if let Some(written) = &r.resource
            && let Ok(health) = self.runtime.health(&written.attributes).await
            && health.state == HealthState::Current
        {
            report.health = Some(health);
            return report.took(started.elapsed());
        }
        self.events.event(&Event::Started {
            id: &resource.id,
            phase: Phase::Waiting,
        });
        let request = WatchRequest {
            timeout_ms: spec.timeout.map_or(request.timeout_ms, |t| {
                u32::try_from(t.as_millis()).unwrap_or(u32::MAX)
            }),
            ..request.clone()
        };
        let w = self.runtime.watch(resource, &request).await;
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
        // What left the input is waited for until gone as long as written
        // resources are waited for until healthy.
        let wait = settings
            .wait
            .as_ref()
            .map(|w| Duration::from_millis(u64::from(w.timeout_ms)));
        let destroying = DestroySettings {
            request: settings.delete.clone(),
            wait,
            concurrency: settings.concurrency,
            owner: settings.owner.clone(),
            force_unowned: settings.force_delete_unowned,
        };
        let mut deleted = destroy(runtime, &deletes, state, &destroying, events).await;
        all.append(&mut deleted);
    }
    all
}

/// The `metadata.uid` of an object.
pub(crate) fn uid_of(object: &serde_json::Value) -> Option<&str> {
    object["metadata"]["uid"].as_str()
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

/// Why [`plan_and_apply`] did not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A resource's own `krt.dev/stack` label names another stack
    /// ([`Owner::mark_all`]); nothing was done.
    #[error("invalid input: {}", .0.join("; "))]
    Input(Vec<String>),
    /// The state could not be locked, read, bound or saved.
    #[error(transparent)]
    State(#[from] StateError),
}

/// Plans and applies `stack` as the state of stack `name` in `backend`
/// records it: marks every resource as `settings.owner`'s, checks that the
/// state describes `settings.cluster`, takes the stack's lock, plans, applies
/// when no dry run failed, saves the state and releases the lock. What
/// `krt apply --yes` does, without the printing.
///
/// # Errors
/// A resource labelled as another stack's, a state of another cluster, or a
/// state that could not be locked, read or saved.
pub async fn plan_and_apply<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    backend: &dyn StateBackend,
    name: &str,
    settings: &ApplySettings,
    events: &dyn EventSink,
) -> Result<Applied, RunError> {
    let mut stack = stack.clone();
    settings
        .owner
        .mark_all(&mut stack)
        .map_err(RunError::Input)?;
    let run = Run::open(backend, name, settings.cluster.as_ref()).await?;
    let plan = settings.plan(runtime, &stack, run.state()).await;
    if plan.failed() {
        run.close().await?;
        return Ok(Applied {
            plan,
            reports: Vec::new(),
        });
    }
    let ran = run.apply(runtime, &stack, &plan, settings, events).await?;
    ran.saved?;
    Ok(Applied {
        plan,
        reports: ran.reports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse;
    use crate::state::LocalBackend;
    use crate::testing::FakeCluster;
    use krt_guest::model::ObjectDiff;

    /// Applies `yaml` as all creates with `wait_for`; the reports by ID and the watches.
    async fn run(yaml: &str, wait_for: WaitFor) -> (Vec<ResourceReport>, Vec<(String, u32)>) {
        let stack = Stack::new(parse("s.yaml", yaml).unwrap()).unwrap();
        let plan = creates(&stack);
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let recorder = Recorder::new(&backend, State::empty("s"));
        let settings = ApplySettings {
            wait_for,
            ..ApplySettings::default()
        };
        let runtime = FakeCluster::default();
        let reports = apply(
            &runtime,
            &stack,
            &plan,
            &recorder,
            &settings,
            &|_: &Event<'_>| {},
        )
        .await;
        let mut watched = runtime.watched.into_inner().unwrap();
        watched.sort();
        (reports, watched)
    }

    fn deployment(name: &str, annotations: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, annotations: {{{annotations}}}}}\n\
             spec: {{replicas: 1, selector: {{matchLabels: {{app: {name}}}}}, template: {{metadata: {{labels: {{app: {name}}}}}, spec: {{containers: [{{name: c, image: nginx}}]}}}}}}\n---\n"
        )
    }

    #[tokio::test]
    async fn an_object_current_in_the_writes_answer_is_not_watched() {
        let yaml = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {{a: b}}\n---\n{}",
            deployment("web", "")
        );
        let (reports, watched) = run(&yaml, WaitFor::All).await;
        assert_eq!(
            watched,
            [("apps/v1:Deployment:web".to_owned(), 300_000)],
            "a Deployment's health is in its status: watched; a ConfigMap's is not"
        );
        let cm = &reports[0];
        assert_eq!(cm.id, "v1:ConfigMap:c");
        assert_eq!(
            cm.health.as_ref().map(|h| h.state),
            Some(HealthState::Current)
        );
        assert_eq!(cm.wait, None);
    }

    #[tokio::test]
    async fn resources_say_what_to_wait_for_and_how_long() {
        let yaml = [
            deployment("none", "krt.dev/wait: none"),
            deployment("exists", "krt.dev/wait: exists"),
            deployment("quick", "krt.dev/timeout: 2s"),
            deployment("plain", ""),
        ]
        .concat();
        let (reports, watched) = run(&yaml, WaitFor::All).await;
        assert_eq!(
            watched,
            [
                ("apps/v1:Deployment:plain".to_owned(), 300_000),
                ("apps/v1:Deployment:quick".to_owned(), 2_000),
            ]
        );
        let wait: Vec<_> = reports.iter().map(|r| (r.id.as_str(), r.wait)).collect();
        assert_eq!(
            wait,
            [
                ("apps/v1:Deployment:none", Some(Wait::None)),
                ("apps/v1:Deployment:exists", Some(Wait::Exists)),
                ("apps/v1:Deployment:quick", None),
                ("apps/v1:Deployment:plain", None),
            ]
        );
        assert!(reports.iter().all(|r| r.result == Outcome::Created));
    }

    #[tokio::test]
    async fn the_stack_waits_for_its_kinds_unless_a_resource_asks() {
        let ingress = |name: &str, annotations: &str| {
            format!(
                "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, annotations: {{{annotations}}}}}\n---\n"
            )
        };
        let yaml = [
            ingress("skipped", ""),
            ingress("asked", "krt.dev/wait: healthy"),
            deployment("web", ""),
        ]
        .concat();
        let (reports, watched) = run(&yaml, WaitFor::parse("Deployment")).await;
        let ids: Vec<&str> = watched.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "apps/v1:Deployment:web",
                "networking.k8s.io/v1:Ingress:asked"
            ]
        );
        assert_eq!(reports[0].wait, Some(Wait::Exists));
    }

    fn identity(uid: &str) -> ClusterIdentity {
        ClusterIdentity {
            kube_system_uid: Some(uid.into()),
            server: "https://k".into(),
            context: None,
        }
    }

    /// A plan creating every resource of `stack`.
    fn creates(stack: &Stack) -> Plan {
        let planned = Planned {
            action: Some(Action::Create),
            status: None,
            diff: ObjectDiff::default(),
            terminating: false,
            observation: None,
            uid: None,
        };
        Plan {
            planned: vec![planned; stack.resources.len()],
            deletes: Vec::new(),
            delete_diffs: Vec::new(),
            ownership: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_run_holds_the_lock_from_load_to_flush() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let stack = Stack::new(
            parse(
                "s.yaml",
                "{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}",
            )
            .unwrap(),
        )
        .unwrap();
        let run = Run::open(&backend, "s", Some(&identity("k1")))
            .await
            .unwrap();
        assert_eq!(run.binding(), Some(&crate::state::Binding::Bound));
        let second = Run::open(&backend, "s", Some(&identity("k1"))).await;
        assert!(
            matches!(&second, Err(StateError::Locked { stack, .. }) if stack == "s"),
            "a second run waits for none: {:?}",
            second.err()
        );
        let ran = run
            .apply(
                &FakeCluster::default(),
                &stack,
                &creates(&stack),
                &ApplySettings::default(),
                &|_: &Event<'_>| {},
            )
            .await
            .unwrap();
        ran.saved.unwrap();
        assert_eq!(ran.reports[0].result, Outcome::Created);
        // Flushed, and the lock released: the next run sees what was applied.
        let next = Run::open(&backend, "s", Some(&identity("k1")))
            .await
            .unwrap();
        assert_eq!(next.state().resources.len(), 1);
        assert_eq!(next.binding(), Some(&crate::state::Binding::Same));
        next.close().await.unwrap();
        Run::open(&backend, "s", None)
            .await
            .unwrap()
            .close()
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_state_of_another_cluster_is_refused_before_the_lock_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let mut state = State::empty("s");
        state.put(
            parse(
                "s.yaml",
                "{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}",
            )
            .unwrap()[0]
                .resource
                .clone(),
        );
        state.bind(&identity("k1")).unwrap();
        backend.save(&mut state).await.unwrap();
        let refused = Run::open(&backend, "s", Some(&identity("k2"))).await;
        assert!(
            matches!(&refused, Err(StateError::OtherCluster { .. })),
            "{:?}",
            refused.err()
        );
        let files: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files, ["s.json"], "no lock was taken");
    }
}
