//! `krt delete`: delete a manifest's resources in reverse order.

use super::output::Printer;
use super::{ExitCode, FileArgs, GlobalArgs, session};
use crate::runtime::Runtime;
use clap::Args;
use guest::model::DeleteRequest;

/// `krt delete -f FILE`: deletes each resource, last first; an absent object is a success.
#[derive(Debug, Args)]
pub struct DeleteCommand {
    /// The input.
    #[command(flatten)]
    pub files: FileArgs,
    /// Check the requests with the server without deleting.
    #[arg(long)]
    pub dry_run: bool,
}

impl DeleteCommand {
    /// Runs the delete.
    pub async fn execute(self, global: &GlobalArgs) -> ExitCode {
        let printer = Printer;
        let Some(session) = session::open(global, &self.files, &printer).await else {
            return ExitCode::Failure;
        };
        let options = DeleteRequest {
            dry_run: self.dry_run,
            default_namespace: global.namespace.clone(),
            ..DeleteRequest::default()
        };
        let mut code = ExitCode::Success;
        for resource in session.resources.iter().rev() {
            match session.runtime.delete(resource, &options).await {
                Some(status) if status.is_error() => {
                    printer.out(format!("  {:<10} {}", "failed", resource.id));
                    printer.error(format!(
                        "{}: {}: {}",
                        resource.id, status.reason, status.message
                    ));
                    code = ExitCode::Failure;
                }
                Some(note) => {
                    printer.out(format!("  {:<10} {}", "deleted", resource.id));
                    printer.out(format!("      {}", note.message));
                }
                None => printer.out(format!("  {:<10} {}", "deleted", resource.id)),
            }
        }
        code
    }
}
