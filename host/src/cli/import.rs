//! `krt import`: adopt live objects into a stack's state.

use super::output::{Printer, paint, style};
use super::report::{ErrorReport, Outcome, Report, ResourceReport, counts};
use super::{ExitCode, GlobalArgs, InputArgs, session};
use crate::runtime::Runtime;
use guest::id::ResourceId;
use guest::model::{ReadOptions, Resource, StatusCode};
use guest::normalize::LAST_APPLIED_ANNOTATION;
use serde_json::{Value, json};
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

/// Where an imported record came from.
fn adopted(resource: &Resource, live: &Value, from_input: bool) -> (Resource, &'static str) {
    let last_applied = live["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object);
    let (attributes, source) = match last_applied {
        Some(a) => (a, "its last-applied configuration"),
        None if from_input => (resource.attributes.clone(), "the input"),
        None => (live.clone(), "the live object"),
    };
    (
        Resource {
            attributes,
            ..resource.clone()
        },
        source,
    )
}

impl ImportCommand {
    /// Runs the import.
    ///
    /// # Errors
    /// No cluster, a component that does not load, a locked or unwritable state.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let mut targets: Vec<(Resource, bool)> = Vec::new();
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
        let session = session::open(global, printer, Duration::ZERO).await?;
        let lock = session.backend.lock(&global.stack).await?;
        let result = self.run(global, printer, &session, targets).await;
        lock.release().await?;
        result
    }

    async fn run(
        &self,
        global: &GlobalArgs,
        printer: &Printer,
        session: &session::Session,
        targets: Vec<(Resource, bool)>,
    ) -> anyhow::Result<ExitCode> {
        let mut state = session.backend.load(&global.stack).await?;
        let options = ReadOptions {
            default_namespace: global.namespace.clone(),
        };
        let mut reports = Vec::new();
        for (resource, from_input) in targets {
            let r = session.runtime.read(None, Some(&resource), &options).await;
            let mut report = ResourceReport::new(&resource.id, Outcome::Imported);
            match (r.status.filter(|s| s.is_error()), r.resource) {
                (Some(status), _) => {
                    report.result = Outcome::Failed;
                    report.error = Some(ErrorReport::from(&status));
                }
                (None, None) => {
                    report.result = Outcome::Failed;
                    report.error = Some(ErrorReport {
                        code: StatusCode::NotFound,
                        reason: "NotFound".into(),
                        message: format!("{} does not exist in the cluster", resource.id),
                    });
                }
                (None, Some(live)) => {
                    let (record, source) = adopted(&resource, &live.attributes, from_input);
                    state.put(record);
                    printer.out(format!(
                        "  {} {} (recorded from {source})",
                        Outcome::Imported.painted(),
                        resource.id
                    ));
                }
            }
            if let Some(e) = &report.error {
                printer.out(format!(
                    "  {} {}: {}",
                    Outcome::Failed.painted(),
                    resource.id,
                    paint(style::RED, &e.message)
                ));
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
        printer.document(&Report::new("import", &global.stack, exit, reports));
        Ok(exit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_last_applied_then_input_then_live() {
        let resource = Resource {
            id: "v1:ConfigMap:default:c".into(),
            type_: "Kubernetes".into(),
            attributes: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"from": "input"}}),
            depends_on: vec![],
            extensions: json!({}),
        };
        let applied = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"from":"kubectl"}}"#;
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
            "annotations": {LAST_APPLIED_ANNOTATION: applied}}, "data": {"from": "live"}});
        let (r, source) = adopted(&resource, &live, true);
        assert_eq!(
            (r.attributes["data"]["from"].as_str(), source),
            (Some("kubectl"), "its last-applied configuration")
        );
        let plain = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"from": "live"}});
        assert_eq!(
            adopted(&resource, &plain, true).0.attributes["data"]["from"],
            "input"
        );
        assert_eq!(
            adopted(&resource, &plain, false).0.attributes["data"]["from"],
            "live"
        );
    }
}
