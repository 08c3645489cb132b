//! What can go wrong fetching, pushing or verifying a component in a registry.

use super::credentials::CredentialsError;
use crate::error::BoxError;
use std::path::PathBuf;

/// A registry operation's failure; each names the reference or registry.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The text is not a component reference.
    #[error(transparent)]
    Reference(#[from] super::ReferenceError),
    /// The credentials for the registry cannot be used.
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    /// A CA certificate given for registries is not PEM.
    #[error("cannot use the registry CA certificate '{}'", path.display())]
    CaCertificate {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The registry refused the credentials (or anonymous access).
    #[error(
        "registry {registry} refused access to {reference} (401/403) with {credentials}: log in \
         to it (docker login {registry}) or fix the credentials"
    )]
    Unauthorized {
        /// The registry.
        registry: String,
        /// The reference.
        reference: String,
        /// Which credentials were sent: `anonymous access`, or where the
        /// username and password came from.
        credentials: String,
        /// The registry client's report.
        #[source]
        source: BoxError,
    },
    /// The registry could not be reached, and the cache cannot stand in.
    #[error("registry {registry} is unreachable, and {cache}")]
    Unreachable {
        /// The registry.
        registry: String,
        /// Why the cache did not help, for example `the cache has no copy
        /// of sha256:…` or `a tag needs the registry to be resolved`.
        cache: String,
        /// The connection error.
        #[source]
        source: BoxError,
    },
    /// The TLS handshake with the registry failed.
    #[error(
        "cannot make a TLS connection to registry {registry}: trust its CA with --registry-ca \
         FILE (OciOptions::ca_certificates), or, for a registry that serves plain HTTP, name it \
         with --insecure-registry {registry}"
    )]
    Tls {
        /// The registry.
        registry: String,
        /// The connection error, naming rustls' complaint.
        #[source]
        source: BoxError,
    },
    /// The registry has no such repository, tag or digest.
    #[error("{reference} was not found in registry {registry}")]
    NotFound {
        /// The registry.
        registry: String,
        /// The reference.
        reference: String,
        /// The registry client's report.
        #[source]
        source: BoxError,
    },
    /// Bytes whose SHA-256 is not the digest that names them.
    #[error(
        "digest mismatch for {what} of {reference}: expected {expected}, the bytes are \
         {actual}; refused"
    )]
    DigestMismatch {
        /// The reference.
        reference: String,
        /// Which bytes: `the manifest`, `the component layer`.
        what: &'static str,
        /// The digest that names them.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// The artifact is not a Wasm component in the CNCF Wasm OCI layout.
    #[error(
        "{reference} is not a Wasm component artifact ({reason}): expected a config of type \
         `application/vnd.wasm.config.v0+json` and one `application/wasm` layer"
    )]
    NotAComponent {
        /// The reference.
        reference: String,
        /// What is wrong.
        reason: String,
    },
    /// The bytes to push are not a WebAssembly component.
    #[error("'{name}' is not a WebAssembly component, so it cannot be pushed as one")]
    InvalidComponent {
        /// The file.
        name: String,
        /// The decoder's complaint.
        #[source]
        source: BoxError,
    },
    /// A signing or verification key that cannot be used.
    #[error("cannot use the key {key}")]
    Key {
        /// The key, for example `'cosign.pub'`.
        key: String,
        /// Why: unreadable, not PEM, a wrong password.
        #[source]
        source: BoxError,
    },
    /// A component that the verification policy covers carries no signature
    /// that one of its keys verifies; refused before it is compiled.
    #[error(
        "{reference} ({digest}) is not signed by any of the keys tried ({keys}): {found}; refused"
    )]
    Unsigned {
        /// The reference.
        reference: String,
        /// The manifest digest whose signatures were checked.
        digest: String,
        /// The keys tried, for example `'cosign.pub', 'team.pub'`.
        keys: String,
        /// What was found: `no signatures`, or how many that none verify.
        found: String,
    },
    /// The signatures could not be read or written.
    #[error("cannot {action} the signatures of {reference} ({digest})")]
    Signatures {
        /// `read` or `push`.
        action: &'static str,
        /// The reference.
        reference: String,
        /// The manifest digest.
        digest: String,
        /// sigstore's report.
        #[source]
        source: BoxError,
    },
    /// Any other registry failure.
    #[error("registry {registry} failed on {reference}")]
    Registry {
        /// The registry.
        registry: String,
        /// The reference.
        reference: String,
        /// The registry client's report.
        #[source]
        source: BoxError,
    },
    /// The content-addressed cache could not be read or written.
    #[error("cannot use the component cache at '{}'", dir.display())]
    Cache {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
