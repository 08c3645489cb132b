//! A Stack's inputs: its manifests (inline, and from ConfigMaps, read as
//! the Stack's identity) parsed by krt-stack's manifest reader, and its component chain
//! (files under the controller's component directories, ConfigMap
//! `binaryData`, or OCI registries with the Stack's pull secrets and the
//! signatures its namespace's verification rules require), all read fresh on
//! each reconcile and summed up in a digest, the revision.

use crate::crd::{ComponentRef, Stack};
use crate::tenancy::Tenancy;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use krt_host::ComponentSource;
use krt_host::oci::{
    OciError, OciOptions, OciReference, OciStore, RegistryCredentials, VerificationPolicy,
};
use krt_stack::manifest::{self, Loaded};
use kube::Api;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A component of a Stack's chain, read into memory.
#[derive(Debug, Clone)]
pub struct Component {
    /// How messages name it: the file's or the key's stem.
    pub name: String,
    /// Where it was read from: `file /path`, `ConfigMap ns/name, key k`, or
    /// `oci://…@sha256:…` pinned to the digest fetched.
    pub origin: String,
    /// Its bytes.
    pub bytes: Arc<[u8]>,
}

/// A Stack's component chain: middleware (outermost first), then the
/// runtime (krt's built-in guest when `None`).
#[derive(Debug, Clone, Default)]
pub struct Chain {
    /// The middleware, outermost first.
    pub middleware: Vec<Component>,
    /// The runtime component.
    pub runtime: Option<Component>,
}

impl Chain {
    /// The runtime's source.
    pub fn runtime_source(&self) -> ComponentSource {
        match &self.runtime {
            Some(c) => ComponentSource::Bytes(c.bytes.clone()),
            None => ComponentSource::Default,
        }
    }

    /// Where each component of the chain came from, for messages: the
    /// middleware outermost first, then the runtime.
    pub fn origins(&self) -> String {
        let mut parts: Vec<String> = self
            .middleware
            .iter()
            .map(|m| format!("middleware '{}' from {}", m.name, m.origin))
            .collect();
        parts.push(match &self.runtime {
            Some(c) => format!("runtime from {}", c.origin),
            None => "krt's built-in runtime".to_owned(),
        });
        parts.join(", ")
    }

    /// Where each component came from, as the Stack's status records the
    /// chain: the middleware outermost first, then the runtime (`built-in`
    /// for krt's own guest).
    pub fn components(&self) -> Vec<String> {
        self.middleware
            .iter()
            .map(|m| m.origin.clone())
            .chain([self
                .runtime
                .as_ref()
                .map(|c| c.origin.clone())
                .unwrap_or_else(|| "built-in".to_owned())])
            .collect()
    }

    /// A digest of every component, identifying the chain.
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        for m in &self.middleware {
            h.update(b"middleware\0");
            h.update(Sha256::digest(&m.bytes));
        }
        match &self.runtime {
            Some(c) => h.update(Sha256::digest(&c.bytes)),
            None => h.update(b"built-in"),
        }
        hex(&h.finalize())
    }
}

/// Everything a reconcile reads besides the cluster's objects.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Every resource of the manifests, with where it came from.
    pub loaded: Vec<Loaded>,
    /// The component chain.
    pub chain: Chain,
}

