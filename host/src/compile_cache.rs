//! krt's compiled-component cache: the machine code wasmtime compiles from a
//! component, written once with [`Engine::precompile_component`] and mapped
//! straight from the file on every later start ([`Component::deserialize_file`]),
//! instead of read, decompressed and copied as wasmtime's own cache does (a
//! 12 MB JavaScript component: about 1 ms mapped, against about 190 ms).
//!
//! An entry is keyed by the SHA-256 of the component's bytes, in a directory
//! per engine configuration (wasmtime's [compatibility
//! hash](Engine::precompile_compatibility_hash): its version and the settings
//! that change the code), so a changed component or engine never finds a stale
//! entry; wasmtime checks both again when it maps one.
//! Least recently used entries go when the directory grows past its limit.
//!
//! Mapped code runs in the host process, so an entry must be what this cache
//! wrote: the directory is created private (mode 0700), and a directory or
//! entry that another user owns, or that others may write, is never read.

use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;
use wasmtime::Engine;
use wasmtime::component::Component;

/// An entry's file name ends with this.
const SUFFIX: &str = ".cwasm";

/// Why the cache directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The directory could not be created or read.
    #[error("cannot use the compile cache at '{}'", dir.display())]
    Io {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Another user owns the directory, or others may write to it: code
    /// mapped from it would run in this process.
    #[error(
        "the compile cache at '{}' is not private to this user (owner uid {owner}, mode {mode:o}): \
         krt runs the machine code it finds there, so it must be owned by uid {uid} and \
         writable by nobody else",
        dir.display()
    )]
    NotPrivate {
        /// The directory.
        dir: PathBuf,
        /// Its owner.
        owner: u32,
        /// Its permission bits.
        mode: u32,
        /// This process's user.
        uid: u32,
    },
}

/// The cache of one engine configuration.
#[derive(Debug)]
pub(crate) struct CompileCache {
    /// The directory of this engine configuration's entries.
    dir: PathBuf,
    /// Most bytes the entries may take before the least recently used go.
    max_bytes: u64,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl CompileCache {
    /// Opens (creating it private) the cache under `root` for `engine`'s
    /// configuration, holding at most `max_bytes` of entries.
    pub(crate) fn open(root: &Path, engine: &Engine, max_bytes: u64) -> Result<Self, CacheError> {
        let mut config = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut config);
        let dir = root.join(format!("engine-{:016x}", config.finish()));
        for level in [root, dir.as_path()] {
            private_dir(level).map_err(|e| match e {
                PrivateDirError::Io(source) => CacheError::Io {
                    dir: dir.clone(),
                    source,
                },
                PrivateDirError::NotPrivate { owner, mode, uid } => CacheError::NotPrivate {
                    dir: level.to_path_buf(),
                    owner,
                    mode,
                    uid,
                },
            })?;
        }
        Ok(CompileCache {
            dir,
            max_bytes,
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        })
    }

