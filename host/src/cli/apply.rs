//! `krt apply` and `krt preview`.

use super::output::Printer;
use super::{ExitCode, FileArgs, GlobalArgs, plan, session};
use crate::runtime::Runtime;
use clap::{Args, ValueEnum};
use guest::model::{Action, ApplyMode, ApplyOptions};

/// How to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Server-side apply with a field manager.
    ServerSide,
    /// Client-side three-way merge (strategic merge patch for built-in kinds).
    ClientSide,
}

/// Options of apply and preview.
#[derive(Debug, Clone, Args)]
pub struct ApplyArgs {
    /// The input.
    #[command(flatten)]
    pub files: FileArgs,
    /// How to write to the cluster.
    #[arg(long, value_enum, default_value_t = ModeArg::ServerSide)]
    pub mode: ModeArg,
    /// The field manager recorded for server-side apply.
    #[arg(long, default_value = "krt")]
    pub field_manager: String,
    /// Take ownership of fields other field managers own.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Delete and recreate objects whose immutable fields change.
    #[arg(long)]
    pub replace_on_immutable: bool,
}

impl ApplyArgs {
    fn options(&self, global: &GlobalArgs) -> ApplyOptions {
        ApplyOptions {
            mode: match self.mode {
                ModeArg::ServerSide => ApplyMode::ServerSide,
                ModeArg::ClientSide => ApplyMode::ClientSideThreeWay,
            },
            field_manager: Some(self.field_manager.clone()),
            force: self.force_conflicts,
            replace_on_immutable: self.replace_on_immutable,
            default_namespace: global.namespace.clone(),
            ..ApplyOptions::default()
        }
    }
}

/// `krt apply -f FILE`: preview, then apply in order.
#[derive(Debug, Args)]
pub struct ApplyCommand {
    /// Options.
    #[command(flatten)]
    pub args: ApplyArgs,
    /// Only preview (a server dry run); change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `krt preview -f FILE`: what apply would do, with field-level diffs.
#[derive(Debug, Args)]
pub struct PreviewCommand {
    /// Options.
    #[command(flatten)]
    pub args: ApplyArgs,
}

impl PreviewCommand {
    /// Runs the preview.
    pub async fn execute(self, global: &GlobalArgs) -> ExitCode {
        let printer = Printer;
        let Some(session) = session::open(global, &self.args.files, &printer).await else {
            return ExitCode::Failure;
        };
        let options = self.args.options(global);
        let planned = plan::preview(&session.runtime, &session.resources, &options).await;
        printer.out("Preview:");
        plan::print(&printer, &session.resources, &planned, true);
        if planned.iter().any(|p| p.action.is_none()) {
            ExitCode::Failure
        } else {
            ExitCode::Success
        }
    }
}

impl ApplyCommand {
    /// Runs the apply.
    pub async fn execute(self, global: &GlobalArgs) -> ExitCode {
        let printer = Printer;
        let Some(session) = session::open(global, &self.args.files, &printer).await else {
            return ExitCode::Failure;
        };
        let options = self.args.options(global);
        let planned = plan::preview(&session.runtime, &session.resources, &options).await;
        printer.out("Preview:");
        plan::print(&printer, &session.resources, &planned, false);
        if self.dry_run {
            return if planned.iter().any(|p| p.action.is_none()) {
                ExitCode::Failure
            } else {
                ExitCode::Success
            };
        }
        let mut counts = [0usize; 4]; // created, updated, unchanged, failed
        let mut wrote = false;
        for (resource, plan) in session.resources.iter().zip(&planned) {
            if plan.action == Some(Action::Unchanged) {
                counts[2] += 1;
                continue;
            }
            let r = session.runtime.apply(None, Some(resource), &options).await;
            let failed = r.status.as_ref().filter(|s| s.is_error());
            let (word, slot) = match (failed, r.action) {
                (Some(_), _) => ("failed", 3),
                (None, Action::Create) => ("created", 0),
                (None, Action::Update) => ("updated", 1),
                (None, Action::Replace) => ("replaced", 1),
                (None, Action::Delete) => ("deleted", 1),
                (None, Action::Unchanged) => ("unchanged", 2),
            };
            counts[slot] += 1;
            if !wrote {
                printer.out("Applying:");
                wrote = true;
            }
            printer.out(format!("  {word:<10} {}", resource.id));
            if let Some(status) = failed {
                printer.error(format!(
                    "{}: {}: {}",
                    resource.id, status.reason, status.message
                ));
            }
        }
        if !wrote {
            printer.out("Nothing to change.");
        }
        printer.out(format!(
            "Applied: {} created, {} updated, {} unchanged, {} failed.",
            counts[0], counts[1], counts[2], counts[3]
        ));
        if counts[3] > 0 {
            ExitCode::Failure
        } else {
            ExitCode::Success
        }
    }
}
