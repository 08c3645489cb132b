//! Where a stack's state lives: what krt applied for each resource (the
//! plan, the "original" of the next client-side three-way merge and the list
//! destroy works from). A [`StateBackend`] keeps it: [`LocalBackend`] in a
//! file written atomically under an exclusive lock; `krt-host` adds one that
//! keeps it in a Secret, like Helm's release storage.

mod local;
mod recorder;

pub use local::LocalBackend;
pub use recorder::{Recorder, SAVE_INTERVAL};

use futures::future::BoxFuture;
use krt_guest::model::Resource;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the state format written by this build.
pub const STATE_VERSION: u32 = 2;

/// The oldest state format this build reads: version 1 had no cluster and no
/// UIDs; they are recorded on its next save.
const OLDEST_VERSION: u32 = 1;

/// The recorded state of one stack (`.krt/state/<stack>.json`, or the `state`
/// key of the stack's Secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// Format version, [`STATE_VERSION`].
    pub version: u32,
    /// The stack's name.
    pub stack: String,
    /// Incremented on every save.
    pub serial: u64,
    /// When it was last saved (RFC 3339, UTC).
    pub updated_at: String,
    /// The cluster this state describes, recorded by the first run that used
    /// it; a run against another cluster is refused ([`State::bind`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterIdentity>,
    /// Each resource as last applied (the plan, not the server's object), in
    /// the order they were first applied.
    pub resources: Vec<Resource>,
    /// The `metadata.uid` of each recorded resource's object, by ID, as the
    /// write (or the dry run of an unchanged object) answered: only the
    /// object with this UID is deleted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub uids: BTreeMap<String, String>,
    /// The component chain of the last run that applied or destroyed:
    /// middleware outermost first, then the runtime; a registry component
    /// pinned to the digest that run resolved (`oci://…@sha256:…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<String>,
}

/// Which cluster a state describes: the `kube-system` Namespace's UID (as
/// Argo CD and ApplySet tooling identify clusters), and the server URL and
/// kubeconfig context it was reached by, for messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterIdentity {
    /// The UID of the `kube-system` Namespace; `None` when it could not be
    /// read (then the server URL identifies the cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_system_uid: Option<String>,
    /// The API server's URL.
    pub server: String,
    /// The kubeconfig context, when one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl ClusterIdentity {
    /// Whether `other` is the same cluster: the same `kube-system` UID when
    /// both know it, else the same server URL.
    pub fn same_cluster(&self, other: &ClusterIdentity) -> bool {
        match (&self.kube_system_uid, &other.kube_system_uid) {
            (Some(a), Some(b)) => a == b,
            _ => self.server == other.server,
        }
    }
}

impl std::fmt::Display for ClusterIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.server)?;
        if let Some(context) = &self.context {
            write!(f, " (context {context})")?;
        }
        match &self.kube_system_uid {
            Some(uid) => write!(f, ", kube-system UID {uid}"),
            None => write!(f, ", kube-system UID unknown"),
        }
    }
}

/// How [`State::bind`] found the state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// It describes this cluster already.
    Same,
    /// It named no cluster (new, or from before cluster identities): it now
    /// names this one.
    Bound,
    /// It described another cluster but recorded no resources: it now names
    /// this one, the other being the one given.
    Rebound(ClusterIdentity),
}

impl State {
    /// An empty state for `stack`.
    pub fn empty(stack: &str) -> Self {
        State {
            version: STATE_VERSION,
            stack: stack.to_owned(),
            serial: 0,
            updated_at: String::new(),
            cluster: None,
            resources: Vec::new(),
            uids: BTreeMap::new(),
            components: Vec::new(),
        }
    }

    /// Binds the state to `cluster` before a run uses it: a state that names
    /// no cluster, or another one but records nothing, takes this one; a
    /// state of another cluster with resources is refused, so that a plan
    /// made from it cannot prune or destroy this cluster's objects.
    ///
    /// # Errors
    /// [`StateError::OtherCluster`].
    pub fn bind(&mut self, cluster: &ClusterIdentity) -> Result<Binding, StateError> {
        let binding = match &self.cluster {
            Some(recorded) if recorded.same_cluster(cluster) => Binding::Same,
            Some(recorded) if !self.resources.is_empty() => {
                return Err(StateError::OtherCluster {
                    stack: self.stack.clone(),
                    recorded: recorded.to_string(),
                    current: cluster.to_string(),
                });
            }
            Some(recorded) => Binding::Rebound(recorded.clone()),
            None => Binding::Bound,
        };
        // The URL and context may change for the same cluster (the embedded
        // cluster listens on a new port every run): keep the latest.
        self.cluster = Some(cluster.clone());
        Ok(binding)
    }

    /// Binds the state to `cluster` whatever it recorded (`krt state rebind`):
    /// the recorded UIDs are of the other cluster's objects, so they are
    /// forgotten; the next apply records the new ones. The cluster it was
    /// bound to before.
    pub fn rebind(&mut self, cluster: &ClusterIdentity) -> Option<ClusterIdentity> {
        self.uids.clear();
        self.cluster.replace(cluster.clone())
    }

