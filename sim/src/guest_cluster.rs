//! [`GuestCluster`]: the in-process cluster behind krt's [`guest::Cluster`] trait, so krt's
//! runtime logic runs against the simulator without HTTP (in memcluster's wasm component and in
//! krt-guest's tests).
//!
//! Each call becomes the REST request krt-host's kube-rs client sends a real API server:
//! discovery for `resolve`, GET, POST, PATCH with the patch type's media type, DELETE with a
//! `DeleteOptions` body, LIST with selectors and paging, and WATCH from a resourceVersion. A
//! failure comes back as the server's `metav1.Status` in an [`ApiError`] (code, reason, message,
//! causes, retry-after). It needs no `server` feature and builds for `wasm32-wasip2`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use krt_guest::cluster as guest;
use krt_guest::model::{
    ApiError, ApiResource, Cause, CreateOptions, DeleteOptions, ErrorSource, EventType,
    ListOptions, ObjectList, PatchOptions, PatchType, PropagationPolicy, WatchEvent, WatchOptions,
};
use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::request::{Request, Response};
use crate::watch::Watch;

/// Events kept for watches that resume from a resourceVersion.
const HISTORY: usize = 1000;

/// How often the simulated controllers take a step while a watch waits (krt-sim's default).
const CONTROLLER_INTERVAL: Duration = Duration::from_millis(20);

/// The longest `timeoutSeconds` a watch asks for: krt-host's limit, as kube-rs refuses 295 s or
/// more.
const MAX_WATCH_TIMEOUT_SECONDS: u32 = 290;

/// The field manager of apply patches that name none, as krt-host sends them.
const DEFAULT_APPLY_MANAGER: &str = "krt";

/// krt-sim's in-process cluster as a [`guest::Cluster`]; clones share one cluster.
#[derive(Clone)]
pub struct GuestCluster {
    cluster: Arc<Cluster>,
}

impl Default for GuestCluster {
    fn default() -> Self {
        Self::new()
    }
}

impl GuestCluster {
    /// A new cluster holding the default namespaces, keeping the last 1000 events for watches.
    pub fn new() -> Self {
        Self {
            cluster: Arc::new(Cluster::new(HISTORY)),
        }
    }

    /// The simulator behind the adapter: for requests the trait does not make (a status write,
    /// a PUT) and for stepping its controllers ([`Cluster::reconcile`]).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Sends `request`; a code of 400 or more is the error it carries.
    fn call(&self, request: &Request) -> Result<Value, ApiError> {
        let response = self.cluster.handle(request);
        if response.code >= 400 {
            Err(api_error(response))
        } else {
            Ok(response.body)
        }
    }
}

/// The error a failed response carries: its `metav1.Status`.
fn api_error(response: Response) -> ApiError {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let status = &response.body;
    ApiError {
        source: ErrorSource::Api,
        code: response.code,
        reason: text(&status["reason"]),
        message: text(&status["message"]),
        causes: status["details"]["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| Cause {
                field: text(&c["field"]),
                reason: text(&c["reason"]),
                message: text(&c["message"]),
            })
            .collect(),
        retry_after_seconds: response
            .retry_after()
            .and_then(|s| u32::try_from(s).ok())
            .filter(|s| *s > 0),
    }
}

/// The discovery path of a group version: `/api/v1` or `/apis/apps/v1`.
fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// The collection path, for example `/apis/apps/v1/namespaces/web/deployments`; the namespace is
/// left out for cluster-scoped kinds, as krt-host does.
fn collection_path(resource: &ApiResource, namespace: Option<&str>) -> String {
    let root = group_version_path(&resource.group, &resource.version);
    match namespace.filter(|_| resource.namespaced) {
        Some(ns) => format!("{root}/namespaces/{ns}/{}", resource.plural),
        None => format!("{root}/{}", resource.plural),
    }
}

/// The object path.
fn object_path(resource: &ApiResource, namespace: Option<&str>, name: &str) -> String {
    format!("{}/{name}", collection_path(resource, namespace))
}

/// Adds `dryRun=All` and the field manager.
fn write_params(mut request: Request, dry_run: bool, field_manager: Option<&str>) -> Request {
    if dry_run {
        request = request.query("dryRun", "All");
    }
    if let Some(manager) = field_manager {
        request = request.query("fieldManager", manager);
    }
    request
}

