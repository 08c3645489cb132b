//! Signatures on the store: checking a component against the verification
//! policy before it is used (and recording a verified digest in the cache),
//! and signing one in its registry, through sigstore-rs's cosign client.

use super::blobs::VERIFIED;
use super::classify::connect_failure;
use super::error::OciError;
use super::reference::OciReference;
use super::signatures;
use super::store::OciStore;
use crate::error::BoxError;
use oci_client::secrets::RegistryAuth;
use std::path::PathBuf;

/// A component signed in its registry.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The manifest digest signed.
    pub digest: String,
    /// Where the signatures are: the `sha256-<hex>.sig` tag.
    pub signature: OciReference,
}

impl OciStore {
    /// A sigstore cosign client for `reference`'s registry, set up as
    /// [`OciStore::client`]'s, and the credentials to send it.
    fn cosign_client(
        &self,
        reference: &OciReference,
    ) -> Result<(sigstore::cosign::Client, sigstore::registry::Auth), OciError> {
        use sigstore::registry as sr;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = sr::ClientConfig {
            protocol: sr::ClientProtocol::HttpsExcept(self.plain_http(reference)),
            extra_root_certificates: self
                .inner
                .roots
                .iter()
                .map(|c| sr::Certificate {
                    encoding: sr::CertificateEncoding::Pem,
                    data: c.data.clone(),
                })
                .collect(),
            ..sr::ClientConfig::default()
        };
        let client = sigstore::cosign::ClientBuilder::default()
            .with_oci_client_config(config)
            .build()
            .map_err(|e| OciError::Registry {
                registry: reference.registry().to_owned(),
                reference: reference.to_string(),
                source: e.into(),
            })?;
        let auth = match self
            .inner
            .options
            .credentials
            .for_registry(reference.registry())?
        {
            RegistryAuth::Anonymous => sr::Auth::Anonymous,
            RegistryAuth::Basic(user, password) => sr::Auth::Basic(user, password),
            RegistryAuth::Bearer(token) => sr::Auth::Bearer(token),
        };
        Ok((client, auth))
    }

    /// Checks that `digest` of `reference` carries a signature one of the
    /// policy's keys for it verifies (nothing to check when no rule covers
    /// it). A digest verified before with one of those keys, as the cache
    /// records, is not checked again: that is what lets it load offline.
    pub(super) async fn verify(
        &self,
        reference: &OciReference,
        digest: &str,
    ) -> Result<(), OciError> {
        let keys = self.inner.options.verification.keys_for(reference);
        if keys.is_empty() || keys.iter().any(|k| self.was_verified(digest, k)) {
            return Ok(());
        }
        let layers = self.signature_layers(reference, digest).await?;
        match keys.iter().find(|k| signatures::signed_by(&layers, k)) {
            Some(key) => {
                self.record_verified(digest, key);
                Ok(())
            }
            None => Err(OciError::Unsigned {
                reference: reference.to_string(),
                digest: digest.to_owned(),
                keys: keys
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                found: match layers.len() {
                    0 => format!(
                        "it has no signatures (no {} tag)",
                        signatures::signature_tag(digest)
                    ),
                    n => format!("it has {n} signature(s), none by these keys"),
                },
            }),
        }
    }

    /// The cosign signature layers of `digest`.
    pub(super) async fn signature_layers(
        &self,
        reference: &OciReference,
        digest: &str,
    ) -> Result<Vec<sigstore::cosign::SignatureLayer>, OciError> {
        let (mut client, auth) = self.cosign_client(reference)?;
        signatures::layers(&mut client, &auth, reference, digest)
            .await
            .map_err(|e| {
                let source: BoxError = e.into();
                match connect_failure(source.as_ref()) {
                    true => OciError::Unreachable {
                        registry: reference.registry().to_owned(),
                        cache: format!(
                            "the signatures of {digest} are needed (the cache has no record of \
                             their verification with these keys)"
                        ),
                        source,
                    },
                    false => OciError::Signatures {
                        action: "read",
                        reference: reference.to_string(),
                        digest: digest.to_owned(),
                        source,
                    },
                }
            })
    }

    /// The cache's record that `digest` was verified with `key`.
    fn verified_marker(&self, digest: &str, key: &signatures::VerifyKey) -> Option<PathBuf> {
        let dir = self.inner.options.cache_dir.as_ref()?;
        let hex = |d: &str| d.trim_start_matches("sha256:").to_owned();
        Some(
            dir.join(VERIFIED)
                .join(format!("{}-{}", hex(digest), hex(&key.fingerprint()))),
        )
    }

    fn was_verified(&self, digest: &str, key: &signatures::VerifyKey) -> bool {
        self.verified_marker(digest, key)
            .is_some_and(|m| m.exists())
    }

    fn record_verified(&self, digest: &str, key: &signatures::VerifyKey) {
        if let Some(marker) = self.verified_marker(digest, key) {
            let written = marker
                .parent()
                .map(std::fs::create_dir_all)
                .unwrap_or(Ok(()))
                .and_then(|()| std::fs::write(&marker, b""));
            if let Err(e) = written {
                tracing::warn!(error = %e, marker = %marker.display(), "cannot record a verified signature");
            }
        }
    }

    /// Signs the component `reference` names (a tag is resolved to its
    /// digest first) with the private key PEM `private_pem` (cosign's
    /// encrypted format with `password`, or a plain PEM), and pushes the
    /// signature beside the signatures already there, as cosign does.
    ///
    /// # Errors
    /// An unusable key or a wrong password, or a registry failure.
    pub async fn sign(
        &self,
        reference: &OciReference,
        key_name: &str,
        private_pem: &[u8],
        password: &[u8],
    ) -> Result<Signed, OciError> {
        let (client, auth) = self.client(reference)?;
        let digest = client
            .fetch_manifest_digest(reference.client_reference(), &auth)
            .await
            .map_err(|e| {
                self.registry_error(reference, e, "a tag needs the registry to be resolved")
            })?;
        let layer = signatures::sign_layer(reference, &digest, key_name, private_pem, password)?;
        let mut layers: Vec<_> = self
            .signature_layers(reference, &digest)
            .await?
            .into_iter()
            .filter(|l| l.signature.is_some())
            .collect();
        layers.push(layer);
        let (mut cosign, auth) = self.cosign_client(reference)?;
        let signature = signatures::push_layers(&mut cosign, &auth, reference, &digest, layers)
            .await
            .map_err(|e| OciError::Signatures {
                action: "push",
                reference: reference.to_string(),
                digest: digest.clone(),
                source: e.into(),
            })?;
        Ok(Signed { digest, signature })
    }
}
