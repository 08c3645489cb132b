//! Acting as another user through the API server's impersonation
//! (`Impersonate-User` and `Impersonate-Group` headers, as `kubectl --as`
//! sends them): a client that adds the headers to every request and shares
//! the connections of the client it wraps.

use crate::error::Error;
use http::{HeaderName, HeaderValue};

/// The user requests are sent as. The API server checks the `impersonate`
/// verb of the real user on each part, then authorizes the request as this
/// user alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Impersonation {
    /// The user name (`Impersonate-User`).
    pub user: String,
    /// Groups (`Impersonate-Group`). For a ServiceAccount leave them empty:
    /// the API server then gives it its own groups (`system:serviceaccounts`,
    /// `system:serviceaccounts:<namespace>`, `system:authenticated`).
    pub groups: Vec<String>,
}

impl Impersonation {
    /// The user `user` in `groups`.
    pub fn user(user: impl Into<String>, groups: Vec<String>) -> Self {
        Impersonation {
            user: user.into(),
            groups,
        }
    }

    /// The ServiceAccount `name` of `namespace`
    /// (`system:serviceaccount:<namespace>:<name>`), with the groups the API
    /// server gives it.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Impersonation::user(
            format!("system:serviceaccount:{namespace}:{name}"),
            Vec::new(),
        )
    }

    /// The headers that ask for it.
    fn headers(&self) -> Result<Vec<(HeaderName, HeaderValue)>, Error> {
        let value = |text: &str| {
            HeaderValue::from_str(text).map_err(|source| Error::Impersonation {
                what: text.to_owned(),
                source,
            })
        };
        let mut headers = vec![(
            HeaderName::from_static("impersonate-user"),
            value(&self.user)?,
        )];
        for group in &self.groups {
            headers.push((HeaderName::from_static("impersonate-group"), value(group)?));
        }
        Ok(headers)
    }
}

impl std::fmt::Display for Impersonation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.groups.is_empty() {
            write!(f, "{}", self.user)
        } else {
            write!(f, "{} (groups {})", self.user, self.groups.join(", "))
        }
    }
}

/// A client that sends every request of `base` as `who`, over `base`'s
/// connections.
///
/// # Errors
/// [`Error::Impersonation`]: a name that cannot be sent in a header.
pub(crate) fn impersonating(
    base: &kube::Client,
    who: &Impersonation,
) -> Result<kube::Client, Error> {
    let headers = who.headers()?;
    let inner = base.clone();
    let service = tower::service_fn(move |mut request: http::Request<kube::client::Body>| {
        for (name, value) in &headers {
            request.headers_mut().append(name.clone(), value.clone());
        }
        let inner = inner.clone();
        async move { inner.send(request).await }
    });
    Ok(kube::Client::new(service, base.default_namespace()))
}
