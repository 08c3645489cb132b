//! `krt drift`: compare each recorded resource with its live object.

use super::output::{Printer, paint, style};
use super::plan::print_diff;
use super::report::{DiffReport, ErrorReport, Outcome, Report, ResourceReport, counts};
use super::{ExitCode, GlobalArgs, StateOrInputArgs, session};
use crate::runtime::{ComponentRuntime, Runtime};
use futures::StreamExt;
use guest::model::{Action, ApplyOptions, ObjectDiff, Resource, Status};
use std::time::Duration;

/// `krt drift`: for each resource recorded in the stack's state (or those of
/// `-f`), asks the server what re-applying the recorded plan would change.
/// Exit code 2 when anything drifted or is missing.
#[derive(Debug, clap::Args)]
pub struct DriftCommand {
    /// The input.
    #[command(flatten)]
    pub input: StateOrInputArgs,
}

/// The drift of one recorded resource: `in-sync`, `drifted` (with the diff
/// from live to recorded), `missing`, or `failed` (with the status).
pub async fn drift_of(
    runtime: &ComponentRuntime,
    recorded: &Resource,
    global: &GlobalArgs,
) -> (Outcome, Option<ObjectDiff>, Option<Status>) {
    let options = ApplyOptions {
        dry_run: true,
        force: true,
        mode: session::apply_mode(global),
        default_namespace: global.namespace.clone(),
        ..ApplyOptions::default()
    };
    let r = runtime
        .apply(Some(recorded), Some(recorded), &options)
        .await;
    if let Some(status) = r.status.filter(Status::is_error) {
        return (Outcome::Failed, None, Some(status));
    }
    match r.action {
        Action::Unchanged => (Outcome::InSync, None, None),
        Action::Create => (Outcome::Missing, None, None),
        _ => {
            let diff = guest::diff::diff(
                r.live.as_ref(),
                r.resource.as_ref().map(|p| &p.attributes),
                &[],
            );
            (Outcome::Drifted, Some(diff), None)
        }
    }
}

impl DriftCommand {
    /// Runs the comparison.
    ///
    /// # Errors
    /// No cluster, a component that does not load, an unreadable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let Some((session, _, targets)) =
            session::open_targets(global, printer, &self.input, Duration::ZERO).await?
        else {
            return Ok(ExitCode::Failure);
        };
        printer.out(paint(
            style::BOLD,
            format!("Drift of stack '{}' (live vs state):", global.stack),
        ));
        let runtime = &session.runtime;
        let reports: Vec<ResourceReport> = futures::stream::iter(targets)
            .map(|(resource, recorded)| async move {
                let Some(recorded) = recorded else {
                    let mut r = ResourceReport::new(&resource.id, Outcome::Failed);
                    r.error = Some(ErrorReport {
                        code: guest::model::StatusCode::NotFound,
                        reason: "NotInState".into(),
                        message: format!(
                            "{} is not recorded in stack '{}'",
                            resource.id, global.stack
                        ),
                    });
                    return r;
                };
                let (outcome, diff, status) = drift_of(runtime, &recorded, global).await;
                let mut r = ResourceReport::new(&resource.id, outcome);
                r.diff = diff.as_ref().map(DiffReport::from);
                r.error = status.as_ref().map(ErrorReport::from);
                r
            })
            .buffered(10)
            .collect()
            .await;
        for r in &reports {
            printer.out(format!("  {} {}", r.result.painted(), r.id));
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
        printer.document(&Report::new("drift", &global.stack, exit, reports));
        Ok(exit)
    }
}
