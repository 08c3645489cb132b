//! Progress of a run over many resources. On a terminal, a live multi-line
//! display (one line per resource: pending, a spinner while it works with the
//! runtime's latest message, then its final result, health and time); elsewhere,
//! plain lines as things happen. It is the [`EventSink`] of both the walk
//! and the runtime, so the guest's watch messages show up on the resource's
//! line.

use crate::output::{Printer, paint, style};
use crate::table::{health_cell, painted, print_table, seconds};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use krt_guest::model::HealthState;
use krt_stack::{Event, EventSink, Outcome, Phase, ResourceReport};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One resource's line.
struct Slot {
    bar: Option<ProgressBar>,
    started: Option<Instant>,
    phase: Option<Phase>,
    last: String,
}

/// The display of one run.
pub struct Progress {
    live: Option<MultiProgress>,
    to_stdout: bool,
    width: usize,
    slots: Mutex<HashMap<String, Slot>>,
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("  {spinner:.cyan} {prefix} {msg}")
        .expect("a valid template")
        .tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ")
}

fn plain_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix} {msg}").expect("a valid template")
}

impl Progress {
    /// A display of `ids`, live when the human output is a terminal.
    pub fn new(printer: &Printer, ids: &[&str]) -> Progress {
        let width = ids.iter().map(|id| id.len()).max().unwrap_or(0);
        let live = printer.human_is_terminal().then(|| {
            let target = if printer.is_table() {
                ProgressDrawTarget::stdout()
            } else {
                ProgressDrawTarget::stderr()
            };
            MultiProgress::with_draw_target(target)
        });
        let slots = ids
            .iter()
            .map(|id| {
                let bar = live.as_ref().map(|m| {
                    let bar = m.add(ProgressBar::new_spinner().with_style(plain_style()));
                    bar.set_prefix(format!("{} {:<width$}", paint(style::DIM, "·"), id));
                    bar.set_message(paint(style::DIM, "pending"));
                    bar
                });
                let slot = Slot {
                    bar,
                    started: None,
                    phase: None,
                    last: String::new(),
                };
                (id.to_string(), slot)
            })
            .collect();
        Progress {
            live,
            to_stdout: printer.is_table(),
            width,
            slots: Mutex::new(slots),
        }
    }

    fn line(&self, text: String) {
        use std::io::Write;
        if self.to_stdout {
            let _ = writeln!(crate::output::stdout(), "{text}");
        } else {
            let _ = writeln!(crate::output::stderr(), "{text}");
        }
    }

    /// `id` enters `phase`.
    fn start(&self, id: &str, phase: Phase) {
        let mut slots = self.slots.lock().expect("progress lock");
        let Some(slot) = slots.get_mut(id) else {
            return;
        };
        slot.started.get_or_insert_with(Instant::now);
        slot.phase = Some(phase);
        if let Some(bar) = &slot.bar {
            bar.set_style(spinner_style());
            bar.set_prefix(format!("{:<w$}", id, w = self.width));
            bar.set_message(paint(style::YELLOW, phase.word()));
            bar.enable_steady_tick(Duration::from_millis(100));
        }
    }

    /// The write of `id` finished with `outcome`; what follows is the health wait.
    fn written(&self, id: &str, outcome: Outcome) {
        if self.live.is_none() {
            self.line(format!("  {} {id}", painted(outcome)));
        }
    }

    /// A message about `id` (the runtime's progress while it waits).
    fn message(&self, id: &str, text: &str) {
        let mut slots = self.slots.lock().expect("progress lock");
        let Some(slot) = slots.get_mut(id) else {
            return;
        };
        if slot.started.is_none() || slot.last == text {
            return;
        }
        slot.last = text.to_owned();
        match &slot.bar {
            Some(bar) => bar.set_message(format!(
                "{} {}",
                paint(style::YELLOW, slot.phase.map_or("", Phase::word)),
                paint(style::DIM, text)
            )),
            None => {
                drop(slots);
                self.line(format!(
                    "  {} {id}: {text}",
                    paint(style::YELLOW, "waiting   ")
                ));
            }
        }
    }

    /// `id` is done: its final line.
    fn finish(&self, report: &ResourceReport) {
        let mut slots = self.slots.lock().expect("progress lock");
        let Some(slot) = slots.get_mut(&report.id) else {
            return;
        };
        let elapsed = slot.started.map(|s| s.elapsed());
        let detail = match (&report.error, &report.skipped_because) {
            (Some(e), _) => format!("{}: {}", e.reason, e.message),
            (None, Some(dep)) => format!("{dep} failed"),
            (None, None) => String::new(),
        };
        let health = match health_cell(report) {
            "-" => "",
            cell => cell,
        };
        let time = report
            .duration_ms
            .or(elapsed.map(|e| e.as_millis() as u64))
            .map(seconds)
            .unwrap_or_default();
        match &slot.bar {
            Some(bar) => {
                let mark = match report.result {
                    Outcome::Failed | Outcome::TimedOut | Outcome::Terminating => {
                        paint(style::RED, "✗")
                    }
                    Outcome::Skipped | Outcome::Unchanged => paint(style::DIM, "-"),
                    _ => paint(style::GREEN, "✓"),
                };
                bar.set_style(plain_style());
                bar.set_prefix(format!(
                    "{mark} {} {:<w$}",
                    painted(report.result),
                    report.id,
                    w = self.width
                ));
                let mut msg = format!("{health:<11} {time:>6}");
                if !detail.is_empty() {
                    msg = format!("{msg}  {}", paint(style::RED, &detail));
                }
                bar.finish_with_message(msg);
            }
            None => {
                drop(slots);
                let id = &report.id;
                let line = match report.result {
                    Outcome::Failed
                    | Outcome::TimedOut
                    | Outcome::Terminating
                    | Outcome::Skipped => {
                        format!("  {} {id}: {detail}", painted(report.result))
                    }
                    _ if report.health.is_some() && elapsed.is_some() => {
                        format!(
                            "  {} {id} ({health}, {time})",
                            paint(style::GREEN, "healthy   ")
                        )
                    }
                    Outcome::Unchanged | Outcome::Deleted | Outcome::Imported => {
                        format!("  {} {id}", painted(report.result))
                    }
                    _ => return,
                };
                self.line(line);
            }
        }
    }

    /// Whether the display is live (its final lines already list every resource).
    pub fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// Prints the table of `all` under "Summary:", unless the live display
    /// already listed every resource.
    pub fn summarize(&self, printer: &Printer, all: &[ResourceReport]) {
        if !self.is_live() {
            printer.out("Summary:");
            print_table(printer, all);
        }
    }
}

impl EventSink for Progress {
    fn event(&self, event: &Event<'_>) {
        match event {
            Event::Started { id, phase } => self.start(id, *phase),
            Event::Written { id, result } => self.written(id, *result),
            // Reaching health is said by the resource's final line.
            Event::Progress(p)
                if p.health
                    .as_ref()
                    .is_some_and(|h| h.state == HealthState::Current) => {}
            Event::Progress(p) => self.message(&p.id, &p.message),
            Event::Finished(report) => self.finish(report),
        }
    }
}