/// Adds each of the query parameters that is set.
fn query<'a>(
    mut request: Request,
    params: impl IntoIterator<Item = (&'a str, Option<String>)>,
) -> Request {
    for (name, value) in params {
        if let Some(value) = value {
            request = request.query(name, &value);
        }
    }
    request
}

/// The `Content-Type` of a patch.
fn patch_media_type(patch_type: PatchType) -> &'static str {
    match patch_type {
        PatchType::JsonMerge => "application/merge-patch+json",
        PatchType::StrategicMerge => "application/strategic-merge-patch+json",
        PatchType::Apply => "application/apply-patch+yaml",
        PatchType::JsonPatch => "application/json-patch+json",
    }
}

/// The `DeleteOptions` body of a delete.
fn delete_body(options: &DeleteOptions) -> Value {
    let mut body = json!({"kind": "DeleteOptions", "apiVersion": "v1"});
    if let Some(policy) = options.propagation_policy {
        body["propagationPolicy"] = json!(match policy {
            PropagationPolicy::Background => "Background",
            PropagationPolicy::Foreground => "Foreground",
            PropagationPolicy::Orphan => "Orphan",
        });
    }
    if let Some(pre) = &options.preconditions {
        body["preconditions"] = json!({"uid": pre.uid, "resourceVersion": pre.resource_version});
    }
    if let Some(seconds) = options.grace_period_seconds {
        body["gracePeriodSeconds"] = json!(seconds);
    }
    body
}

impl guest::Cluster for GuestCluster {
    type Watch = GuestWatch;

    /// Resolves through the group version's discovery document; 404 when no served resource
    /// has that kind.
    fn resolve(&self, api_version: &str, kind: &str) -> Result<ApiResource, ApiError> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let doc = self
            .cluster
            .handle(&Request::get(&group_version_path(group, version)));
        doc.body["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["kind"] == kind)
            .filter_map(|r| r["name"].as_str().map(|name| (name, r)))
            .find(|(name, _)| !name.contains('/'))
            .map(|(name, r)| ApiResource {
                group: group.to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
                plural: name.to_string(),
                namespaced: r["namespaced"].as_bool().unwrap_or(false),
            })
            .ok_or_else(|| {
                ApiError::api(
                    404,
                    "NotFound",
                    format!(
                        "no resource type {api_version}/{kind} is served by the cluster (is the CRD installed?)"
                    ),
                )
            })
    }

    fn get(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        match self.call(&Request::get(&object_path(resource, namespace, name))) {
            Ok(object) => Ok(Some(object)),
            Err(err) if err.code == 404 => Ok(None),
            Err(err) => Err(err),
        }
    }

    fn create(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        object: &Value,
        options: &CreateOptions,
    ) -> Result<Value, ApiError> {
        let request = Request::post(
            &collection_path(resource, namespace),
            object.to_string().into_bytes(),
        );
        self.call(&write_params(
            request,
            options.dry_run,
            options.field_manager.as_deref(),
        ))
    }

    fn patch(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &Value,
        options: &PatchOptions,
    ) -> Result<Value, ApiError> {
        let apply = patch_type == PatchType::Apply;
        let manager = match &options.field_manager {
            Some(manager) => Some(manager.as_str()),
            None if apply => Some(DEFAULT_APPLY_MANAGER),
            None => None,
        };
        let request = Request::patch(
            &object_path(resource, namespace, name),
            patch_media_type(patch_type),
            body.to_string().into_bytes(),
        );
        let mut request = write_params(request, options.dry_run, manager);
        if options.force && apply {
            request = request.query("force", "true");
        }
        self.call(&request)
    }

