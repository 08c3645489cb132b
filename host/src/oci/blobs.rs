//! The content-addressed cache of pulled artifacts: each manifest, config and
//! layer under `sha256/<hex>`, named by the digest of its bytes and checked
//! against that digest on every read, so an entry changed on disk is never
//! used (it is removed, and the artifact pulled again).

use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// What a cache read found.
pub(crate) enum Lookup {
    /// The bytes, whose digest is the one asked for.
    Hit(Vec<u8>),
    /// No entry.
    Miss,
    /// An entry whose bytes have another digest: it was removed.
    Corrupt,
}

/// A directory of blobs named by their digests.
#[derive(Debug, Clone)]
pub(crate) struct BlobCache {
    dir: PathBuf,
}

impl BlobCache {
    /// The cache under `dir`, created (private to this user) when missing.
    pub(crate) fn open(dir: &Path) -> std::io::Result<Self> {
        let blobs = dir.join("sha256");
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&blobs)?;
        Ok(BlobCache { dir: blobs })
    }

    /// Where the blob of `digest` lives; `None` for a digest that is not
    /// `sha256:` and 64 hex digits (it cannot name a file here).
    fn path(&self, digest: &str) -> Option<PathBuf> {
        let hex = digest.strip_prefix("sha256:")?;
        (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| self.dir.join(hex))
    }

    /// The blob of `digest`, checked against it.
    pub(crate) fn get(&self, digest: &str) -> std::io::Result<Lookup> {
        let Some(path) = self.path(digest) else {
            return Ok(Lookup::Miss);
        };
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lookup::Miss),
            Err(e) => return Err(e),
        };
        let actual = sha256_digest(&bytes);
        if actual == digest {
            return Ok(Lookup::Hit(bytes));
        }
        tracing::warn!(path = %path.display(), expected = digest, actual, "cached blob changed on disk; removed");
        fs::remove_file(&path)?;
        Ok(Lookup::Corrupt)
    }

    /// Stores `bytes` as the blob of their own digest (written to a
    /// temporary file and renamed, so a reader never sees half of one).
    pub(crate) fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let digest = sha256_digest(bytes);
        let path = self.path(&digest).expect("a computed digest names a file");
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        tmp.write_all(bytes)?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_changed_on_disk_is_refused_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BlobCache::open(dir.path()).unwrap();
        let digest = cache.put(b"component").unwrap();
        assert_eq!(digest, sha256_digest(b"component"));
        assert!(matches!(cache.get(&digest).unwrap(), Lookup::Hit(b) if b == b"component"));
        let file = dir
            .path()
            .join("sha256")
            .join(digest.strip_prefix("sha256:").unwrap());
        fs::write(&file, b"tampered").unwrap();
        assert!(matches!(cache.get(&digest).unwrap(), Lookup::Corrupt));
        assert!(!file.exists());
        assert!(matches!(cache.get(&digest).unwrap(), Lookup::Miss));
        assert!(matches!(
            cache.get("sha256:../../etc/passwd").unwrap(),
            Lookup::Miss
        ));
    }
}
