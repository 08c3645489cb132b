//! Cosign-compatible keyed signatures of components, through sigstore-rs: a
//! simple-signing payload naming the manifest digest, signed with an ECDSA
//! P-256 key and stored as cosign stores it (a layer of the artifact tagged
//! `sha256-<hex>.sig` in the same repository), so `cosign verify --key`
//! accepts what `krt component sign` made, and krt accepts what cosign signed.

use super::error::OciError;
use super::reference::OciReference;
use crate::policy::glob;
use sigstore::cosign::constraint::PrivateKeySigner;
use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraint};
use sigstore::cosign::{Constraint, CosignCapabilities, SignatureLayer};
use sigstore::crypto::SigningScheme;
use sigstore::crypto::signing_key::SigStoreKeyPair;
use std::path::Path;
use zeroize::Zeroizing;

/// A public key (PEM, as `cosign.pub`) signatures are checked with.
#[derive(Clone)]
pub struct VerifyKey {
    /// How messages name it, for example the file's path.
    pub name: String,
    pem: Vec<u8>,
}

impl std::fmt::Debug for VerifyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyKey")
            .field("name", &self.name)
            .finish()
    }
}

impl VerifyKey {
    /// The key in PEM `pem` (RSA, ECDSA P-256/P-384 or Ed25519), named `name`.
    ///
    /// # Errors
    /// [`OciError::Key`] when it is not a public key sigstore can use.
    pub fn from_pem(name: impl Into<String>, pem: Vec<u8>) -> Result<Self, OciError> {
        let name = name.into();
        PublicKeyVerifier::try_from(&pem).map_err(|e| OciError::Key {
            key: name.clone(),
            source: e.into(),
        })?;
        Ok(VerifyKey { name, pem })
    }

    /// The key in the file `path` (for example `cosign.pub`).
    ///
    /// # Errors
    /// An unreadable file, or not a public key.
    pub fn from_file(path: &Path) -> Result<Self, OciError> {
        let name = format!("'{}'", path.display());
        let pem = std::fs::read(path).map_err(|e| OciError::Key {
            key: name.clone(),
            source: e.into(),
        })?;
        VerifyKey::from_pem(name, pem)
    }

    /// The key's fingerprint: the SHA-256 of its PEM text, for the cache's
    /// record of what it verified.
    pub(crate) fn fingerprint(&self) -> String {
        super::blobs::sha256_digest(&self.pem)
    }

    fn verifier(&self) -> Box<dyn VerificationConstraint> {
        Box::new(PublicKeyVerifier::try_from(&self.pem).expect("checked when the key was made"))
    }
}

/// Which components must be signed, and by which keys: each rule names
/// references (globs over `oci://REGISTRY/REPOSITORY`, every reference when
/// it names none) and keys; a component that a rule covers must carry a
/// signature that one of the keys of the rules covering it verifies.
#[derive(Debug, Clone, Default)]
pub struct VerificationPolicy {
    rules: Vec<(Vec<String>, Vec<VerifyKey>)>,
}

impl VerificationPolicy {
    /// No component needs a signature.
    pub fn none() -> Self {
        VerificationPolicy::default()
    }

    /// Every registry component must be signed by one of `keys`.
    pub fn require(keys: Vec<VerifyKey>) -> Self {
        VerificationPolicy::none().with_rule(Vec::new(), keys)
    }

    /// Adds a rule: the references `patterns` match (all, when empty) must
    /// be signed by one of `keys`.
    pub fn with_rule(mut self, patterns: Vec<String>, keys: Vec<VerifyKey>) -> Self {
        if !keys.is_empty() {
            self.rules.push((patterns, keys));
        }
        self
    }

    /// Whether no rule asks for anything.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The keys one of which must have signed `reference`; empty when no
    /// rule covers it.
    pub(crate) fn keys_for(&self, reference: &OciReference) -> Vec<&VerifyKey> {
        let repository = format!(
            "{}{}/{}",
            super::SCHEME,
            reference.registry(),
            reference.repository()
        );
        self.rules
            .iter()
            .filter(|(patterns, _)| patterns.is_empty() || glob::any(patterns, &repository))
            .flat_map(|(_, keys)| keys)
            .collect()
    }
}

/// A new key pair as cosign writes it: the private key encrypted with
/// `password` (cosign's `ENCRYPTED SIGSTORE PRIVATE KEY` PEM, scrypt and
/// NaCl secretbox) and the public key (PEM).
///
/// # Errors
/// Key generation or encryption failed.
pub fn generate_key_pair(password: &[u8]) -> Result<(Zeroizing<String>, String), OciError> {
    let key = |e: sigstore::errors::SigstoreError| OciError::Key {
        key: "the new key pair".to_owned(),
        source: e.into(),
    };
    let pair = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .and_then(|signer| signer.to_sigstore_keypair())
        .map_err(key)?;
    Ok((
        pair.private_key_to_encrypted_pem(password).map_err(key)?,
        pair.public_key_to_pem().map_err(key)?,
    ))
}

