//! `krt apply`: preview, confirm, then apply the stack in dependency order
//! with bounded concurrency, waiting for each resource to become healthy
//! before its dependents start, and recording each in the state as it goes.

use super::saved;
use crate::args::{ExitCode, GlobalArgs, InputArgs};
use crate::output::Printer;
use crate::progress::Progress;
use crate::table::{counts, name_when_seen, seconds};
use crate::{plan, session};
use krt_guest::model::{ApplyOptions, WatchRequest};
use krt_stack::{
    ApplySettings, NOT_ATTEMPTED, Outcome, Owner, Plan, Report, ResourceReport, Run, Stack, State,
    Verdict, WaitFor, cascading_delete,
};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default `--concurrency` of `preview` and `apply`: the host's ceiling.
const DEFAULT_CONCURRENCY: u16 = krt_host::DEFAULT_MAX_IN_FLIGHT as u16;

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
    /// The most resources worked on, and requests in flight, at once: a
    /// ceiling. Below it the number of requests in flight adapts, growing
    /// while the API server answers as fast as with few and shrinking when
    /// answers slow down or it throttles (429).
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,
    /// Also delete recorded objects that krt does not own: without the
    /// stack's `krt.dev/stack` label, with another stack's, or another object
    /// than the one recorded (another UID). Without it they are left alone.
    #[arg(long)]
    pub force_delete_unowned: bool,
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

    /// Opens a session writing `stack` with these flags, waiting up to
    /// `watch_timeout` for health.
    ///
    /// # Errors
    /// As [`session::open`].
    pub async fn open(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        watch_timeout: Duration,
        stack: &Stack,
    ) -> anyhow::Result<session::Session> {
        session::open(
            global,
            printer,
            watch_timeout,
            &stack.resources,
            Some(&self.field_manager),
            usize::from(self.concurrency),
        )
        .await
    }

    /// What these flags set of an apply: how each resource is written, how
    /// many at once, and what may be pruned; the rest as [`ApplySettings`]'s
    /// default.
    pub fn settings(&self, global: &GlobalArgs) -> ApplySettings {
        ApplySettings {
            options: self.options(global),
            concurrency: usize::from(self.concurrency),
            owner: Owner::stack(&global.stack),
            force_delete_unowned: self.force_delete_unowned,
            ..ApplySettings::default()
        }
    }

    /// Plans `stack` over `state` with these flags and prints the preview.
    pub async fn preview(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        session: &session::Session,
        stack: &Stack,
        state: &State,
    ) -> Plan {
        let plan = self
            .settings(global)
            .plan(&session.runtime, stack, state)
            .await;
        plan::print(
            printer,
            stack,
            &plan,
            &format!(
                "Preview of stack '{}' (state: {}):",
                global.stack,
                session.backend.describe(&global.stack)
            ),
            self.force_delete_unowned,
        );
        plan
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
    /// How long to wait for one resource to become healthy (`90s`, `5m`);
    /// a resource's `krt.dev/timeout` annotation overrides it.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// The kinds to wait for until healthy, comma-separated (`Deployment,StatefulSet`);
    /// resources of other kinds are only written. A resource's `krt.dev/wait`
    /// annotation (`none`, `exists`, `healthy`) overrides it.
    #[arg(long, value_name = "KINDS", default_value = "*", value_parser = parse_wait_for)]
    pub wait_for: WaitFor,
}

