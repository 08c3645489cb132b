//! All terminal output of the CLI goes through [`Printer`]: human lines (on
//! stdout, or on stderr when stdout carries a `-o json|yaml` document), notes
//! and errors on stderr, and the one machine-readable document. Colors go
//! through `anstream`, which drops them for `NO_COLOR`, `CLICOLOR=0` and
//! anything that is not a terminal.

use anstream::{AutoStream, ColorChoice};
use anstyle::{AnsiColor, Style};
use clap::ValueEnum;
use serde::Serialize;
use std::io::{IsTerminal, StderrLock, StdoutLock, Write};
use std::sync::OnceLock;

/// Whether colors go to stdout and to stderr, decided once per process
/// (`anstream::stdout()` reads the environment again for every line).
static CHOICES: OnceLock<(ColorChoice, ColorChoice)> = OnceLock::new();

fn choices() -> (ColorChoice, ColorChoice) {
    *CHOICES.get_or_init(|| {
        (
            AutoStream::choice(&std::io::stdout()),
            AutoStream::choice(&std::io::stderr()),
        )
    })
}

/// Whether neither stream takes colors: then [`paint`] writes none, and the
/// streams pass text on as it is instead of scanning it for escape codes.
fn colorless() -> bool {
    choices() == (ColorChoice::Never, ColorChoice::Never)
}

/// The choice a stream is opened with: `choice`, or passing text on unscanned
/// when nothing paints it.
fn stream_choice(choice: ColorChoice) -> ColorChoice {
    match colorless() {
        true => ColorChoice::AlwaysAnsi,
        false => choice,
    }
}

/// Whether stderr takes colors (a terminal, and the environment allows them):
/// for the log lines, which do not go through [`stderr`].
pub fn stderr_takes_colors() -> bool {
    choices().1 != ColorChoice::Never
}

/// Locked stdout, with colors where they go.
pub fn stdout() -> AutoStream<StdoutLock<'static>> {
    AutoStream::new(std::io::stdout().lock(), stream_choice(choices().0))
}

/// Locked stderr, with colors where they go.
pub fn stderr() -> AutoStream<StderrLock<'static>> {
    AutoStream::new(std::io::stderr().lock(), stream_choice(choices().1))
}

/// `-o` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Lines and tables for people.
    Table,
    /// One JSON document on stdout (progress goes to stderr).
    Json,
    /// One YAML document on stdout (progress goes to stderr).
    Yaml,
}

/// Colors of the human output.
pub mod style {
    use super::*;
    /// Creates, successes.
    pub const GREEN: Style = AnsiColor::Green.on_default();
    /// Updates, waits.
    pub const YELLOW: Style = AnsiColor::Yellow.on_default();
    /// Deletes, failures.
    pub const RED: Style = AnsiColor::Red.on_default();
    /// Replaces.
    pub const MAGENTA: Style = AnsiColor::Magenta.on_default();
    /// Diff hunk headers.
    pub const CYAN: Style = AnsiColor::Cyan.on_default();
    /// Unchanged, skipped.
    pub const DIM: Style = Style::new().dimmed();
    /// Headings.
    pub const BOLD: Style = Style::new().bold();
}

/// `text` in `style` (the escape codes are removed on output where colors are
/// off, and not written at all when no stream takes them).
pub fn paint(style: Style, text: impl std::fmt::Display) -> String {
    match colorless() {
        true => text.to_string(),
        false => format!("{style}{text}{style:#}"),
    }
}

/// The CLI's one output channel.
#[derive(Debug)]
pub struct Printer {
    format: OutputFormat,
}

impl Printer {
    /// A printer for `-o format`.
    pub fn new(format: OutputFormat) -> Self {
        Printer { format }
    }

    /// Whether human lines go to stdout (no document is printed).
    pub fn is_table(&self) -> bool {
        self.format == OutputFormat::Table
    }

    /// Whether the stream of human lines is a terminal (live progress, prompts).
    pub fn human_is_terminal(&self) -> bool {
        if self.is_table() {
            std::io::stdout().is_terminal()
        } else {
            std::io::stderr().is_terminal()
        }
    }

    /// A human line: stdout for `-o table`, else stderr.
    pub fn out(&self, line: impl AsRef<str>) {
        if self.is_table() {
            let _ = writeln!(stdout(), "{}", line.as_ref());
        } else {
            let _ = writeln!(stderr(), "{}", line.as_ref());
        }
    }

    /// A note on stderr (which cluster, what is happening).
    pub fn note(&self, line: impl AsRef<str>) {
        let _ = writeln!(stderr(), "krt: {}", line.as_ref());
    }

    /// An error on stderr, one `error:` line per line of `line`.
    pub fn error(&self, line: impl AsRef<str>) {
        let mut err = stderr();
        for l in line.as_ref().lines() {
            let _ = writeln!(err, "{}: {l}", paint(style::RED, "error"));
        }
    }

    /// The machine-readable document for `-o json|yaml` (nothing for `-o table`).
    pub fn document(&self, value: &impl Serialize) {
        let text = match self.format {
            OutputFormat::Table => return,
            OutputFormat::Json => serde_json::to_string_pretty(value)
                .map(|s| s + "\n")
                .map_err(|e| e.to_string()),
            OutputFormat::Yaml => serde_saphyr::to_string(value).map_err(|e| e.to_string()),
        };
        match text {
            Ok(text) => {
                let _ = std::io::stdout().lock().write_all(text.as_bytes());
            }
            Err(e) => self.error(format!("cannot render the output document: {e}")),
        }
    }

    /// Asks a yes/no question on the terminal; only `y` or `yes` is a yes.
    pub fn confirm(&self, question: &str) -> bool {
        {
            let mut out = stdout();
            let _ = write!(out, "{} [y/N] ", paint(style::BOLD, question));
            let _ = out.flush();
        }
        let mut answer = String::new();
        if std::io::stdin().read_line(&mut answer).is_err() {
            return false;
        }
        matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    }
}
