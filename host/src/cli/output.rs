//! All terminal output of the CLI goes through [`Printer`].

use std::io::Write;

/// Writes results to stdout and diagnostics to stderr.
#[derive(Debug, Default)]
pub struct Printer;

impl Printer {
    /// A result line on stdout.
    pub fn out(&self, line: impl AsRef<str>) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", line.as_ref());
    }

    /// A note on stderr (which cluster, what is happening).
    pub fn note(&self, line: impl AsRef<str>) {
        let _ = writeln!(std::io::stderr().lock(), "krt: {}", line.as_ref());
    }

    /// An error on stderr.
    pub fn error(&self, line: impl AsRef<str>) {
        let mut err = std::io::stderr().lock();
        for l in line.as_ref().lines() {
            let _ = writeln!(err, "error: {l}");
        }
    }
}
