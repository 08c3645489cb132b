//! The state of a run in progress: resources are recorded as they are applied
//! or deleted, and the state is saved every [`SAVE_INTERVAL`] while anything
//! is unsaved, and once more when the run ends. Saving after every resource
//! would rewrite the whole state once per resource (quadratic in the stack's
//! size). A run killed between two saves leaves a state that lags behind the
//! cluster by at most that interval but never runs ahead of it; the next run
//! adopts what was applied and not yet recorded.

use super::{Backend, State, StateError};
use guest::model::Resource;
use std::time::Duration;
use tokio::sync::Mutex;

/// The longest a recorded change waits before the state is saved.
pub const SAVE_INTERVAL: Duration = Duration::from_millis(200);

/// A stack's state shared by the tasks of one run, saved to its backend.
pub struct Recorder<'a> {
    backend: &'a Backend,
    inner: Mutex<Recording>,
}

struct Recording {
    state: State,
    dirty: bool,
}

impl<'a> Recorder<'a> {
    /// Starts recording onto `state`, which `backend` loaded.
    pub fn new(backend: &'a Backend, state: State) -> Self {
        Recorder {
            backend,
            inner: Mutex::new(Recording {
                state,
                dirty: false,
            }),
        }
    }

    /// The recorded resource with this ID.
    pub async fn get(&self, id: &str) -> Option<Resource> {
        self.inner.lock().await.state.get(id).cloned()
    }

    /// Records `resource` as applied.
    pub async fn put(&self, resource: &Resource) {
        let mut rec = self.inner.lock().await;
        if rec.state.get(&resource.id) != Some(resource) {
            rec.state.put(resource.clone());
            rec.dirty = true;
        }
    }

    /// Forgets the resource with this ID (it was deleted).
    pub async fn remove(&self, id: &str) {
        let mut rec = self.inner.lock().await;
        if rec.state.remove(id) {
            rec.dirty = true;
        }
    }

    /// Runs `work`, saving the state every [`SAVE_INTERVAL`] while it has
    /// unsaved changes. A failed save is logged and tried again at the next
    /// tick; [`flush`](Recorder::flush) reports it.
    pub async fn saving<T>(&self, work: impl Future<Output = T>) -> T {
        let mut work = std::pin::pin!(work);
        let mut ticks = tokio::time::interval(SAVE_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                out = &mut work => return out,
                _ = ticks.tick() => {
                    if let Err(e) = self.flush().await {
                        tracing::warn!(error = %e, "the state could not be saved; trying again");
                    }
                }
            }
        }
    }

    /// Saves what is not saved yet; call it when the run ends.
    ///
    /// # Errors
    /// The state could not be written.
    pub async fn flush(&self) -> Result<(), StateError> {
        let mut rec = self.inner.lock().await;
        if rec.dirty {
            self.backend.save(&mut rec.state).await?;
            rec.dirty = false;
        }
        Ok(())
    }
}
