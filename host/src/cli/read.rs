//! `krt read`: the live objects of a manifest's resources.

use super::output::Printer;
use super::{ExitCode, FileArgs, GlobalArgs, session};
use crate::runtime::Runtime;
use clap::Args;
use guest::model::ReadOptions;

/// `krt read -f FILE`: prints each live object (normalized) as YAML, or says it is absent.
#[derive(Debug, Args)]
pub struct ReadCommand {
    /// The input.
    #[command(flatten)]
    pub files: FileArgs,
}

impl ReadCommand {
    /// Runs the read.
    pub async fn execute(self, global: &GlobalArgs) -> ExitCode {
        let printer = Printer;
        let Some(session) = session::open(global, &self.files, &printer).await else {
            return ExitCode::Failure;
        };
        let options = ReadOptions {
            default_namespace: global.namespace.clone(),
        };
        let mut code = ExitCode::Success;
        for resource in &session.resources {
            let r = session.runtime.read(None, Some(resource), &options).await;
            if let Some(status) = r.status.as_ref().filter(|s| s.is_error()) {
                printer.error(format!(
                    "{}: {}: {}",
                    resource.id, status.reason, status.message
                ));
                code = ExitCode::Failure;
                continue;
            }
            printer.out(format!("# {}", resource.id));
            match r.resource {
                Some(live) => match serde_saphyr::to_string(&live.attributes) {
                    Ok(yaml) => printer.out(format!("---\n{}", yaml.trim_end())),
                    Err(e) => printer.error(format!("{}: cannot render YAML: {e}", resource.id)),
                },
                None => printer.out("# not found"),
            }
        }
        code
    }
}
