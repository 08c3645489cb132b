//! `krt component inspect`: what a component in a registry is.

use super::error::OciError;
use super::reference::OciReference;
use super::signatures;
use super::store::OciStore;
use crate::error::BoxError;

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
        let invalid = |source: BoxError| OciError::InvalidComponent {
            name: reference.to_string(),
            source,
        };
        let described =
            tokio::task::spawn_blocking(move || oci_wasm::Component::from_raw_component(&*bytes))
                .await
                .map_err(|e| invalid(e.into()))?
                .map_err(|e| invalid(e.into()))?;
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
