//! `krt preview`: what `apply` would do, per resource, with diffs.

use super::apply::WriteArgs;
use crate::args::{ExitCode, GlobalArgs, InputArgs};
use crate::output::Printer;
use crate::{plan, session};
use krt_stack::Report;
use std::time::Duration;

/// `krt preview -f FILE`: a server dry run of every resource against the
/// stack's state: create, update (with a unified diff of the normalized
/// objects, Secret values masked), replace, unchanged, and delete for recorded
/// resources no longer in the input. Changes nothing.
#[derive(Debug, clap::Args)]
pub struct PreviewCommand {
    /// The input.
    #[command(flatten)]
    pub input: InputArgs,
    /// How to write.
    #[command(flatten)]
    pub write: WriteArgs,
}

impl PreviewCommand {
    /// Runs the preview.
    ///
    /// # Errors
    /// No cluster, a component that does not load, or an unreadable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let Some(stack) = session::load_stack(&self.input, printer)
            .and_then(|stack| session::owned(&stack, global, printer))
        else {
            return Ok(ExitCode::Failure);
        };
        let session = self
            .write
            .open(global, printer, Duration::ZERO, &stack)
            .await?;
        let state = session.load_state(&global.stack, printer).await?;
        let plan = self
            .write
            .preview(global, printer, &session, &stack, &state)
            .await;
        let exit = if plan.failed() {
            plan::print_failures(printer, &stack, &plan);
            ExitCode::Failure
        } else {
            ExitCode::Success
        };
        printer.document(&Report::new(
            "preview",
            &global.stack,
            exit.code(),
            plan.reports(&stack),
        ));
        Ok(exit)
    }
}
