//! Where a stack's state lives: what krt applied for each resource (the
//! plan, the "original" of the next client-side three-way merge and the list
//! destroy works from). Two backends: a local file written atomically under
//! an exclusive lock ([`LocalBackend`]), or a Secret in the cluster, like
//! Helm's release storage ([`KubernetesBackend`]).

mod kubernetes;
mod local;
mod recorder;

pub use kubernetes::KubernetesBackend;
pub use local::LocalBackend;
pub use recorder::{Recorder, SAVE_INTERVAL};

use guest::model::Resource;
use serde::{Deserialize, Serialize};

/// The version of the state format written by this build.
pub const STATE_VERSION: u32 = 1;

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
    /// Each resource as last applied (the plan, not the server's object), in
    /// the order they were first applied.
    pub resources: Vec<Resource>,
}

impl State {
    /// An empty state for `stack`.
    pub fn empty(stack: &str) -> Self {
        State {
            version: STATE_VERSION,
            stack: stack.to_owned(),
            serial: 0,
            updated_at: String::new(),
            resources: Vec::new(),
        }
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

    /// Forgets the resource with this ID; whether it was recorded.
    pub fn remove(&mut self, id: &str) -> bool {
        let before = self.resources.len();
        self.resources.retain(|r| r.id != id);
        before != self.resources.len()
    }

    fn stamp(&mut self) {
        self.serial += 1;
        self.updated_at = jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .map_or_else(|_| jiff::Timestamp::now().to_string(), |t| t.to_string());
    }

    fn decode(bytes: &[u8], what: &str) -> Result<State, StateError> {
        let mut state: State = serde_json::from_slice(bytes).map_err(|e| StateError::Corrupt {
            what: what.to_owned(),
            message: e.to_string(),
        })?;
        if state.version != STATE_VERSION {
            return Err(StateError::Corrupt {
                what: what.to_owned(),
                message: format!(
                    "format version {} is not supported (this build reads version {STATE_VERSION})",
                    state.version
                ),
            });
        }
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
    /// The state could not be parsed.
    #[error("state {what} is not valid: {message}")]
    Corrupt {
        /// The file or Secret.
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
    /// A cluster call failed.
    #[error("failed to {action} Secret {namespace}/{name}")]
    Kube {
        /// What was being done.
        action: &'static str,
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The cause.
        #[source]
        source: Box<kube::Error>,
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
fn holder() -> String {
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

/// A state backend.
pub enum Backend {
    /// Files under a directory.
    Local(LocalBackend),
    /// Secrets in the cluster.
    Kubernetes(Box<KubernetesBackend>),
}

/// A held stack lock; [`StateLock::release`] it when done (a local lock is
/// also released when the process exits).
pub enum StateLock {
    /// An exclusively locked file.
    Local(std::fs::File),
    /// A lock Secret this run created.
    Kubernetes(Box<kubernetes::LockSecret>),
}

impl StateLock {
    /// Releases the lock.
    ///
    /// # Errors
    /// The lock Secret could not be deleted.
    pub async fn release(self) -> Result<(), StateError> {
        match self {
            StateLock::Local(file) => {
                drop(file);
                Ok(())
            }
            StateLock::Kubernetes(secret) => secret.release().await,
        }
    }
}

impl Backend {
    /// Where states are kept, for the user.
    pub fn describe(&self, stack: &str) -> String {
        match self {
            Backend::Local(b) => b.path(stack).display().to_string(),
            Backend::Kubernetes(b) => b.describe(stack),
        }
    }

    /// The state of `stack`; empty when none was saved.
    ///
    /// # Errors
    /// An unreadable or invalid state.
    pub async fn load(&self, stack: &str) -> Result<State, StateError> {
        check_stack_name(stack)?;
        match self {
            Backend::Local(b) => b.load(stack),
            Backend::Kubernetes(b) => b.load(stack).await,
        }
    }

    /// Saves `state` (bumping its serial and time) atomically.
    ///
    /// # Errors
    /// The state could not be written.
    pub async fn save(&self, state: &mut State) -> Result<(), StateError> {
        state.stamp();
        match self {
            Backend::Local(b) => b.save(state),
            Backend::Kubernetes(b) => b.save(state).await,
        }
    }

    /// Takes the stack's lock, or fails at once when another run holds it.
    ///
    /// # Errors
    /// [`StateError::Locked`], or the lock could not be created.
    pub async fn lock(&self, stack: &str) -> Result<StateLock, StateError> {
        check_stack_name(stack)?;
        match self {
            Backend::Local(b) => b.lock(stack).map(StateLock::Local),
            Backend::Kubernetes(b) => b
                .lock(stack)
                .await
                .map(|l| StateLock::Kubernetes(Box::new(l))),
        }
    }

    /// Removes a lock left by a run that died; whether there was one.
    ///
    /// # Errors
    /// The lock could not be removed.
    pub async fn unlock(&self, stack: &str) -> Result<bool, StateError> {
        check_stack_name(stack)?;
        match self {
            Backend::Local(b) => b.unlock(stack),
            Backend::Kubernetes(b) => b.unlock(stack).await,
        }
    }

    /// The stacks that have a saved state, sorted.
    ///
    /// # Errors
    /// The directory or the Secrets could not be listed.
    pub async fn list(&self) -> Result<Vec<String>, StateError> {
        match self {
            Backend::Local(b) => b.list(),
            Backend::Kubernetes(b) => b.list().await,
        }
    }
}
