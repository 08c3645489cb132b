//! The results of a command: one [`ResourceReport`] per resource, printed as a
//! table for people or as the `-o json|yaml` [`Report`] document, whose schema
//! is stable (fields are only ever added) and documented in the README.

use super::ExitCode;
use super::output::{Printer, paint, style};
use guest::model::{Action, FieldChange, Health, HealthState, ObjectDiff, Status, StatusCode};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The `-o json|yaml` document of every command that works on resources.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always `krt.dev/v1alpha1`.
    pub api_version: &'static str,
    /// Always `Report`.
    pub kind: &'static str,
    /// The subcommand: `preview`, `apply`, `destroy`, `read`, `drift`, `watch`, `import`.
    pub command: &'static str,
    /// The stack.
    pub stack: String,
    /// The process exit code.
    pub exit_code: u8,
    /// How many resources ended with each result.
    pub summary: BTreeMap<String, usize>,
    /// Every resource, in dependency order.
    pub resources: Vec<ResourceReport>,
}

/// How a resource ended (`result` in the document).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Previewed only.
    Planned,
    /// Created.
    Created,
    /// Updated in place.
    Updated,
    /// Deleted and recreated.
    Replaced,
    /// Deleted.
    Deleted,
    /// Nothing to do.
    Unchanged,
    /// The write or the health wait failed.
    Failed,
    /// Did not become healthy within `--timeout`.
    TimedOut,
    /// Not attempted: a dependency failed.
    Skipped,
    /// Healthy (`watch`), or present (`read`).
    Current,
    /// Absent from the cluster.
    Missing,
    /// Live object matches the state (`drift`).
    InSync,
    /// Live object differs from the state (`drift`).
    Drifted,
    /// Adopted into the state (`import`).
    Imported,
}

impl Outcome {
    /// The word shown to people.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Planned => "planned",
            Outcome::Created => "created",
            Outcome::Updated => "updated",
            Outcome::Replaced => "replaced",
            Outcome::Deleted => "deleted",
            Outcome::Unchanged => "unchanged",
            Outcome::Failed => "failed",
            Outcome::TimedOut => "timed out",
            Outcome::Skipped => "skipped",
            Outcome::Current => "current",
            Outcome::Missing => "missing",
            Outcome::InSync => "in sync",
            Outcome::Drifted => "drifted",
            Outcome::Imported => "imported",
        }
    }

    /// The word in its color.
    pub fn painted(self) -> String {
        let s = match self {
            Outcome::Created | Outcome::Current | Outcome::InSync | Outcome::Imported => {
                style::GREEN
            }
            Outcome::Updated | Outcome::Drifted | Outcome::Planned => style::YELLOW,
            Outcome::Replaced => style::MAGENTA,
            Outcome::Deleted | Outcome::Failed | Outcome::TimedOut | Outcome::Missing => style::RED,
            Outcome::Unchanged | Outcome::Skipped => style::DIM,
        };
        paint(s, format!("{:<10}", self.word()))
    }

    /// The outcome of a successful write with this action.
    pub fn of_action(action: Action) -> Outcome {
        match action {
            Action::Create => Outcome::Created,
            Action::Update => Outcome::Updated,
            Action::Replace => Outcome::Replaced,
            Action::Delete => Outcome::Deleted,
            Action::Unchanged => Outcome::Unchanged,
        }
    }
}

/// A failure, as in the runtime's status.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorReport {
    /// The status code (`timeout`, `not-found`, `invalid`, ...).
    pub code: StatusCode,
    /// CamelCase reason (`ProgressDeadlineExceeded`, `WatchTimeout`, ...).
    pub reason: String,
    /// The message.
    pub message: String,
}

impl From<&Status> for ErrorReport {
    fn from(s: &Status) -> Self {
        ErrorReport {
            code: s.code,
            reason: s.reason.clone(),
            message: s.message.clone(),
        }
    }
}

/// One changed field.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeReport {
    /// Dotted path, `spec.template.spec.containers[name=web].image`.
    pub path: String,
    /// The old value as JSON text; absent when the field is added.
    pub before: Option<String>,
    /// The new value as JSON text; absent when the field is removed.
    pub after: Option<String>,
}

/// A diff of normalized objects (Secret values masked).
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    /// Changed fields in path order.
    pub changes: Vec<ChangeReport>,
    /// Unified diff of the objects as YAML.
    pub unified: String,
}

impl From<&ObjectDiff> for DiffReport {
    fn from(d: &ObjectDiff) -> Self {
        DiffReport {
            changes: d
                .changes
                .iter()
                .map(
                    |FieldChange {
                         path,
                         before,
                         after,
                     }| ChangeReport {
                        path: path.clone(),
                        before: before.clone(),
                        after: after.clone(),
                    },
                )
                .collect(),
            unified: d.unified.clone(),
        }
    }
}

