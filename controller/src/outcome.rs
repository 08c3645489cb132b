//! What one apply of a Stack amounts to: the verdict of its conditions, the
//! health of each resource, the writes it made, and the note of its Event.

use crate::conditions::Verdict;
use crate::crd::ResourceHealth;
use krt_stack::model::{Health, HealthState, StatusCode};
use krt_stack::plan::Plan;
use krt_stack::{Outcome, ResourceReport};

/// Most resources a message names before it says "and N more".
const NAMED: usize = 5;

/// The writes of an apply, by action.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes {
    /// IDs created.
    pub created: Vec<String>,
    /// IDs updated in place.
    pub updated: Vec<String>,
    /// IDs deleted and recreated.
    pub replaced: Vec<String>,
    /// IDs deleted (pruned).
    pub deleted: Vec<String>,
}

impl Writes {
    /// The writes among `reports`.
    pub fn of(reports: &[ResourceReport]) -> Writes {
        let mut w = Writes::default();
        for r in reports {
            let list = match r.result {
                Outcome::Created => &mut w.created,
                Outcome::Updated => &mut w.updated,
                Outcome::Replaced => &mut w.replaced,
                Outcome::Deleted => &mut w.deleted,
                _ => continue,
            };
            list.push(r.id.clone());
        }
        w
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty()
            && self.updated.is_empty()
            && self.replaced.is_empty()
            && self.deleted.is_empty()
    }

    /// Each action with its IDs, for counting.
    pub fn by_action(&self) -> [(&'static str, &[String]); 4] {
        [
            ("created", &self.created),
            ("updated", &self.updated),
            ("replaced", &self.replaced),
            ("deleted", &self.deleted),
        ]
    }

    /// `2 created (a, b), 1 deleted (c)`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .by_action()
            .iter()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(action, ids)| format!("{} {action} ({})", ids.len(), names(ids)))
            .collect();
        parts.join(", ")
    }
}

/// `a, b, c and 2 more`.
pub fn names(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(NAMED).map(String::as_str).collect();
    match ids.len().saturating_sub(NAMED) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The kstatus word of a health state.
pub fn health_word(state: HealthState) -> &'static str {
    match state {
        HealthState::Current => "Current",
        HealthState::InProgress => "InProgress",
        HealthState::Failed => "Failed",
        HealthState::NotFound => "NotFound",
        HealthState::Terminating => "Terminating",
        HealthState::Unknown => "Unknown",
    }
}

/// The health entry of one resource.
pub fn resource_health(id: &str, health: &Health) -> ResourceHealth {
    ResourceHealth {
        id: id.to_owned(),
        health: health_word(health.state).into(),
        message: (health.state != HealthState::Current && !health.message.is_empty())
            .then(|| health.message.clone()),
    }
}

/// One failed resource for a message, saying which line of defence refused
/// it: krt's policy (its message names the grant that would allow it), or
/// the API server's authorization (its Forbidden text, naming the user).
fn failure(id: &str, reason: &str, message: &str) -> String {
    match reason {
        "Forbidden" => format!("{id}: Forbidden by the API server: {message}"),
        _ => format!("{id}: {reason}: {message}"),
    }
}

