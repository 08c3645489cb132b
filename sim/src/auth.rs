//! Who sent a request: the user the authenticator found (kube's `user.Info`). The HTTP server
//! authenticates every request (bearer tokens, client certificates, impersonation) and hands the
//! user to the cluster with the request; RBAC (`crate::rbac`) decides what that user may do.
//! An in-process caller that sets no user is trusted, as the API server trusts its own loopback
//! client.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The group every authenticated user is in.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group of requests that carry no credentials.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The user of requests that carry no credentials.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group whose members may do anything, RBAC or not.
pub const MASTERS: &str = "system:masters";

/// The extra key that names the credential a request authenticated with (`JTI=<id>` for a
/// service account token, `X509SHA256=<hex>` for a client certificate).
pub const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";

/// A user as the API server sees one: name, UID, groups and extra attributes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UserInfo {
    /// The user name (`jane`, `system:serviceaccount:team-a:deployer`).
    pub username: String,
    /// The user's UID, empty when the authenticator knows none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The groups, `system:authenticated` included for an authenticated user.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Extra attributes (`authentication.kubernetes.io/credential-id`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// An authenticated user `username` in `groups` (and `system:authenticated`).
    pub fn new(username: &str, groups: &[&str]) -> Self {
        let mut groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        if !groups.iter().any(|g| g == AUTHENTICATED) {
            groups.push(AUTHENTICATED.to_string());
        }
        Self {
            username: username.to_string(),
            groups,
            ..Self::default()
        }
    }

    /// The user of a request without credentials.
    pub fn anonymous() -> Self {
        Self {
            username: ANONYMOUS.to_string(),
            groups: vec![UNAUTHENTICATED.to_string()],
            ..Self::default()
        }
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}
