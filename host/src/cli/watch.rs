//! `krt watch`: wait for resources to become healthy, with live progress.

use super::output::{Printer, paint, style};
use super::progress::Progress;
use super::report::{ErrorReport, Outcome, Report, ResourceReport, counts, exit_of, print_table};
use super::{ExitCode, GlobalArgs, StateOrInputArgs, session};
use crate::runtime::Runtime;
use futures::StreamExt;
use guest::model::{StatusCode, WatchRequest};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
        let Some((session, _, targets)) =
            session::open_targets(global, printer, &self.input, self.timeout).await?
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
        let (runtime, request, progress_ref) = (&runtime, &request, &progress);
        let reports: Vec<ResourceReport> = futures::stream::iter(&targets)
            .map(|(resource, _)| async move {
                let started = Instant::now();
                progress_ref.start(&resource.id, "waiting");
                let w = runtime.watch(resource, request).await;
                let mut r = ResourceReport::new(&resource.id, Outcome::Current);
                r.health = Some(w.health);
                if let Some(status) = w.status.as_ref().filter(|s| s.is_error()) {
                    r.result = if status.code == StatusCode::Timeout {
                        Outcome::TimedOut
                    } else {
                        Outcome::Failed
                    };
                    r.error = Some(ErrorReport::from(status));
                }
                let r = r.took(started.elapsed());
                progress_ref.finish(&r);
                r
            })
            .buffered(usize::from(self.concurrency))
            .collect()
            .await;
        if !progress.is_live() {
            printer.out("Summary:");
            print_table(printer, &reports);
        }
        printer.out(format!(
            "Watched: {}.",
            counts(
                &reports,
                &[Outcome::Current, Outcome::Failed, Outcome::TimedOut]
            )
        ));
        let exit = exit_of(&reports);
        printer.document(&Report::new("watch", &global.stack, exit, reports));
        Ok(exit)
    }
}
