//! Registry credentials from Docker's `config.json` format: the CLI's
//! `~/.docker/config.json` (or `REGISTRY_AUTH_FILE`), and the controller's
//! `kubernetes.io/dockerconfigjson` pull Secrets.

use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::secrets::RegistryAuth;
use std::path::PathBuf;

/// Where a registry's credentials come from: Docker `config.json` documents,
/// tried in order; a registry none of them names is accessed anonymously.
#[derive(Debug, Clone, Default)]
pub struct RegistryCredentials {
    documents: Vec<(String, Vec<u8>)>,
}

/// A credentials document that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the registry credentials of {origin} for {registry}")]
pub struct CredentialsError {
    /// The document, for example `'/root/.docker/config.json'`.
    pub origin: String,
    /// The registry whose credentials were looked up.
    pub registry: String,
    /// Why.
    #[source]
    pub source: CredentialProblem,
}

/// What is wrong with a registry's entry in a credentials document.
#[derive(Debug, thiserror::Error)]
pub enum CredentialProblem {
    /// docker_credential could not read it (malformed JSON, an `auth` that
    /// does not decode, a failing credential helper).
    #[error(transparent)]
    Retrieval(#[from] CredentialRetrievalError),
    /// An `identitytoken` (an OAuth2 refresh token `docker login` keeps):
    /// krt's registry client cannot exchange it for an access token.
    #[error(
        "it holds an identity token (an OAuth2 refresh token), which krt cannot use: log in \
         with a username and password (or a registry access token as the password)"
    )]
    IdentityToken,
}

impl RegistryCredentials {
    /// No credentials: every registry is accessed anonymously.
    pub fn anonymous() -> Self {
        RegistryCredentials::default()
    }

    /// The user's file, as Docker and Podman find it: `REGISTRY_AUTH_FILE`,
    /// else `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`; none
    /// when that file does not exist.
    ///
    /// # Errors
    /// A file that exists but cannot be read.
    pub fn from_user_config() -> std::io::Result<Self> {
        let path = std::env::var_os("REGISTRY_AUTH_FILE")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("DOCKER_CONFIG").map(|d| PathBuf::from(d).join("config.json"))
            })
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(|h| PathBuf::from(h).join(".docker").join("config.json"))
            });
        match path {
            Some(path) if path.exists() => {
                let bytes = std::fs::read(&path)?;
                Ok(RegistryCredentials::anonymous()
                    .with_document(format!("'{}'", path.display()), bytes))
            }
            _ => Ok(RegistryCredentials::anonymous()),
        }
    }

    /// Adds a `config.json` document (for example a pull Secret's
    /// `.dockerconfigjson`), named `origin` in messages, after those already
    /// there.
    pub fn with_document(mut self, origin: String, json: Vec<u8>) -> Self {
        self.documents.push((origin, json));
        self
    }

    /// The first credentials any document has for `registry` (`host[:port]`),
    /// else anonymous access.
    ///
    /// # Errors
    /// A document that is not valid JSON, whose `auth` does not decode, or
    /// whose credential helper fails.
    pub(crate) fn for_registry(&self, registry: &str) -> Result<RegistryAuth, CredentialsError> {
        for (origin, json) in &self.documents {
            let error = |source: CredentialProblem| CredentialsError {
                origin: origin.clone(),
                registry: registry.to_owned(),
                source,
            };
            match docker_credential::get_credential_from_reader(json.as_slice(), registry) {
                Ok(DockerCredential::UsernamePassword(user, password)) => {
                    return Ok(RegistryAuth::Basic(user, password));
                }
                Ok(DockerCredential::IdentityToken(_)) => {
                    return Err(error(CredentialProblem::IdentityToken));
                }
                Err(CredentialRetrievalError::NoCredentialConfigured) => continue,
                Err(e) => return Err(error(e.into())),
            }
        }
        Ok(RegistryAuth::Anonymous)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_tried_in_order_then_anonymous() {
        let first = br#"{"auths":{"other:5000":{"auth":"dTpw"}}}"#.to_vec();
        let second =
            br#"{"auths":{"localhost:5000":{"username":"krt","password":"s3cret"}}}"#.to_vec();
        let creds = RegistryCredentials::anonymous()
            .with_document("first".into(), first)
            .with_document("second".into(), second);
        assert!(
            matches!(creds.for_registry("localhost:5000").unwrap(), RegistryAuth::Basic(u, p) if u == "krt" && p == "s3cret")
        );
        assert!(
            matches!(creds.for_registry("other:5000").unwrap(), RegistryAuth::Basic(u, p) if u == "u" && p == "p")
        );
        assert!(matches!(
            creds.for_registry("third:5000").unwrap(),
            RegistryAuth::Anonymous
        ));
        let broken =
            RegistryCredentials::anonymous().with_document("'broken.json'".into(), b"{".to_vec());
        let err = broken
            .for_registry("localhost:5000")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'broken.json'") && err.contains("localhost:5000"),
            "{err}"
        );
    }
}
