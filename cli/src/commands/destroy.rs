//! `krt destroy` (alias `delete`): delete the stack's resources, dependents
//! first, forgetting each in the state once it is gone.

use super::flushed;
use crate::args::{ExitCode, GlobalArgs, InputArgs, StateOrInputArgs};
use crate::output::{Printer, paint, style};
use crate::progress::Progress;
use crate::session;
use crate::table::{counts, print_table, seconds};
use krt_guest::model::DeleteRequest;
use krt_stack::{Outcome, Recorder, Report, Stack, Verdict};
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
                ExitCode::Success.code(),
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
        let state = Recorder::new(session.backend.as_ref(), state);
        let request = DeleteRequest {
            default_namespace: global.namespace.clone(),
            ..DeleteRequest::default()
        };
        let all = krt_stack::destroy(
            &runtime,
            &targets,
            &state,
            &request,
            usize::from(self.concurrency),
            progress.as_ref(),
        )
        .await;
        if !progress.is_live() {
            printer.out("Summary:");
            print_table(printer, &all);
        }
        printer.out(format!(
            "Destroyed: {} ({}).",
            counts(&all, &[Outcome::Deleted, Outcome::Failed, Outcome::Skipped]),
            seconds(started.elapsed().as_millis() as u64)
        ));
        for r in &all {
            if let Some(e) = &r.error {
                printer.error(format!("{}: {}: {}", r.id, e.reason, e.message));
            }
        }
        let exit = flushed(&state, printer, ExitCode::of(Verdict::of(&all))).await;
        printer.document(&Report::new("destroy", &global.stack, exit.code(), all));
        Ok(exit)
    }
}
