//! States as files: `<dir>/<stack>.json`, replaced atomically (write a
//! temporary file beside it, sync, rename), guarded by an exclusive OS lock on
//! `<dir>/<stack>.lock` that the kernel releases if the process dies.

use super::{State, StateBackend, StateError, StateLock, lock_holder};
use futures::future::BoxFuture;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// States in files under one directory (`.krt/state` by default).
#[derive(Debug, Clone)]
pub struct LocalBackend {
    dir: PathBuf,
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StateError {
    let path = path.display().to_string();
    move |source| StateError::Io {
        action,
        path,
        source,
    }
}

impl LocalBackend {
    /// States under `dir` (created on first save or lock).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        LocalBackend { dir: dir.into() }
    }

    /// The state file of `stack`.
    pub fn path(&self, stack: &str) -> PathBuf {
        self.dir.join(format!("{stack}.json"))
    }

    fn lock_path(&self, stack: &str) -> PathBuf {
        self.dir.join(format!("{stack}.lock"))
    }

    fn load(&self, stack: &str) -> Result<State, StateError> {
        let path = self.path(stack);
        match std::fs::read(&path) {
            Ok(bytes) => State::decode(&bytes, &format!("file '{}'", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::empty(stack)),
            Err(e) => Err(io("read", &path)(e)),
        }
    }

    fn save(&self, state: &State) -> Result<(), StateError> {
        std::fs::create_dir_all(&self.dir).map_err(io("create", &self.dir))?;
        let path = self.path(&state.stack);
        let mut file = tempfile::NamedTempFile::new_in(&self.dir)
            .map_err(io("create a temporary file in", &self.dir))?;
        let mut text = serde_json::to_vec_pretty(state).expect("a state serializes");
        text.push(b'\n');
        file.write_all(&text).map_err(io("write", file.path()))?;
        file.as_file().sync_all().map_err(io("sync", file.path()))?;
        file.persist(&path)
            .map_err(|e| io("replace", &path)(e.error))?;
        Ok(())
    }

    fn open_lock(&self, stack: &str) -> Result<(File, PathBuf), StateError> {
        std::fs::create_dir_all(&self.dir).map_err(io("create", &self.dir))?;
        let path = self.lock_path(stack);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io("open", &path))?;
        Ok((file, path))
    }

    fn lock(&self, stack: &str) -> Result<File, StateError> {
        let (mut file, path) = self.open_lock(stack)?;
        match file.try_lock() {
            Ok(()) => {
                file.set_len(0).map_err(io("write", &path))?;
                file.rewind().map_err(io("write", &path))?;
                file.write_all(lock_holder().as_bytes())
                    .map_err(io("write", &path))?;
                Ok(file)
            }
            Err(TryLockError::WouldBlock) => {
                let mut who = String::new();
                let _ = file.read_to_string(&mut who);
                Err(StateError::Locked {
                    stack: stack.to_owned(),
                    holder: if who.trim().is_empty() {
                        "holder unknown".into()
                    } else {
                        who.trim().to_owned()
                    },
                })
            }
            Err(TryLockError::Error(e)) => Err(io("lock", &path)(e)),
        }
    }

    /// A local lock cannot outlive its process, so there is nothing to remove;
    /// a live holder is reported as [`StateError::Locked`].
    fn unlock(&self, stack: &str) -> Result<bool, StateError> {
        let file = self.lock(stack)?;
        drop(file);
        Ok(false)
    }

    fn list(&self) -> Result<Vec<String>, StateError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io("read", &self.dir)(e)),
        };
        let mut stacks: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                name.strip_suffix(".json").map(str::to_owned)
            })
            .collect();
        stacks.sort();
        Ok(stacks)
    }
}

/// An exclusively locked file; the kernel also releases it when the process exits.
struct FileLock(File);

impl StateLock for FileLock {
    fn release(self: Box<Self>) -> BoxFuture<'static, Result<(), StateError>> {
        drop(self.0);
        Box::pin(async { Ok(()) })
    }
}

impl StateBackend for LocalBackend {
    fn describe(&self, stack: &str) -> String {
        self.path(stack).display().to_string()
    }

    fn read_state<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<State, StateError>> {
        Box::pin(async move { self.load(stack) })
    }

    fn write_state<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<(), StateError>> {
        Box::pin(async move { self.save(state) })
    }

    fn take_lock<'a>(
        &'a self,
        stack: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn StateLock>, StateError>> {
        Box::pin(async move { Ok(Box::new(FileLock(self.lock(stack)?)) as Box<dyn StateLock>) })
    }

    fn remove_lock<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<bool, StateError>> {
        Box::pin(async move { self.unlock(stack) })
    }

    fn stacks(&self) -> BoxFuture<'_, Result<Vec<String>, StateError>> {
        Box::pin(async move { self.list() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use krt_guest::model::Resource;

    fn backend() -> (tempfile::TempDir, LocalBackend) {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path().join("state"));
        (dir, backend)
    }

    #[test]
    fn saves_atomically_and_loads_back() {
        let (_dir, b) = backend();
        assert_eq!(b.load("dev").unwrap(), State::empty("dev"));
        let mut state = State::empty("dev");
        state.put(Resource {
            id: "v1:Namespace:x".into(),
            type_: "Kubernetes".into(),
            attributes: serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}),
            depends_on: vec![],
            extensions: serde_json::json!({}),
        });
        state.stamp();
        b.save(&state).unwrap();
        assert_eq!(b.load("dev").unwrap(), state);
        assert_eq!(b.list().unwrap(), ["dev"]);
        let leftovers = std::fs::read_dir(&b.dir).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let (_dir, b) = backend();
        let held = b.lock("dev").unwrap();
        let err = b.lock("dev").unwrap_err();
        assert!(
            matches!(&err, StateError::Locked { stack, holder } if stack == "dev" && holder.starts_with("pid ")),
            "{err}"
        );
        drop(held);
        b.lock("dev").unwrap();
    }

    #[test]
    fn a_corrupt_state_names_its_file() {
        let (_dir, b) = backend();
        std::fs::create_dir_all(&b.dir).unwrap();
        std::fs::write(b.path("dev"), "{").unwrap();
        let err = b.load("dev").unwrap_err().to_string();
        assert!(
            err.starts_with("state file '") && err.contains("dev.json' is not valid"),
            "{err}"
        );
    }
}
