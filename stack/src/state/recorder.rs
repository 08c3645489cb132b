//! The state of a run in progress: resources are recorded as they are applied
//! or deleted, and the state is saved every [`SAVE_INTERVAL`] or so while
//! anything is unsaved, and once more when the run ends. A save rewrites the
//! whole state, so saving after every resource would be quadratic in the
//! stack's size, and so would saving at a fixed interval; the wait between
//! saves grows to nine times the last save's duration, which keeps saving
//! under a tenth of the run. A run killed between two saves leaves a state
//! that lags behind the cluster by at most that wait but never runs ahead of
//! it; the next run adopts what was applied and not yet recorded.

use super::{State, StateBackend, StateError};
use krt_guest::model::Resource;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The shortest wait between two saves (longer when a save takes more than a
/// ninth of it).
pub const SAVE_INTERVAL: Duration = Duration::from_millis(200);

/// Saving takes at most one part in this many of a run's time.
const SAVE_SHARE: u32 = 10;

/// A stack's state shared by the tasks of one run, saved to its backend.
pub struct Recorder<'a> {
    backend: &'a dyn StateBackend,
    inner: Mutex<Recording>,
}

struct Recording {
    state: State,
    /// Where each ID is in `state.resources`.
    index: HashMap<String, usize>,
    /// Bumped by every change.
    version: u64,
    /// The version last saved.
    saved: u64,
}

/// Where each resource of `state` is, by ID.
fn index_of(state: &State) -> HashMap<String, usize> {
    state
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect()
}

impl<'a> Recorder<'a> {
    /// Starts recording onto `state`, which `backend` loaded.
    pub fn new(backend: &'a dyn StateBackend, state: State) -> Self {
        Recorder {
            backend,
            inner: Mutex::new(Recording {
                index: index_of(&state),
                state,
                version: 0,
                saved: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Recording> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The recorded resource with this ID.
    pub fn get(&self, id: &str) -> Option<Resource> {
        let rec = self.lock();
        rec.index.get(id).map(|&i| rec.state.resources[i].clone())
    }

    /// The recorded UID of the object of `id`.
    pub fn uid(&self, id: &str) -> Option<String> {
        self.lock().state.uid(id).map(str::to_owned)
    }

    /// Records `resource` as applied, with the UID of its object (`None`
    /// when the runtime did not say, which forgets the one recorded).
    pub fn put(&self, resource: &Resource, uid: Option<&str>) {
        let mut rec = self.lock();
        let rec = &mut *rec;
        let uids = &mut rec.state.uids;
        let uid_changed = match uid {
            Some(uid) if uids.get(&resource.id).map(String::as_str) != Some(uid) => {
                uids.insert(resource.id.clone(), uid.to_owned());
                true
            }
            Some(_) => false,
            None => uids.remove(&resource.id).is_some(),
        };
        match rec.index.get(&resource.id) {
            Some(&i) if rec.state.resources[i] == *resource && !uid_changed => return,
            Some(&i) => rec.state.resources[i] = resource.clone(),
            None => {
                rec.index
                    .insert(resource.id.clone(), rec.state.resources.len());
                rec.state.resources.push(resource.clone());
            }
        }
        rec.version += 1;
    }

    /// Records the component chain of this run (see [`State::components`]).
    pub fn components(&self, components: &[String]) {
        let mut rec = self.lock();
        if rec.state.components != components {
            rec.state.components = components.to_vec();
            rec.version += 1;
        }
    }

    /// Forgets the resource with this ID (it was deleted).
    pub fn remove(&self, id: &str) {
        let mut rec = self.lock();
        if rec.state.remove(id) {
            rec.index = index_of(&rec.state);
            rec.version += 1;
        }
    }

    /// Runs `work`, saving the state every [`SAVE_INTERVAL`] or more (see the
    /// module docs) while it has unsaved changes. The saves run beside `work`, never blocking it; a
    /// failed one is logged and tried again at the next tick, and
    /// [`flush`](Recorder::flush) reports it.
    pub async fn saving<T>(&self, work: impl Future<Output = T>) -> T {
        let saver = async {
            let mut wait = SAVE_INTERVAL;
            loop {
                tokio::time::sleep(wait).await;
                let started = Instant::now();
                if let Err(e) = self.flush().await {
                    tracing::warn!(error = %e, "the state could not be saved; trying again");
                }
                wait = SAVE_INTERVAL.max(started.elapsed() * (SAVE_SHARE - 1));
            }
        };
        tokio::select! {
            out = work => out,
            _ = saver => unreachable!("the saver never ends"),
        }
    }

    /// Saves what is not saved yet; call it when the run ends.
    ///
    /// # Errors
    /// The state could not be written.
    pub async fn flush(&self) -> Result<(), StateError> {
        let (mut snapshot, version) = {
            let rec = self.lock();
            if rec.version == rec.saved {
                return Ok(());
            }
            (rec.state.clone(), rec.version)
        };
        self.backend.save(&mut snapshot).await?;
        let mut rec = self.lock();
        rec.saved = rec.saved.max(version);
        // Saving stamps the serial and time; later saves go on from there.
        rec.state.serial = snapshot.serial;
        rec.state.updated_at = snapshot.updated_at;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::LocalBackend;

    fn configmap(i: usize) -> Resource {
        krt_testkit::configmap(&format!("cm-{i}"))
            .namespace("default")
            .resource()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn saves_while_many_tasks_record_and_once_more_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let recorder = Recorder::new(&backend, State::empty("dev"));
        // 64 tasks record one resource every few ms for about a second, in the
        // same task as the saver (as `krt apply` runs them).
        let work = futures::future::join_all((0..64).map(|t| {
            let recorder = &recorder;
            async move {
                for i in 0..40 {
                    recorder.put(&configmap(t * 100 + i), Some("uid"));
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
            }
        }));
        recorder.saving(work).await;
        let midway = backend.load("dev").await.unwrap();
        assert!(
            midway.serial >= 2 && !midway.resources.is_empty(),
            "saved while the work ran: serial {}",
            midway.serial
        );
        recorder.flush().await.unwrap();
        let saved = backend.load("dev").await.unwrap();
        assert_eq!(saved.resources.len(), 64 * 40);
        assert!(saved.serial > midway.serial || midway.resources.len() == 64 * 40);
        recorder.remove(&configmap(0).id);
        recorder.flush().await.unwrap();
        assert_eq!(
            backend.load("dev").await.unwrap().resources.len(),
            64 * 40 - 1
        );
    }
}
