//! Components from OCI registries: `oci://` references, pulls and pushes in
//! the CNCF Wasm OCI artifact layout (bytecodealliance's `oci-wasm` over
//! `oci-client`), Docker-format registry credentials, cosign-compatible
//! signatures (sigstore-rs) required by a [`VerificationPolicy`], and a cache
//! keyed by digest and checked on every read, so a digest already pulled (and
//! verified) works offline.

mod blobs;
mod classify;
mod credentials;
mod error;
mod inspect;
mod reference;
mod signatures;
mod store;
mod trust;

pub use credentials::{CredentialProblem, CredentialsError, RegistryCredentials};
pub use error::OciError;
pub use inspect::Inspection;
pub use reference::{OciReference, ReferenceError, SCHEME};
pub use signatures::{VerificationPolicy, VerifyKey, generate_key_pair, signature_tag};
pub use store::{Fetched, OciOptions, OciStore, Pushed};

use crate::engine::{is_next_link, split_version};
pub use trust::Signed;

/// The `kusion:runtime` world a component with these imports and exports
/// (as the Wasm OCI config lists them, `ns:pkg/iface@version`) targets:
/// `kusion:runtime/kubernetes-runtime@V` for a runtime,
/// `kusion:runtime/middleware@V` or `kusion:runtime/cluster-middleware@V`
/// for a middleware; `None` when it exports no `kusion:runtime/runtime`.
pub fn world_of(imports: &[String], exports: &[String]) -> Option<String> {
    let version = exports
        .iter()
        .map(|e| split_version(e))
        .find_map(|(path, version)| (path == "kusion:runtime/runtime").then_some(version))?
        .unwrap_or("(unversioned)");
    let cluster = imports
        .iter()
        .any(|i| split_version(i).0 == "kusion:runtime/kubernetes");
    let world = match (imports.iter().any(|i| is_next_link(i)), cluster) {
        (true, true) => "cluster-middleware",
        (true, false) => "middleware",
        (false, _) => "kubernetes-runtime",
    };
    Some(format!("kusion:runtime/{world}@{version}"))
}

#[cfg(test)]
mod tests {
    use super::world_of;

    #[test]
    fn worlds_by_imports() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let exports = s(&["kusion:runtime/runtime@0.1.2"]);
        assert_eq!(
            world_of(
                &s(&[
                    "kusion:runtime/kubernetes@0.1.2",
                    "kusion:runtime/host@0.1.2"
                ]),
                &exports
            )
            .as_deref(),
            Some("kusion:runtime/kubernetes-runtime@0.1.2")
        );
        assert_eq!(
            world_of(
                &s(&["kusion:runtime/runtime@0.1.2", "kusion:runtime/host@0.1.2"]),
                &exports
            )
            .as_deref(),
            Some("kusion:runtime/middleware@0.1.2")
        );
        assert_eq!(
            world_of(
                &s(&[
                    "kusion:runtime/runtime@0.1.2",
                    "kusion:runtime/kubernetes@0.1.2"
                ]),
                &exports
            )
            .as_deref(),
            Some("kusion:runtime/cluster-middleware@0.1.2")
        );
        assert_eq!(world_of(&[], &s(&["wasi:cli/run@0.2.0"])), None);
    }
}
