//! How a walk reports what happens while it runs: each resource's phases,
//! the runtime's progress messages, and each final result.

use crate::report::{Outcome, ResourceReport};
use krt_guest::model::{LogLevel, Progress};

/// What a resource is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Being created.
    Creating,
    /// Being updated in place.
    Updating,
    /// Being deleted and created again.
    Replacing,
    /// Being deleted.
    Deleting,
    /// Waiting to become healthy.
    Waiting,
}

impl Phase {
    /// The phase as a word: `creating`, `updating`, ...
    pub fn word(self) -> &'static str {
        match self {
            Phase::Creating => "creating",
            Phase::Updating => "updating",
            Phase::Replacing => "replacing",
            Phase::Deleting => "deleting",
            Phase::Waiting => "waiting",
        }
    }
}

/// One thing that happened during a walk.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The resource `id` entered `phase`.
    Started {
        /// The resource.
        id: &'a str,
        /// What it is doing now.
        phase: Phase,
    },
    /// The write of `id` finished with `result`; its health wait follows.
    Written {
        /// The resource.
        id: &'a str,
        /// How the write ended.
        result: Outcome,
    },
    /// A progress message of the runtime (for example the guest's watch notes).
    Progress(&'a Progress),
    /// The resource is done.
    Finished(&'a ResourceReport),
}

/// Receives a walk's events and the runtime's logs. Implementations must be
/// cheap: they are called from the walk's tasks as things happen.
pub trait EventSink: Send + Sync {
    /// One event.
    fn event(&self, event: &Event<'_>);

    /// One log record of the runtime; by default forwarded to `tracing`.
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

/// A closure is a sink: `&|event: &Event<'_>| println!("{event:?}")`.
impl<F> EventSink for F
where
    F: Fn(&Event<'_>) + Send + Sync,
{
    fn event(&self, event: &Event<'_>) {
        self(event);
    }
}

/// Sends events to `tracing` at debug level.
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingSink;

impl EventSink for TracingSink {
    fn event(&self, event: &Event<'_>) {
        match event {
            Event::Started { id, phase } => {
                tracing::debug!(target: "krt::progress", %id, phase = phase.word(), "started");
            }
            Event::Written { id, result } => {
                tracing::debug!(target: "krt::progress", %id, result = result.word(), "written");
            }
            Event::Progress(p) => {
                tracing::debug!(target: "krt::progress", id = %p.id, phase = %p.phase, "{}", p.message);
            }
            Event::Finished(r) => {
                tracing::debug!(target: "krt::progress", id = %r.id, result = r.result.word(), "finished");
            }
        }
    }
}