/// Why a Stack's inputs could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The spec itself is unusable (a component given both ways, a path
    /// outside the component directories or naming no file in them, an
    /// invalid duration).
    #[error("{0}")]
    InvalidSpec(String),
    /// The manifests do not parse; every problem is listed.
    #[error("{}", .0.join("; "))]
    InvalidManifests(Vec<String>),
    /// A ConfigMap or one of its keys is missing (it may appear later).
    #[error("{0}")]
    SourceNotFound(String),
    /// The API server refused to let the Stack's identity read a ConfigMap
    /// (its Forbidden message, which names the user and what was refused).
    #[error("the API server refused to read a source: {0}")]
    Forbidden(String),
    /// A component file could not be read.
    #[error("failed to read component '{}'", path.display())]
    ReadComponent {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A registry component could not be fetched, or is not signed as the
    /// namespace's verification rules require.
    #[error(transparent)]
    Oci(#[from] OciError),
    /// Reading a ConfigMap failed.
    #[error("failed to read ConfigMap {what}")]
    Kube {
        /// `namespace/name`.
        what: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

/// How a Stack's `oci` components are fetched.
#[derive(Debug, Clone)]
pub struct Registries<'a> {
    /// The controller's registry settings (cache, insecure registries, CA
    /// certificates); the credentials come from the Stack's pull secrets.
    pub base: &'a OciOptions,
    /// Which components of the Stack's namespace must be signed, by which keys.
    pub verification: VerificationPolicy,
}

/// Reads the manifests and components of `stack`; ConfigMaps and pull
/// Secrets are read with `client` (the Stack's identity, so that its RBAC
/// decides what it may read), from the Stack's namespace unless a reference
/// names another (refused before any request when `tenancy` forbids it);
/// component paths must lie under one of `component_dirs`; registry
/// components are fetched as `registries` says.
///
/// # Errors
/// [`InputError`]: each manifest problem is listed, with its origin
/// (`spec.resources[2]: document 1: missing kind`).
pub async fn read(
    client: &kube::Client,
    stack: &Stack,
    component_dirs: &[PathBuf],
    tenancy: &Tenancy,
    registries: Registries<'_>,
) -> Result<Inputs, InputError> {
    let own = stack.namespace_or_default();
    let configs = stack
        .spec
        .config_maps
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("spec.configMaps[{i}]"), c.namespace.as_deref()));
    let components = stack
        .spec
        .middleware
        .iter()
        .enumerate()
        .map(|(i, m)| (format!("spec.middleware[{i}]"), m))
        .chain(
            stack
                .spec
                .component
                .iter()
                .map(|c| ("spec.component".to_owned(), c)),
        )
        .filter_map(|(at, c)| c.config_map.as_ref().map(|k| (at, k.namespace.as_deref())));
    for (at, namespace) in configs.chain(components) {
        tenancy
            .check_reference(&at, own, namespace.unwrap_or(own))
            .map_err(InputError::InvalidSpec)?;
    }
    let reader = Reader {
        client,
        own,
        component_dirs,
        stack,
        registries,
        store: tokio::sync::OnceCell::new(),
    };
    let mut loaded = Vec::new();
    let mut problems = Vec::new();
    let mut add = |parsed: Result<Vec<Loaded>, manifest::ManifestError>| match parsed {
        Ok(mut l) => loaded.append(&mut l),
        Err(e) => problems.extend(e.problems),
    };
    for (i, object) in stack.spec.resources.iter().enumerate() {
        let text = serde_json::to_string(object).unwrap_or_default();
        add(manifest::parse(&format!("spec.resources[{i}]"), &text));
    }
    for source in &stack.spec.config_maps {
        let (cm, what) = reader
            .config_map(source.namespace.as_deref(), &source.name)
            .await?;
        let data = cm.data.unwrap_or_default();
        let keys: Vec<&String> = match &source.key {
            Some(key) if data.contains_key(key) => vec![key],
            Some(key) => {
                return Err(InputError::SourceNotFound(format!(
                    "ConfigMap {what} has no data key `{key}`"
                )));
            }
            None => data
                .keys()
                .filter(|k| [".yaml", ".yml", ".json"].iter().any(|e| k.ends_with(e)))
                .collect(),
        };
        if keys.is_empty() {
            return Err(InputError::SourceNotFound(format!(
                "ConfigMap {what} has no data key ending in .yaml, .yml or .json (name one with `key`)"
            )));
        }
        for key in keys {
            add(manifest::parse(
                &format!("ConfigMap {what} key {key}"),
                &data[key],
            ));
        }
    }
    if !problems.is_empty() {
        return Err(InputError::InvalidManifests(problems));
    }
    if loaded.is_empty() {
        return Err(InputError::InvalidManifests(vec![
            "the Stack has no resources (spec.resources and spec.configMaps are empty)".into(),
        ]));
    }
    let mut chain = Chain::default();
    for (i, m) in stack.spec.middleware.iter().enumerate() {
        let at = format!("spec.middleware[{i}]");
        chain.middleware.push(reader.component(m, &at).await?);
    }
    if let Some(c) = &stack.spec.component {
        chain.runtime = Some(reader.component(c, "spec.component").await?);
    }
    Ok(Inputs { loaded, chain })
}

/// Reads one Stack's ConfigMaps, component files and registry components.
struct Reader<'a> {
    client: &'a kube::Client,
    /// The Stack's namespace.
    own: &'a str,
    component_dirs: &'a [PathBuf],
    stack: &'a Stack,
    registries: Registries<'a>,
    /// The registries with the Stack's credentials, set up on first use.
    store: tokio::sync::OnceCell<OciStore>,
}