    /// The recorded UID of the object of `id`.
    pub fn uid(&self, id: &str) -> Option<&str> {
        self.uids.get(id).map(String::as_str)
    }

    /// The recorded resource with this ID.
    pub fn get(&self, id: &str) -> Option<&Resource> {
        self.resources.iter().find(|r| r.id == id)
    }

    /// Records `resource`, replacing the entry with the same ID.
    pub fn put(&mut self, resource: Resource) {
        match self.resources.iter_mut().find(|r| r.id == resource.id) {
            Some(slot) => *slot = resource,
            None => self.resources.push(resource),
        }
    }

    /// Forgets the resource with this ID and its UID; whether it was recorded.
    pub fn remove(&mut self, id: &str) -> bool {
        let before = self.resources.len();
        self.resources.retain(|r| r.id != id);
        self.uids.remove(id);
        before != self.resources.len()
    }

    /// Bumps the serial and sets the time; [`StateBackend::save`] does it on every save.
    pub fn stamp(&mut self) {
        self.serial += 1;
        self.updated_at = jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .map_or_else(|_| jiff::Timestamp::now().to_string(), |t| t.to_string());
    }

    /// Parses a saved state; `what` names the file or object in errors.
    ///
    /// # Errors
    /// [`StateError::Corrupt`] for invalid JSON or another format version.
    pub fn decode(bytes: &[u8], what: &str) -> Result<State, StateError> {
        let mut state: State = serde_json::from_slice(bytes).map_err(|e| StateError::Corrupt {
            what: what.to_owned(),
            message: e.to_string(),
        })?;
        if !(OLDEST_VERSION..=STATE_VERSION).contains(&state.version) {
            return Err(StateError::Corrupt {
                what: what.to_owned(),
                message: format!(
                    "format version {} is not supported (this build reads versions \
                     {OLDEST_VERSION} to {STATE_VERSION})",
                    state.version
                ),
            });
        }
        // An older state is written in this build's format from its next save on.
        state.version = STATE_VERSION;
        // An empty `extensions` is not written; read it back as the empty object it was.
        for r in &mut state.resources {
            if r.extensions.is_null() {
                r.extensions = serde_json::Value::Object(Default::default());
            }
        }
        Ok(state)
    }
}

/// What can go wrong with a state backend.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The stack name cannot name a file or a Secret.
    #[error(
        "invalid stack name '{0}': use lowercase letters, digits and '-', at most 40 characters, starting and ending with a letter or digit"
    )]
    InvalidStack(String),
    /// Another run holds the stack's lock.
    #[error(
        "stack '{stack}' is locked by another krt run ({holder}); wait for it to finish, or if it died, run `krt state unlock {stack}`"
    )]
    Locked {
        /// The stack.
        stack: String,
        /// Who holds it, as the holder recorded it.
        holder: String,
    },
    /// The state describes another cluster than the one the run is against.
    #[error(
        "the state of stack '{stack}' describes another cluster: {recorded}; this run is against {current}. \
         krt refuses to use it here, so that nothing is pruned or destroyed on this cluster because of what \
         another one holds. Use another stack (--stack NAME) or state directory (--state-dir DIR) for this \
         cluster; or, if it is the same cluster under a new identity (restored, or reached another way), \
         run `krt state rebind {stack}`"
    )]
    OtherCluster {
        /// The stack.
        stack: String,
        /// The cluster the state records.
        recorded: String,
        /// The cluster of this run.
        current: String,
    },
    /// The state could not be parsed.
    #[error("state {what} is not valid: {message}")]
    Corrupt {
        /// The file or object.
        what: String,
        /// Why.
        message: String,
    },
    /// A file-system operation failed.
    #[error("failed to {action} '{path}'")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A backend's store (a cluster, a database) failed.
    #[error("failed to {action} {what}")]
    Store {
        /// What was being done.
        action: &'static str,
        /// The object, for example `Secret default/krt-state-dev`.
        what: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Checks that `stack` can name a file and a Secret.
///
/// # Errors
/// [`StateError::InvalidStack`].
pub fn check_stack_name(stack: &str) -> Result<(), StateError> {
    let ok = !stack.is_empty()
        && stack.len() <= 40
        && stack
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !stack.starts_with('-')
        && !stack.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(StateError::InvalidStack(stack.to_owned()))
    }
}

/// Who is running, for lock records: `pid N on HOST since TIME`.
pub fn lock_holder() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "this host".into());
    format!(
        "pid {} on {host} since {}",
        std::process::id(),
        jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap_or_else(|_| jiff::Timestamp::now())
    )
}

/// A held stack lock; [`release`](StateLock::release) it when done.
pub trait StateLock: Send + Sync {
    /// Releases the lock.
    ///
    /// # Errors
    /// The lock could not be removed.
    fn release(self: Box<Self>) -> BoxFuture<'static, Result<(), StateError>>;
}

/// Where states are kept. Implement the `*_state`, `take_lock`, `remove_lock`
/// and `stacks` methods; callers use the checked [`load`](StateBackend::load),
/// [`save`](StateBackend::save), [`lock`](StateBackend::lock) and
/// [`unlock`](StateBackend::unlock).
pub trait StateBackend: Send + Sync {
    /// Where the state of `stack` is kept, for the user.
    fn describe(&self, stack: &str) -> String;

