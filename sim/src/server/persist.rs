//! Keeping a simulator's objects in a file between runs, so the embedded
//! cluster of `krt` remembers what earlier runs applied.

use crate::store::{Key, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The file format: the latest resourceVersion and every object with its key.
#[derive(Serialize, Deserialize)]
struct Snapshot {
    #[serde(rename = "resourceVersion")]
    resource_version: u64,
    objects: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: Key,
    object: Value,
}

/// Loads `path` into `state`; `Ok(false)` when there is no file yet.
///
/// # Errors
/// An unreadable file or one that is not a snapshot (the message names the file).
pub fn load(state: &mut State, path: &Path) -> Result<bool, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(format!(
                "cannot read the cluster state '{}': {e}",
                path.display()
            ));
        }
    };
    let snapshot: Snapshot = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the cluster state '{}' is not a krt-sim snapshot ({e}); move it away to start empty",
            path.display()
        )
    })?;
    let objects = snapshot
        .objects
        .into_iter()
        .map(|e| (e.key, e.object))
        .collect();
    state.restore(snapshot.resource_version, objects);
    Ok(true)
}

/// Writes `state` to `path` atomically (a temporary file renamed over it).
///
/// # Errors
/// When the directory or file cannot be written.
pub fn save(state: &State, path: &Path) -> std::io::Result<()> {
    let (resource_version, objects) = state.snapshot();
    let snapshot = Snapshot {
        resource_version,
        objects: objects
            .into_iter()
            .map(|(key, object)| Entry { key, object })
            .collect(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(
        &tmp,
        serde_json::to_vec(&snapshot).map_err(std::io::Error::other)?,
    )?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use serde_json::json;

    #[test]
    fn a_saved_store_loads_back_with_its_versions() {
        let dir = std::env::temp_dir().join(format!("krt-sim-persist-{}", std::process::id()));
        let path = dir.join("state.json");
        let store = Store::new(10);
        let key = Key::of("", "configmaps", "default", "a");
        store
            .lock()
            .put(key.clone(), json!({"metadata": {"name": "a"}}));
        save(&store.lock(), &path).unwrap();

        let other = Store::new(10);
        assert!(load(&mut other.lock(), &path).unwrap());
        let state = other.lock();
        assert_eq!(state.get(&key).unwrap()["metadata"]["resourceVersion"], "2");
        assert_eq!(state.resource_version(), 2);
        std::fs::write(&path, "not json").unwrap();
        drop(state);
        let err = load(&mut Store::new(10).lock(), &path).unwrap_err();
        assert!(err.contains("is not a krt-sim snapshot"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
