//! Pulling and pushing components as CNCF Wasm OCI artifacts (oci-wasm over
//! oci-client), through the content-addressed cache.

use super::blobs::{BlobCache, Lookup, sha256_digest};
use super::credentials::RegistryCredentials;
use super::error::OciError;
use super::reference::OciReference;
use super::signatures::{self, VerificationPolicy};
use crate::error::BoxError;
use oci_client::Client;
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_wasm::{
    ToConfig, WASM_LAYER_MEDIA_TYPE, WASM_MANIFEST_CONFIG_MEDIA_TYPE, WASM_MANIFEST_MEDIA_TYPE,
    WasmConfig,
};
use std::path::PathBuf;
use std::sync::Arc;

/// How krt reaches registries and keeps what it pulled.
#[derive(Debug, Clone)]
pub struct OciOptions {
    /// The content-addressed cache of pulled artifacts; `None` pulls every
    /// time (and nothing works offline).
    pub cache_dir: Option<PathBuf>,
    /// Registries (`host[:port]`) reached over plain HTTP. `localhost` and
    /// `127.0.0.1` always are, as Docker reaches them.
    pub insecure_registries: Vec<String>,
    /// CA certificate files (PEM) trusted for registries, beside the
    /// system's roots.
    pub ca_certificates: Vec<PathBuf>,
    /// The credentials sent to each registry.
    pub credentials: RegistryCredentials,
    /// Which components must be signed, by which keys.
    pub verification: VerificationPolicy,
}

impl Default for OciOptions {
    /// The cache in `$XDG_CACHE_HOME/krt/oci` (or `~/.cache/krt/oci`), TLS
    /// everywhere but loopback, the system's roots, anonymous access.
    fn default() -> Self {
        OciOptions {
            cache_dir: std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|base| base.join("krt").join("oci")),
            insecure_registries: Vec::new(),
            ca_certificates: Vec::new(),
            credentials: RegistryCredentials::anonymous(),
            verification: VerificationPolicy::none(),
        }
    }
}

/// A component fetched from a registry or the cache.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The reference pinned to the digest it resolved to.
    pub pinned: OciReference,
    /// The manifest's digest (`sha256:…`): what a tag resolved to.
    pub digest: String,
    /// The component's bytes (the artifact's one `application/wasm` layer).
    pub component: Arc<[u8]>,
    /// Whether nothing was downloaded: the manifest (for a digest
    /// reference) or the layer (for a tag) was in the cache.
    pub cached: bool,
}

/// A component signed in its registry.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The manifest digest signed.
    pub digest: String,
    /// Where the signatures are: the `sha256-<hex>.sig` tag.
    pub signature: OciReference,
}

/// A component pushed to a registry.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The reference pushed to, pinned to the manifest's digest.
    pub pinned: OciReference,
    /// The manifest's digest.
    pub digest: String,
    /// The component's size in bytes.
    pub size: usize,
}

/// Registries and the cache, shared: cloning is cheap.
#[derive(Debug, Clone)]
pub struct OciStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: OciOptions,
    cache: Option<BlobCache>,
    roots: Vec<Certificate>,
}

