//! `krt state list|show|unlock|rebind`: the recorded states.

use crate::args::{ExitCode, GlobalArgs, StateArg};
use crate::output::{Printer, paint, style};
use crate::session;
use krt_stack::StateBackend;
use std::io::IsTerminal;

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
    /// Bind a stack's state to the cluster of this run (after a confirmation):
    /// for the same cluster under a new identity, for example restored from a
    /// backup. The recorded UIDs are forgotten; the next apply records them
    /// anew, and until then objects are deleted only when they carry the
    /// stack's label.
    Rebind {
        /// The stack (default: --stack).
        stack: Option<String>,
        /// Do not ask for confirmation.
        #[arg(short = 'y', long)]
        yes: bool,
    },
}

impl StateCommand {
    /// Runs the state command.
    ///
    /// # Errors
    /// No cluster (for `--state kubernetes`), an unreadable state, or a lock
    /// still held by a live run.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        if let StateCommand::Rebind { stack, yes } = self {
            let stack = stack.unwrap_or_else(|| global.stack.clone());
            return rebind(global, printer, &stack, yes).await;
        }
        // A local state needs no cluster.
        let session;
        let local;
        let backend: &dyn StateBackend = match global.state {
            StateArg::Local => {
                local = session::local_backend(global);
                &local
            }
            StateArg::Kubernetes => {
                session = session::open_reading(global, printer, &[]).await?;
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
            StateCommand::Rebind { .. } => unreachable!("handled above"),
        }
        Ok(ExitCode::Success)
    }
}

/// `krt state rebind`: binds the state of `stack` to this run's cluster once
/// the user confirms (or `yes`), under the stack's lock.
async fn rebind(
    global: &GlobalArgs,
    printer: &Printer,
    stack: &str,
    yes: bool,
) -> anyhow::Result<ExitCode> {
    let session = session::open_reading(global, printer, &[]).await?;
    let lock = session.backend.lock(stack).await?;
    let result = async {
        let mut state = session.backend.load(stack).await?;
        match &state.cluster {
            Some(recorded) if recorded.same_cluster(&session.cluster) => {
                printer.out(format!(
                    "The state of stack '{stack}' already describes this cluster ({}).",
                    session.cluster
                ));
                return Ok(ExitCode::Success);
            }
            Some(recorded) => printer.out(format!(
                "The state of stack '{stack}' ({} resource(s), {}) describes the cluster {recorded}.\n\
                 This run is against {}.",
                state.resources.len(),
                session.backend.describe(stack),
                session.cluster
            )),
            None => printer.out(format!(
                "The state of stack '{stack}' names no cluster yet; this run is against {}.",
                session.cluster
            )),
        }
        let question = format!(
            "Bind it to this cluster? Its resources will be planned, pruned and destroyed here \
             (only objects carrying the label krt.dev/stack={stack} are deleted)"
        );
        let confirmed = if yes {
            true
        } else if printer.human_is_terminal() && std::io::stdin().is_terminal() {
            printer.confirm(&question)
        } else {
            anyhow::bail!(
                "`krt state rebind` asks for a confirmation, and there is no terminal to ask on: \
                 pass --yes to rebind the state of stack '{stack}' to {}",
                session.cluster
            );
        };
        if !confirmed {
            printer.out("Rebind cancelled; nothing was changed.");
            return Ok(ExitCode::Failure);
        }
        let before = state.rebind(&session.cluster);
        session.backend.save(&mut state).await?;
        printer.out(format!(
            "The state of stack '{stack}' now describes {}{}.",
            session.cluster,
            before.map_or_else(String::new, |b| format!(" (it described {b})"))
        ));
        Ok(ExitCode::Success)
    }
    .await;
    lock.release().await?;
    result
}