    /// The component compiled from `bytes` (whose SHA-256 in hex is `sha256`
    /// when the caller knows it), and whether it was found in the cache: mapped from its entry when there is one, else compiled, written
    /// as a new entry and mapped from it. An entry wasmtime refuses (written
    /// by an incompatible build, damaged) is compiled again and replaced.
    ///
    /// # Errors
    /// What wasmtime says of bytes that are not a valid component; a cache
    /// that cannot be written is not an error (the compiled component is used
    /// from memory).
    pub(crate) fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: Option<&str>,
    ) -> Result<(Component, bool), wasmtime::Error> {
        let digest = match sha256 {
            Some(known) => known.to_owned(),
            None => hex(&Sha256::digest(bytes)),
        };
        let entry = self.dir.join(format!("{digest}{SUFFIX}"));
        if let Some(component) = self.mapped(engine, &entry) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            // Recently used: the last to go when the cache is trimmed.
            let _ = File::options()
                .append(true)
                .open(&entry)
                .and_then(|f| f.set_modified(SystemTime::now()));
            return Ok((component, true));
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let compiled = engine.precompile_component(bytes)?;
        match self.write(&entry, &compiled) {
            Ok(()) => {
                self.trim(&entry);
                if let Some(component) = self.mapped(engine, &entry) {
                    return Ok((component, false));
                }
            }
            Err(e) => {
                tracing::warn!(entry = %entry.display(), error = %e, "cannot write to the compile cache")
            }
        }
        Ok((deserialize(engine, &compiled)?, false))
    }

    /// How many components were found in the cache, and how many were not
    /// (then compiled and added).
    pub(crate) fn counts(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// The component mapped from `entry`, when it exists, is private and
    /// wasmtime takes it; an entry it refuses is removed.
    fn mapped(&self, engine: &Engine, entry: &Path) -> Option<Component> {
        let meta = fs::symlink_metadata(entry).ok()?;
        if !meta.is_file() || !private(&meta) {
            return None;
        }
        match map(engine, entry) {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::debug!(entry = %entry.display(), error = %e, "compile cache entry refused; compiling again");
                let _ = fs::remove_file(entry);
                None
            }
        }
    }

    /// Writes `compiled` to `entry` whole or not at all (a temporary file in
    /// the same directory, renamed into place).
    fn write(&self, entry: &Path, compiled: &[u8]) -> std::io::Result<()> {
        let mut file = tempfile::Builder::new()
            .prefix(".partial-")
            .permissions(fs::Permissions::from_mode(0o600))
            .tempfile_in(&self.dir)?;
        file.write_all(compiled)?;
        file.as_file().sync_data()?;
        file.persist(entry).map_err(|e| e.error)?;
        Ok(())
    }

    /// Removes the least recently used entries (never `keep`) until the
    /// entries fit in `max_bytes`.
    fn trim(&self, keep: &Path) {
        let Ok(read) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = read
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(SUFFIX))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            if path != keep && fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Why a directory krt keeps what it trusts in cannot be used.
#[derive(Debug)]
pub(crate) enum PrivateDirError {
    /// It could not be created or read.
    Io(std::io::Error),
    /// Another user owns it, or others may write to it.
    NotPrivate {
        /// Its owner.
        owner: u32,
        /// Its permission bits.
        mode: u32,
        /// This process's user.
        uid: u32,
    },
}

/// Creates `dir` (and its missing parents) private to this user, or checks
/// that the one there is: owned by this user, writable by nobody else.
pub(crate) fn private_dir(dir: &Path) -> Result<(), PrivateDirError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(PrivateDirError::Io)?;
    let meta = fs::metadata(dir).map_err(PrivateDirError::Io)?;
    if private(&meta) {
        return Ok(());
    }
    Err(PrivateDirError::NotPrivate {
        owner: meta.uid(),
        mode: meta.mode() & 0o7777,
        uid: rustix::process::getuid().as_raw(),
    })
}

/// Whether this process's user owns `meta`'s file and nobody else may write it.
fn private(meta: &fs::Metadata) -> bool {
    meta.uid() == rustix::process::getuid().as_raw() && meta.mode() & 0o022 == 0
}

/// Lowercase hex of `digest`.
pub(crate) fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Maps a compiled component from `entry`.
#[allow(
    unsafe_code,
    reason = "wasmtime runs the code of a compiled artifact as it is: only entries this cache \
              wrote, in a directory private to this user, are mapped"
)]
fn map(engine: &Engine, entry: &Path) -> Result<Component, wasmtime::Error> {
    // SAFETY: `entry` was written by `CompileCache::write` from
    // `Engine::precompile_component` (its directory and the file are checked
    // to be private to this user, so no other user can have placed it), and
    // wasmtime checks that its version and settings match `engine`.
    unsafe { Component::deserialize_file(engine, entry) }
}

/// Loads a compiled component from memory, when the cache cannot be written.
#[allow(
    unsafe_code,
    reason = "`compiled` is what Engine::precompile_component just returned"
)]
fn deserialize(engine: &Engine, compiled: &[u8]) -> Result<Component, wasmtime::Error> {
    // SAFETY: `compiled` comes from `Engine::precompile_component` on this
    // very engine, in this process.
    unsafe { Component::deserialize(engine, compiled) }
}
