//! `krt apply`: preview, confirm, then apply the stack in dependency order
//! with bounded concurrency, waiting for each resource to become healthy
//! before its dependents start, and recording each in the state as it goes.

use super::destroy::{delete_walk, flushed};
use super::output::Printer;
use super::progress::Progress;
use super::report::{ErrorReport, Outcome, Report, ResourceReport, counts, exit_of, print_table};
use super::{ExitCode, GlobalArgs, InputArgs, plan, session};
use crate::runtime::Runtime;
use crate::stack::{self, Stack};
use crate::state_store::Recorder;
use guest::model::{Action, ApplyOptions, Resource, Status, StatusCode, WatchRequest};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How `preview` and `apply` write.
#[derive(Debug, Clone, clap::Args)]
pub struct WriteArgs {
    /// The field manager recorded for server-side apply.
    #[arg(long, default_value = "krt")]
    pub field_manager: String,
    /// Take ownership of fields other field managers own.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Delete and recreate objects whose immutable fields change.
    #[arg(long)]
    pub replace_on_immutable: bool,
    /// Most resources worked on at once (16 measured fastest: `cargo bench -p host --bench krt`).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub concurrency: u16,
}

impl WriteArgs {
    /// The runtime's apply options.
    pub fn options(&self, global: &GlobalArgs) -> ApplyOptions {
        ApplyOptions {
            mode: session::apply_mode(global),
            field_manager: Some(self.field_manager.clone()),
            force: self.force_conflicts,
            replace_on_immutable: self.replace_on_immutable,
            default_namespace: global.namespace.clone(),
            ..ApplyOptions::default()
        }
    }
}

/// `krt apply -f FILE`: preview, ask (on a terminal, unless `--yes`), apply in
/// dependency order, wait for health, delete recorded resources no longer in
/// the input, and summarize every resource.
#[derive(Debug, clap::Args)]
pub struct ApplyCommand {
    /// The input.
    #[command(flatten)]
    pub input: InputArgs,
    /// How to write.
    #[command(flatten)]
    pub write: WriteArgs,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Wait for each written resource to become healthy (`--watch=false` to not wait).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub watch: bool,
    /// How long to wait for one resource to become healthy (`90s`, `5m`).
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
}

/// The shared context of one apply walk.
struct Walk<'a> {
    runtime: &'a crate::runtime::ComponentRuntime,
    state: &'a Recorder<'a>,
    progress: &'a Progress,
    options: &'a ApplyOptions,
    watch: Option<WatchRequest>,
    /// The first resource that found the API server unreachable: once set, the
    /// resources not started yet are not attempted.
    unreachable: RefCell<Option<String>>,
}

/// The error reason of a resource not attempted because the API server had
/// become unreachable.
const NOT_ATTEMPTED: &str = "NotAttempted";

