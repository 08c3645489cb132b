//! Pulling and pushing components as CNCF Wasm OCI artifacts (oci-wasm over
//! oci-client), through the content-addressed cache.

use super::blobs::{BlobCache, Lookup, sha256_digest};
use super::credentials::RegistryCredentials;
use super::error::OciError;
use super::reference::OciReference;
use super::signatures::VerificationPolicy;
use oci_client::Client;
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
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
            cache_dir: crate::engine::cache_home().map(|krt| krt.join("oci")),
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
    pub(super) inner: Arc<Inner>,
}

/// What a store holds.
#[derive(Debug)]
pub(super) struct Inner {
    /// Its settings.
    pub(super) options: OciOptions,
    /// The content-addressed cache, unless disabled.
    pub(super) cache: Option<BlobCache>,
    /// The extra CA certificates, read.
    pub(super) roots: Vec<Certificate>,
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
    pub(super) async fn fetch_checked(
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

    /// A client for `reference`'s registry (plain HTTP for loopback and the
    /// insecure registries, the extra roots otherwise) and the credentials to
    /// send it.
    pub(super) fn client(
        &self,
        reference: &OciReference,
    ) -> Result<(Client, RegistryAuth), OciError> {
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
    pub(super) fn plain_http(&self, reference: &OciReference) -> Vec<String> {
        let mut plain = self.inner.options.insecure_registries.clone();
        if reference.is_loopback_host() {
            plain.push(reference.registry().to_owned());
        }
        plain
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