/// A cosign signature layer over `digest` of `reference`, signed with the
/// private key PEM `private_pem` (encrypted with `password`, or plain when
/// the password is empty and the PEM is not encrypted).
pub(crate) fn sign_layer(
    reference: &OciReference,
    digest: &str,
    key_name: &str,
    private_pem: &[u8],
    password: &[u8],
) -> Result<SignatureLayer, OciError> {
    let key = |e: sigstore::errors::SigstoreError| OciError::Key {
        key: key_name.to_owned(),
        source: e.into(),
    };
    let encrypted = std::str::from_utf8(private_pem).is_ok_and(|t| t.contains("ENCRYPTED"));
    let pair = match encrypted {
        true => SigStoreKeyPair::from_encrypted_pem(private_pem, password),
        false => SigStoreKeyPair::from_pem(private_pem),
    }
    .map_err(key)?;
    // Cosign's keys are ECDSA P-256; Ed25519 keys sign too.
    let scheme = match &pair {
        SigStoreKeyPair::ED25519(_) => SigningScheme::ED25519,
        _ => SigningScheme::ECDSA_P256_SHA256_ASN1,
    };
    let signer = pair.to_sigstore_signer(&scheme).map_err(key)?;
    let mut layer =
        SignatureLayer::new_unsigned(&sigstore_reference(reference), digest).map_err(key)?;
    PrivateKeySigner::new_with_signer(signer)
        .add_constraint(&mut layer)
        .map_err(key)?;
    Ok(layer)
}

/// Whether one of `layers` is signed by `key`.
pub(crate) fn signed_by(layers: &[SignatureLayer], key: &VerifyKey) -> bool {
    let verifier = key.verifier();
    layers
        .iter()
        .any(|layer| verifier.verify(layer).unwrap_or(false))
}

/// The signature layers stored for `digest` of `reference` (cosign's
/// `.sig` tag and OCI referrers), each checked to be about that digest.
pub(crate) async fn layers(
    client: &mut sigstore::cosign::Client,
    auth: &sigstore::registry::Auth,
    reference: &OciReference,
    digest: &str,
) -> Result<Vec<SignatureLayer>, sigstore::errors::SigstoreError> {
    client
        .trusted_signature_layers(auth, &sigstore_reference(&reference.pinned(digest)))
        .await
}

/// Pushes `layers` as the signatures of `digest` of `reference`, under
/// cosign's `sha256-<hex>.sig` tag.
pub(crate) async fn push_layers(
    client: &mut sigstore::cosign::Client,
    auth: &sigstore::registry::Auth,
    reference: &OciReference,
    digest: &str,
    layers: Vec<SignatureLayer>,
) -> Result<OciReference, sigstore::errors::SigstoreError> {
    let target = reference.with_tag(&signature_tag(digest));
    client
        .push_signature(None, auth, &sigstore_reference(&target), layers)
        .await?;
    Ok(target)
}

/// Cosign's tag for the signatures of `digest`: `sha256-<hex>.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

fn sigstore_reference(reference: &OciReference) -> sigstore::registry::OciReference {
    let registry = reference.registry().to_owned();
    let repository = reference.repository().to_owned();
    match (reference.digest(), reference.tag()) {
        (Some(digest), _) => {
            sigstore::registry::OciReference::with_digest(registry, repository, digest.to_owned())
        }
        (None, tag) => sigstore::registry::OciReference::with_tag(
            registry,
            repository,
            tag.unwrap_or("latest").to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_layer_signed_with_the_private_key_verifies_with_its_public_key_only() {
        let (private, public) = generate_key_pair(b"pw").unwrap();
        assert!(
            private.contains("ENCRYPTED SIGSTORE PRIVATE KEY"),
            "{}",
            &*private
        );
        let (_, other_public) = generate_key_pair(b"").unwrap();
        let reference = OciReference::parse("oci://localhost:5000/krt/guest:v1").unwrap();
        let layer = sign_layer(&reference, DIGEST, "k", private.as_bytes(), b"pw").unwrap();
        let key = VerifyKey::from_pem("cosign.pub", public.into_bytes()).unwrap();
        let other = VerifyKey::from_pem("other.pub", other_public.into_bytes()).unwrap();
        assert!(signed_by(std::slice::from_ref(&layer), &key));
        assert!(!signed_by(&[layer], &other));
        let wrong = sign_layer(&reference, DIGEST, "k", private.as_bytes(), b"nope").unwrap_err();
        assert!(
            wrong.to_string().contains("'k'") || wrong.to_string().contains("k"),
            "{wrong}"
        );
        assert!(VerifyKey::from_pem("junk", b"not a key".to_vec()).is_err());
    }

    #[test]
    fn rules_cover_references_by_glob() {
        let (_, public) = generate_key_pair(b"").unwrap();
        let key = VerifyKey::from_pem("k", public.into_bytes()).unwrap();
        let policy = VerificationPolicy::none().with_rule(
            vec!["oci://localhost:5000/team/*".into()],
            vec![key.clone()],
        );
        let covered = OciReference::parse("oci://localhost:5000/team/guest:v1").unwrap();
        let other = OciReference::parse("oci://localhost:5000/other/guest:v1").unwrap();
        assert_eq!(policy.keys_for(&covered).len(), 1);
        assert!(policy.keys_for(&other).is_empty());
        assert_eq!(
            VerificationPolicy::require(vec![key])
                .keys_for(&other)
                .len(),
            1
        );
        assert_eq!(
            signature_tag(DIGEST),
            "sha256-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.sig"
        );
    }
}
