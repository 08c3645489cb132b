//! krt's stack engine: what turns "apply these files" into one call of a
//! single-resource [`Runtime`] per object, in the right order.
//!
//! - Inputs: plain Kubernetes manifests and Kusion specs ([`manifest`]),
//!   checked as one dependency graph ([`Stack`]).
//! - Walks: the [`plan`](plan()) behind a preview, then [`apply()`],
//!   [`destroy()`], [`drift()`], [`import()`], [`read()`] and [`watch()`], each
//!   reporting progress to an [`EventSink`] and returning typed, serializable
//!   [`ResourceReport`]s.
//! - State: what was applied for each resource ([`State`]), kept by a
//!   [`StateBackend`] ([`LocalBackend`] here) and recorded while a walk runs
//!   ([`Recorder`]); a [`Run`] holds it locked from load to flush.
//!
//! It knows nothing of wasmtime, kube-rs or a command line: `krt-host`
//! provides the runtimes and a Secret backend, `krt-cli` the printing.

pub mod apply;
pub mod destroy;
pub mod drift;
pub mod events;
pub mod gone;
pub mod graph;
pub mod import;
pub mod manifest;
pub mod ownership;
pub mod plan;
pub mod read;
pub mod report;
pub mod run;
pub mod runtime;
pub mod state;
#[cfg(test)]
mod testing;
pub mod wait;
pub mod walk;
pub mod watch;

pub use apply::{Applied, ApplySettings, NOT_ATTEMPTED, RunError, apply, plan_and_apply};
pub use destroy::{DestroySettings, cascading_delete, destroy};
pub use drift::{drift, drift_of};
pub use events::{Event, EventSink, Phase, TracingSink};
pub use graph::{Stack, StackError, Targets, targets};
pub use import::{ImportTarget, RecordedFrom, import};
pub use ownership::{NotOurs, Owner, Ownership, STACK_LABEL};
pub use plan::{Plan, Planned, plan};
pub use read::read;
pub use report::{Outcome, Report, ResourceReport, Verdict};
pub use run::{Ran, Run};
pub use runtime::Runtime;
pub use state::{
    Binding, ClusterIdentity, LocalBackend, Recorder, State, StateBackend, StateError, StateLock,
};
pub use wait::{Wait, WaitFor, WaitSpec};
pub use watch::watch;

pub use krt_guest::model::{self, Resource};