/// `--wait-for`: a list of kinds, or `*`.
fn parse_wait_for(list: &str) -> Result<WaitFor, String> {
    Ok(WaitFor::parse(list))
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
        self.apply_stack(global, printer, &stack).await
    }

    /// Applies `stack` as `krt apply` applies its input (`self.input` is not read).
    ///
    /// # Errors
    /// As [`execute`](ApplyCommand::execute).
    pub async fn apply_stack(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        stack: &Stack,
    ) -> anyhow::Result<ExitCode> {
        let Some(stack) = session::owned(stack, global, printer) else {
            return Ok(ExitCode::Failure);
        };
        let session = self
            .write
            .open(global, printer, self.timeout, &stack)
            .await?;
        let run = session
            .run(&global.stack, printer)
            .await?
            .with_components(session.components.clone());
        self.run(global, printer, &stack, &session, run).await
    }

    async fn run(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        stack: &Stack,
        session: &session::Session,
        run: Run<'_>,
    ) -> anyhow::Result<ExitCode> {
        let plan = self
            .write
            .preview(global, printer, session, stack, run.state())
            .await;
        if plan.failed() {
            plan::print_failures(printer, stack, &plan);
            printer.error("the preview failed; nothing was applied");
            printer.document(&Report::new(
                "apply",
                &global.stack,
                ExitCode::Failure.code(),
                plan.reports(stack),
            ));
            run.close().await?;
            return Ok(ExitCode::Failure);
        }
        if plan.changes()
            && printer.human_is_terminal()
            && std::io::stdin().is_terminal()
            && !self.yes
            && !printer.confirm(&format!("Apply these changes to stack '{}'?", global.stack))
        {
            printer.out("Apply cancelled; nothing was changed.");
            run.close().await?;
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
        let settings = ApplySettings {
            wait: self.watch.then(|| WatchRequest {
                timeout_ms: u32::try_from(self.timeout.as_millis()).unwrap_or(u32::MAX),
                default_namespace: global.namespace.clone(),
            }),
            wait_for: self.wait_for.clone(),
            delete: cascading_delete(global.namespace.clone()),
            prune: true,
            // Session::run bound the state to the session's cluster.
            cluster: None,
            ..self.write.settings(global)
        };
        let ran = run
            .apply(&runtime, stack, &plan, &settings, progress.as_ref())
            .await?;
        let all = ran.reports;
        progress.summarize(printer, &all);
        let exit = saved(ran.saved, printer, ExitCode::of(Verdict::of(&all)));
        let mut order = vec![
            Outcome::Created,
            Outcome::Updated,
            Outcome::Replaced,
            Outcome::Deleted,
            Outcome::Unchanged,
            Outcome::Failed,
            Outcome::TimedOut,
            Outcome::Skipped,
        ];
        // Only deletes can end absent or not ours: named when one did.
        name_when_seen(&mut order, 4, &all, &[Outcome::NotOurs, Outcome::Absent]);
        // Only deletes can end terminating: named when one did.
        name_when_seen(&mut order, 4, &all, &[Outcome::Terminating]);
        printer.out(format!(
            "Applied: {} ({}).",
            counts(&all, &order),
            seconds(started.elapsed().as_millis() as u64)
        ));
        print_not_waited(printer, &all);
        let limit = session.runtime.cluster().limit_stats();
        tracing::info!(
            target: "krt::cluster",
            answered = limit.answered,
            peak_in_flight = limit.peak,
            limit = limit.limit,
            ceiling = limit.ceiling,
            throttled = limit.throttled,
            "requests"
        );
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
        printer.document(&Report::new("apply", &global.stack, exit.code(), all));
        Ok(exit)
    }
}

/// The most resources [`print_not_waited`] names one by one.
const NOT_WAITED_SHOWN: usize = 10;

/// Says which written resources were not waited for until healthy, and why.
fn print_not_waited(printer: &Printer, all: &[ResourceReport]) {
    let not_waited: Vec<String> = all
        .iter()
        .filter_map(|r| r.wait.map(|w| format!("{} (wait: {})", r.id, w.word())))
        .collect();
    if not_waited.is_empty() {
        return;
    }
    let mut shown = not_waited[..not_waited.len().min(NOT_WAITED_SHOWN)].join(", ");
    if not_waited.len() > NOT_WAITED_SHOWN {
        shown += &format!(" and {} more", not_waited.len() - NOT_WAITED_SHOWN);
    }
    printer.out(format!(
        "Not waited for until healthy ({} resource(s), by krt.dev/wait or --wait-for): {shown}.",
        not_waited.len()
    ));
}
