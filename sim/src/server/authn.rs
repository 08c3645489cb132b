//! Authentication of every API request, as kube-apiserver's authenticator chain does it: a
//! verified client certificate (`CN` the user, each `O` a group), else a bearer token (the
//! admin's, a static user's as `--token-auth-file` lists them, or a ServiceAccount token the
//! cluster issued); a request with no credentials is `system:anonymous` when anonymous access is
//! on; a credential that is presented but wrong is always a 401.

use std::collections::HashMap;

use axum::http::{HeaderMap, header};

use super::tokens::TokenIssuer;
use crate::auth::{MASTERS, UserInfo};
use crate::status::ApiError;
use crate::store::State;

/// The user the admin token and the default kubeconfig authenticate as.
pub const ADMIN: &str = "krt-sim-admin";

/// A user known by a bearer token, as a line of kube-apiserver's `--token-auth-file`.
#[derive(Debug, Clone)]
pub struct StaticToken {
    /// The bearer token.
    pub token: String,
    /// Who it authenticates.
    pub user: UserInfo,
}

/// The credentials the cluster accepts.
pub struct Authenticator {
    tokens: HashMap<String, UserInfo>,
    issuer: TokenIssuer,
    anonymous: bool,
}

/// The 401 every failed authentication gets (the reason is not told to the client).
pub fn unauthorized() -> ApiError {
    ApiError::new(401, "Unauthorized", "Unauthorized")
}

impl Authenticator {
    /// Accepts `admin_token` (as `krt-sim-admin` in `system:masters`), the `users`' tokens and
    /// the ServiceAccount tokens `issuer` signs; requests without credentials are anonymous
    /// when `anonymous` holds, and refused otherwise.
    pub fn new(
        admin_token: &str,
        users: &[StaticToken],
        issuer: TokenIssuer,
        anonymous: bool,
    ) -> Self {
        let mut tokens: HashMap<String, UserInfo> = users
            .iter()
            .map(|u| (u.token.clone(), u.user.clone()))
            .collect();
        tokens.insert(admin_token.to_string(), UserInfo::new(ADMIN, &[MASTERS]));
        Self {
            tokens,
            issuer,
            anonymous,
        }
    }

    /// The ServiceAccount token issuer.
    pub fn issuer(&self) -> &TokenIssuer {
        &self.issuer
    }

    /// Who sent a request with `headers` over a connection whose client certificate named
    /// `certificate_user`.
    ///
    /// # Errors
    /// 401 for a bearer token no authenticator accepts, or no credentials when anonymous
    /// access is off.
    pub fn authenticate(
        &self,
        headers: &HeaderMap,
        certificate_user: Option<UserInfo>,
        state: &State,
    ) -> Result<UserInfo, ApiError> {
        if let Some(user) = certificate_user {
            return Ok(user);
        }
        let authorization = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match authorization.and_then(|a| a.strip_prefix("Bearer ")) {
            Some(token) => self
                .token_user(token.trim(), &[], state)
                .map(|(user, _)| user)
                .map_err(|_| unauthorized()),
            None if authorization.is_some() => Err(unauthorized()),
            None if self.anonymous => Ok(UserInfo::anonymous()),
            None => Err(unauthorized()),
        }
    }

    /// The user `token` authenticates for `audiences` (the API server's own when empty), and
    /// the audiences it matched; the reason otherwise (shown in a TokenReview's `status.error`).
    ///
    /// # Errors
    /// An unknown token, or a ServiceAccount token no longer valid.
    pub fn token_user(
        &self,
        token: &str,
        audiences: &[String],
        state: &State,
    ) -> Result<(UserInfo, Vec<String>), String> {
        if let Some(user) = self.tokens.get(token) {
            return Ok((user.clone(), audiences.to_vec()));
        }
        match self.issuer.verify(token, audiences, state)? {
            Some(found) => Ok(found),
            None => Err("invalid bearer token".to_string()),
        }
    }
}
