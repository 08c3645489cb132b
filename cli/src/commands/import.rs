//! `krt import`: adopt live objects into a stack's state.

use crate::args::{ExitCode, GlobalArgs, InputArgs};
use crate::output::{Printer, paint, style};
use crate::session;
use crate::table::{counts, painted};
use krt_guest::id::ResourceId;
use krt_guest::model::{ReadOptions, Resource};
use krt_stack::{ImportTarget, Outcome, Report};
use serde_json::json;
use std::time::Duration;

/// `krt import [-f FILE] [ID...]`: records existing objects in the stack's
/// state without changing them. What is recorded as "last applied" is, in this
/// order: the object's `kubectl.kubernetes.io/last-applied-configuration`, the
/// input's manifest (with `-f`), or the live object itself (normalized).
#[derive(Debug, clap::Args)]
pub struct ImportCommand {
    /// Input naming the objects to adopt.
    #[arg(short = 'f', long = "filename")]
    pub files: Vec<std::path::PathBuf>,
    /// IDs of objects to adopt: `apiVersion:kind[:namespace]:name`.
    #[arg(required_unless_present = "files")]
    pub ids: Vec<String>,
}

impl ImportCommand {
    /// Runs the import.
    ///
    /// # Errors
    /// No cluster, a component that does not load, a locked or unwritable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let mut targets: Vec<ImportTarget> = Vec::new();
        if !self.files.is_empty() {
            let Some(stack) = session::load_stack(
                &InputArgs {
                    files: self.files.clone(),
                },
                printer,
            ) else {
                return Ok(ExitCode::Failure);
            };
            targets.extend(
                stack
                    .order
                    .iter()
                    .map(|&i| (stack.resources[i].clone(), true)),
            );
        }
        for id in &self.ids {
            let parsed = ResourceId::parse(id)?;
            let mut metadata = json!({"name": parsed.name});
            if let Some(ns) = &parsed.namespace {
                metadata["namespace"] = json!(ns);
            }
            let attributes = json!({"apiVersion": parsed.api_version, "kind": parsed.kind, "metadata": metadata});
            targets.push((
                Resource {
                    id: id.clone(),
                    type_: "Kubernetes".into(),
                    attributes,
                    depends_on: Vec::new(),
                    extensions: json!({}),
                },
                false,
            ));
        }
        let scope: Vec<Resource> = targets.iter().map(|(r, _)| r.clone()).collect();
        let session = session::open(
            global,
            printer,
            Duration::ZERO,
            &scope,
            None,
            krt_host::DEFAULT_MAX_IN_FLIGHT,
        )
        .await?;
        let lock = session.lock(&global.stack).await?;
        let result = run(global, printer, &session, &targets).await;
        lock.release().await?;
        result
    }
}

async fn run(
    global: &GlobalArgs,
    printer: &Printer,
    session: &session::Session,
    targets: &[ImportTarget],
) -> anyhow::Result<ExitCode> {
    let mut state = session.load_state(&global.stack, printer).await?;
    let options = ReadOptions {
        default_namespace: global.namespace.clone(),
    };
    let imported = krt_stack::import(&session.runtime, targets, &mut state, &options).await;
    let mut reports = Vec::with_capacity(imported.len());
    for (report, source) in imported {
        match (&report.error, source) {
            (Some(e), _) => printer.out(format!(
                "  {} {}: {}",
                painted(Outcome::Failed),
                report.id,
                paint(style::RED, &e.message)
            )),
            (None, Some(source)) => printer.out(format!(
                "  {} {} (recorded from {})",
                painted(Outcome::Imported),
                report.id,
                source.describe()
            )),
            (None, None) => {}
        }
        reports.push(report);
    }
    if reports.iter().any(|r| r.result == Outcome::Imported) {
        session.backend.save(&mut state).await?;
    }
    printer.out(format!(
        "Imported into stack '{}': {}.",
        global.stack,
        counts(&reports, &[Outcome::Imported, Outcome::Failed])
    ));
    let exit = if reports.iter().any(|r| r.result == Outcome::Failed) {
        ExitCode::Failure
    } else {
        ExitCode::Success
    };
    printer.document(&Report::new("import", &global.stack, exit.code(), reports));
    Ok(exit)
}
