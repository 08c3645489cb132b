//! The HTTP surface: health endpoints, the `/admin/*` fault endpoints, bearer-token checks, and
//! every API path handed to the [`crate::api::Cluster`] (watches streamed by [`super::watch`]),
//! protobuf bodies read and answers written in the negotiated media type by
//! [`crate::protobuf`].

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::{Shared, faults, watch};
use crate::protobuf::{self, Negotiated, Rendered};
use crate::request::{self, Params, Request, flag};
use crate::status::ApiError;

/// The router serving the whole API on `shared`.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .merge(faults::admin_routes())
        .fallback(dispatch)
        .with_state(shared)
}

/// An API answer as an HTTP response in the media type `negotiated` for it (see
/// [`protobuf::render`]), with a `Warning: 299 - "…"` header per warning, and `Retry-After`
/// for errors that carry one.
pub fn respond(negotiated: &Negotiated, response: &request::Response) -> Response {
    let mut out = send(protobuf::render(negotiated, response));
    let headers = out.headers_mut();
    for warning in &response.warnings {
        if let Ok(value) = HeaderValue::from_str(&format!("299 - {warning:?}")) {
            headers.append(header::WARNING, value);
        }
    }
    if let Some(seconds) = response.retry_after()
        && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
    {
        out.headers_mut().insert(header::RETRY_AFTER, value);
    }
    out
}

fn send(rendered: Rendered) -> Response {
    let code = StatusCode::from_u16(rendered.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut out = (code, rendered.body).into_response();
    if let Ok(value) = HeaderValue::from_str(&rendered.content_type) {
        out.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    out
}

fn error(e: ApiError) -> Response {
    respond(&Negotiated::default(), &e.into())
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// Whether the request carries the configured bearer token (always, without one).
fn authorized(shared: &Shared, headers: &HeaderMap) -> bool {
    shared.token.as_ref().is_none_or(|token| {
        header_str(headers, header::AUTHORIZATION)
            .strip_prefix("Bearer ")
            .is_some_and(|given| given.trim() == token)
    })
}

async fn dispatch(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(params): Query<Params>,
    body: Bytes,
) -> Response {
    if !authorized(&shared, &headers) {
        return error(ApiError::new(401, "Unauthorized", "Unauthorized"));
    }
    let path = uri.path().to_string();
    if let Some(injected) = shared.faults.before(method.as_str(), &path).await {
        return error(injected);
    }
    let mut request = Request {
        method: method.to_string(),
        path: path.clone(),
        params,
        content_type: header_str(&headers, header::CONTENT_TYPE).to_string(),
        accept: header_str(&headers, header::ACCEPT).to_string(),
        user_agent: match header_str(&headers, header::USER_AGENT) {
            "" => "unknown".to_string(),
            agent => agent.to_string(),
        },
        body: body.to_vec(),
        user: None,
    };
    let watching = method == Method::GET && flag(&request.params, "watch");
    let dry_run = request.params.contains_key("dryRun");
    shared
        .requests
        .add(method.as_str(), &path, watching, dry_run);
    let negotiated = match protobuf::prepare(&shared.cluster, &mut request, watching) {
        Ok(negotiated) => negotiated,
        Err(refused) => return send(refused),
    };
    if watching {
        return match shared.cluster.watch(&request) {
            Ok(w) => watch::stream(shared.clone(), w, negotiated.watch_format()),
            Err(e) => respond(&negotiated, &e),
        };
    }
    let response = shared.cluster.handle(&request);
    if (200..300).contains(&response.code)
        && let Some(injected) = shared.faults.after(method.as_str(), &path).await
    {
        return error(injected);
    }
    respond(&negotiated, &response)
}
