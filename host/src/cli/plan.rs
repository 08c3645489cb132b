//! The plan shared by `preview` and `apply`: a server dry run of every input
//! resource (against its recorded state, for client-side merges), a diff of
//! the live and predicted objects, and a delete for each recorded resource
//! that is no longer in the input.

use super::output::{Printer, paint, style};
use super::report::{DiffReport, ErrorReport, Outcome, ResourceReport};
use crate::runtime::{ComponentRuntime, Runtime};
use crate::stack::Stack;
use crate::state_store::State;
use futures::StreamExt;
use guest::model::{Action, ApplyOptions, ObjectDiff, Resource, Status, StatusCode};

/// What the preview predicts for one input resource.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The predicted action; `None` when the dry run failed.
    pub action: Option<Action>,
    /// The dry run's failure or note.
    pub status: Option<Status>,
    /// Live vs predicted, for updates and replaces.
    pub diff: ObjectDiff,
}

/// The whole plan.
pub struct Plan {
    /// One entry per input resource, by index.
    pub planned: Vec<Planned>,
    /// Recorded resources absent from the input, to delete.
    pub deletes: Vec<Resource>,
}

impl Plan {
    /// Whether any dry run failed.
    pub fn failed(&self) -> bool {
        self.planned.iter().any(|p| p.action.is_none())
    }

    /// Whether anything would change.
    pub fn changes(&self) -> bool {
        !self.deletes.is_empty()
            || self
                .planned
                .iter()
                .any(|p| p.action != Some(Action::Unchanged))
    }

    /// The report lines of the plan (result `planned`, or `failed`), in order.
    pub fn reports(&self, stack: &Stack) -> Vec<ResourceReport> {
        let mut out: Vec<ResourceReport> = stack
            .order
            .iter()
            .map(|&i| {
                let p = &self.planned[i];
                let failed = p.status.as_ref().filter(|s| s.is_error());
                let mut r = ResourceReport::new(
                    &stack.resources[i].id,
                    if failed.is_some() {
                        Outcome::Failed
                    } else {
                        Outcome::Planned
                    },
                );
                r.action = p.action;
                r.error = failed.map(ErrorReport::from);
                r.diff = (!p.diff.changes.is_empty()).then(|| DiffReport::from(&p.diff));
                r
            })
            .collect();
        out.extend(self.deletes.iter().map(|d| {
            let mut r = ResourceReport::new(&d.id, Outcome::Planned);
            r.action = Some(Action::Delete);
            r
        }));
        out
    }
}

/// Dry-runs every input resource, `concurrency` at a time. A resource that
/// cannot be dry-run because a dependency is itself still to be created (its
/// Namespace, its CRD) is predicted as a create.
pub async fn plan(
    runtime: &ComponentRuntime,
    stack: &Stack,
    state: &State,
    options: &ApplyOptions,
    concurrency: usize,
) -> Plan {
    let dry = ApplyOptions {
        dry_run: true,
        ..options.clone()
    };
    let dry = &dry;
    let mut planned: Vec<Planned> = futures::stream::iter(stack.resources.iter())
        .map(|resource| async move {
            let r = runtime
                .apply(state.get(&resource.id), Some(resource), dry)
                .await;
            if r.status.as_ref().is_some_and(Status::is_error) {
                return Planned {
                    action: None,
                    status: r.status,
                    diff: ObjectDiff::default(),
                };
            }
            // Creates show the whole predicted object as added, like updates
            // show what changes (normalized, Secret values masked).
            let diff = match r.action {
                Action::Update | Action::Replace | Action::Create => guest::diff::diff(
                    r.live.as_ref(),
                    r.resource.as_ref().map(|p| &p.attributes),
                    &dry.ignore_paths,
                ),
                _ => ObjectDiff::default(),
            };
            Planned {
                action: Some(r.action),
                status: r.status,
                diff,
            }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    for &i in &stack.order {
        let waits_for_dependency = planned[i].status.as_ref().is_some_and(|s| {
            s.is_error() && matches!(s.code, StatusCode::NotFound | StatusCode::KindNotInstalled)
        }) && stack.deps[i]
            .iter()
            .any(|&d| planned[d].action == Some(Action::Create));
        if waits_for_dependency {
            // Not dry-runnable before its dependency exists: the plan itself is the prediction.
            planned[i] = Planned {
                action: Some(Action::Create),
                status: None,
                diff: guest::diff::diff(
                    None,
                    Some(&stack.resources[i].attributes),
                    &dry.ignore_paths,
                ),
            };
        }
    }
    let deletes = state
        .resources
        .iter()
        .filter(|r| !stack.resources.iter().any(|i| i.id == r.id))
        .cloned()
        .collect();
    Plan { planned, deletes }
}

fn mark(action: Option<Action>) -> String {
    match action {
        Some(Action::Create) => paint(style::GREEN, "+ create    "),
        Some(Action::Update) => paint(style::YELLOW, "~ update    "),
        Some(Action::Replace) => paint(style::MAGENTA, "± replace   "),
        Some(Action::Delete) => paint(style::RED, "- delete    "),
        Some(Action::Unchanged) => paint(style::DIM, "= unchanged "),
        None => paint(style::RED, "! failed    "),
    }
}

/// Prints a unified diff, indented and colored (`---`/`+++` headers dropped).
pub fn print_diff(printer: &Printer, unified: &str) {
    for line in unified.lines() {
        if line.starts_with("--- ") || line.starts_with("+++ ") {
            continue;
        }
        let s = match line.as_bytes().first() {
            Some(b'+') => style::GREEN,
            Some(b'-') => style::RED,
            Some(b'@') => style::CYAN,
            _ => anstyle::Style::new(),
        };
        printer.out(format!("      {}", paint(s, line)));
    }
}

/// Prints the plan: one line per resource in dependency order, each with its
/// diff (a create's whole object, an update's changes, a delete's removal),
/// then a count.
pub fn print(printer: &Printer, stack: &Stack, plan: &Plan, heading: &str) {
    printer.out(paint(style::BOLD, heading));
    for &i in &stack.order {
        let p = &plan.planned[i];
        printer.out(format!("  {}{}", mark(p.action), stack.resources[i].id));
        if let Some(status) = &p.status {
            let text = format!("      {}: {}", status.reason, status.message);
            printer.out(if status.is_error() {
                paint(style::RED, text)
            } else {
                text
            });
        }
        print_diff(printer, &p.diff.unified);
    }
    for d in &plan.deletes {
        printer.out(format!("  {}{}", mark(Some(Action::Delete)), d.id));
        print_diff(
            printer,
            &guest::diff::diff(Some(&d.attributes), None, &[]).unified,
        );
    }
    let count = |a: Action| plan.planned.iter().filter(|p| p.action == Some(a)).count();
    let mut line = format!(
        "Plan: {} to create, {} to update, {} to replace, {} to delete, {} unchanged",
        count(Action::Create),
        count(Action::Update),
        count(Action::Replace),
        plan.deletes.len(),
        count(Action::Unchanged),
    );
    let failed = plan.planned.iter().filter(|p| p.action.is_none()).count();
    if failed > 0 {
        line.push_str(&format!(", {failed} failed"));
    }
    printer.out(format!("{line}."));
}
