//! The preview step shared by `krt apply` and `krt preview`: a server dry run
//! of every resource, with the diff between live and predicted objects.

use super::output::Printer;
use crate::runtime::{ComponentRuntime, Runtime};
use guest::model::{Action, ApplyOptions, ObjectDiff, Resource, Status, StatusCode};
use std::collections::HashSet;

/// What the preview predicts for one resource.
pub struct Planned {
    /// The predicted action; `None` when the dry run failed.
    pub action: Option<Action>,
    /// The failure or note of the dry run.
    pub status: Option<Status>,
    /// Live vs predicted (empty for creates).
    pub diff: ObjectDiff,
}

/// Dry-runs every resource in order. A namespaced object whose namespace is
/// created by this same plan cannot be dry-run yet; it is predicted as a create.
pub async fn preview(
    runtime: &ComponentRuntime,
    resources: &[Resource],
    options: &ApplyOptions,
) -> Vec<Planned> {
    let dry = ApplyOptions {
        dry_run: true,
        ..options.clone()
    };
    let mut new_namespaces = HashSet::new();
    let mut planned = Vec::with_capacity(resources.len());
    for resource in resources {
        let r = runtime.apply(None, Some(resource), &dry).await;
        let failed = r.status.as_ref().filter(|s| s.is_error());
        let namespace = resource.attributes["metadata"]["namespace"]
            .as_str()
            .map(str::to_string);
        let waits_for_namespace = failed.is_some_and(|s| s.code == StatusCode::NotFound)
            && namespace.is_some_and(|ns| new_namespaces.contains(&ns));
        let entry = if waits_for_namespace {
            Planned {
                action: Some(Action::Create),
                status: None,
                diff: ObjectDiff::default(),
            }
        } else if failed.is_some() {
            Planned {
                action: None,
                status: r.status,
                diff: ObjectDiff::default(),
            }
        } else {
            let predicted = r.resource.as_ref().map(|p| &p.attributes);
            let diff = match r.action {
                Action::Update | Action::Replace => {
                    guest::diff::diff(r.live.as_ref(), predicted, &options.ignore_paths)
                }
                _ => ObjectDiff::default(),
            };
            Planned {
                action: Some(r.action),
                status: r.status,
                diff,
            }
        };
        if entry.action == Some(Action::Create)
            && resource.attributes["kind"] == "Namespace"
            && let Some(name) = resource.attributes["metadata"]["name"].as_str()
        {
            new_namespaces.insert(name.to_string());
        }
        planned.push(entry);
    }
    planned
}

/// Prints the plan; `detail` adds each changed field.
pub fn print(printer: &Printer, resources: &[Resource], planned: &[Planned], detail: bool) {
    for (resource, plan) in resources.iter().zip(planned) {
        let (mark, word) = match plan.action {
            Some(Action::Create) => ("+", "create"),
            Some(Action::Update) => ("~", "update"),
            Some(Action::Unchanged) => ("=", "unchanged"),
            Some(Action::Delete) => ("-", "delete"),
            Some(Action::Replace) => ("±", "replace"),
            None => ("!", "failed"),
        };
        printer.out(format!("  {mark} {word:<10} {}", resource.id));
        if let Some(status) = &plan.status {
            printer.out(format!("      {}: {}", status.reason, status.message));
        }
        if detail {
            for change in &plan.diff.changes {
                let before = change.before.as_deref().unwrap_or("(absent)");
                let after = change.after.as_deref().unwrap_or("(absent)");
                printer.out(format!("      {}: {before} -> {after}", change.path));
            }
        }
    }
}
