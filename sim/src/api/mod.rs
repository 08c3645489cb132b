//! The API semantics as plain function calls, with no HTTP server: a [`Request`] (method, path,
//! query, content type, body) in, a [`Response`] (HTTP code and JSON body) out. The HTTP server
//! calls exactly this; an in-process caller (such as a wasm component) calls it directly through
//! [`Cluster::handle`] and [`Cluster::watch`].
//!
//! ```
//! use krt_sim::api::{Cluster, Request};
//! let cluster = Cluster::new(1000);
//! let created = cluster.handle(&Request::post(
//!     "/api/v1/namespaces/default/configmaps",
//!     br#"{"metadata": {"name": "a"}, "data": {"k": "v"}}"#.to_vec(),
//! ));
//! assert_eq!(created.code, 201);
//! let got = cluster.handle(&Request::get("/api/v1/namespaces/default/configmaps/a"));
//! assert_eq!(got.body["data"]["k"], "v");
//! ```

mod delete;
mod read;
mod write;

use std::collections::HashMap;

use serde_json::Value;

pub use crate::cluster::Cluster;
pub use crate::watch::Watch;

use crate::registry::ResourceType;
use crate::status::{ApiError, Subject};
use crate::{discovery, openapi, table};

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
}

impl Request {
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

    /// Sets the body and its media type.
    #[must_use]
    pub fn body(mut self, content_type: &str, body: Vec<u8>) -> Self {
        self.content_type = content_type.to_string();
        self.body = body;
        self
    }
}

/// The answer to a [`Request`]: an HTTP code and a JSON body (the object, a list, a discovery
/// document, or a `metav1.Status` for errors).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// HTTP status code.
    pub code: u16,
    /// The JSON body.
    pub body: Value,
}

impl Response {
    /// `Retry-After` seconds of an error (`details.retryAfterSeconds`), if any.
    pub fn retry_after(&self) -> Option<i64> {
        self.body["details"]["retryAfterSeconds"].as_i64()
    }
}

impl From<ApiError> for Response {
    fn from(error: ApiError) -> Self {
        Self {
            code: error.code,
            body: serde_json::to_value(error.to_status()).unwrap_or_default(),
        }
    }
}

fn ok(body: Value) -> Response {
    Response { code: 200, body }
}

/// A parsed resource path.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The resource type addressed.
    pub rt: ResourceType,
    /// Namespace from the path.
    pub namespace: Option<String>,
    /// Object name from the path.
    pub name: Option<String>,
    /// `status`, `scale`, ...
    pub subresource: Option<String>,
}

impl Target {
    /// The status-error subject for this target.
    pub fn subject(&self) -> Subject<'_> {
        Subject {
            group: &self.rt.group,
            resource: &self.rt.plural,
            name: self.name.as_deref().unwrap_or_default(),
        }
    }
}

enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    Resources(String, String),
    OpenApi(Vec<String>),
    Object(Target),
}

fn not_found() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

fn parse(cluster: &Cluster, path: &str) -> Result<Route, ApiError> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Ok(Route::Version),
        ["api"] => return Ok(Route::CoreVersions),
        ["apis"] => return Ok(Route::Groups),
        ["openapi", "v3", rest @ ..] => {
            return Ok(Route::OpenApi(rest.iter().map(|s| s.to_string()).collect()));
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group] => return Ok(Route::Group((*group).to_string())),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Err(not_found()),
    };
    if rest.is_empty() {
        return Ok(Route::Resources(group.to_string(), version.to_string()));
    }
    let (namespace, rest) = match rest {
        ["namespaces", ns, resource, tail @ ..] if !matches!(*resource, "status" | "finalize") => {
            (Some((*ns).to_string()), [&[*resource][..], tail].concat())
        }
        _ => (None, rest.to_vec()),
    };
    let state = cluster.store.lock();
    let rt = state
        .find_type(group, version, rest[0])
        .ok_or_else(not_found)?;
    if namespace.is_some() && !rt.namespaced {
        return Err(not_found());
    }
    let target = Target {
        rt,
        namespace,
        name: rest.get(1).map(|s| (*s).to_string()),
        subresource: rest.get(2).map(|s| (*s).to_string()),
    };
    if rest.len() > 3
        || target
            .subresource
            .as_deref()
            .is_some_and(|s| !matches!(s, "status" | "scale" | "finalize"))
    {
        return Err(not_found());
    }
    Ok(Route::Object(target))
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

/// Serves `request` (anything but `watch=1`, which is [`Cluster::watch`]'s).
pub(crate) fn handle(cluster: &Cluster, request: &Request) -> Response {
    route(cluster, request).unwrap_or_else(Response::from)
}

fn route(cluster: &Cluster, request: &Request) -> Result<Response, ApiError> {
    let target = match parse(cluster, &request.path)? {
        Route::Version => return Ok(ok(discovery::version())),
        Route::CoreVersions => return Ok(ok(discovery::core_versions(&cluster.address))),
        Route::Groups => return Ok(ok(discovery::groups(&cluster.store.lock()))),
        Route::Group(group) => {
            let doc = discovery::group(&cluster.store.lock(), &group);
            return doc.map(ok).ok_or_else(not_found);
        }
        Route::Resources(group, version) => {
            let doc = discovery::resources(&cluster.store.lock(), &group, &version);
            return doc.map(ok).ok_or_else(not_found);
        }
        Route::OpenApi(rest) => {
            let state = cluster.store.lock();
            let doc = match rest.as_slice() {
                [] => Some(openapi::index(&state)),
                [root, rest @ ..] => openapi::group_version(&state, root, &rest.join("/")),
            };
            return doc.map(ok).ok_or_else(not_found);
        }
        Route::Object(target) => target,
    };
    let ctx = write::WriteContext::new(&request.params, &request.user_agent)?;
    let params = &request.params;
    let content_type = request
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    let (code, body) = match (request.method.as_str(), target.name.is_some()) {
        ("GET", false) if flag(params, "watch") => {
            return Err(ApiError::bad_request(
                "watch requests are served by Cluster::watch",
            ));
        }
        ("GET", false) => read::list(cluster, &target, params)?,
        ("GET", true) => read::get(cluster, &target)?,
        ("POST", false) => write::create(cluster, &target, &ctx, &request.body)?,
        ("PUT", true) => write::update(cluster, &target, &ctx, &request.body)?,
        ("PATCH", true) => {
            let content_type = if content_type.is_empty() {
                "application/merge-patch+json"
            } else {
                content_type
            };
            write::patch(cluster, &target, &ctx, content_type, &request.body)?
        }
        ("DELETE", true) => delete::delete(cluster, &target, &ctx, params, &request.body)?,
        ("DELETE", false) => delete::delete_collection(cluster, &target, &ctx, params)?,
        (m, _) => return Err(ApiError::method_not_allowed(m)),
    };
    let body = if request.method == "GET" && table::wanted(&request.accept) {
        table::convert(&target.rt, &body)
    } else {
        body
    };
    Ok(Response { code, body })
}

/// Starts the watch `request` asks for (a `GET` of a collection; `watch=1` is implied).
pub(crate) fn watch(cluster: &Cluster, request: &Request) -> Result<Watch, Response> {
    let target = match parse(cluster, &request.path)? {
        Route::Object(target) if target.name.is_none() && request.method == "GET" => target,
        _ => return Err(not_found().into()),
    };
    let filter = read::filter(&request.params)?;
    Ok(Watch::start(
        cluster,
        &target.rt,
        target.namespace.as_deref(),
        filter,
        &request.params,
        table::wanted(&request.accept),
    )?)
}