impl OciStore {
    /// A store with `options`: creates the cache directory and reads the CA
    /// certificates.
    ///
    /// # Errors
    /// A cache directory that cannot be created, or a CA file that cannot be
    /// read.
    pub fn new(options: OciOptions) -> Result<Self, OciError> {
        let cache = match &options.cache_dir {
            Some(dir) => Some(BlobCache::open(dir).map_err(|source| OciError::Cache {
                dir: dir.clone(),
                source,
            })?),
            None => None,
        };
        let roots = options
            .ca_certificates
            .iter()
            .map(|path| {
                std::fs::read(path)
                    .map(|data| Certificate {
                        encoding: CertificateEncoding::Pem,
                        data,
                    })
                    .map_err(|source| OciError::CaCertificate {
                        path: path.clone(),
                        source,
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(OciStore {
            inner: Arc::new(Inner {
                options,
                cache,
                roots,
            }),
        })
    }

    /// The component `reference` names. A digest reference found in the
    /// cache is served from it without contacting the registry; a tag is
    /// resolved by the registry each time, and only what the cache lacks is
    /// downloaded. Every byte is checked against its digest: a manifest, or a
    /// layer, whose bytes are not what its digest says is refused. When the
    /// verification policy covers the reference, a signature one of its keys
    /// verifies must be there (or have been seen by an earlier fetch, as the
    /// cache records), before anything else is returned.
    ///
    /// # Errors
    /// An unreachable registry (for a digest the cache lacks, or any tag),
    /// refused credentials, no such artifact, a digest mismatch, an artifact
    /// that is not a Wasm component, or no signature the policy accepts.
    pub async fn fetch(&self, reference: &OciReference) -> Result<Fetched, OciError> {
        self.fetch_checked(reference, true).await
    }

    /// [`OciStore::fetch`], with the signature check when `verify`.
    async fn fetch_checked(
        &self,
        reference: &OciReference,
        verify: bool,
    ) -> Result<Fetched, OciError> {
        if let Some(digest) = reference.digest()
            && let Some(component) = self.cached_component(reference, digest)?
        {
            if verify {
                self.verify(reference, digest).await?;
            }
            return Ok(Fetched {
                pinned: reference.pinned(digest),
                digest: digest.to_owned(),
                component,
                cached: true,
            });
        }
        let (client, auth) = self.client(reference)?;
        let image = reference.client_reference();
        let (manifest_bytes, header_digest) = client
            .pull_manifest_raw(image, &auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
            .map_err(|e| self.download_error(reference, "the manifest", e))?;
        let digest = sha256_digest(&manifest_bytes);
        let expected = reference.digest().unwrap_or(&header_digest);
        if digest != expected {
            return Err(OciError::DigestMismatch {
                reference: reference.to_string(),
                what: "the manifest",
                expected: expected.to_owned(),
                actual: digest,
            });
        }
        let manifest = wasm_manifest(reference, &manifest_bytes)?;
        // Signatures are checked before a byte of the component is used.
        if verify {
            self.verify(reference, &digest).await?;
        }
        let layer = &manifest.layers[0];
        if let Some(component) = self.cached_blob(&layer.digest)? {
            self.put(&manifest_bytes)?;
            return Ok(Fetched {
                pinned: reference.pinned(&digest),
                digest,
                component,
                cached: true,
            });
        }
        let config = self
            .pull_blob(&client, reference, &manifest.config, "the config")
            .await?;
        let component = self
            .pull_blob(&client, reference, layer, "the component layer")
            .await?;
        // The manifest goes in last: a manifest in the cache means its blobs are.
        self.put(&config)?;
        self.put(&component)?;
        self.put(&manifest_bytes)?;
        Ok(Fetched {
            pinned: reference.pinned(&digest),
            digest,
            component: component.into(),
            cached: false,
        })
    }

    /// Pushes `component` to `reference` (a tag) as a Wasm OCI artifact: a
    /// `application/vnd.wasm.config.v0+json` config naming the component's
    /// imports and exports (and its `kusion:runtime` world as the target),
    /// and the component as the one `application/wasm` layer. `name` names
    /// the component in messages.
    ///
    /// # Errors
    /// Bytes that are not a component, a digest reference (push to a tag),
    /// or a registry failure.
    pub async fn push(
        &self,
        name: &str,
        component: Vec<u8>,
        reference: &OciReference,
    ) -> Result<Pushed, OciError> {
        if reference.digest().is_some() {
            return Err(OciError::Reference(super::ReferenceError {
                reference: reference.to_string(),
                reason: "a push names a tag, not a digest".to_owned(),
            }));
        }
        let size = component.len();
        let (mut config, layer) = WasmConfig::from_raw_component(component, None).map_err(|e| {
            OciError::InvalidComponent {
                name: name.to_owned(),
                source: e.into(),
            }
        })?;
        if let Some(described) = config.component.as_mut() {
            described.target = super::world_of(&described.imports, &described.exports);
        }
        let config = config.to_config().map_err(|e| OciError::InvalidComponent {
            name: name.to_owned(),
            source: e.into(),
        })?;
        let layers = [layer];
        let mut manifest = OciImageManifest::build(&layers, &config, None);
        manifest.media_type = Some(WASM_MANIFEST_MEDIA_TYPE.to_owned());
        let (client, auth) = self.client(reference)?;
        let image = reference.client_reference();
        client
            .push(image, &layers, config, &auth, Some(manifest))
            .await
            .map_err(|e| self.registry_error(reference, e, "a push needs the registry"))?;
        let digest = client
            .fetch_manifest_digest(image, &auth)
            .await
            .map_err(|e| self.registry_error(reference, e, "it was just pushed"))?;
        Ok(Pushed {
            pinned: reference.pinned(&digest),
            digest,
            size,
        })
    }

    /// The cached component of the manifest `digest`, checked, or `None`
    /// when the cache lacks the manifest or its layer (or either changed on
    /// disk: then it is removed).
    fn cached_component(
        &self,
        reference: &OciReference,
        digest: &str,
    ) -> Result<Option<Arc<[u8]>>, OciError> {
        let Some(manifest) = self.cached_bytes(digest)? else {
            return Ok(None);
        };
        let manifest = wasm_manifest(reference, &manifest)?;
        self.cached_blob(&manifest.layers[0].digest)
    }

    fn cached_blob(&self, digest: &str) -> Result<Option<Arc<[u8]>>, OciError> {
        Ok(self.cached_bytes(digest)?.map(Arc::from))
    }

    fn cached_bytes(&self, digest: &str) -> Result<Option<Vec<u8>>, OciError> {
        let Some(cache) = &self.inner.cache else {
            return Ok(None);
        };
        match cache.get(digest).map_err(|e| self.cache_error(e))? {
            Lookup::Hit(bytes) => Ok(Some(bytes)),
            Lookup::Miss | Lookup::Corrupt => Ok(None),
        }
    }

    fn put(&self, bytes: &[u8]) -> Result<(), OciError> {
        if let Some(cache) = &self.inner.cache {
            cache.put(bytes).map_err(|e| self.cache_error(e))?;
        }
        Ok(())
    }

    fn cache_error(&self, source: std::io::Error) -> OciError {
        OciError::Cache {
            dir: self.inner.options.cache_dir.clone().unwrap_or_default(),
            source,
        }
    }

    /// Downloads the blob `descriptor` names; oci-client checks its digest.
    async fn pull_blob(
        &self,
        client: &Client,
        reference: &OciReference,
        descriptor: &OciDescriptor,
        what: &'static str,
    ) -> Result<Vec<u8>, OciError> {
        let mut out = Vec::new();
        client
            .pull_blob(reference.client_reference(), descriptor, &mut out)
            .await
            .map_err(|e| self.download_error(reference, what, e))?;
        Ok(out)
    }

    /// A download's failure: a digest mismatch of `what`, or as
    /// [`OciStore::registry_error`] says.
    fn download_error(
        &self,
        reference: &OciReference,
        what: &'static str,
        error: OciDistributionError,
    ) -> OciError {
        match error {
            OciDistributionError::DigestError(
                oci_client::errors::DigestError::VerificationError { expected, actual },
            ) => OciError::DigestMismatch {
                reference: reference.to_string(),
                what,
                expected,
                actual,
            },
            e => self.registry_error(reference, e, "a tag needs the registry to be resolved"),
        }
    }

    /// A client for `reference`'s registry (plain HTTP for loopback and the
    /// insecure registries, the extra roots otherwise) and the credentials to
    /// send it.
    fn client(&self, reference: &OciReference) -> Result<(Client, RegistryAuth), OciError> {
        // reqwest takes rustls' process-level provider; krt's is ring, as
        // kube's (an embedder that installed one keeps it).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let registry = reference.registry().to_owned();
        let config = ClientConfig {
            protocol: ClientProtocol::HttpsExcept(self.plain_http(reference)),
            extra_root_certificates: self.inner.roots.clone(),
            ..ClientConfig::default()
        };
        let client = Client::try_from(config).map_err(|e| OciError::Registry {
            registry: registry.clone(),
            reference: reference.to_string(),
            source: e.into(),
        })?;
        let auth = self.inner.options.credentials.for_registry(&registry)?;
        Ok((client, auth))
    }

    /// The registries reached over plain HTTP, for `reference`'s client.
    fn plain_http(&self, reference: &OciReference) -> Vec<String> {
        let mut plain = self.inner.options.insecure_registries.clone();
        if reference.is_loopback_host() {
            plain.push(reference.registry().to_owned());
        }
        plain
    }

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
    async fn verify(&self, reference: &OciReference, digest: &str) -> Result<(), OciError> {
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
    async fn signature_layers(
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
            dir.join("verified")
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

    /// Classifies a registry client error for `reference`; `offline` says
    /// why the cache could not stand in if the registry was unreachable.
    fn registry_error(
        &self,
        reference: &OciReference,
        error: OciDistributionError,
        offline: &str,
    ) -> OciError {
        let registry = reference.registry().to_owned();
        let text = reference.to_string();
        let unauthorized = match &error {
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => true,
            OciDistributionError::ServerError { code, .. } => matches!(code, 401 | 403),
            OciDistributionError::RegistryError { envelope, .. } => envelope
                .errors
                .iter()
                .any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)),
            _ => false,
        };
        let not_found = match &error {
            OciDistributionError::ImageManifestNotFoundError(_) => true,
            OciDistributionError::ServerError { code, .. } => *code == 404,
            OciDistributionError::RegistryError { envelope, .. } => {
                envelope.errors.iter().any(|e| {
                    matches!(
                        e.code,
                        OciErrorCode::ManifestUnknown
                            | OciErrorCode::NameUnknown
                            | OciErrorCode::NotFound
                            | OciErrorCode::BlobUnknown
                    )
                })
            }
            _ => false,
        };
        let tls = tls_failure(&error);
        let unreachable = connect_failure(&error);
        let source: BoxError = error.into();
        if unauthorized {
            OciError::Unauthorized {
                credentials: self.describe_credentials(&registry),
                registry,
                reference: text,
                source,
            }
        } else if not_found {
            OciError::NotFound {
                registry,
                reference: text,
                source,
            }
        } else if tls {
            OciError::Tls { registry, source }
        } else if unreachable {
            let cache = match reference.digest() {
                Some(digest) if self.inner.cache.is_some() => {
                    format!("the cache has no copy of {digest}")
                }
                Some(_) => "krt runs without a component cache".to_owned(),
                None => offline.to_owned(),
            };
            OciError::Unreachable {
                registry,
                cache,
                source,
            }
        } else {
            OciError::Registry {
                registry,
                reference: text,
                source,
            }
        }
    }

    /// What was sent to `registry`, for messages.
    fn describe_credentials(&self, registry: &str) -> String {
        match self.inner.options.credentials.for_registry(registry) {
            Ok(RegistryAuth::Anonymous) => "anonymous access (no credentials for it)".to_owned(),
            Ok(RegistryAuth::Basic(user, _)) => format!("the credentials of user '{user}'"),
            Ok(RegistryAuth::Bearer(_)) => "a bearer token".to_owned(),
            Err(_) => "unusable credentials".to_owned(),
        }
    }
}

/// Parses a manifest and checks it is a Wasm component artifact.
fn wasm_manifest(reference: &OciReference, bytes: &[u8]) -> Result<OciImageManifest, OciError> {
    let bad = |reason: String| OciError::NotAComponent {
        reference: reference.to_string(),
        reason,
    };
    let manifest: OciImageManifest = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("its manifest does not parse: {e}")))?;
    if manifest.config.media_type != WASM_MANIFEST_CONFIG_MEDIA_TYPE {
        return Err(bad(format!(
            "its config is `{}`",
            manifest.config.media_type
        )));
    }
    match manifest.layers.as_slice() {
        [layer] if layer.media_type == WASM_LAYER_MEDIA_TYPE => Ok(manifest),
        [layer] => Err(bad(format!("its layer is `{}`", layer.media_type))),
        layers => Err(bad(format!("it has {} layers", layers.len()))),
    }
}

/// What `krt component inspect` shows of a component in a registry.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The reference pinned to its digest.
    pub pinned: OciReference,
    /// The manifest's digest.
    pub digest: String,
    /// The component's size in bytes.
    pub size: usize,
    /// The `kusion:runtime` world it targets (see [`world_of`](super::world_of)),
    /// when it is a krt component.
    pub world: Option<String>,
    /// Its imports, `ns:pkg/iface@version`, read from the component itself.
    pub imports: Vec<String>,
    /// Its exports.
    pub exports: Vec<String>,
    /// How many cosign signatures it carries.
    pub signatures: usize,
    /// Which of the verification policy's keys for it verify one of them.
    pub verified_by: Vec<String>,
}

impl OciStore {
    /// Fetches `reference` (as [`OciStore::fetch`], but an unsigned one too:
    /// this only shows what is there) and describes it; the
    /// imports and exports are decoded from the component's own bytes, not
    /// taken from the artifact's config, and its signatures are counted and
    /// checked with the policy's keys.
    ///
    /// # Errors
    /// As [`OciStore::fetch`], or a layer that is not a component.
    pub async fn inspect(&self, reference: &OciReference) -> Result<Inspection, OciError> {
        let fetched = self.fetch_checked(reference, false).await?;
        let bytes = fetched.component.clone();
        let described =
            tokio::task::spawn_blocking(move || oci_wasm::Component::from_raw_component(&*bytes))
                .await
                .map_err(|e| OciError::InvalidComponent {
                    name: reference.to_string(),
                    source: e.into(),
                })?
                .map_err(|e| OciError::InvalidComponent {
                    name: reference.to_string(),
                    source: e.into(),
                })?;
        let layers = self
            .signature_layers(&fetched.pinned, &fetched.digest)
            .await?;
        let verified_by = self
            .inner
            .options
            .verification
            .keys_for(reference)
            .into_iter()
            .filter(|k| signatures::signed_by(&layers, k))
            .map(|k| k.name.clone())
            .collect();
        let mut imports = described.imports;
        let mut exports = described.exports;
        imports.sort();
        exports.sort();
        Ok(Inspection {
            world: super::world_of(&imports, &exports),
            pinned: fetched.pinned,
            digest: fetched.digest,
            size: fetched.component.len(),
            imports,
            exports,
            signatures: layers.len(),
            verified_by,
        })
    }
}

/// Whether `error` is a TLS failure (rustls refused the handshake, for
/// example an unknown issuer), found down its chain of sources.
fn tls_failure(error: &OciDistributionError) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.downcast_ref::<rustls::Error>().is_some() {
            return true;
        }
        // An io::Error hands on its inner error's source, not the inner
        // error: step into it instead.
        cause = match e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => e.source(),
        };
    }
    false
}

/// Whether `error` is a failure to connect (or a time-out), found down its
/// chain of sources.
fn connect_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        // oci-client's request error is transparent: its source skips the
        // reqwest error it holds.
        let request = match e.downcast_ref::<OciDistributionError>() {
            Some(OciDistributionError::RequestError(r)) => Some(r),
            _ => e.downcast_ref::<reqwest::Error>(),
        };
        if request.is_some_and(|r| r.is_connect() || r.is_timeout()) {
            return true;
        }
        cause = e.source();
    }
    false
}
