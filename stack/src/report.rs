//! The typed, serializable results of a walk: one [`ResourceReport`] per
//! resource, gathered in a [`Report`] document whose schema is stable (fields
//! are only ever added; the README documents it).

use crate::wait::Wait;
use krt_guest::model::{Action, FieldChange, Health, ObjectDiff, Status, StatusCode};
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
    /// Deleted, but still there at the deadline: held by finalizers.
    Terminating,
    /// To be deleted, but already gone: nothing was deleted.
    Absent,
    /// To be deleted, but not the stack's (no mark, another stack's mark, or
    /// another UID than recorded): left alone and forgotten by the state.
    NotOurs,
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
            Outcome::Terminating => "terminating",
            Outcome::Absent => "absent",
            Outcome::NotOurs => "not ours",
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
    /// What was waited for after the write when it was not the health:
    /// `none` or `exists` (from `krt.dev/wait` or the stack's kinds to wait for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<Wait>,
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
            wait: None,
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
    /// The document of `command` on `stack`, which exits with `exit_code`.
    pub fn new(
        command: &'static str,
        stack: &str,
        exit_code: u8,
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
            exit_code,
            summary,
            resources,
        }
    }
}

/// How a set of results ended as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing failed or timed out.
    Succeeded,
    /// At least one resource failed.
    Failed,
    /// Nothing failed, but at least one resource timed out (did not become
    /// healthy, or was still terminating, in time).
    TimedOut,
    /// Nothing failed or timed out, but an object to delete was left alone
    /// because it is not the stack's.
    NotOwned,
}

impl Verdict {
    /// The verdict of `resources`: failed over timed out over not owned over
    /// succeeded.
    pub fn of(resources: &[ResourceReport]) -> Verdict {
        let any = |outcomes: &[Outcome]| resources.iter().any(|r| outcomes.contains(&r.result));
        if any(&[Outcome::Failed]) {
            Verdict::Failed
        } else if any(&[Outcome::TimedOut, Outcome::Terminating]) {
            Verdict::TimedOut
        } else if any(&[Outcome::NotOurs]) {
            Verdict::NotOwned
        } else {
            Verdict::Succeeded
        }
    }
}

/// How many of `resources` ended with `outcome`.
pub fn count(resources: &[ResourceReport], outcome: Outcome) -> usize {
    resources.iter().filter(|r| r.result == outcome).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_schema_is_stable() {
        let mut r = ResourceReport::new("v1:Namespace:a", Outcome::Created)
            .took(Duration::from_millis(1500));
        r.action = Some(Action::Create);
        r.health = Some(Health::new(
            krt_guest::model::HealthState::Current,
            "",
            "ready",
        ));
        let doc = serde_json::to_value(Report::new("apply", "dev", 0, vec![r])).unwrap();
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
}
