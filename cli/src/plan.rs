//! Printing a plan: one line per resource in dependency order, each with its
//! diff (a create's whole object, an update's changes, a delete's removal),
//! then a count.

use crate::output::{Printer, paint, style};
use krt_guest::model::Action;
use krt_stack::{Ownership, Plan, Stack};

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

/// Prints the plan under `heading`; `force_unowned` says whether deletes of
/// objects krt does not own go ahead (`--force-delete-unowned`).
pub fn print(printer: &Printer, stack: &Stack, plan: &Plan, heading: &str, force_unowned: bool) {
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
    let mut left = Counts::default();
    for ((d, diff), ownership) in plan
        .deletes
        .iter()
        .zip(&plan.delete_diffs)
        .zip(&plan.ownership)
    {
        print_delete(
            printer,
            &d.id,
            &diff.unified,
            ownership,
            force_unowned,
            &mut left,
        );
    }
    let mut line = format!(
        "Plan: {} to create, {} to update, {} to replace, {} to delete, {} unchanged",
        plan.count(Action::Create),
        plan.count(Action::Update),
        plan.count(Action::Replace),
        plan.deletes.len() - left.not_ours - left.absent,
        plan.count(Action::Unchanged),
    );
    left.append_to(&mut line, force_unowned);
    let failed = plan.planned.iter().filter(|p| p.action.is_none()).count();
    if failed > 0 {
        line.push_str(&format!(", {failed} failed"));
    }
    printer.out(format!("{line}."));
}

/// Deletes that will not happen, counted for the plan's last line.
#[derive(Debug, Default)]
pub struct Counts {
    /// Left alone: not ours.
    pub not_ours: usize,
    /// Already gone.
    pub absent: usize,
}

impl Counts {
    /// Adds `, N not ours (left alone), N already gone` to `line` when any.
    pub fn append_to(&self, line: &mut String, force_unowned: bool) {
        if self.not_ours > 0 {
            line.push_str(&format!(", {} not ours (left alone)", self.not_ours));
        } else if force_unowned {
            line.push_str(", no object that is not ours");
        }
        if self.absent > 0 {
            line.push_str(&format!(", {} already gone", self.absent));
        }
    }
}

/// Prints one planned delete as its ownership check found it: a delete (with
/// its removal diff), an object already gone, or one that is not ours and is
/// left alone (unless `force_unowned`), with the reason.
pub fn print_delete(
    printer: &Printer,
    id: &str,
    unified: &str,
    ownership: &Ownership,
    force_unowned: bool,
    counts: &mut Counts,
) {
    match ownership {
        Ownership::Absent => {
            counts.absent += 1;
            printer.out(format!("  {}{id}", paint(style::DIM, "= absent    ")));
            printer.out("      already gone: nothing to delete; the state forgets it");
        }
        Ownership::NotOurs(why, _) if !force_unowned => {
            counts.not_ours += 1;
            printer.out(format!("  {}{id}", paint(style::YELLOW, "! not ours  ")));
            printer.out(paint(
                style::YELLOW,
                format!(
                    "      left alone: {why}; the state forgets it (--force-delete-unowned would delete it)"
                ),
            ));
        }
        Ownership::NotOurs(why, _) => {
            printer.out(format!("  {}{id}", mark(Some(Action::Delete))));
            printer.out(paint(
                style::RED,
                format!("      not ours ({why}): deleted because of --force-delete-unowned"),
            ));
            print_diff(printer, unified);
        }
        Ownership::Unknown(status) => {
            printer.out(format!("  {}{id}", mark(Some(Action::Delete))));
            printer.out(paint(
                style::RED,
                format!(
                    "      {}: {} (whether krt owns it is checked again before the delete)",
                    status.reason, status.message
                ),
            ));
        }
        Ownership::Owned(_) => {
            printer.out(format!("  {}{id}", mark(Some(Action::Delete))));
            print_diff(printer, unified);
        }
    }
}
