//! Where the guest's logs and progress events go.

use guest::model::{LogLevel, Progress};

/// Receives the guest's structured logs and progress events.
pub trait EventSink: Send + Sync {
    /// One progress event of the running operation.
    fn progress(&self, event: &Progress);

    /// One log record; by default forwarded to `tracing`.
    fn log(&self, level: LogLevel, message: &str, fields: &[(String, String)]) {
        let fields = fields
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        match level {
            LogLevel::Trace => tracing::trace!(target: "krt::guest", %fields, "{message}"),
            LogLevel::Debug => tracing::debug!(target: "krt::guest", %fields, "{message}"),
            LogLevel::Info => tracing::info!(target: "krt::guest", %fields, "{message}"),
            LogLevel::Warn => tracing::warn!(target: "krt::guest", %fields, "{message}"),
            LogLevel::Error => tracing::error!(target: "krt::guest", %fields, "{message}"),
        }
    }
}

/// Sends progress events to `tracing` at debug level.
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingSink;

impl EventSink for TracingSink {
    fn progress(&self, event: &Progress) {
        tracing::debug!(target: "krt::progress", id = %event.id, phase = %event.phase, "{}", event.message);
    }
}
