//! `krt drift`: compare each recorded resource with its live object.

use crate::args::{ExitCode, GlobalArgs, StateOrInputArgs};
use crate::output::{Printer, paint, style};
use crate::plan::print_diff;
use crate::session;
use crate::table::{counts, painted};
use krt_stack::{Outcome, Report};

/// `krt drift`: for each resource recorded in the stack's state (or those of
/// `-f`), asks the server what re-applying the recorded plan would change.
/// Exit code 2 when anything drifted or is missing.
#[derive(Debug, clap::Args)]
pub struct DriftCommand {
    /// The input.
    #[command(flatten)]
    pub input: StateOrInputArgs,
}

impl DriftCommand {
    /// Runs the comparison.
    ///
    /// # Errors
    /// No cluster, a component that does not load, an unreadable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let Some((session, _, targets)) =
            session::open_read_targets(global, printer, &self.input).await?
        else {
            return Ok(ExitCode::Failure);
        };
        printer.out(paint(
            style::BOLD,
            format!("Drift of stack '{}' (live vs state):", global.stack),
        ));
        let reports = krt_stack::drift(
            &session.runtime,
            &global.stack,
            &targets,
            session::apply_mode(global),
            global.namespace.as_deref(),
            10,
        )
        .await;
        for r in &reports {
            printer.out(format!("  {} {}", painted(r.result), r.id));
            if let Some(e) = &r.error {
                printer.out(paint(
                    style::RED,
                    format!("      {}: {}", e.reason, e.message),
                ));
            }
            if let Some(d) = &r.diff {
                print_diff(printer, &d.unified);
            }
        }
        printer.out(format!(
            "Drift: {}.",
            counts(
                &reports,
                &[
                    Outcome::InSync,
                    Outcome::Drifted,
                    Outcome::Missing,
                    Outcome::Failed
                ]
            )
        ));
        let exit = if reports.iter().any(|r| r.result == Outcome::Failed) {
            ExitCode::Failure
        } else if reports
            .iter()
            .any(|r| matches!(r.result, Outcome::Drifted | Outcome::Missing))
        {
            ExitCode::Drift
        } else {
            ExitCode::Success
        };
        printer.document(&Report::new("drift", &global.stack, exit.code(), reports));
        Ok(exit)
    }
}
