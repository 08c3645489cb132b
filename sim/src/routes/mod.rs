//! Routing of API requests: discovery and OpenAPI documents, and every object path to the
//! read, write and delete handlers (or, for watches, to a [`Watch`] cursor).

mod admission;
mod components;
mod delete;
mod read;
mod review;
mod scale;
mod target;
mod write;

#[cfg(feature = "server")]
pub(crate) use write::record_answered_create;

use std::sync::Arc;

use serde_json::Value;

use crate::rbac::{self, Attributes};
use crate::request::{Request, Response, flag};
use crate::status::ApiError;
use crate::store::Store;
use crate::watch::Watch;
use crate::{discovery, events, openapi, table};
use target::Target;

fn ok(body: Value) -> Response {
    Response::json(200, body)
}

enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    Resources(String, String),
    OpenApiV2,
    OpenApi(Vec<String>),
    Object(Box<Target>),
}

fn not_found() -> ApiError {
    ApiError::unknown_resource()
}

fn parse(store: &Store, path: &str) -> Result<Route, ApiError> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Ok(Route::Version),
        ["api"] => return Ok(Route::CoreVersions),
        ["apis"] => return Ok(Route::Groups),
        ["openapi", "v2"] => return Ok(Route::OpenApiV2),
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
    let state = store.lock();
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
    let served = match target.subresource.as_deref() {
        None => true,
        Some("status") => target.rt.status_subresource,
        Some("scale") => target.rt.scale_subresource,
        Some("finalize") => target.rt.kind == "Namespace" && !target.rt.custom,
        Some(_) => false,
    };
    // A custom resource's subresource its CRD does not declare is answered as a missing object.
    if let (false, true, Some(name), 3) = (served, target.rt.custom, &target.name, rest.len()) {
        return Err(ApiError::not_found(&crate::status::Subject {
            group: &target.rt.group,
            resource: &target.rt.plural,
            name,
        }));
    }
    if rest.len() > 3 || !served {
        return Err(not_found());
    }
    Ok(Route::Object(Box::new(target)))
}

/// The verb of a request on a resource (`list`, `deletecollection`, ...).
fn verb(method: &str, named: bool) -> &'static str {
    match (method, named) {
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "",
    }
}

/// An aggregated discovery document, if the request asks for one.
fn aggregated(store: &Store, request: &Request, core: bool) -> Option<Response> {
    let version = discovery::aggregated_version(&request.accept)?;
    let body = discovery::aggregated(&store.lock(), core, version);
    Some(Response {
        content_type: discovery::aggregated_media_type(version),
        ..ok(body)
    })
}

/// Serves `request` on `store` (anything but `watch=1`, which is [`watch`]'s), reporting
/// `address` in `/api` discovery.
pub(crate) fn handle(store: &Store, address: &str, request: &Request) -> Response {
    let attributes = Attributes::of_request(&request.method, &request.path, &request.params);
    if let Err(refused) = authorize(store, request, &attributes) {
        return refused.into();
    }
    match events::convert::core_request(request) {
        Some(core) => {
            if let Err(invalid) = check_events_api_create(store, &core) {
                return invalid.into();
            }
            let mut response = route(store, address, &core).unwrap_or_else(Response::from);
            response.body = events::convert::to_events_api(&response.body);
            response
        }
        None => route(store, address, request).unwrap_or_else(Response::from),
    }
}

/// What `events.k8s.io/v1` validates of a new Event beyond core v1, checked on the core
/// request that serves it: a name that is a DNS subdomain.
fn check_events_api_create(store: &Store, core: &Request) -> Result<(), ApiError> {
    if core.method != "POST" {
        return Ok(());
    }
    let Ok(Route::Object(target)) = parse(store, &core.path) else {
        return Ok(());
    };
    let body: Value = serde_json::from_slice(&core.body).unwrap_or_default();
    match body["metadata"]["name"].as_str() {
        Some(name) if target.name.is_none() => {
            crate::validation::check_events_api_name(&target.rt, name)
        }
        _ => Ok(()),
    }
}

/// Authorizes `request` (its `user`; none is trusted) as `attributes` describe it: on the
/// path the client sent, before an `events.k8s.io` request is served as a core one.
fn authorize(store: &Store, request: &Request, attributes: &Attributes) -> Result<(), ApiError> {
    match &request.user {
        Some(user) => rbac::check(&store.lock(), user, attributes),
        None => Ok(()),
    }
}

