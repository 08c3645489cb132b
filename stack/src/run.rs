//! One run of a walk that changes a stack, in the order `krt apply`,
//! `krt destroy` and the controller all follow: the state is checked against
//! the cluster before anything is locked (a backend may keep its lock in that
//! cluster), the lock is taken, the state is loaded again under it, the walk
//! is recorded into it as it goes, the state is flushed, and the lock is
//! released, whatever happened before.

use crate::apply::{ApplySettings, apply};
use crate::destroy::{DestroySettings, destroy};
use crate::events::EventSink;
use crate::graph::Stack;
use crate::plan::Plan;
use crate::report::ResourceReport;
use crate::runtime::Runtime;
use crate::state::{
    Binding, ClusterIdentity, Recorder, State, StateBackend, StateError, StateLock,
};

/// A stack's state, loaded under its lock for one run. End it with
/// [`apply`](Run::apply), [`destroy`](Run::destroy) or [`close`](Run::close),
/// which release the lock.
pub struct Run<'a> {
    backend: &'a dyn StateBackend,
    lock: Box<dyn StateLock>,
    state: State,
    binding: Option<Binding>,
    components: Option<Vec<String>>,
}

/// What a walk of a [`Run`] did, and whether its state was saved.
#[derive(Debug)]
pub struct Ran {
    /// A report per resource, as the walk returned them.
    pub reports: Vec<ResourceReport>,
    /// The state's last save: an error means the reports say what was done
    /// while the state may lag behind it (the next run adopts the rest).
    pub saved: Result<(), StateError>,
}

impl<'a> Run<'a> {
    /// Loads the state of stack `name` from `backend`, bound to `cluster`
    /// when one is given, then takes the lock and loads the state again.
    ///
    /// # Errors
    /// A state of another cluster (refused before the lock is taken), a lock
    /// another run holds, or a state that cannot be read.
    pub async fn open(
        backend: &'a dyn StateBackend,
        name: &str,
        cluster: Option<&ClusterIdentity>,
    ) -> Result<Run<'a>, StateError> {
        let load = || async {
            let mut state = backend.load(name).await?;
            let binding = match cluster {
                Some(cluster) => Some(state.bind(cluster)?),
                None => None,
            };
            Ok::<_, StateError>((state, binding))
        };
        load().await?;
        let lock = backend.lock(name).await?;
        match load().await {
            Ok((state, binding)) => Ok(Run {
                backend,
                lock,
                state,
                binding,
                components: None,
            }),
            Err(e) => {
                if let Err(unlock) = lock.release().await {
                    tracing::warn!(error = %unlock, "releasing the state's lock failed");
                }
                Err(e)
            }
        }
    }

    /// The state as loaded under the lock.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Records `components` as the run's chain ([`State::components`]) with
    /// the walk's first save.
    pub fn with_components(mut self, components: Vec<String>) -> Self {
        self.components = Some(components);
        self
    }

    /// How the state was bound to the cluster, when [`open`](Run::open) was given one.
    pub fn binding(&self) -> Option<&Binding> {
        self.binding.as_ref()
    }

    /// Applies `plan` of `stack` ([`apply()`]), recording into the state,
    /// then flushes it and releases the lock.
    ///
    /// # Errors
    /// The lock could not be released (what was done is lost to the caller
    /// then, but recorded in the state).
    pub async fn apply<R: Runtime>(
        self,
        runtime: &R,
        stack: &Stack,
        plan: &Plan,
        settings: &ApplySettings,
        events: &dyn EventSink,
    ) -> Result<Ran, StateError> {
        let recorder = Recorder::new(self.backend, self.state);
        if let Some(components) = &self.components {
            recorder.components(components);
        }
        let reports = apply(runtime, stack, plan, &recorder, settings, events).await;
        finish(recorder, self.lock, reports).await
    }

    /// Destroys `targets` ([`destroy()`]), recording into the state, then
    /// flushes it and releases the lock.
    ///
    /// # Errors
    /// As [`apply`](Run::apply).
    pub async fn destroy<R: Runtime>(
        self,
        runtime: &R,
        targets: &Stack,
        settings: &DestroySettings,
        events: &dyn EventSink,
    ) -> Result<Ran, StateError> {
        let recorder = Recorder::new(self.backend, self.state);
        if let Some(components) = &self.components {
            recorder.components(components);
        }
        let reports = destroy(runtime, targets, &recorder, settings, events).await;
        finish(recorder, self.lock, reports).await
    }

    /// Ends the run without a walk (a failed preview, a cancel): releases the lock.
    ///
    /// # Errors
    /// The lock could not be released.
    pub async fn close(self) -> Result<(), StateError> {
        self.lock.release().await
    }
}

/// Flushes `recorder` and releases `lock`.
async fn finish(
    recorder: Recorder<'_>,
    lock: Box<dyn StateLock>,
    reports: Vec<ResourceReport>,
) -> Result<Ran, StateError> {
    let saved = recorder.flush().await;
    lock.release().await?;
    Ok(Ran { reports, saved })
}
