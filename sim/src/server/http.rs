//! The HTTP surface: health endpoints, the `/admin/*` fault endpoints, authentication, the
//! authentication APIs, and every API path handed to the [`crate::api::Cluster`] as the
//! authenticated user (watches streamed by [`super::watch`]), protobuf bodies read and answers
//! written in the negotiated media type by [`crate::protobuf`].

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::credentials::Endpoint;
use super::impersonation::{Target, impersonate};
use super::tls::{PeerCertificate, certificate_user};
use super::{Shared, faults, watch};
use crate::auth::UserInfo;
use crate::protobuf::{self, Negotiated, Rendered};
use crate::rbac::{self, Attributes};
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

/// The user a request acts as: the one its impersonation headers name, when `user` may
/// impersonate every part of it, else `user` itself.
fn act_as(shared: &Shared, headers: &HeaderMap, user: UserInfo) -> Result<UserInfo, ApiError> {
    let state = shared.cluster.store.lock();
    let allowed = |target: &Target| {
        let attributes = Attributes {
            verb: "impersonate".into(),
            resource_request: true,
            group: target.group.into(),
            resource: target.resource.into(),
            subresource: target.subresource.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            ..Attributes::default()
        };
        rbac::check(&state, &user, &attributes)
    };
    Ok(impersonate(headers, allowed)?.unwrap_or(user))
}

async fn dispatch(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<PeerCertificate>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(params): Query<Params>,
    body: Bytes,
) -> Response {
    let authenticated = {
        let state = shared.cluster.store.lock();
        let from_certificate = peer.0.as_ref().and_then(certificate_user);
        shared
            .authenticator
            .authenticate(&headers, from_certificate, &state)
    };
    let user = match authenticated.and_then(|user| act_as(&shared, &headers, user)) {
        Ok(user) => user,
        Err(e) => return error(e),
    };
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
        user: Some(user),
        addressed_version: None,
    };
    if request.method == "GET" {
        request.resolve_legacy_watch();
    }
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
    let response = match (Endpoint::of(&path), &request.user) {
        (Some(endpoint), Some(user)) => {
            let state = shared.cluster.store.lock();
            let attributes = Attributes::of_request(&request.method, &path, &request.params);
            match rbac::check(&state, user, &attributes) {
                Ok(()) => endpoint.serve(&request, user, &shared.authenticator, &state),
                Err(e) => e.into(),
            }
        }
        _ => shared.cluster.handle(&request),
    };
    if (200..300).contains(&response.code)
        && let Some(injected) = shared.faults.after(method.as_str(), &path).await
    {
        return error(injected);
    }
    respond(&negotiated, &response)
}
