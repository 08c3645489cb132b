//! `krt destroy` (alias `delete`): delete the stack's resources, dependents
//! first, forgetting each in the state once it is gone.

use super::apply::skipped;
use super::output::{Printer, paint, style};
use super::progress::Progress;
use super::report::{ErrorReport, Outcome, Report, ResourceReport, counts, exit_of, print_table};
use super::{ExitCode, GlobalArgs, StateOrInputArgs, session};
use crate::runtime::{ComponentRuntime, Runtime};
use crate::stack::{self, Stack};
use crate::state_store::Recorder;
use guest::model::{Action, DeleteRequest};
use std::cell::RefCell;
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
}

/// Deletes the resources of `stack` in reverse dependency order, removing each
/// from the state (saved as [`Recorder`] does). Returns a report per resource.
pub async fn delete_walk(
    runtime: &ComponentRuntime,
    state: &Recorder<'_>,
    stack: &Stack,
    progress: &Progress,
    global: &GlobalArgs,
    concurrency: usize,
) -> Vec<ResourceReport> {
    let request = DeleteRequest {
        default_namespace: global.namespace.clone(),
        ..DeleteRequest::default()
    };
    let reports = RefCell::new(vec![None; stack.resources.len()]);
    let walked = stack::run(stack, true, concurrency, |i| {
        let (reports, request) = (&reports, &request);
        async move {
            let started = Instant::now();
            let resource = &stack.resources[i];
            progress.start(&resource.id, "deleting");
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
            progress.finish(&report);
            let ok = report.result == Outcome::Deleted;
            reports.borrow_mut()[i] = Some(report);
            ok
        }
    });
    let outcomes = state.saving(walked).await;
    let mut reports = reports.into_inner();
    skipped(stack, &outcomes, &mut reports, progress);
    stack
        .order
        .iter()
        .rev()
        .filter_map(|&i| reports[i].take())
        .collect()
}

/// Saves what `state` has not saved yet; a failure is reported and fails the run.
pub async fn flushed(state: &Recorder<'_>, printer: &Printer, exit: ExitCode) -> ExitCode {
    match state.flush().await {
        Ok(()) => exit,
        Err(e) => {
            printer.error(format!(
                "the state was not saved: {:#}",
                anyhow::Error::from(e)
            ));
            ExitCode::Failure
        }
    }
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
            let args = super::InputArgs {
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
        let session = session::open(global, printer, Duration::ZERO, scope, None).await?;
        let lock = session.backend.lock(&global.stack).await?;
        let result = self.run(global, printer, input, &session).await;
        lock.release().await?;
        result
    }

    async fn run(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        input: Option<Stack>,
        session: &session::Session,
    ) -> anyhow::Result<ExitCode> {
        let state = session.backend.load(&global.stack).await?;
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
                ExitCode::Success,
                Vec::new(),
            ));
            return Ok(ExitCode::Success);
        }
        for &i in targets.order.iter().rev() {
            printer.out(format!(
                "  {}{}",
                paint(style::RED, "- delete    "),
                targets.resources[i].id
            ));
        }
        if printer.human_is_terminal()
            && std::io::stdin().is_terminal()
            && !self.yes
            && !printer.confirm(&format!(
                "Delete these {} resources of stack '{}'?",
                targets.resources.len(),
                global.stack
            ))
        {
            printer.out("Destroy cancelled; nothing was changed.");
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
        let state = Recorder::new(&session.backend, state);
        let all = delete_walk(
            &runtime,
            &state,
            &targets,
            &progress,
            global,
            usize::from(self.concurrency),
        )
        .await;
        if !progress.is_live() {
            printer.out("Summary:");
            print_table(printer, &all);
        }
        printer.out(format!(
            "Destroyed: {} ({}).",
            counts(&all, &[Outcome::Deleted, Outcome::Failed, Outcome::Skipped]),
            super::report::seconds(started.elapsed().as_millis() as u64)
        ));
        for r in &all {
            if let Some(e) = &r.error {
                printer.error(format!("{}: {}: {}", r.id, e.reason, e.message));
            }
        }
        let exit = flushed(&state, printer, exit_of(&all)).await;
        printer.document(&Report::new("destroy", &global.stack, exit, all));
        Ok(exit)
    }
}
