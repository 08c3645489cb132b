//! The content-addressed cache of pulled artifacts: each manifest, config and
//! layer under `sha256/<hex>`, named by the digest of its bytes and checked
//! against that digest on every read, so an entry changed on disk is never
//! used (it is removed, and the artifact pulled again).

use crate::compile_cache::{PrivateDirError, hex, private_dir};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The directory, beside the blobs, of the records of verified signatures.
pub(crate) const VERIFIED: &str = "verified";

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
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
    /// The cache under `dir`, created private to this user when missing. An
    /// existing one must be private already: the records of verified
    /// signatures (`verified/`) live there, and a component they cover loads
    /// without its signatures being checked again.
    pub(crate) fn open(dir: &Path) -> std::io::Result<Self> {
        let blobs = dir.join("sha256");
        for level in [dir, &blobs, &dir.join(VERIFIED)] {
            private_dir(level).map_err(|e| match e {
                PrivateDirError::Io(e) => e,
                PrivateDirError::NotPrivate { owner, mode, uid } => std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "'{}' is not private to this user (owner uid {owner}, mode {mode:o}): krt \
                         trusts the signature verifications it records there, so it must be \
                         owned by uid {uid} and writable by nobody else",
                        level.display()
                    ),
                ),
            })?;
        }
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

    #[test]
    fn a_cache_others_may_write_to_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("oci");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
        let refused = BlobCache::open(&shared).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(
            refused
                .to_string()
                .contains("is not private to this user (owner uid")
                && refused.to_string().contains("mode 777"),
            "{refused}"
        );
        assert!(!shared.join("sha256").exists(), "nothing is created in it");

        // Its verified-signature records too.
        let own = dir.path().join("own");
        fs::create_dir_all(own.join(VERIFIED)).unwrap();
        fs::set_permissions(own.join(VERIFIED), fs::Permissions::from_mode(0o757)).unwrap();
        let refused = BlobCache::open(&own).unwrap_err();
        assert!(
            refused.to_string().contains("verified' is not private"),
            "{refused}"
        );
        BlobCache::open(dir.path().join("fresh").as_path()).expect("a new cache is made private");
    }
}
