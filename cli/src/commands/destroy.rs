//! `krt destroy` (alias `delete`): delete the stack's resources, dependents
//! first, forgetting each in the state once it is gone.

use super::saved;
use crate::args::{ExitCode, GlobalArgs, InputArgs, StateOrInputArgs};
use crate::output::{Printer, paint, style};
use crate::plan::{self, Counts};
use crate::progress::Progress;
use crate::session;
use crate::table::{counts, name_when_seen, seconds};
use krt_guest::model::{HealthState, ReadOptions};
use krt_stack::{
    DestroySettings, Outcome, Owner, Report, ResourceReport, Run, Stack, Verdict, cascading_delete,
    ownership,
};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `krt destroy`: deletes every resource recorded in the stack's state (or
/// only those of `-f`), in reverse dependency order; an object already gone
/// is a success.
#[derive(Debug, clap::Args)]
pub struct DestroyCommand {
    /// The input.
    #[command(flatten)]
    pub input: StateOrInputArgs,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Most resources deleted at once.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub concurrency: u16,
    /// Wait until each deleted object is gone before deleting what it depends
    /// on (`--wait=false`: an accepted DELETE is enough, fire and forget).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub wait: bool,
    /// How long to wait for one object to be gone (`90s`, `5m`); one still
    /// terminating then is reported `terminating` and stays in the state.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Also delete recorded objects that krt does not own: without the
    /// stack's `krt.dev/stack` label, with another stack's, or another object
    /// than the one recorded (another UID). Without it they are left alone.
    #[arg(long)]
    pub force_delete_unowned: bool,
}

impl DestroyCommand {
    /// Runs the destroy.
    ///
    /// # Errors
    /// No cluster, a component that does not load, a locked or unreadable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let input = if self.input.files.is_empty() {
            None
        } else {
            let args = InputArgs {
                files: self.input.files.clone(),
            };
            match session::load_stack(&args, printer) {
                Some(stack) => Some(stack),
                None => return Ok(ExitCode::Failure),
            }
        };
        let scope = input
            .as_ref()
            .map(|s| s.resources.as_slice())
            .unwrap_or_default();
        let session = session::open(
            global,
            printer,
            Duration::ZERO,
            scope,
            None,
            usize::from(self.concurrency),
        )
        .await?;
        let run = session
            .run(&global.stack, printer)
            .await?
            .with_components(session.components.clone());
        self.run(global, printer, input, &session, run).await
    }

    async fn run(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        input: Option<Stack>,
        session: &session::Session,
        run: Run<'_>,
    ) -> anyhow::Result<ExitCode> {
        let state = run.state();
        let targets = match input {
            // The recorded version of each input resource, when there is one.
            Some(stack) => Stack::recorded(
                stack
                    .resources
                    .into_iter()
                    .map(|r| state.get(&r.id).cloned().unwrap_or(r))
                    .collect(),
            ),
            None => Stack::recorded(state.resources.clone()),
        };
        printer.out(paint(
            style::BOLD,
            format!(
                "Destroy of stack '{}' (state: {}):",
                global.stack,
                session.backend.describe(&global.stack)
            ),
        ));
        if targets.resources.is_empty() {
            printer.out("Nothing to destroy.");
            printer.document(&Report::new(
                "destroy",
                &global.stack,
                ExitCode::Success.code(),
                Vec::new(),
            ));
            run.close().await?;
            return Ok(ExitCode::Success);
        }
        let owner = Owner::stack(&global.stack);
        let read = ReadOptions {
            default_namespace: global.namespace.clone(),
        };
        let uid_of = |id: &str| state.uid(id).map(str::to_owned);
        let concurrency = usize::from(self.concurrency);
        let ownership = ownership::check_all(
            &session.runtime,
            &targets.resources,
            &uid_of,
            &owner,
            &read,
            concurrency,
        )
        .await;
        let mut left = Counts::default();
        for &i in targets.order.iter().rev() {
            let id = &targets.resources[i].id;
            plan::print_delete(
                printer,
                id,
                "",
                &ownership[i],
                self.force_delete_unowned,
                &mut left,
            );
        }
        let mut line = format!(
            "Plan: {} to delete",
            targets.resources.len() - left.not_ours - left.absent
        );
        left.append_to(&mut line, self.force_delete_unowned);
        printer.out(format!("{line}."));
        if printer.human_is_terminal()
            && std::io::stdin().is_terminal()
            && !self.yes
            && !printer.confirm(&format!(
                "Delete these {} resources of stack '{}'?",
                targets.resources.len() - left.not_ours - left.absent,
                global.stack
            ))
        {
            printer.out("Destroy cancelled; nothing was changed.");
            run.close().await?;
            return Ok(ExitCode::Failure);
        }
        let started = Instant::now();
        let ids: Vec<&str> = targets
            .order
            .iter()
            .rev()
            .map(|&i| targets.resources[i].id.as_str())
            .collect();
        let progress = Arc::new(Progress::new(printer, &ids));
        let runtime = session.runtime.clone().with_events(progress.clone());
        let settings = DestroySettings {
            request: cascading_delete(global.namespace.clone()),
            wait: self.wait.then_some(self.timeout),
            concurrency,
            owner,
            force_unowned: self.force_delete_unowned,
        };
        let ran = run
            .destroy(&runtime, &targets, &settings, progress.as_ref())
            .await?;
        let all = ran.reports;
        progress.summarize(printer, &all);
        // Only a check before the delete can end absent or not ours: named when one did.
        let mut order = vec![
            Outcome::Deleted,
            Outcome::Terminating,
            Outcome::Failed,
            Outcome::Skipped,
        ];
        name_when_seen(&mut order, 1, &all, &[Outcome::NotOurs, Outcome::Absent]);
        printer.out(format!(
            "Destroyed: {} ({}).",
            counts(&all, &order),
            seconds(started.elapsed().as_millis() as u64)
        ));
        if !self.wait {
            print_not_waited(printer, &all);
        }
        for r in &all {
            if let Some(e) = &r.error {
                printer.error(format!("{}: {}: {}", r.id, e.reason, e.message));
            }
        }
        let exit = saved(ran.saved, printer, ExitCode::of(Verdict::of(&all)));
        printer.document(&Report::new("destroy", &global.stack, exit.code(), all));
        Ok(exit)
    }
}

/// Says that `--wait=false` did not wait for the deleted objects to be gone,
/// naming those the DELETE's answer showed still there.
fn print_not_waited(printer: &Printer, all: &[ResourceReport]) {
    let still: Vec<&str> = all
        .iter()
        .filter(|r| {
            r.health
                .as_ref()
                .is_some_and(|h| h.state == HealthState::Terminating)
        })
        .map(|r| r.id.as_str())
        .collect();
    let mut line =
        "Not waited for until gone (--wait=false): an accepted DELETE counts as deleted, \
                    and objects held by finalizers may still exist"
            .to_owned();
    if !still.is_empty() {
        line += &format!(
            "; still terminating when their DELETE was answered: {}",
            still.join(", ")
        );
    }
    printer.out(format!("{line}."));
}