impl Walk<'_> {
    /// Applies one resource, records it, waits for its health.
    async fn apply_one(&self, resource: &Resource, planned: &plan::Planned) -> ResourceReport {
        let started = Instant::now();
        let action = planned.action.unwrap_or(Action::Unchanged);
        let mut report = ResourceReport::new(&resource.id, Outcome::Unchanged);
        report.action = Some(action);
        if let Some(first) = self.unreachable.borrow().as_ref() {
            report.result = Outcome::Skipped;
            report.error = Some(ErrorReport {
                code: StatusCode::Unreachable,
                reason: NOT_ATTEMPTED.into(),
                message: format!("not attempted: the API server became unreachable (at {first})"),
            });
            return report;
        }
        let fail = |mut report: ResourceReport, status: &Status| {
            if status.code == StatusCode::Unreachable {
                self.unreachable
                    .borrow_mut()
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
        self.progress.start(
            &resource.id,
            match action {
                Action::Create => "creating",
                Action::Replace => "replacing",
                _ => "updating",
            },
        );
        let prior = self.state.get(&resource.id);
        let r = self
            .runtime
            .apply(prior.as_ref(), Some(resource), self.options)
            .await;
        if let Some(status) = r.status.as_ref().filter(|s| s.is_error()) {
            return fail(report, status);
        }
        report.result = Outcome::of_action(r.action);
        report.diff = (!planned.diff.changes.is_empty()).then(|| (&planned.diff).into());
        self.state.put(resource);
        let Some(request) = &self.watch else {
            return report.took(started.elapsed());
        };
        self.progress.written(&resource.id, report.result);
        let w = self.runtime.watch(resource, request).await;
        report.health = Some(w.health);
        match w.status.as_ref().filter(|s| s.is_error()) {
            Some(status) => fail(report, status),
            None => report.took(started.elapsed()),
        }
    }
}

/// Reports of resources skipped because a dependency failed.
pub fn skipped(
    stack: &Stack,
    outcomes: &[stack::Outcome],
    reports: &mut [Option<ResourceReport>],
    progress: &Progress,
) {
    for (i, o) in outcomes.iter().enumerate() {
        if let stack::Outcome::Skipped(cause) = o {
            let mut r = ResourceReport::new(&stack.resources[i].id, Outcome::Skipped);
            r.skipped_because = Some(stack.resources[*cause].id.clone());
            progress.finish(&r);
            reports[i] = Some(r);
        }
    }
}

impl ApplyCommand {
    /// Runs the apply.
    ///
    /// # Errors
    /// No cluster, a component that does not load, a locked or unreadable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let Some(stack) = session::load_stack(&self.input, printer) else {
            return Ok(ExitCode::Failure);
        };
        let session = session::open(
            global,
            printer,
            self.timeout,
            &stack.resources,
            Some(&self.write.field_manager),
        )
        .await?;
        let lock = session.backend.lock(&global.stack).await?;
        let result = self.run(global, printer, &stack, &session).await;
        lock.release().await?;
        result
    }

    async fn run(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        stack: &Stack,
        session: &session::Session,
    ) -> anyhow::Result<ExitCode> {
        let state = session.backend.load(&global.stack).await?;
        let options = self.write.options(global);
        let concurrency = usize::from(self.write.concurrency);
        let plan = plan::plan(&session.runtime, stack, &state, &options, concurrency).await;
        plan::print(
            printer,
            stack,
            &plan,
            &format!(
                "Preview of stack '{}' (state: {}):",
                global.stack,
                session.backend.describe(&global.stack)
            ),
        );
        if plan.failed() {
            plan::print_failures(printer, stack, &plan);
            printer.error("the preview failed; nothing was applied");
            printer.document(&Report::new(
                "apply",
                &global.stack,
                ExitCode::Failure,
                plan.reports(stack),
            ));
            return Ok(ExitCode::Failure);
        }
        if plan.changes()
            && printer.human_is_terminal()
            && std::io::stdin().is_terminal()
            && !self.yes
            && !printer.confirm(&format!("Apply these changes to stack '{}'?", global.stack))
        {
            printer.out("Apply cancelled; nothing was changed.");
            return Ok(ExitCode::Failure);
        }
        if !plan.changes() {
            printer.out("Nothing to change.");
        }
        let started = Instant::now();
        let mut ids: Vec<&str> = stack
            .order
            .iter()
            .map(|&i| stack.resources[i].id.as_str())
            .collect();
        ids.extend(plan.deletes.iter().map(|d| d.id.as_str()));
        let progress = Arc::new(Progress::new(printer, &ids));
        let runtime = session.runtime.clone().with_events(progress.clone());
        let state = Recorder::new(&session.backend, state);
        let walk = Walk {
            runtime: &runtime,
            state: &state,
            progress: &progress,
            options: &options,
            watch: self.watch.then(|| WatchRequest {
                timeout_ms: u32::try_from(self.timeout.as_millis()).unwrap_or(u32::MAX),
                default_namespace: global.namespace.clone(),
            }),
            unreachable: RefCell::new(None),
        };
        let reports = RefCell::new(vec![None; stack.resources.len()]);
        let planned = &plan.planned;
        let walked = stack::run(stack, false, concurrency, |i| {
            let (walk, reports, progress) = (&walk, &reports, &progress);
            async move {
                let report = walk.apply_one(&stack.resources[i], &planned[i]).await;
                progress.finish(&report);
                let ok = !matches!(report.result, Outcome::Failed | Outcome::TimedOut);
                reports.borrow_mut()[i] = Some(report);
                ok
            }
        });
        let outcomes = state.saving(walked).await;
        let mut reports = reports.into_inner();
        skipped(stack, &outcomes, &mut reports, &progress);
        let mut all: Vec<ResourceReport> = stack
            .order
            .iter()
            .filter_map(|&i| reports[i].take())
            .collect();
        if !plan.deletes.is_empty() {
            let deletes = Stack::recorded(plan.deletes.clone());
            let mut deleted =
                delete_walk(&runtime, &state, &deletes, &progress, global, concurrency).await;
            all.append(&mut deleted);
        }
        if !progress.is_live() {
            printer.out("Summary:");
            print_table(printer, &all);
        }
        let exit = flushed(&state, printer, exit_of(&all)).await;
        printer.out(format!(
            "Applied: {} ({}).",
            counts(
                &all,
                &[
                    Outcome::Created,
                    Outcome::Updated,
                    Outcome::Replaced,
                    Outcome::Deleted,
                    Outcome::Unchanged,
                    Outcome::Failed,
                    Outcome::TimedOut,
                    Outcome::Skipped,
                ]
            ),
            super::report::seconds(started.elapsed().as_millis() as u64)
        ));
        let mut not_attempted = 0;
        for r in &all {
            match &r.error {
                Some(e) if e.reason == NOT_ATTEMPTED => not_attempted += 1,
                Some(e) => printer.error(format!("{}: {}: {}", r.id, e.reason, e.message)),
                None => {}
            }
        }
        if not_attempted > 0 {
            printer.error(format!(
                "the API server became unreachable, so {not_attempted} resource(s) were not \
                 attempted; the state records what was applied: run `krt apply` again once the \
                 server is back"
            ));
        }
        printer.document(&Report::new("apply", &global.stack, exit, all));
        Ok(exit)
    }
}
