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
/// Namespace, the CRD of its kind) is predicted as a create; any other failed
/// dry run fails the plan.
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
        let resource = &stack.resources[i];
        let created = |d: usize| planned[d].action == Some(Action::Create);
        let waits_for_namespace = || {
            stack.deps[i].iter().any(|&d| {
                created(d)
                    && creates_namespace_of(
                        &stack.resources[d],
                        resource,
                        dry.default_namespace.as_deref(),
                    )
            })
        };
        let waits_for_crd = || {
            stack.deps[i]
                .iter()
                .any(|&d| created(d) && defines_kind_of(&stack.resources[d], resource))
        };
        let failure = planned[i].status.as_ref().filter(|s| s.is_error());
        let waits = match failure.map(|s| s.code) {
            Some(StatusCode::NotFound) if waits_for_namespace() => {
                // The server cannot dry-run it yet: validate it in a namespace that exists.
                match stand_in_failure(runtime, resource, dry).await {
                    Some(status) => {
                        planned[i].status = Some(status);
                        false
                    }
                    None => true,
                }
            }
            Some(StatusCode::KindNotInstalled) => waits_for_crd(),
            _ => false,
        };
        if waits {
            // Not dry-runnable before its dependency exists: the plan itself is the prediction.
            planned[i] = Planned {
                action: Some(Action::Create),
                status: None,
                diff: guest::diff::diff(None, Some(&resource.attributes), &dry.ignore_paths),
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

/// The namespace a resource whose Namespace is still to be created is dry-run in,
/// to validate it before anything is written.
const STAND_IN_NAMESPACE: &str = "default";

/// Dry-runs `resource` as if it were in [`STAND_IN_NAMESPACE`]: the failure, when
/// it is the object's own fault (invalid, illegal, too large) and so would fail
/// in its own namespace too.
async fn stand_in_failure(
    runtime: &ComponentRuntime,
    resource: &Resource,
    dry: &ApplyOptions,
) -> Option<Status> {
    let mut id = guest::id::ResourceId::parse(&resource.id).ok()?;
    let namespace = id.namespace.replace(STAND_IN_NAMESPACE.to_owned());
    let namespace = namespace.or_else(|| {
        let ns = &resource.attributes["metadata"]["namespace"];
        ns.as_str().map(str::to_owned)
    });
    let namespace = namespace.or_else(|| dry.default_namespace.clone());
    let mut moved = resource.clone();
    moved.id = id.to_string();
    moved.attributes["metadata"]["namespace"] = STAND_IN_NAMESPACE.into();
    let status = runtime.apply(None, Some(&moved), dry).await.status?;
    let own_fault = matches!(
        status.code,
        StatusCode::Invalid
            | StatusCode::IllegalManifest
            | StatusCode::InvalidArgument
            | StatusCode::BadRequest
            | StatusCode::TooLarge
    );
    own_fault.then(|| Status {
        message: format!(
            "{} (dry run in namespace '{STAND_IN_NAMESPACE}', as '{}' is still to be created)",
            status.message,
            namespace.unwrap_or_default()
        ),
        ..status
    })
}

/// Whether `dependency` is the Namespace `resource` is in (named by its ID, its
/// manifest, or else `default_namespace`).
fn creates_namespace_of(
    dependency: &Resource,
    resource: &Resource,
    default_namespace: Option<&str>,
) -> bool {
    let Ok(manifest) = guest::target::Manifest::from_resource(resource) else {
        return false;
    };
    let a = &dependency.attributes;
    let namespace = manifest.namespace.as_deref().or(default_namespace);
    a["apiVersion"] == "v1"
        && a["kind"] == "Namespace"
        && namespace.is_some_and(|ns| a["metadata"]["name"] == ns)
}

/// Whether `dependency` is the CustomResourceDefinition of `resource`'s kind.
fn defines_kind_of(dependency: &Resource, resource: &Resource) -> bool {
    let (a, r) = (&dependency.attributes, &resource.attributes);
    let group = r["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .map(|(group, _)| group);
    a["kind"] == "CustomResourceDefinition"
        && a["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
        && group.is_some_and(|g| a["spec"]["group"] == g)
        && a["spec"]["names"]["kind"] == r["kind"]
}

/// Prints each failed dry run on stderr (`error: ID: Reason: message`), so the
/// cause is there even when the preview went to stdout.
pub fn print_failures(printer: &Printer, stack: &Stack, plan: &Plan) {
    for &i in &stack.order {
        if let Some(status) = plan.planned[i].status.as_ref().filter(|s| s.is_error()) {
            printer.error(format!(
                "{}: {}: {}",
                stack.resources[i].id, status.reason, status.message
            ));
        }
    }
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
