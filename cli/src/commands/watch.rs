//! `krt watch`: wait for resources to become healthy, with live progress.

use crate::args::{ExitCode, GlobalArgs, StateOrInputArgs};
use crate::output::{Printer, paint, style};
use crate::progress::Progress;
use crate::session;
use crate::table::counts;
use krt_guest::model::WatchRequest;
use krt_stack::{Outcome, Report, Verdict};
use std::sync::Arc;
use std::time::Duration;

/// `krt watch [-f FILE]`: follows every resource of the stack's state (or of
/// `-f`) until it is healthy, failed, or `--timeout` passes. Exit code 0 when
/// all are healthy, 1 when one failed, 3 when one timed out.
#[derive(Debug, clap::Args)]
pub struct WatchCommand {
    /// The input.
    #[command(flatten)]
    pub input: StateOrInputArgs,
    /// How long to wait for one resource (`90s`, `5m`).
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Most resources followed at once.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub concurrency: u16,
}

impl WatchCommand {
    /// Runs the watch.
    ///
    /// # Errors
    /// No cluster, a component that does not load, an unreadable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let Some((session, _, targets)) = session::open_targets(
            global,
            printer,
            &self.input,
            self.timeout,
            usize::from(self.concurrency),
        )
        .await?
        else {
            return Ok(ExitCode::Failure);
        };
        printer.out(paint(
            style::BOLD,
            format!(
                "Watching {} resource(s) of stack '{}':",
                targets.len(),
                global.stack
            ),
        ));
        let ids: Vec<&str> = targets.iter().map(|(r, _)| r.id.as_str()).collect();
        let progress = Arc::new(Progress::new(printer, &ids));
        let runtime = session.runtime.clone().with_events(progress.clone());
        let request = WatchRequest {
            timeout_ms: u32::try_from(self.timeout.as_millis()).unwrap_or(u32::MAX),
            default_namespace: global.namespace.clone(),
        };
        let reports = krt_stack::watch(
            &runtime,
            &targets,
            &request,
            usize::from(self.concurrency),
            progress.as_ref(),
        )
        .await;
        progress.summarize(printer, &reports);
        printer.out(format!(
            "Watched: {}.",
            counts(
                &reports,
                &[Outcome::Current, Outcome::Failed, Outcome::TimedOut]
            )
        ));
        let exit = ExitCode::of(Verdict::of(&reports));
        printer.document(&Report::new("watch", &global.stack, exit.code(), reports));
        Ok(exit)
    }
}