/// The verdict of a plan whose dry runs failed (nothing was written): Stalled
/// when every failure is one a retry cannot fix (an invalid object, a
/// refusal), else Failed. The reason is `Forbidden` or `PolicyDenied` when
/// every failure is that refusal, else `DryRunFailed`.
pub fn plan_failed(plan: &Plan, stack: &krt_stack::Stack) -> Verdict {
    let failures: Vec<(String, &str, bool)> = stack
        .order
        .iter()
        .filter_map(|&i| {
            let status = plan.planned[i].status.as_ref().filter(|s| s.is_error())?;
            let fatal = !status.retryable && status.code != StatusCode::Unreachable;
            let id = &stack.resources[i].id;
            Some((
                failure(id, &status.reason, &status.message),
                status.reason.as_str(),
                fatal,
            ))
        })
        .collect();
    let message = format!(
        "the dry run failed, nothing was applied: {}",
        failures
            .iter()
            .map(|(m, _, _)| m.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    );
    let reason = ["Forbidden", "PolicyDenied"]
        .into_iter()
        .find(|refusal| failures.iter().all(|(_, r, _)| r == refusal))
        .unwrap_or("DryRunFailed");
    if failures.iter().all(|(_, _, fatal)| *fatal) {
        Verdict::Stalled { reason, message }
    } else {
        Verdict::Failed { reason, message }
    }
}

/// The verdict of an apply: failed writes, then resources that did not
/// become healthy, then Ready.
pub fn applied(
    reports: &[ResourceReport],
    health: &[ResourceHealth],
    revision: &str,
    writes: &Writes,
) -> Verdict {
    let failed: Vec<String> = reports
        .iter()
        .filter(|r| matches!(r.result, Outcome::Failed | Outcome::Skipped))
        .map(|r| match (&r.error, &r.skipped_because) {
            (Some(e), _) => failure(&r.id, &e.reason, &e.message),
            (None, Some(cause)) => format!("{}: skipped, as {cause} failed", r.id),
            (None, None) => r.id.clone(),
        })
        .collect();
    if !failed.is_empty() {
        return Verdict::Failed {
            reason: "ApplyFailed",
            message: failed.join("; "),
        };
    }
    let timed_out = reports.iter().filter(|r| r.result == Outcome::TimedOut);
    if let Some(which) = describe_health(health, timed_out.map(|r| r.id.as_str())) {
        return Verdict::Failed {
            reason: "HealthCheckFailed",
            message: format!("not healthy within the timeout: {which}"),
        };
    }
    let waiting = health.iter().filter(|h| h.health != "Current");
    if let Some(which) = describe_health(health, waiting.map(|h| h.id.as_str())) {
        return Verdict::Progressing {
            reason: "Progressing",
            message: format!("applied revision {revision}; waiting for {which}"),
        };
    }
    let changes = if writes.is_empty() {
        String::new()
    } else {
        format!(" ({})", writes.describe())
    };
    Verdict::Ready {
        reason: "ReconciliationSucceeded",
        message: format!(
            "applied revision {revision}: {} resource(s), all Current{changes}",
            health.len()
        ),
    }
}

/// `id (InProgress: message), ...` for `ids`; `None` when there are none.
fn describe_health<'a>(
    health: &[ResourceHealth],
    ids: impl Iterator<Item = &'a str>,
) -> Option<String> {
    let ids: Vec<&str> = ids.collect();
    if ids.is_empty() {
        return None;
    }
    let shown: Vec<String> = ids
        .iter()
        .take(NAMED)
        .map(|id| match health.iter().find(|h| h.id == **id) {
            Some(h) => match &h.message {
                Some(m) => format!("{id} ({}: {m})", h.health),
                None => format!("{id} ({})", h.health),
            },
            None => (*id).to_owned(),
        })
        .collect();
    Some(match ids.len().saturating_sub(NAMED) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use krt_stack::report::ErrorReport;

    fn report(id: &str, result: Outcome) -> ResourceReport {
        ResourceReport::new(id, result)
    }

    fn healthy(id: &str) -> ResourceHealth {
        resource_health(id, &Health::new(HealthState::Current, "", ""))
    }

    #[test]
    fn failures_come_before_progress_and_progress_before_ready() {
        let mut failed = report("v1:ConfigMap:a:x", Outcome::Failed);
        failed.error = Some(ErrorReport {
            code: StatusCode::Invalid,
            reason: "Invalid".into(),
            message: "bad".into(),
        });
        let reports = vec![failed, report("v1:ConfigMap:a:y", Outcome::Created)];
        let health = vec![healthy("v1:ConfigMap:a:y")];
        let v = applied(&reports, &health, "sha256:1", &Writes::of(&reports));
        assert_eq!(v.reason(), "ApplyFailed");
        assert_eq!(v.message(), "v1:ConfigMap:a:x: Invalid: bad");

        let waiting = resource_health(
            "apps/v1:Deployment:a:web",
            &Health::new(HealthState::InProgress, "LessAvailable", "Available: 1/3"),
        );
        let reports = vec![report("apps/v1:Deployment:a:web", Outcome::Updated)];
        let v = applied(&reports, &[waiting], "sha256:1", &Writes::of(&reports));
        assert_eq!(v.reason(), "Progressing");
        assert!(
            v.message()
                .ends_with("waiting for apps/v1:Deployment:a:web (InProgress: Available: 1/3)"),
            "{}",
            v.message()
        );

        let reports = vec![
            report("v1:ConfigMap:a:y", Outcome::Created),
            report("v1:ConfigMap:a:z", Outcome::Deleted),
        ];
        let v = applied(
            &reports,
            &[healthy("v1:ConfigMap:a:y")],
            "sha256:1",
            &Writes::of(&reports),
        );
        assert_eq!(
            v,
            Verdict::Ready {
                reason: "ReconciliationSucceeded",
                message: "applied revision sha256:1: 1 resource(s), all Current (1 created \
                          (v1:ConfigMap:a:y), 1 deleted (v1:ConfigMap:a:z))"
                    .into()
            }
        );
    }

    #[test]
    fn long_lists_are_cut_short() {
        let ids: Vec<String> = (0..8).map(|i| format!("id{i}")).collect();
        assert_eq!(names(&ids), "id0, id1, id2, id3, id4 and 3 more");
    }
}
