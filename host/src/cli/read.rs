//! `krt read`: live objects with their health and drift from the state.

use super::drift::drift_of;
use super::output::Printer;
use super::report::{DiffReport, ErrorReport, Outcome, Report, ResourceReport, health_word};
use super::{ExitCode, GlobalArgs, StateOrInputArgs, session};
use crate::runtime::Runtime;
use futures::StreamExt;
use guest::model::{ReadOptions, WatchRequest};
use std::time::Duration;

/// `krt read [-f FILE]`: prints each live object (normalized) as YAML, headed
/// by its health and its drift from the stack's state; or says it is absent.
#[derive(Debug, clap::Args)]
pub struct ReadCommand {
    /// The input.
    #[command(flatten)]
    pub input: StateOrInputArgs,
}

impl ReadCommand {
    /// Runs the read.
    ///
    /// # Errors
    /// No cluster, a component that does not load, an unreadable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let Some((session, state, targets)) =
            session::open_targets(global, printer, &self.input, Duration::ZERO).await?
        else {
            return Ok(ExitCode::Failure);
        };
        let runtime = &session.runtime;
        let options = ReadOptions {
            default_namespace: global.namespace.clone(),
        };
        let options = &options;
        let reports: Vec<ResourceReport> = futures::stream::iter(targets)
            .map(|(resource, recorded)| async move {
                let r = runtime
                    .read(recorded.as_ref(), Some(&resource), options)
                    .await;
                if let Some(status) = r.status.as_ref().filter(|s| s.is_error()) {
                    let mut report = ResourceReport::new(&resource.id, Outcome::Failed);
                    report.error = Some(ErrorReport::from(status));
                    return report;
                }
                let Some(live) = r.resource else {
                    return ResourceReport::new(&resource.id, Outcome::Missing);
                };
                let mut report = ResourceReport::new(&resource.id, Outcome::Current);
                // The health as observed now: a watch that returns after its first look.
                let request = WatchRequest {
                    timeout_ms: 1,
                    default_namespace: global.namespace.clone(),
                };
                report.health = Some(runtime.watch(&resource, &request).await.health);
                if let Some(recorded) = &recorded {
                    let (outcome, diff, _) = drift_of(runtime, recorded, global).await;
                    report.diff = match outcome {
                        Outcome::Drifted => diff.as_ref().map(DiffReport::from),
                        _ => None,
                    };
                }
                report.object = Some(live.attributes);
                report
            })
            .buffered(10)
            .collect()
            .await;
        let mut exit = ExitCode::Success;
        for r in &reports {
            printer.out(format!("# {}", r.id));
            match (&r.error, &r.object) {
                (Some(e), _) => {
                    printer.error(format!("{}: {}: {}", r.id, e.reason, e.message));
                    exit = ExitCode::Failure;
                }
                (None, None) => printer.out("# not found"),
                (None, Some(object)) => {
                    if let Some(h) = &r.health {
                        printer
                            .out(format!("# health: {} {}", health_word(h), h.message).trim_end());
                    }
                    let recorded = state.get(&r.id).is_some();
                    printer.out(match (&r.diff, recorded) {
                        (_, false) => "# drift: not recorded in the state".to_owned(),
                        (None, true) => "# drift: none".to_owned(),
                        (Some(d), true) => format!(
                            "# drift: {} field(s) differ from the state: {}",
                            d.changes.len(),
                            d.changes
                                .iter()
                                .map(|c| c.path.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                    match serde_saphyr::to_string(object) {
                        Ok(yaml) => printer.out(format!("---\n{}", yaml.trim_end())),
                        Err(e) => printer.error(format!("{}: cannot render YAML: {e}", r.id)),
                    }
                }
            }
        }
        printer.document(&Report::new("read", &global.stack, exit, reports));
        Ok(exit)
    }
}
