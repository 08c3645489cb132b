//! The host's one connection to a Kubernetes cluster: a shared kube-rs client,
//! a per-process discovery cache ([`discovery`]), an adaptive limit on the
//! requests in flight ([`limit`]), and the raw REST calls behind the
//! `kubernetes` imports. Objects stay JSON text end to end.

mod discovery;
mod impersonation;
mod limit;

pub use impersonation::Impersonation;
use impersonation::impersonating;
pub use limit::LimitStats;

use crate::error::Error;
use futures::{Stream, StreamExt};
use krt_guest::model::{
    ApiError, ApiResource, Cause, CreateOptions, DeleteOptions, ErrorSource, EventType,
    ListOptions, PatchOptions, PatchType, PropagationPolicy, WatchOptions,
};
use krt_stack::ClusterIdentity;
use kube::api::{
    DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions as KubePreconditions,
    PropagationPolicy as KubePropagation, WatchParams,
};
use kube::core::{
    ApiResource as KubeApiResource, DynamicObject, GroupVersion, Request, WatchEvent,
};
use serde_json::Value;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// One raw watch event: its type and the object as JSON text.
pub type RawEvent = (EventType, String);

/// A boxed stream of watch events as the API server sends them.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<RawEvent, ApiError>> + Send>>;

/// A Kubernetes cluster reached through kube-rs, shared by every call of a process.
pub struct KubeCluster {
    client: kube::Client,
    default_namespace: String,
    call_deadline: Duration,
    discovery: Arc<discovery::Discovery>,
    limiter: Arc<limit::Limiter>,
    retries: Arc<AtomicU64>,
    server: Option<String>,
    acting_as: Option<Impersonation>,
}

/// How many times one call is retried at most (429, and 5xx or transport
/// errors on idempotent requests).
const MAX_RETRIES: u32 = 5;
/// How many times a request is retried after a transport error (refused, reset):
/// a server that is down stays down, so fail fast.
const MAX_TRANSPORT_RETRIES: u32 = 2;
/// The longest single wait between retries, whatever `Retry-After` says.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// The most requests in flight at once unless [`KubeCluster::with_max_in_flight`]
/// says otherwise (the limit adapts below it).
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

impl KubeCluster {
    /// Wraps a client; `default_namespace` is the kubeconfig context's namespace.
    /// Build the client with kube-rs's `default_retry` off (as [`connect`](crate::connect)
    /// does): this type retries itself, within one deadline per call.
    pub fn new(client: kube::Client, default_namespace: impl Into<String>) -> Self {
        KubeCluster {
            client,
            default_namespace: default_namespace.into(),
            call_deadline: Duration::from_secs(30),
            discovery: Arc::default(),
            limiter: Arc::new(limit::Limiter::new(DEFAULT_MAX_IN_FLIGHT)),
            retries: Arc::default(),
            server: None,
            acting_as: None,
        }
    }

    /// The same cluster reached as `who` through impersonation: every request
    /// (discovery included) carries `who`'s impersonation headers, so the API
    /// server authorizes it as `who` after checking that this cluster's user
    /// may impersonate them. It shares this cluster's connections, discovery
    /// cache, request limit and retry count.
    ///
    /// # Errors
    /// [`Error::Impersonation`]: a name that cannot be sent in a header.
    pub fn acting_as(&self, who: &Impersonation) -> Result<KubeCluster, Error> {
        Ok(KubeCluster {
            client: impersonating(&self.client, who)?,
            default_namespace: self.default_namespace.clone(),
            call_deadline: self.call_deadline,
            discovery: self.discovery.clone(),
            limiter: self.limiter.clone(),
            retries: self.retries.clone(),
            server: self.server.clone(),
            acting_as: Some(who.clone()),
        })
    }

    /// Who this cluster's requests impersonate, when [`acting_as`](Self::acting_as) made it.
    pub fn impersonation(&self) -> Option<&Impersonation> {
        self.acting_as.as_ref()
    }

    /// Names the server in transport errors (`connect` sets it from the kubeconfig).
    pub fn with_server(mut self, url: impl Into<String>) -> Self {
        self.server = Some(url.into());
        self
    }

