//! `oci://REGISTRY/REPOSITORY:TAG` and `oci://REGISTRY/REPOSITORY@sha256:…`:
//! how a component in a registry is named everywhere krt takes one.

use std::fmt;
use std::str::FromStr;

/// What a component reference starts with.
pub const SCHEME: &str = "oci://";

/// A component in an OCI registry: a registry (`host[:port]`), a repository,
/// and a tag or a digest. A digest reference names one artifact for ever; a
/// tag is resolved to a digest each time it is fetched.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OciReference {
    inner: oci_client::Reference,
}

/// Why a string is not a component reference.
#[derive(Debug, thiserror::Error)]
#[error(
    "'{reference}' is not an OCI component reference ({reason}); expected \
         oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:DIGEST"
)]
pub struct ReferenceError {
    /// The text given.
    pub reference: String,
    /// What is wrong with it.
    pub reason: String,
}

impl OciReference {
    /// Parses `oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]` (the `oci://`
    /// prefix may be left out). The registry must be named: its first path
    /// segment must be `localhost` or contain a `.` or a `:`, so that no
    /// reference silently means Docker Hub. Without a tag or digest the tag is
    /// `latest`, as Docker's.
    ///
    /// # Errors
    /// A reference without a registry or repository, with an invalid tag, or
    /// with a digest that is not `sha256:` and 64 lowercase hex digits.
    pub fn parse(text: &str) -> Result<Self, ReferenceError> {
        let bad = |reason: &str| ReferenceError {
            reference: text.to_owned(),
            reason: reason.to_owned(),
        };
        let rest = text.strip_prefix(SCHEME).unwrap_or(text);
        let Some((registry, repository)) = rest.split_once('/') else {
            return Err(bad("no repository after the registry"));
        };
        if !(registry == "localhost" || registry.contains('.') || registry.contains(':')) {
            return Err(bad(&format!(
                "'{registry}' is not a registry host: name one, such as localhost:5000 or \
                 registry.example.com"
            )));
        }
        if repository.is_empty() {
            return Err(bad("empty repository"));
        }
        if let Some((_, digest)) = rest.rsplit_once('@') {
            let hex = digest.strip_prefix("sha256:").unwrap_or("");
            let valid =
                hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            if !valid {
                return Err(bad(&format!(
                    "digest '{digest}' is not sha256 and 64 lowercase hex digits"
                )));
            }
        }
        let inner = oci_client::Reference::from_str(rest).map_err(|e| bad(&e.to_string()))?;
        Ok(OciReference { inner })
    }

    /// The same repository pinned to `digest` (`sha256:…`), without a tag.
    pub fn pinned(&self, digest: &str) -> OciReference {
        OciReference {
            inner: oci_client::Reference::with_digest(
                self.inner.registry().to_owned(),
                self.inner.repository().to_owned(),
                digest.to_owned(),
            ),
        }
    }

    /// The same repository with `tag`.
    pub fn with_tag(&self, tag: &str) -> OciReference {
        OciReference {
            inner: oci_client::Reference::with_tag(
                self.inner.registry().to_owned(),
                self.inner.repository().to_owned(),
                tag.to_owned(),
            ),
        }
    }

    /// The registry, `host[:port]`.
    pub fn registry(&self) -> &str {
        self.inner.resolve_registry()
    }

    /// The repository, for example `team/policy`.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The tag, when the reference has one.
    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The digest (`sha256:…`), when the reference is pinned to one.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// The last segment of the repository: a middleware's name in a chain.
    pub fn name(&self) -> &str {
        let repository = self.inner.repository();
        repository.rsplit('/').next().unwrap_or(repository)
    }

    /// Whether the registry is reached over plain HTTP without being named
    /// insecure: `localhost` and `127.0.0.1` (any port), as Docker treats
    /// them.
    pub(crate) fn is_loopback_host(&self) -> bool {
        let registry = self.registry();
        let host = registry.split(':').next().unwrap_or(registry);
        matches!(host, "localhost" | "127.0.0.1")
    }

    /// The reference as oci-client takes it.
    pub(crate) fn client_reference(&self) -> &oci_client::Reference {
        &self.inner
    }
}

impl FromStr for OciReference {
    type Err = ReferenceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OciReference::parse(s)
    }
}

impl fmt::Display for OciReference {
    /// `oci://REGISTRY/REPOSITORY` then `:TAG` and/or `@DIGEST`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry(), self.repository())?;
        if let Some(tag) = self.tag() {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = self.digest() {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn tags_digests_and_defaults() {
        let r = OciReference::parse("oci://localhost:5000/team/guest:v1").unwrap();
        assert_eq!(
            (r.registry(), r.repository(), r.tag(), r.digest()),
            ("localhost:5000", "team/guest", Some("v1"), None)
        );
        assert_eq!(r.name(), "guest");
        assert_eq!(r.to_string(), "oci://localhost:5000/team/guest:v1");
        let latest = OciReference::parse("registry.example.com/guest").unwrap();
        assert_eq!(latest.tag(), Some("latest"));
        let pinned = OciReference::parse(&format!("oci://127.0.0.1:5000/guest@{DIGEST}")).unwrap();
        assert_eq!(pinned.digest(), Some(DIGEST));
        assert_eq!(pinned.tag(), None);
        assert_eq!(
            r.pinned(DIGEST).to_string(),
            format!("oci://localhost:5000/team/guest@{DIGEST}")
        );
    }

    #[test]
    fn loopback_hosts_are_plain_http() {
        for (text, loopback) in [
            ("localhost:5000/a:b", true),
            ("127.0.0.1:5000/a:b", true),
            ("127.0.0.2:5000/a:b", false),
            ("registry.example.com/a:b", false),
        ] {
            assert_eq!(
                OciReference::parse(text).unwrap().is_loopback_host(),
                loopback,
                "{text}"
            );
        }
    }

    #[test]
    fn refuses_what_names_no_registry_or_a_bad_digest() {
        for (text, says) in [
            ("oci://guest:v1", "no repository"),
            ("oci://team/guest:v1", "'team' is not a registry host"),
            ("oci://localhost:5000/", "empty repository"),
            ("oci://localhost:5000/guest@sha256:abc", "64 lowercase hex"),
            (
                "oci://localhost:5000/guest@md5:0123456789abcdef0123456789abcdef",
                "",
            ),
            ("oci://localhost:5000/Guest:v1", ""),
        ] {
            let err = OciReference::parse(text).unwrap_err().to_string();
            assert!(err.contains(says) && err.contains(text), "{text}: {err}");
        }
    }
}