impl Reader<'_> {
    /// The ConfigMap `name` of `namespace` (the Stack's when `None`), and
    /// how messages name it (`namespace/name`).
    async fn config_map(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<(ConfigMap, String), InputError> {
        self.get("ConfigMap", namespace.unwrap_or(self.own), name)
            .await
    }

    /// The `kind` object `name` of `namespace`, read as the Stack, and how
    /// messages name it (`namespace/name`).
    async fn get<K>(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<(K, String), InputError>
    where
        K: kube::Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
    {
        let what = format!("{namespace}/{name}");
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        match api.get_opt(name).await {
            Ok(Some(object)) => Ok((object, what)),
            Ok(None) => Err(InputError::SourceNotFound(format!(
                "{kind} {what} does not exist"
            ))),
            Err(kube::Error::Api(status)) if status.code == 403 => {
                Err(InputError::Forbidden(status.message))
            }
            Err(source) => Err(InputError::Kube { what, source }),
        }
    }

    /// The registries with the Stack's credentials, set up on first use.
    async fn store(&self) -> Result<&OciStore, InputError> {
        self.store
            .get_or_try_init(|| async {
                Ok(OciStore::new(OciOptions {
                    credentials: self.pull_credentials().await?,
                    verification: self.registries.verification.clone(),
                    ..self.registries.base.clone()
                })?)
            })
            .await
    }

    /// The credentials of the Stack's pull Secrets: its `imagePullSecrets`,
    /// then those of its ServiceAccount (when the Stack may read it), as a
    /// Pod takes them.
    async fn pull_credentials(&self) -> Result<RegistryCredentials, InputError> {
        let spec = &self.stack.spec;
        let mut names: Vec<String> = spec
            .image_pull_secrets
            .iter()
            .map(|s| s.name.clone())
            .collect();
        let account = spec.service_account_name.as_deref().unwrap_or("default");
        let accounts: Api<ServiceAccount> = Api::namespaced(self.client.clone(), self.own);
        match accounts.get_opt(account).await {
            Ok(Some(sa)) => names.extend(
                sa.image_pull_secrets
                    .unwrap_or_default()
                    .into_iter()
                    .map(|r| r.name),
            ),
            Ok(None) => {}
            Err(e) => tracing::debug!(
                error = %e,
                account,
                "the Stack cannot read its ServiceAccount's imagePullSecrets"
            ),
        }
        let mut credentials = RegistryCredentials::anonymous();
        for name in names {
            let (secret, what) = self.get::<Secret>("pull Secret", self.own, &name).await?;
            let json = secret
                .data
                .unwrap_or_default()
                .remove(".dockerconfigjson")
                .ok_or_else(|| {
                    InputError::SourceNotFound(format!(
                        "pull Secret {what} has no `.dockerconfigjson` (a \
                         kubernetes.io/dockerconfigjson Secret)"
                    ))
                })?;
            credentials = credentials.with_document(format!("pull Secret {what}"), json.0);
        }
        Ok(credentials)
    }

    /// Reads one component reference.
    async fn component(&self, reference: &ComponentRef, at: &str) -> Result<Component, InputError> {
        match (&reference.path, &reference.config_map, &reference.oci) {
            (None, None, Some(oci)) => {
                let parsed = OciReference::parse(&oci.reference)
                    .map_err(|e| InputError::InvalidSpec(format!("{at}.oci.ref: {e}")))?;
                let fetched = self.store().await?.fetch(&parsed).await?;
                Ok(Component {
                    name: parsed.name().to_owned(),
                    origin: fetched.pinned.to_string(),
                    bytes: fetched.component,
                })
            }
            (Some(path), None, None) => {
                let path = allowed_path(Path::new(path), self.component_dirs, at)?;
                let bytes =
                    tokio::fs::read(&path)
                        .await
                        .map_err(|source| InputError::ReadComponent {
                            path: path.clone(),
                            source,
                        })?;
                Ok(Component {
                    name: stem(&path.to_string_lossy()),
                    origin: format!("file {}", path.display()),
                    bytes: bytes.into(),
                })
            }
            (None, Some(key), None) => {
                let (cm, what) = self.config_map(key.namespace.as_deref(), &key.name).await?;
                let bytes = cm
                    .binary_data
                    .unwrap_or_default()
                    .remove(&key.key)
                    .ok_or_else(|| {
                        InputError::SourceNotFound(format!(
                            "ConfigMap {what} has no binaryData key `{}` ({at})",
                            key.key
                        ))
                    })?;
                Ok(Component {
                    name: stem(&key.key),
                    origin: format!("ConfigMap {what}, key {}", key.key),
                    bytes: bytes.0.into(),
                })
            }
            _ => Err(InputError::InvalidSpec(format!(
                "{at} must set exactly one of `path`, `configMap` and `oci`"
            ))),
        }
    }
}

/// The file `path` names under one of `dirs`, resolved (symlinks too). A
/// relative path is looked up in each directory in turn; an absolute one
/// must lie under one. A path with a `..` component, one outside every
/// directory, and one resolving outside through a symlink are refused before
/// anything is read, and so is one naming no file: all are errors of the
/// spec, and the messages do not tell which files exist outside.
fn allowed_path(path: &Path, dirs: &[PathBuf], at: &str) -> Result<PathBuf, InputError> {
    if dirs.is_empty() {
        return Err(InputError::InvalidSpec(format!(
            "{at}: component paths are not allowed: the controller has no component directory \
             (start it with `--component-dir DIR`), or use `configMap`"
        )));
    }
    let listed: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let refuse = |why: &str| {
        InputError::InvalidSpec(format!(
            "{at}: '{}' {why} ({})",
            path.display(),
            listed.join(", ")
        ))
    };
    const OUTSIDE: &str = "is not under the controller's component directories";
    if path.as_os_str().is_empty() {
        return Err(refuse(
            "is empty: name a file under the controller's component directories",
        ));
    }
    if path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(refuse(&format!("{OUTSIDE}: `..` is not allowed")));
    }
    let mut under_a_dir = false;
    for dir in dirs {
        let Ok(root) = dir.canonicalize() else {
            continue;
        };
        let candidate = if path.is_absolute() {
            if !(path.starts_with(dir) || path.starts_with(&root)) {
                continue;
            }
            path.to_path_buf()
        } else {
            root.join(path)
        };
        under_a_dir = true;
        match candidate.canonicalize() {
            Ok(resolved) if resolved.starts_with(&root) => {
                return Ok(resolved);
            }
            Ok(_) => return Err(refuse(&format!("{OUTSIDE}: it resolves outside them"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(InputError::ReadComponent {
                    path: candidate,
                    source,
                });
            }
        }
    }
    if under_a_dir {
        Err(refuse(
            "names no file in the controller's component directories",
        ))
    } else {
        Err(refuse(OUTSIDE))
    }
}

/// `org_rules` for `.../org_rules.wasm`.
fn stem(name: &str) -> String {
    let file = name.rsplit('/').next().unwrap_or(name);
    file.strip_suffix(".wasm").unwrap_or(file).to_owned()
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_paths_must_lie_under_a_component_directory() {
        let dir = krt_testkit::temp_dir("components");
        let allowed = dir.path().join("components");
        std::fs::create_dir(&allowed).unwrap();
        std::fs::write(allowed.join("rules.wasm"), b"x").unwrap();
        std::fs::write(dir.path().join("outside.wasm"), b"x").unwrap();
        let dirs = [allowed.clone()];
        let ok = allowed_path(&allowed.join("rules.wasm"), &dirs, "spec.component").unwrap();
        assert!(ok.ends_with("components/rules.wasm"));
        let escape = allowed.join("../outside.wasm");
        let err = allowed_path(&escape, &dirs, "spec.component").unwrap_err();
        assert!(
            err.to_string()
                .contains("is not under the controller's component directories"),
            "{err}"
        );
        // Relative paths are looked up in the directories, not the working directory.
        let relative = allowed_path(Path::new("rules.wasm"), &dirs, "spec.component").unwrap();
        assert_eq!(relative, ok);
        for refused in [
            Path::new("../outside.wasm").to_path_buf(),
            dir.path().join("outside.wasm"),
            Path::new("../missing.wasm").to_path_buf(),
            Path::new("/etc/hostname").to_path_buf(),
        ] {
            let err = allowed_path(&refused, &dirs, "spec.component").unwrap_err();
            assert!(
                matches!(&err, InputError::InvalidSpec(m)
                    if m.contains("is not under the controller's component directories")),
                "{}: {err}",
                refused.display()
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("outside.wasm"), allowed.join("link.wasm"))
                .unwrap();
            let err = allowed_path(Path::new("link.wasm"), &dirs, "spec.component").unwrap_err();
            assert!(err.to_string().contains("resolves outside"), "{err}");
        }
        let err = allowed_path(Path::new("absent.wasm"), &dirs, "spec.component").unwrap_err();
        assert!(
            matches!(&err, InputError::InvalidSpec(m) if m.contains("names no file")),
            "{err}"
        );
        let err = allowed_path(&escape, &[], "spec.component").unwrap_err();
        assert!(err.to_string().contains("--component-dir"), "{err}");
        assert_eq!(stem("a/b/org_rules.wasm"), "org_rules");
    }
}
