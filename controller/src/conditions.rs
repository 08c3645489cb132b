//! kstatus conditions of a Stack: `Ready` is always set; `Reconciling` and
//! `Stalled` are "abnormal-true" conditions, present only while they hold
//! (as Flux and kstatus do). A condition keeps its `lastTransitionTime` while
//! its status stays the same.

use crate::crd::Condition;

/// `Ready`: the Stack's resources are applied and healthy.
pub const READY: &str = "Ready";
/// `Reconciling`: the controller is working towards the spec.
pub const RECONCILING: &str = "Reconciling";
/// `Stalled`: the controller cannot make progress until the Stack (or the
/// controller's configuration) changes.
pub const STALLED: &str = "Stalled";

/// The reason of `Reconciling` after a failure that will be retried (as Flux says it).
pub const RETRYING: &str = "ProgressingWithRetry";

/// What the Stack's conditions should say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Applied and every resource healthy.
    Ready {
        /// Why (`ReconciliationSucceeded`).
        reason: &'static str,
        /// What was applied.
        message: String,
    },
    /// Work in progress: `Ready` Unknown and `Reconciling` True.
    Progressing {
        /// Why (`Progressing`, `Reconciling`).
        reason: &'static str,
        /// What is awaited.
        message: String,
    },
    /// A failure that a retry may fix: `Ready` False and `Reconciling` True
    /// (`ProgressingWithRetry`), so that kstatus, which reads only
    /// `Reconciling` and `Stalled`, sees the Stack in progress, not current.
    Failed {
        /// Why (`ApplyFailed`, `SourceNotFound`, ...).
        reason: &'static str,
        /// What failed.
        message: String,
    },
    /// Bad input: `Ready` False and `Stalled` True, nothing was changed.
    Stalled {
        /// Why (`InvalidManifests`, `PolicyDenied`, ...).
        reason: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
}

impl Verdict {
    /// The reason of the `Ready` condition.
    pub fn reason(&self) -> &'static str {
        match self {
            Verdict::Ready { reason, .. }
            | Verdict::Progressing { reason, .. }
            | Verdict::Failed { reason, .. }
            | Verdict::Stalled { reason, .. } => reason,
        }
    }

    /// The message of the `Ready` condition.
    pub fn message(&self) -> &str {
        match self {
            Verdict::Ready { message, .. }
            | Verdict::Progressing { message, .. }
            | Verdict::Failed { message, .. }
            | Verdict::Stalled { message, .. } => message,
        }
    }
}

/// The conditions for `verdict` at `generation`, keeping the transition
/// times of `previous` conditions whose status did not change.
pub fn conditions(previous: &[Condition], verdict: &Verdict, generation: i64) -> Vec<Condition> {
    let now = now();
    let make = |type_: &str, status: &str, reason: &str, message: &str| {
        let time = previous
            .iter()
            .find(|c| c.type_ == type_ && c.status == status)
            .map_or_else(|| now.clone(), |c| c.last_transition_time.clone());
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: time,
            observed_generation: Some(generation),
        }
    };
    let (reason, message) = (verdict.reason(), verdict.message());
    match verdict {
        Verdict::Ready { .. } => vec![make(READY, "True", reason, message)],
        Verdict::Progressing { .. } => vec![
            make(READY, "Unknown", reason, message),
            make(RECONCILING, "True", reason, message),
        ],
        Verdict::Failed { .. } => vec![
            make(READY, "False", reason, message),
            make(RECONCILING, "True", RETRYING, message),
        ],
        Verdict::Stalled { .. } => vec![
            make(READY, "False", reason, message),
            make(STALLED, "True", reason, message),
        ],
    }
}

/// Now, as RFC 3339 with seconds (the resolution of `metav1.Time`).
fn now() -> String {
    let now = jiff::Timestamp::now();
    now.round(jiff::Unit::Second).unwrap_or(now).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abnormal_conditions_are_present_only_while_they_hold() {
        let stalled = Verdict::Stalled {
            reason: "PolicyDenied",
            message: "no".into(),
        };
        let c = conditions(&[], &stalled, 3);
        let types: Vec<(&str, &str)> = c
            .iter()
            .map(|c| (c.type_.as_str(), c.status.as_str()))
            .collect();
        assert_eq!(types, [("Ready", "False"), ("Stalled", "True")]);
        assert!(c.iter().all(|c| c.observed_generation == Some(3)));
        let failed = Verdict::Failed {
            reason: "ApplyFailed",
            message: "the server said no".into(),
        };
        let c = conditions(&c, &failed, 3);
        let types: Vec<(&str, &str, &str)> = c
            .iter()
            .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_str()))
            .collect();
        assert_eq!(
            types,
            [
                ("Ready", "False", "ApplyFailed"),
                ("Reconciling", "True", "ProgressingWithRetry")
            ],
            "kstatus sees a retried failure as in progress"
        );
        let ready = Verdict::Ready {
            reason: "ReconciliationSucceeded",
            message: "ok".into(),
        };
        let c = conditions(&c, &ready, 4);
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].type_.as_str(), c[0].status.as_str()),
            ("Ready", "True")
        );
    }

    #[test]
    fn progress_is_unknown_and_transition_times_stay_while_the_status_does() {
        let progressing = Verdict::Progressing {
            reason: "Reconciling",
            message: "applying".into(),
        };
        let first = conditions(&[], &progressing, 1);
        assert_eq!(first[0].status, "Unknown");
        let mut old = first.clone();
        old[1].last_transition_time = "2020-01-01T00:00:00Z".into();
        let again = conditions(&old, &progressing, 2);
        assert_eq!(again[0].status, "Unknown");
        assert_eq!(again[1].last_transition_time, "2020-01-01T00:00:00Z");
        assert_eq!(again[1].observed_generation, Some(2));
    }
}
