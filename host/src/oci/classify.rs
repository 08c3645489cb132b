//! What a registry client's error means for krt: refused credentials, no
//! such artifact, a TLS failure, an unreachable registry (and whether the
//! cache could stand in), a digest mismatch; each names the registry.

use super::error::OciError;
use super::reference::OciReference;
use super::store::OciStore;
use crate::error::BoxError;
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;

impl OciStore {
    /// A download's failure: a digest mismatch of `what`, or as
    /// [`OciStore::registry_error`] says.
    pub(super) fn download_error(
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

    /// Classifies a registry client error for `reference`; `offline` says
    /// why the cache could not stand in if the registry was unreachable.
    pub(super) fn registry_error(
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

/// `error` and its causes, stepping into the errors that transparent
/// wrappers hide: an `io::Error` hands on its inner error's source rather
/// than the inner error, and oci-client's request error the reqwest error's.
fn causes<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |e| {
        let inner: Option<&(dyn std::error::Error + 'static)> =
            match e.downcast_ref::<OciDistributionError>() {
                Some(OciDistributionError::RequestError(r)) => Some(r),
                _ => e
                    .downcast_ref::<std::io::Error>()
                    .and_then(|io| io.get_ref())
                    .map(|inner| inner as &(dyn std::error::Error + 'static)),
            };
        inner.or_else(|| e.source())
    })
}

/// Whether `error` is a TLS failure (rustls refused the handshake, for
/// example an unknown issuer), found down its causes.
fn tls_failure(error: &OciDistributionError) -> bool {
    causes(error).any(|e| e.downcast_ref::<rustls::Error>().is_some())
}

/// Whether `error` is a failure to connect (or a time-out), found down its
/// causes.
pub(super) fn connect_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    causes(error).any(|e| {
        e.downcast_ref::<reqwest::Error>()
            .is_some_and(|r| r.is_connect() || r.is_timeout())
    })
}
