//! The HTTP surface: routing of discovery and resource paths to their handlers.

mod delete;
mod read;
mod write;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::registry::ResourceType;
use crate::status::{ApiError, Subject};
use crate::{discovery, faults};

/// The router serving the whole API on `cluster`.
pub fn router(cluster: Arc<Cluster>) -> Router {
    Router::new()
        .route(
            "/version",
            get(|| async { axum::Json(discovery::version()) }),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/api", get(core_versions))
        .route("/apis", get(api_groups))
        .merge(faults::admin_routes())
        .fallback(dispatch)
        .with_state(cluster)
}

async fn core_versions(State(cluster): State<Arc<Cluster>>) -> Response {
    axum::Json(discovery::core_versions(&cluster.address)).into_response()
}

async fn api_groups(State(cluster): State<Arc<Cluster>>) -> Response {
    let doc = discovery::groups(&cluster.store.lock());
    axum::Json(doc).into_response()
}

/// A parsed resource path.
#[derive(Debug, Clone)]
pub struct Target {
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
    Resources(String, String),
    Group(String),
    Object(Target),
}

fn parse(cluster: &Cluster, path: &str) -> Result<Route, ApiError> {
    let not_found = || {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    };
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
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

/// Query parameters shared by the verbs.
pub type Params = HashMap<String, String>;

/// Whether a boolean query flag is set (`1`/`true`).
pub fn flag(params: &Params, name: &str) -> bool {
    params.get(name).is_some_and(|v| v == "1" || v == "true")
}

/// The body of a successful response.
pub fn json(code: StatusCode, value: &Value) -> Response {
    (code, axum::Json(value)).into_response()
}

async fn dispatch(
    State(cluster): State<Arc<Cluster>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(params): Query<Params>,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    if let Some(injected) = cluster.faults.before(method.as_str(), &path).await {
        return injected.into_response();
    }
    let result = route(&cluster, &method, &path, &headers, &params, &body).await;
    let response = result.unwrap_or_else(IntoResponse::into_response);
    if response.status().is_success() {
        cluster
            .faults
            .after(method.as_str(), &path)
            .await
            .map_or(response, IntoResponse::into_response)
    } else {
        response
    }
}

async fn route(
    cluster: &Arc<Cluster>,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    params: &Params,
    body: &Bytes,
) -> Result<Response, ApiError> {
    if path.starts_with("/openapi/") {
        return Err(ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ));
    }
    let target = match parse(cluster, path)? {
        Route::Resources(group, version) => {
            let doc = discovery::resources(&cluster.store.lock(), &group, &version);
            return doc.map(|d| json(StatusCode::OK, &d)).ok_or_else(|| {
                ApiError::new(
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                )
            });
        }
        Route::Group(group) => {
            let doc = discovery::group(&cluster.store.lock(), &group);
            return doc.map(|d| json(StatusCode::OK, &d)).ok_or_else(|| {
                ApiError::new(
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                )
            });
        }
        Route::Object(target) => target,
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown");
    let ctx = write::WriteContext::new(params, user_agent)?;
    let response = match (method.as_str(), target.name.is_some()) {
        ("GET", false) if flag(params, "watch") => read::watch(cluster, &target, params),
        ("GET", false) => read::list(cluster, &target, params),
        ("GET", true) => read::get(cluster, &target),
        ("POST", false) => write::create(cluster, &target, &ctx, body),
        ("PUT", true) => write::update(cluster, &target, &ctx, body),
        ("PATCH", true) => write::patch(cluster, &target, &ctx, &content_type, body),
        ("DELETE", true) => delete::delete(cluster, &target, &ctx, params, body),
        ("DELETE", false) => delete::delete_collection(cluster, &target, &ctx, params),
        (m, _) => Err(ApiError::method_not_allowed(m)),
    }?;
    if !matches!(method.as_str(), "GET") {
        cluster.changed.notify_waiters();
    }
    Ok(response)
}

/// Parses a request body as JSON, or YAML when it is not JSON.
///
/// # Errors
/// 400 BadRequest when it is neither.
pub fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("body is not UTF-8: {e}")))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))
}
