//! The wire types of the in-process API: a [`Request`] (method, path, query, content type,
//! body) as an HTTP server would receive it, and the [`Response`] (HTTP code and JSON body) it
//! gets.

use std::collections::HashMap;

use serde_json::Value;

use crate::auth::UserInfo;
use crate::status::ApiError;

/// Query parameters of a request.
pub type Params = HashMap<String, String>;

/// Whether a boolean query flag is set (`1`/`true`).
pub fn flag(params: &Params, name: &str) -> bool {
    params.get(name).is_some_and(|v| v == "1" || v == "true")
}

/// One API request, as an HTTP server would receive it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// The path, e.g. `/apis/apps/v1/namespaces/default/deployments/web`.
    pub path: String,
    /// Decoded query parameters (`fieldManager`, `dryRun`, `labelSelector`, `watch`, ...).
    pub params: Params,
    /// The media type of the body (parameters after `;` are ignored); JSON when empty.
    pub content_type: String,
    /// The `Accept` header; `as=Table` asks for server-side table output.
    pub accept: String,
    /// The `User-Agent`, whose product name is the default field manager.
    pub user_agent: String,
    /// The body: JSON, or YAML for apply patches.
    pub body: Vec<u8>,
    /// Who sent it, as authenticated by the HTTP server; `None` for a trusted in-process caller,
    /// which RBAC does not check.
    pub user: Option<UserInfo>,
    /// The API version the client addressed, when another version's storage serves the request
    /// (`events.k8s.io/v1` Events are core Events): a write's ownership is recorded in it.
    pub addressed_version: Option<String>,
}

impl Request {
    /// Rewrites a watch on a deprecated `watch/` path (`/api/v1/watch/namespaces/{ns}/pods`,
    /// `/apis/apps/v1/watch/deployments/{name}`), which kube-apiserver still serves, as the
    /// watch of a collection it means: `?watch=true`, and for one object a `metadata.name`
    /// field selector.
    pub fn resolve_legacy_watch(&mut self) {
        let segments: Vec<&str> = self.path.trim_matches('/').split('/').collect();
        let prefix = match segments.as_slice() {
            ["api", _, "watch", ..] => 2,
            ["apis", _, _, "watch", ..] => 3,
            _ => return,
        };
        let mut rest: Vec<&str> = segments[prefix + 1..].to_vec();
        // `{plural}/{name}` (a Namespace's too), or `namespaces/{ns}/{plural}/{name}`.
        let named = matches!(rest.as_slice(), [_, _] | ["namespaces", _, _, _]);
        let name = named.then(|| rest.pop()).flatten().map(str::to_string);
        let path = [&segments[..prefix], &rest[..]].concat().join("/");
        self.path = format!("/{path}");
        self.params.insert("watch".into(), "true".into());
        if let Some(name) = name {
            let by_name = format!("metadata.name={name}");
            let selector = match self.params.get("fieldSelector").filter(|s| !s.is_empty()) {
                Some(given) => format!("{given},{by_name}"),
                None => by_name,
            };
            self.params.insert("fieldSelector".into(), selector);
        }
    }

    /// A request with `method` on `path` and no body.
    pub fn new(method: &str, path: &str) -> Self {
        Self {
            method: method.to_string(),
            path: path.to_string(),
            ..Self::default()
        }
    }

    /// `GET path`.
    pub fn get(path: &str) -> Self {
        Self::new("GET", path)
    }

    /// `POST path` with a JSON body.
    pub fn post(path: &str, body: Vec<u8>) -> Self {
        Self::new("POST", path).body("application/json", body)
    }

    /// `PUT path` with a JSON body.
    pub fn put(path: &str, body: Vec<u8>) -> Self {
        Self::new("PUT", path).body("application/json", body)
    }

    /// `PATCH path` with a body of patch type `content_type` (`application/merge-patch+json`,
    /// `application/strategic-merge-patch+json`, `application/json-patch+json` or
    /// `application/apply-patch+yaml`).
    pub fn patch(path: &str, content_type: &str, body: Vec<u8>) -> Self {
        Self::new("PATCH", path).body(content_type, body)
    }

    /// `DELETE path`.
    pub fn delete(path: &str) -> Self {
        Self::new("DELETE", path)
    }

    /// Adds the query parameter `name=value`.
    #[must_use]
    pub fn query(mut self, name: &str, value: &str) -> Self {
        self.params.insert(name.to_string(), value.to_string());
        self
    }

    /// Sends the request as `user` (RBAC then decides what it may do).
    #[must_use]
    pub fn as_user(mut self, user: UserInfo) -> Self {
        self.user = Some(user);
        self
    }

    /// Sets the body and its media type.
    #[must_use]
    pub fn body(mut self, content_type: &str, body: Vec<u8>) -> Self {
        self.content_type = content_type.to_string();
        self.body = body;
        self
    }
}

/// Parses a request body as JSON, or YAML when it is not JSON.
///
/// # Errors
/// 400 BadRequest when it is neither.
pub(crate) fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("body is not UTF-8: {e}")))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))
}

/// The answer to a [`Request`]: an HTTP code and a JSON body (the object, a list, a discovery
/// document, or a `metav1.Status` for errors).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// HTTP status code.
    pub code: u16,
    /// The JSON body.
    pub body: Value,
    /// The body's media type: `application/json`, or a profiled one such as aggregated
    /// discovery's `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`.
    pub content_type: String,
    /// `Warning` headers to send (`unknown field "spec.foo"`), without the `299 -` code.
    pub warnings: Vec<String>,
}

impl Response {
    /// A JSON answer with `code`.
    pub fn json(code: u16, body: Value) -> Self {
        Self {
            code,
            body,
            content_type: "application/json".into(),
            warnings: Vec::new(),
        }
    }

    /// `Retry-After` seconds of an error (`details.retryAfterSeconds`), if any.
    pub fn retry_after(&self) -> Option<i64> {
        self.body["details"]["retryAfterSeconds"].as_i64()
    }
}

impl From<ApiError> for Response {
    fn from(error: ApiError) -> Self {
        Self::json(
            error.code,
            serde_json::to_value(error.to_status()).unwrap_or_default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(path: &str) -> (String, Option<String>, Option<String>) {
        let mut request = Request::get(path);
        request.resolve_legacy_watch();
        let param = |name: &str| request.params.get(name).cloned();
        (request.path.clone(), param("watch"), param("fieldSelector"))
    }

    #[test]
    fn legacy_watch_paths_are_watches_of_their_collection() {
        let watch = Some("true".to_string());
        let by_name = |name: &str| Some(format!("metadata.name={name}"));
        assert_eq!(
            resolved("/api/v1/watch/namespaces/a/pods"),
            ("/api/v1/namespaces/a/pods".into(), watch.clone(), None)
        );
        assert_eq!(
            resolved("/apis/apps/v1/watch/namespaces/a/deployments/web"),
            (
                "/apis/apps/v1/namespaces/a/deployments".into(),
                watch.clone(),
                by_name("web")
            )
        );
        assert_eq!(
            resolved("/api/v1/watch/namespaces/a"),
            ("/api/v1/namespaces".into(), watch.clone(), by_name("a"))
        );
        assert_eq!(
            resolved("/apis/apps/v1/watch/deployments"),
            ("/apis/apps/v1/deployments".into(), watch, None)
        );
        assert_eq!(
            resolved("/api/v1/namespaces/a/pods"),
            ("/api/v1/namespaces/a/pods".into(), None, None)
        );
    }
}
