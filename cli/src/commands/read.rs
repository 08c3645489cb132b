//! `krt read`: live objects with their health and drift from the state.

use crate::args::{ExitCode, GlobalArgs, StateOrInputArgs};
use crate::output::Printer;
use crate::session;
use crate::table::health_word;
use krt_guest::model::ReadOptions;
use krt_stack::Report;

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
            session::open_read_targets(global, printer, &self.input).await?
        else {
            return Ok(ExitCode::Failure);
        };
        let options = ReadOptions {
            default_namespace: global.namespace.clone(),
        };
        let reports = krt_stack::read(&session.runtime, &targets, &options, 10).await;
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
        printer.document(&Report::new("read", &global.stack, exit.code(), reports));
        Ok(exit)
    }
}