    /// Reads the state of `stack`; empty when none was saved.
    fn read_state<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<State, StateError>>;

    /// Writes `state` atomically, as it is.
    fn write_state<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<(), StateError>>;

    /// Takes the lock of `stack`, failing at once with [`StateError::Locked`]
    /// when another run holds it.
    fn take_lock<'a>(
        &'a self,
        stack: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn StateLock>, StateError>>;

    /// Removes a lock left by a run that died; whether there was one.
    fn remove_lock<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<bool, StateError>>;

    /// The stacks that have a saved state, sorted.
    fn stacks(&self) -> BoxFuture<'_, Result<Vec<String>, StateError>>;

    /// The state of `stack`; empty when none was saved.
    ///
    /// # Errors
    /// An invalid stack name, or an unreadable or invalid state.
    fn load<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<State, StateError>> {
        Box::pin(async move {
            check_stack_name(stack)?;
            self.read_state(stack).await
        })
    }

    /// Saves `state`, bumping its serial and time.
    ///
    /// # Errors
    /// The state could not be written.
    fn save<'a>(&'a self, state: &'a mut State) -> BoxFuture<'a, Result<(), StateError>> {
        Box::pin(async move {
            state.stamp();
            self.write_state(state).await
        })
    }

    /// Takes the stack's lock, or fails at once when another run holds it.
    ///
    /// # Errors
    /// An invalid stack name, [`StateError::Locked`], or the lock could not be created.
    fn lock<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<Box<dyn StateLock>, StateError>> {
        Box::pin(async move {
            check_stack_name(stack)?;
            self.take_lock(stack).await
        })
    }

    /// Removes a lock left by a run that died; whether there was one.
    ///
    /// # Errors
    /// An invalid stack name, or the lock could not be removed.
    fn unlock<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<bool, StateError>> {
        Box::pin(async move {
            check_stack_name(stack)?;
            self.remove_lock(stack).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(uid: Option<&str>, server: &str) -> ClusterIdentity {
        ClusterIdentity {
            kube_system_uid: uid.map(str::to_owned),
            server: server.into(),
            context: None,
        }
    }

    fn with_resource() -> State {
        let mut state = State::empty("dev");
        state.put(krt_testkit::configmap("a").namespace("d").resource());
        state.uids.insert("v1:ConfigMap:d:a".into(), "u1".into());
        state
    }

    #[test]
    fn a_state_binds_to_its_first_cluster_and_refuses_another() {
        let mut state = with_resource();
        let here = cluster(Some("k1"), "https://a");
        assert_eq!(state.bind(&here).unwrap(), Binding::Bound);
        // The same cluster reached at another URL (the embedded one's port changes).
        assert_eq!(
            state.bind(&cluster(Some("k1"), "https://b")).unwrap(),
            Binding::Same
        );
        assert_eq!(state.cluster.as_ref().unwrap().server, "https://b");
        let err = state
            .bind(&cluster(Some("k2"), "https://b"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("kube-system UID k1") && err.contains("kube-system UID k2"),
            "{err}"
        );
        assert!(err.contains("krt state rebind dev"), "{err}");
        // Without a UID on one side, the server URL decides.
        assert_eq!(
            state.bind(&cluster(None, "https://b")).unwrap(),
            Binding::Same
        );
        assert!(state.bind(&cluster(None, "https://c")).is_err());
    }

    #[test]
    fn an_empty_state_takes_the_new_cluster_and_rebind_forgets_the_uids() {
        let mut empty = State::empty("dev");
        empty.bind(&cluster(Some("k1"), "https://a")).unwrap();
        assert_eq!(
            empty.bind(&cluster(Some("k2"), "https://b")).unwrap(),
            Binding::Rebound(cluster(Some("k1"), "https://a"))
        );
        let mut state = with_resource();
        state.bind(&cluster(Some("k1"), "https://a")).unwrap();
        let before = state.rebind(&cluster(Some("k2"), "https://b"));
        assert_eq!(before, Some(cluster(Some("k1"), "https://a")));
        assert!(state.uids.is_empty());
        assert_eq!(state.resources.len(), 1, "the resources stay");
        assert_eq!(
            state.bind(&cluster(Some("k2"), "https://b")).unwrap(),
            Binding::Same
        );
    }

    #[test]
    fn a_version_1_state_is_read_as_version_2() {
        let v1 =
            br#"{"version": 1, "stack": "dev", "serial": 2, "updatedAt": "t", "resources": []}"#;
        let state = State::decode(v1, "file 'dev.json'").unwrap();
        assert_eq!(state.version, STATE_VERSION);
        assert_eq!(state.cluster, None);
        let v3 =
            br#"{"version": 3, "stack": "dev", "serial": 2, "updatedAt": "t", "resources": []}"#;
        let err = State::decode(v3, "file 'dev.json'")
            .unwrap_err()
            .to_string();
        assert!(err.contains("reads versions 1 to 2"), "{err}");
    }
}