/// One resource of a [`Report`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceReport {
    /// `apiVersion:kind[:namespace]:name`.
    pub id: String,
    /// The planned action: `create`, `update`, `replace`, `delete`, `unchanged`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// How it ended.
    pub result: Outcome,
    /// The last observed health.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// Time spent on it, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorReport>,
    /// For `skipped`: the failed resource it waited for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_because: Option<String>,
    /// Live vs planned (preview, apply) or state vs live (drift, read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffReport>,
    /// The live object, normalized (`read`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
}

impl ResourceReport {
    /// A report with only an ID and a result.
    pub fn new(id: impl Into<String>, result: Outcome) -> Self {
        ResourceReport {
            id: id.into(),
            action: None,
            result,
            health: None,
            duration_ms: None,
            error: None,
            skipped_because: None,
            diff: None,
            object: None,
        }
    }

    /// Sets the duration.
    pub fn took(mut self, d: Duration) -> Self {
        self.duration_ms = Some(d.as_millis() as u64);
        self
    }
}

impl Report {
    /// The document of `command` on `stack`.
    pub fn new(
        command: &'static str,
        stack: &str,
        exit: ExitCode,
        resources: Vec<ResourceReport>,
    ) -> Self {
        let mut summary = BTreeMap::new();
        for r in &resources {
            *summary
                .entry(r.result.word().replace(' ', "-"))
                .or_default() += 1;
        }
        Report {
            api_version: "krt.dev/v1alpha1",
            kind: "Report",
            command,
            stack: stack.to_owned(),
            exit_code: exit.code(),
            summary,
            resources,
        }
    }
}

/// The exit code of a set of results: 1 for any failure, else 3 for any
/// timeout, else 0.
pub fn exit_of(resources: &[ResourceReport]) -> ExitCode {
    if resources.iter().any(|r| r.result == Outcome::Failed) {
        ExitCode::Failure
    } else if resources.iter().any(|r| r.result == Outcome::TimedOut) {
        ExitCode::Timeout
    } else {
        ExitCode::Success
    }
}

/// A health state as a short word.
pub fn health_word(h: &Health) -> &'static str {
    match h.state {
        HealthState::NotFound => "NotFound",
        HealthState::Terminating => "Terminating",
        HealthState::InProgress => "InProgress",
        HealthState::Current => "Current",
        HealthState::Failed => "Failed",
        HealthState::Unknown => "Unknown",
    }
}

/// A duration as `0.4s`, `12s` or `2m05s`.
pub fn seconds(ms: u64) -> String {
    match ms {
        0..10_000 => format!("{:.1}s", ms as f64 / 1000.0),
        10_000..120_000 => format!("{}s", ms / 1000),
        _ => format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60),
    }
}

/// The summary table: every resource with its action, result, health and duration.
pub fn print_table(printer: &Printer, resources: &[ResourceReport]) {
    let width = resources
        .iter()
        .map(|r| r.id.len())
        .max()
        .unwrap_or(0)
        .max(8);
    printer.out(paint(
        style::BOLD,
        format!(
            "  {:<width$}  {:<10} {:<10} {:<11} {:>8}",
            "RESOURCE", "ACTION", "RESULT", "HEALTH", "TIME"
        ),
    ));
    for r in resources {
        let action = r.action.map_or("-", action_word);
        let health = r.health.as_ref().map_or("-", health_word);
        let time = r.duration_ms.map_or_else(|| "-".to_owned(), seconds);
        printer.out(format!(
            "  {:<width$}  {:<10} {} {:<11} {:>8}",
            r.id,
            action,
            r.result.painted(),
            health,
            time
        ));
    }
}

/// An action as a word.
pub fn action_word(a: Action) -> &'static str {
    match a {
        Action::Create => "create",
        Action::Update => "update",
        Action::Replace => "replace",
        Action::Delete => "delete",
        Action::Unchanged => "unchanged",
    }
}

/// The one-line count of results, `4 created, 1 failed, 2 skipped`, in a fixed order.
pub fn counts(resources: &[ResourceReport], order: &[Outcome]) -> String {
    order
        .iter()
        .map(|o| {
            let n = resources.iter().filter(|r| r.result == *o).count();
            format!("{n} {}", o.word())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_schema_is_stable() {
        let mut r = ResourceReport::new("v1:Namespace:a", Outcome::Created)
            .took(Duration::from_millis(1500));
        r.action = Some(Action::Create);
        r.health = Some(Health::new(HealthState::Current, "", "ready"));
        let doc =
            serde_json::to_value(Report::new("apply", "dev", ExitCode::Success, vec![r])).unwrap();
        assert_eq!(
            doc,
            serde_json::json!({
                "apiVersion": "krt.dev/v1alpha1", "kind": "Report", "command": "apply", "stack": "dev",
                "exitCode": 0, "summary": {"created": 1},
                "resources": [{"id": "v1:Namespace:a", "action": "create", "result": "created",
                    "health": {"state": "current", "reason": "", "message": "ready"}, "durationMs": 1500}]
            })
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(420), "0.4s");
        assert_eq!(seconds(12_345), "12s");
        assert_eq!(seconds(125_000), "2m05s");
    }
}