    /// Sets the most requests in flight at once (at least 1; default
    /// [`DEFAULT_MAX_IN_FLIGHT`]): the ceiling of the adaptive limit.
    pub fn with_max_in_flight(mut self, ceiling: usize) -> Self {
        self.limiter = Arc::new(limit::Limiter::new(ceiling));
        self
    }

    /// What the adaptive request limit did so far.
    pub fn limit_stats(&self) -> LimitStats {
        self.limiter.stats()
    }

    /// Sets the overall deadline of one call, retries included (default 30 s).
    pub fn with_call_deadline(mut self, deadline: Duration) -> Self {
        self.call_deadline = deadline;
        self
    }

    /// How many discovery requests this cluster has made: one per group
    /// version, plus one for each kind asked for that an earlier list lacked.
    pub fn discovery_fetches(&self) -> u64 {
        self.discovery.fetches()
    }

    /// How many requests were retried after 429, 5xx or transport errors.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// The namespace of the kubeconfig context (`default` when it names none).
    pub fn default_namespace(&self) -> &str {
        &self.default_namespace
    }

    /// The underlying kube-rs client.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// Resolves `apiVersion` + `kind` through discovery: the group version's
    /// resource list is fetched once per process, by one request however many
    /// callers miss at once; a kind that list lacks is asked for again, so a
    /// CRD created earlier is found.
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<ApiResource, ApiError> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gv = GroupVersion::gv(group, version);
        self.discovery
            .resolve(api_version, kind, || async {
                let listed = self
                    .retrying(Resend::Idempotent, || {
                        kube::discovery::oneshot::pinned_group(&self.client, &gv)
                    })
                    .await;
                match listed {
                    Ok(served) => Ok(Some(
                        served
                            .versioned_resources(version)
                            .into_iter()
                            .map(|(ar, caps)| ApiResource {
                                group: ar.group,
                                version: ar.version,
                                kind: ar.kind,
                                plural: ar.plural,
                                namespaced: caps.scope == kube::discovery::Scope::Namespaced,
                            })
                            .collect(),
                    )),
                    Err(err) if err.code == 404 || err.reason == "NotFound" => Ok(None),
                    Err(err) => Err(err),
                }
            })
            .await
    }

    /// The identity of the cluster, as a state records it: the UID of its
    /// `kube-system` Namespace (`None` when this user may not read it, or it
    /// does not exist), the server's URL, and `context`.
    ///
    /// # Errors
    /// The Namespace could not be read for another reason (the server is unreachable).
    pub async fn identity(&self, context: Option<&str>) -> Result<ClusterIdentity, Error> {
        let namespaces = ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
            plural: "namespaces".into(),
            namespaced: false,
        };
        let server = self
            .server
            .clone()
            .unwrap_or_else(|| "an unnamed server".to_owned());
        let uid = match self.get(&namespaces, None, "kube-system").await {
            Ok(Some(text)) => serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|ns| ns["metadata"]["uid"].as_str().map(str::to_owned)),
            Ok(None) => None,
            Err(e) if e.code == 403 || e.code == 401 => None,
            Err(source) => return Err(Error::Identity { server, source }),
        };
        Ok(ClusterIdentity {
            kube_system_uid: uid,
            server,
            context: context.map(str::to_owned),
        })
    }

    /// GET; `None` on 404.
    pub async fn get(
        &self,
        ar: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<String>, ApiError> {
        let req = request(ar, namespace)
            .get(name, &Default::default())
            .map_err(build_error)?;
        match self.text(req).await {
            Ok(text) => Ok(Some(text)),
            Err(err) if err.code == 404 => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// POST. After a failure that leaves open whether the object was created
    /// (a 5xx, a lost response), the object is read back before the POST is
    /// sent again, so a create that took effect is never repeated: the object
    /// found is the answer.
    pub async fn create(
        &self,
        ar: &ApiResource,
        namespace: Option<&str>,
        object: &str,
        options: &CreateOptions,
    ) -> Result<String, ApiError> {
        let params = PostParams {
            dry_run: options.dry_run,
            field_manager: options.field_manager.clone(),
        };
        let req = request(ar, namespace)
            .create(&params, object.as_bytes().to_vec())
            .map_err(build_error)?;
        let name = serde_json::from_str::<Value>(object)
            .ok()
            .and_then(|o| o["metadata"]["name"].as_str().map(str::to_owned));
        let Some(name) = name.filter(|_| !options.dry_run) else {
            // A dry run changes nothing, and a `generateName` create cannot be
            // read back: both follow the plain rules.
            return self.text(req).await;
        };
        let read_back = request(ar, namespace)
            .get(&name, &Default::default())
            .map_err(build_error)?;
        let sent = AtomicBool::new(false);
        self.retrying(Resend::Idempotent, || async {
            if sent.swap(true, Ordering::Relaxed) {
                match self.client.request_text(copy_request(&read_back)).await {
                    Ok(live) => return Ok(live),
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(err) => return Err(err),
                }
            }
            self.client.request_text(copy_request(&req)).await
        })
        .await
    }

    /// PATCH with the given patch type.
    pub async fn patch(
        &self,
        ar: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &str,
        options: &PatchOptions,
    ) -> Result<String, ApiError> {
        let body: Value = serde_json::from_str(body).map_err(|e| {
            ApiError::api(400, "BadRequest", format!("patch body is not JSON: {e}"))
        })?;
        let mut params = PatchParams {
            dry_run: options.dry_run,
            force: options.force && patch_type == PatchType::Apply,
            field_manager: options.field_manager.clone(),
            ..Default::default()
        };
        if patch_type == PatchType::Apply && params.field_manager.is_none() {
            params.field_manager = Some("krt".into());
        }
        let patch = match patch_type {
            PatchType::Apply => Patch::Apply(body),
            PatchType::StrategicMerge => Patch::Strategic(body),
            PatchType::JsonMerge | PatchType::JsonPatch => Patch::Merge(body),
        };
        let mut req = request(ar, namespace)
            .patch(name, &params, &patch)
            .map_err(build_error)?;
        if patch_type == PatchType::JsonPatch {
            req.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json-patch+json"),
            );
        }
        self.text(req).await
    }

    /// DELETE; returns the object while it still exists, `None` once gone.
    pub async fn delete(
        &self,
        ar: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Option<String>, ApiError> {
        let params = DeleteParams {
            dry_run: options.dry_run,
            grace_period_seconds: options.grace_period_seconds,
            propagation_policy: options.propagation_policy.map(|p| match p {
                PropagationPolicy::Background => KubePropagation::Background,
                PropagationPolicy::Foreground => KubePropagation::Foreground,
                PropagationPolicy::Orphan => KubePropagation::Orphan,
            }),
            preconditions: options.preconditions.as_ref().map(|p| KubePreconditions {
                uid: p.uid.clone(),
                resource_version: p.resource_version.clone(),
            }),
        };
        let req = request(ar, namespace)
            .delete(name, &params)
            .map_err(build_error)?;
        // The server answers with a `Status` when the object is gone, or with the
        // object: its final state when deleted at once (kinds that return the
        // deleted object, such as custom resources), or with a deletionTimestamp
        // while finalizers or a grace period keep it.
        let text = self.text(req).await?;
        let pending = serde_json::from_str::<Value>(&text)
            .map(|v| v["kind"] != "Status" && !v["metadata"]["deletionTimestamp"].is_null())
            .unwrap_or(false);
        Ok(pending.then_some(text))
    }

    /// LIST (one page when `limit` is set). Items get their `apiVersion` and
    /// `kind` filled in, which API servers leave out of list items.
    pub async fn list(
        &self,
        ar: &ApiResource,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<(Vec<String>, String, Option<String>), ApiError> {
        let params = ListParams {
            label_selector: options.label_selector.clone(),
            field_selector: options.field_selector.clone(),
            limit: options.limit,
            continue_token: options.continue_token.clone(),
            ..Default::default()
        };
        let req = request(ar, namespace).list(&params).map_err(build_error)?;
        let text = self.text(req).await?;
        let mut list: Value = serde_json::from_str(&text)
            .map_err(|e| ApiError::api(500, "InternalError", format!("invalid list: {e}")))?;
        let api_version = ar.api_version();
        let items = match list.get_mut("items").and_then(Value::as_array_mut) {
            Some(items) => items
                .iter_mut()
                .map(|item| {
                    if let Some(obj) = item.as_object_mut() {
                        obj.entry("apiVersion")
                            .or_insert_with(|| api_version.clone().into());
                        obj.entry("kind").or_insert_with(|| ar.kind.clone().into());
                    }
                    item.to_string()
                })
                .collect(),
            None => Vec::new(),
        };
        let meta = &list["metadata"];
        let rv = meta["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let cont = meta["continue"]
            .as_str()
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        Ok((items, rv, cont))
    }

    /// Starts a WATCH.
    pub async fn watch(
        &self,
        ar: &ApiResource,
        namespace: Option<&str>,
        options: &WatchOptions,
    ) -> Result<EventStream, ApiError> {
        let mut params = WatchParams {
            label_selector: options.label_selector.clone(),
            field_selector: options.field_selector.clone(),
            bookmarks: options.allow_bookmarks,
            ..Default::default()
        };
        if let Some(t) = options.timeout_seconds {
            params.timeout = Some(t.min(290));
        }
        let version = options.resource_version.as_deref().unwrap_or("0");
        let req = request(ar, namespace)
            .watch(&params, version)
            .map_err(build_error)?;
        let stream = self
            .retrying(Resend::Idempotent, || {
                self.client
                    .request_events::<DynamicObject>(copy_request(&req))
            })
            .await?;
        Ok(Box::pin(stream.map(
            |event: Result<WatchEvent<DynamicObject>, kube::Error>| match event {
                Ok(event) => raw_event(event),
                Err(err) => Err(kube_error(err)),
            },
        )))
    }

    /// Sends `req`, retried as [`Resend::of`] allows, within the call deadline.
    async fn text(&self, req: http::Request<Vec<u8>>) -> Result<String, ApiError> {
        self.retrying(Resend::of(&req), || {
            self.client.request_text(copy_request(&req))
        })
        .await
    }

    /// Adds the server's URL to a transport error.
    fn name_server(&self, mut err: ApiError) -> ApiError {
        if let (ErrorSource::Transport, Some(url)) = (err.source, &self.server) {
            err.message = format!("cannot reach the API server at {url}: {}", err.message);
        }
        err
    }

    /// Runs `call` until it succeeds, fails for good, or the deadline passes,
    /// each attempt within the adaptive limit on requests in flight.
    /// `Retry-After` (header or `details.retryAfterSeconds`) is honoured. kube-rs's
    /// own retry layer is switched off by [`connect`](crate::connect) so the two
    /// never stack.
    async fn retrying<T, F, Fut>(&self, resend: Resend, call: F) -> Result<T, ApiError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, kube::Error>>,
    {
        let attempts = async {
            let mut attempt = 0;
            loop {
                let permit = self.limiter.acquire().await;
                let err = match call().await {
                    Ok(value) => {
                        permit.done(limit::Outcome::Answered);
                        return Ok(value);
                    }
                    Err(err) => kube_error(err),
                };
                permit.done(match (err.source, err.code) {
                    (_, 429) => limit::Outcome::Throttled,
                    (ErrorSource::Transport, _) => limit::Outcome::Lost,
                    _ => limit::Outcome::Answered,
                });
                let idempotent = resend == Resend::Idempotent;
                let limit = match (err.source, err.code) {
                    (_, 429) => MAX_RETRIES,
                    (ErrorSource::Transport, _) if idempotent => MAX_TRANSPORT_RETRIES,
                    (_, 500 | 502 | 503 | 504) if idempotent => MAX_RETRIES,
                    _ => 0,
                };
                if attempt >= limit {
                    return Err(self.name_server(err));
                }
                attempt += 1;
                self.retries.fetch_add(1, Ordering::Relaxed);
                let backoff = Duration::from_millis(100 << attempt.min(6));
                let wait = err
                    .retry_after_seconds
                    .map(|s| Duration::from_secs(s.into()))
                    .unwrap_or(backoff)
                    .min(MAX_RETRY_WAIT);
                tracing::debug!(code = err.code, reason = %err.reason, ?wait, attempt, "retrying");
                tokio::time::sleep(wait).await;
            }
        };
        match tokio::time::timeout(self.call_deadline, attempts).await {
            Ok(result) => result,
            Err(_) => Err(ApiError {
                source: ErrorSource::Timeout,
                ..ApiError::api(
                    0,
                    "Timeout",
                    format!(
                        "no answer from the API server within {:?}",
                        self.call_deadline
                    ),
                )
            }),
        }
    }
}

/// After which failures a request may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resend {
    /// Only after 429: the server turned it away unprocessed.
    Throttled,
    /// Also after 5xx and transport errors: sending it twice has the effect of
    /// sending it once, whether or not the first one took effect.
    Idempotent,
}

impl Resend {
    /// GET, LIST, DELETE (a second delete finds the object gone or going),
    /// server-side apply, merge and strategic-merge patches (re-applying the
    /// same patch changes nothing more) and dry runs are idempotent. A JSON
    /// patch (its operations may not commute with themselves) and a POST are
    /// not; [`KubeCluster::create`] reads back before it re-sends one.
    fn of(req: &http::Request<Vec<u8>>) -> Resend {
        let dry_run = req.uri().query().is_some_and(|q| q.contains("dryRun="));
        let json_patch = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"application/json-patch"));
        match *req.method() {
            http::Method::GET | http::Method::DELETE => Resend::Idempotent,
            http::Method::PATCH if !json_patch => Resend::Idempotent,
            _ if dry_run => Resend::Idempotent,
            _ => Resend::Throttled,
        }
    }
}

/// A copy of a request (bodies are small JSON documents), for retries.
fn copy_request(req: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut copy = http::Request::new(req.body().clone());
    *copy.method_mut() = req.method().clone();
    *copy.uri_mut() = req.uri().clone();
    *copy.headers_mut() = req.headers().clone();
    copy
}

fn request(ar: &ApiResource, namespace: Option<&str>) -> Request {
    let kube_ar = KubeApiResource {
        group: ar.group.clone(),
        version: ar.version.clone(),
        api_version: ar.api_version(),
        kind: ar.kind.clone(),
        plural: ar.plural.clone(),
    };
    let namespace = if ar.namespaced { namespace } else { None };
    Request::new(<DynamicObject as kube::Resource>::url_path(
        &kube_ar, namespace,
    ))
}

fn raw_event(event: WatchEvent<DynamicObject>) -> Result<RawEvent, ApiError> {
    let (kind, object) = match event {
        WatchEvent::Added(o) => (EventType::Added, serde_json::to_string(&o)),
        WatchEvent::Modified(o) => (EventType::Modified, serde_json::to_string(&o)),
        WatchEvent::Deleted(o) => (EventType::Deleted, serde_json::to_string(&o)),
        WatchEvent::Bookmark(b) => (EventType::Bookmark, serde_json::to_string(&b)),
        WatchEvent::Error(status) => return Err(status_error(&status)),
    };
    object
        .map(|o| (kind, o))
        .map_err(|e| ApiError::api(500, "InternalError", format!("invalid watch event: {e}")))
}

fn build_error(err: kube::core::request::Error) -> ApiError {
    ApiError::api(
        400,
        "BadRequest",
        format!("cannot build the request: {err}"),
    )
}

fn status_error(status: &kube::core::Status) -> ApiError {
    let details = status.details.as_ref();
    ApiError {
        source: ErrorSource::Api,
        code: status.code,
        reason: status.reason.clone(),
        message: status.message.clone(),
        causes: details
            .map(|d| {
                d.causes
                    .iter()
                    .map(|c| Cause {
                        field: c.field.clone(),
                        reason: c.reason.clone(),
                        message: c.message.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        retry_after_seconds: details.map(|d| d.retry_after_seconds).filter(|s| *s > 0),
    }
}

/// Maps a kube-rs error to the WIT error record: API failures keep the full
/// `metav1.Status`; everything before a response is a transport error.
pub fn kube_error(err: kube::Error) -> ApiError {
    match err {
        kube::Error::Api(status) => status_error(&status),
        other => ApiError {
            source: ErrorSource::Transport,
            ..ApiError::api(0, "Unreachable", error_chain(&other))
        },
    }
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}