    /// Deletes; the object while it still exists (finalizers pending), `None` once gone.
    fn delete(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Option<Value>, ApiError> {
        let request = Request::delete(&object_path(resource, namespace, name)).body(
            "application/json",
            delete_body(options).to_string().into_bytes(),
        );
        // A `Status` when the object is gone, or the object: its final state when deleted at
        // once (kinds that return the deleted object), or with a deletionTimestamp while
        // finalizers keep it.
        let object = self.call(&write_params(request, options.dry_run, None))?;
        let pending =
            object["kind"] != "Status" && !object["metadata"]["deletionTimestamp"].is_null();
        Ok(pending.then_some(object))
    }

    /// Lists (one page when `limit` is set); items get the `apiVersion` and `kind` that list
    /// items leave out.
    fn list(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        let request = query(
            Request::get(&collection_path(resource, namespace)),
            [
                ("labelSelector", options.label_selector.clone()),
                ("fieldSelector", options.field_selector.clone()),
                ("limit", options.limit.map(|l| l.to_string())),
                ("continue", options.continue_token.clone()),
            ],
        );
        let mut list = self.call(&request)?;
        let api_version = resource.api_version();
        let items = match list["items"].take() {
            Value::Array(items) => items
                .into_iter()
                .map(|mut item| {
                    if let Some(object) = item.as_object_mut() {
                        object
                            .entry("apiVersion")
                            .or_insert_with(|| api_version.clone().into());
                        object
                            .entry("kind")
                            .or_insert_with(|| resource.kind.clone().into());
                    }
                    item
                })
                .collect(),
            _ => Vec::new(),
        };
        let meta = &list["metadata"];
        Ok(ObjectList {
            items,
            resource_version: meta["resourceVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            continue_token: meta["continue"]
                .as_str()
                .filter(|c| !c.is_empty())
                .map(str::to_string),
        })
    }

    /// Starts a watch: the retained events after `options.resource_version` (or `ADDED` for
    /// every object), then every later change.
    fn watch(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &WatchOptions,
    ) -> Result<GuestWatch, ApiError> {
        let mut request = query(
            Request::get(&collection_path(resource, namespace)),
            [
                ("labelSelector", options.label_selector.clone()),
                ("fieldSelector", options.field_selector.clone()),
                ("resourceVersion", options.resource_version.clone()),
                (
                    "timeoutSeconds",
                    options
                        .timeout_seconds
                        .map(|t| t.min(MAX_WATCH_TIMEOUT_SECONDS).to_string()),
                ),
            ],
        );
        if options.allow_bookmarks {
            request = request.query("allowWatchBookmarks", "true");
        }
        let watch = self.cluster.watch(&request).map_err(|e| api_error(*e))?;
        let ends = watch
            .timeout_seconds()
            .map(|s| Instant::now() + Duration::from_secs(s));
        Ok(GuestWatch {
            cluster: self.cluster.clone(),
            watch,
            pending: VecDeque::new(),
            ends,
        })
    }
}

/// A watch stream of a [`GuestCluster`].
pub struct GuestWatch {
    cluster: Arc<Cluster>,
    watch: Watch,
    pending: VecDeque<Value>,
    /// When the server ends the stream (the `timeoutSeconds` asked for).
    ends: Option<Instant>,
}

impl guest::WatchStream for GuestWatch {
    /// The next event, waiting up to `timeout_ms` for one. While it waits, the simulated
    /// controllers take a step every 20 ms (as krt-sim's server runs them), so workloads
    /// progress. `None` when nothing happened in time; 410 once the stream's `timeoutSeconds`
    /// passed (the server closed it) or the history no longer reaches it.
    fn next(&mut self, timeout_ms: u32) -> Result<Option<WatchEvent>, ApiError> {
        let deadline = Instant::now() + Duration::from_millis(timeout_ms.into());
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(Some(watch_event(event)));
            }
            if self.ends.is_some_and(|ends| Instant::now() >= ends) {
                return Err(ApiError::api(
                    410,
                    "Expired",
                    "the watch stream was closed by the API server; list again and start a new watch",
                ));
            }
            let events = self
                .watch
                .poll()
                .map_err(|e| api_error(Response::from(e)))?;
            self.pending.extend(events);
            if !self.pending.is_empty() {
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            std::thread::sleep(left.min(CONTROLLER_INTERVAL));
            self.cluster.reconcile();
        }
    }
}

/// A watch event as the simulator renders it (`{"type": .., "object": ..}`).
fn watch_event(mut event: Value) -> WatchEvent {
    let type_ = match event["type"].as_str() {
        Some("ADDED") => EventType::Added,
        Some("DELETED") => EventType::Deleted,
        Some("BOOKMARK") => EventType::Bookmark,
        _ => EventType::Modified,
    };
    WatchEvent {
        type_,
        object: event["object"].take(),
    }
}
