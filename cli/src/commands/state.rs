//! `krt state list|show|unlock`: the recorded states.

use crate::args::{ExitCode, GlobalArgs, StateArg};
use crate::output::{Printer, paint, style};
use crate::session;
use krt_stack::StateBackend;
use std::time::Duration;

/// `krt state`: inspect recorded states.
#[derive(Debug, clap::Subcommand)]
pub enum StateCommand {
    /// List the stacks that have a recorded state.
    List,
    /// Print a stack's state (`-o json|yaml` prints the state document itself).
    Show {
        /// The stack (default: --stack).
        stack: Option<String>,
    },
    /// Remove the lock of a stack whose krt run died (kubernetes states; a local
    /// lock is released by the kernel when its process exits).
    Unlock {
        /// The stack.
        stack: String,
    },
}

impl StateCommand {
    /// Runs the state command.
    ///
    /// # Errors
    /// No cluster (for `--state kubernetes`), an unreadable state, or a lock
    /// still held by a live run.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        // A local state needs no cluster.
        let session;
        let local;
        let backend: &dyn StateBackend = match global.state {
            StateArg::Local => {
                local = session::local_backend(global);
                &local
            }
            StateArg::Kubernetes => {
                session = session::open(
                    global,
                    printer,
                    Duration::ZERO,
                    &[],
                    None,
                    krt_host::DEFAULT_MAX_IN_FLIGHT,
                )
                .await?;
                session.backend.as_ref()
            }
        };
        match self {
            StateCommand::List => {
                let stacks = backend.stacks().await?;
                if printer.is_table() {
                    for stack in &stacks {
                        let state = backend.load(stack).await?;
                        printer.out(format!(
                            "{stack:<20} {:>3} resource(s)  serial {:<4} updated {}",
                            state.resources.len(),
                            state.serial,
                            state.updated_at
                        ));
                    }
                    if stacks.is_empty() {
                        printer.out("No stacks recorded.");
                    }
                }
                printer.document(&stacks);
            }
            StateCommand::Show { stack } => {
                let stack = stack.unwrap_or_else(|| global.stack.clone());
                let state = backend.load(&stack).await?;
                if state.serial == 0 {
                    anyhow::bail!(
                        "stack '{stack}' has no recorded state ({})",
                        backend.describe(&stack)
                    );
                }
                printer.out(paint(
                    style::BOLD,
                    format!(
                        "Stack '{stack}': {} resource(s), serial {}, updated {} ({})",
                        state.resources.len(),
                        state.serial,
                        state.updated_at,
                        backend.describe(&stack)
                    ),
                ));
                for r in &state.resources {
                    match r.depends_on.is_empty() {
                        true => printer.out(format!("  {}", r.id)),
                        false => printer.out(format!(
                            "  {}  (depends on {})",
                            r.id,
                            r.depends_on.join(", ")
                        )),
                    }
                }
                printer.document(&state);
            }
            StateCommand::Unlock { stack } => {
                if backend.unlock(&stack).await? {
                    printer.out(format!("Removed the lock of stack '{stack}'."));
                } else {
                    printer.out(format!("Stack '{stack}' was not locked."));
                }
            }
        }
        Ok(ExitCode::Success)
    }
}
