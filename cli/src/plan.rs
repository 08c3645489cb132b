//! Printing a plan: one line per resource in dependency order, each with its
//! diff (a create's whole object, an update's changes, a delete's removal),
//! then a count.

use crate::output::{Printer, paint, style};
use krt_guest::model::Action;
use krt_stack::{Plan, Stack};

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

/// Prints the plan under `heading`.
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
    for (d, diff) in plan.deletes.iter().zip(&plan.delete_diffs) {
        printer.out(format!("  {}{}", mark(Some(Action::Delete)), d.id));
        print_diff(printer, &diff.unified);
    }
    let mut line = format!(
        "Plan: {} to create, {} to update, {} to replace, {} to delete, {} unchanged",
        plan.count(Action::Create),
        plan.count(Action::Update),
        plan.count(Action::Replace),
        plan.deletes.len(),
        plan.count(Action::Unchanged),
    );
    let failed = plan.planned.iter().filter(|p| p.action.is_none()).count();
    if failed > 0 {
        line.push_str(&format!(", {failed} failed"));
    }
    printer.out(format!("{line}."));
}
