//! How results look to people: colored outcome words, the summary table,
//! durations and the one-line counts. The results themselves are
//! krt-stack's typed [`ResourceReport`]s.

use crate::output::{Printer, paint, style};
use krt_guest::model::{Action, Health, HealthState};
use krt_stack::report::count;
use krt_stack::{Outcome, ResourceReport, Wait};

/// The word of `outcome` in its color, padded to a column.
pub fn painted(outcome: Outcome) -> String {
    let s = match outcome {
        Outcome::Created | Outcome::Current | Outcome::InSync | Outcome::Imported => style::GREEN,
        Outcome::Updated | Outcome::Drifted | Outcome::Planned | Outcome::NotOurs => style::YELLOW,
        Outcome::Replaced => style::MAGENTA,
        Outcome::Deleted
        | Outcome::Terminating
        | Outcome::Failed
        | Outcome::TimedOut
        | Outcome::Missing => style::RED,
        Outcome::Unchanged | Outcome::Skipped | Outcome::Absent => style::DIM,
    };
    paint(s, format!("{:<10}", outcome.word()))
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

/// The HEALTH cell of a resource: its last health, else what was waited for
/// instead (`exists`, `not waited`), else `-`.
pub fn health_cell(r: &ResourceReport) -> &'static str {
    match (&r.health, r.wait) {
        (Some(h), _) => health_word(h),
        (None, Some(Wait::None)) => "not waited",
        (None, Some(Wait::Exists)) => "exists",
        _ => "-",
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
        let health = health_cell(r);
        let time = r.duration_ms.map_or_else(|| "-".to_owned(), seconds);
        printer.out(format!(
            "  {:<width$}  {:<10} {} {:<11} {:>8}",
            r.id,
            action,
            painted(r.result),
            health,
            time
        ));
    }
}

/// The one-line count of results, `4 created, 1 failed, 2 skipped`, in a fixed order.
pub fn counts(resources: &[ResourceReport], order: &[Outcome]) -> String {
    order
        .iter()
        .map(|&o| format!("{} {}", count(resources, o), o.word()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Inserts each of `rare` (outcomes only some resources can end in) into
/// `order` at `at`, when one of `resources` ended so.
pub fn name_when_seen(
    order: &mut Vec<Outcome>,
    at: usize,
    resources: &[ResourceReport],
    rare: &[Outcome],
) {
    for &outcome in rare {
        if count(resources, outcome) > 0 {
            order.insert(at, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        for (ms, text) in [(420, "0.4s"), (12_345, "12s"), (125_000, "2m05s")] {
            assert_eq!(seconds(ms), text);
        }
    }
}