fn route(store: &Store, address: &str, request: &Request) -> Result<Response, ApiError> {
    let target = match parse(store, &request.path)? {
        Route::Version => return Ok(ok(discovery::version())),
        Route::CoreVersions => {
            return Ok(aggregated(store, request, true)
                .unwrap_or_else(|| ok(discovery::core_versions(address))));
        }
        Route::Groups => {
            return Ok(aggregated(store, request, false)
                .unwrap_or_else(|| ok(discovery::groups(&store.lock()))));
        }
        Route::Group(group) => {
            let doc = discovery::group(&store.lock(), &group);
            return doc.map(ok).ok_or_else(not_found);
        }
        Route::Resources(group, version) => {
            let doc = discovery::resources(&store.lock(), &group, &version);
            return doc.map(ok).ok_or_else(not_found);
        }
        Route::OpenApiV2 => return Ok(ok(openapi::v2(&store.lock()))),
        Route::OpenApi(rest) => {
            let state = store.lock();
            let doc = match rest.as_slice() {
                [] => Some(openapi::index(&state)),
                [root, rest @ ..] => openapi::group_version(&state, root, &rest.join("/")),
            };
            return doc.map(ok).ok_or_else(not_found);
        }
        Route::Object(target) => target,
    };
    let mut response = match write::WriteContext::new(&request.params, &request.user_agent) {
        Ok(mut ctx) => {
            ctx.user = request.user.clone();
            ctx.addressed_version = request.addressed_version.clone();
            // A write that fails after its body was decoded still sends the decoding's warnings.
            object(store, request, &target, &ctx).unwrap_or_else(|error| Response {
                warnings: ctx.decoding.take_warnings(),
                ..Response::from(error)
            })
        }
        Err(error) => Response::from(error),
    };
    // A deprecated resource's handler warns on every request it serves, errors included.
    if let Some(warning) = crate::deprecation::warning(&target.rt) {
        response.warnings.insert(0, warning);
    }
    Ok(response)
}

/// Serves `request` on the object or collection `target` names.
fn object(
    store: &Store,
    request: &Request,
    target: &Target,
    ctx: &write::WriteContext,
) -> Result<Response, ApiError> {
    let params = &request.params;
    let content_type = request
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    let named = target.name.is_some();
    if target.subresource.is_none()
        && !target
            .rt
            .verbs
            .iter()
            .any(|v| v == verb(&request.method, named))
    {
        return Err(ApiError::method_not_allowed());
    }
    match target.rt.group.as_str() {
        // TokenReview and SelfSubjectReview are the authenticator's, answered by the server.
        "authentication.k8s.io" => return Err(not_found()),
        review::GROUP if request.method == "POST" && !named => {
            return review::create(store, target, request);
        }
        "" if target.rt.kind == "ComponentStatus" && !flag(params, "watch") => {
            let (code, body) = components::get(store, target)?;
            return Ok(Response::json(code, body));
        }
        _ => {}
    }
    let patch_type = if content_type.is_empty() {
        "application/merge-patch+json"
    } else {
        content_type
    };
    if target.subresource.as_deref() == Some("scale") {
        let (code, body) = match request.method.as_str() {
            "GET" => scale::get(store, target)?,
            "PUT" => scale::update(store, target, ctx, &request.body)?,
            "PATCH" => scale::patch(store, target, ctx, patch_type, &request.body)?,
            _ => return Err(ApiError::method_not_allowed()),
        };
        return Ok(Response {
            warnings: ctx.decoding.take_warnings(),
            ..Response::json(code, body)
        });
    }
    let (code, body) = match (request.method.as_str(), named) {
        ("GET", false) if flag(params, "watch") => {
            return Err(ApiError::bad_request(
                "watch requests are served by Cluster::watch",
            ));
        }
        ("GET", false) => read::list(store, target, params)?,
        ("GET", true) => read::get(store, target)?,
        ("POST", false) => write::create(store, target, ctx, &request.body)?,
        ("PUT", true) => write::update(store, target, ctx, &request.body)?,
        ("PATCH", true) => write::patch(store, target, ctx, patch_type, &request.body)?,
        ("DELETE", true) => delete::delete(store, target, ctx, params, &request.body)?,
        ("DELETE", false) => delete::delete_collection(store, target, ctx, params)?,
        _ => return Err(ApiError::method_not_allowed()),
    };
    let body = match request.method.as_str() {
        "GET" if table::wanted(&request.accept) => {
            let include = table::Include::parse(params.get("includeObject").map(String::as_str))?;
            table::convert(&target.rt, &body, include)
        }
        "GET" if table::metadata_wanted(&request.accept) => table::metadata_only(&body),
        _ => body,
    };
    Ok(Response {
        warnings: ctx.decoding.take_warnings(),
        ..Response::json(code, body)
    })
}

/// Starts the watch `request` asks for on `store` (a `GET` of a collection; `watch=1` is
/// implied).
pub(crate) fn watch(store: &Arc<Store>, request: &Request) -> Result<Watch, Box<Response>> {
    let mut attributes = Attributes::of_request(&request.method, &request.path, &request.params);
    if attributes.verb == "list" {
        attributes.verb = "watch".into();
    }
    authorize(store, request, &attributes).map_err(|e| Box::new(e.into()))?;
    if let Some(core) = events::convert::core_request(request) {
        return start_watch(store, &core)
            .map(|watch| watch.presented_as(events::convert::to_events_api))
            .map_err(|e| Box::new(e.into()));
    }
    start_watch(store, request).map_err(|e| Box::new(e.into()))
}

fn start_watch(store: &Arc<Store>, request: &Request) -> Result<Watch, ApiError> {
    let target = match parse(store, &request.path)? {
        Route::Object(target) if target.name.is_none() && request.method == "GET" => target,
        _ => return Err(not_found()),
    };
    if !target.rt.verbs.iter().any(|v| v == "watch") {
        return Err(ApiError::method_not_allowed());
    }
    let filter = read::filter(&target.rt, &request.params)?;
    Watch::start(
        store,
        &target.rt,
        target.namespace.as_deref(),
        filter,
        &request.params,
        table::wanted(&request.accept),
    )
}
