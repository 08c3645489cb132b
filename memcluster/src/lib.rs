//! The in-memory cluster component: krt-sim's object store ([`krt_sim::api::Cluster`], no HTTP)
//! behind the `kusion:runtime/kubernetes` interface, plus trivial `kusion:runtime/host`
//! services (logs to stderr, progress dropped, sleep on the WASI clock).
//!
//! Composed with a guest by `wac compose` (see `tests/compose.sh`), it lets the plain `wasmtime`
//! CLI run the whole runtime: every `wasmtime run --invoke` instantiates the composition afresh,
//! so each invocation starts from a new cluster holding only the four default namespaces.
//!
//! This module maps each `kubernetes` call to the simulator's REST request and back, as the
//! host's kube-rs client does against a real API server; it is plain Rust, tested natively.
//! Compiled for `wasm32`, `component.rs` binds it to the WIT exports.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use krt_sim::api::{Cluster, Request, Response, Watch};
use serde_json::{Value, json};

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code, reason = "wit-bindgen's generated export glue")]
mod component;

/// Events kept for watches that resume from a resourceVersion.
const HISTORY: usize = 1000;

/// How often the simulated controllers take a step while a watch waits (krt-sim's default).
const CONTROLLER_INTERVAL: Duration = Duration::from_millis(20);

/// A kind resolved to the REST resource serving it (the WIT `api-resource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// API group, empty for the core group.
    pub group: String,
    /// API version, for example `v1`.
    pub version: String,
    /// Kind, for example `Deployment`.
    pub kind: String,
    /// Plural resource name, for example `deployments`.
    pub plural: String,
    /// Whether objects of this kind live in a namespace.
    pub namespaced: bool,
}

impl Kind {
    /// The collection path, for example `/apis/apps/v1/namespaces/web/deployments`.
    fn collection(&self, namespace: Option<&str>) -> String {
        let root = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) => format!("{root}/namespaces/{ns}/{}", self.plural),
            None => format!("{root}/{}", self.plural),
        }
    }

    /// The object path.
    fn object(&self, namespace: Option<&str>, name: &str) -> String {
        format!("{}/{name}", self.collection(namespace))
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A failed call: the simulator's `metav1.Status` (the WIT `api-error` with source `api`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// HTTP status code.
    pub code: u16,
    /// `metav1.Status.reason`.
    pub reason: String,
    /// `metav1.Status.message`.
    pub message: String,
    /// `details.causes` as (field, reason, message).
    pub causes: Vec<(String, String, String)>,
    /// `details.retryAfterSeconds`.
    pub retry_after_seconds: Option<u32>,
}

impl From<Response> for Failure {
    fn from(response: Response) -> Self {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let status = &response.body;
        Self {
            code: response.code,
            reason: text(&status["reason"]),
            message: text(&status["message"]),
            causes: status["details"]["causes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| (text(&c["field"]), text(&c["reason"]), text(&c["message"])))
                .collect(),
            retry_after_seconds: response
                .retry_after()
                .and_then(|s| u32::try_from(s).ok())
                .filter(|s| *s > 0),
        }
    }
}

/// The outcome of a call.
pub type Answer<T> = Result<T, Failure>;

/// The patch formats (the WIT `patch-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    JsonMerge,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/apply-patch+yaml`.
    Apply,
    /// `application/json-patch+json`.
    JsonPatch,
}

/// Options of [`MemCluster::patch`].
#[derive(Debug, Clone, Default)]
pub struct PatchOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The field manager; `krt` for apply patches when `None`.
    pub field_manager: Option<String>,
    /// Server-side apply only: take ownership of conflicting fields.
    pub force: bool,
}

/// Options of [`MemCluster::delete`].
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `Background`, `Foreground` or `Orphan`.
    pub propagation_policy: Option<&'static str>,
    /// Required `metadata.uid`.
    pub uid: Option<String>,
    /// Required `metadata.resourceVersion`.
    pub resource_version: Option<String>,
    /// Grace period in seconds.
    pub grace_period_seconds: Option<u32>,
}

/// Options of [`MemCluster::list`] and [`MemCluster::watch`] (selectors and paging or resuming).
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// A label selector.
    pub label_selector: Option<String>,
    /// A field selector.
    pub field_selector: Option<String>,
    /// List: the page size.
    pub limit: Option<u32>,
    /// List: the `continue` token of the previous page.
    pub continue_token: Option<String>,
    /// Watch: start after this resourceVersion (from now, with `ADDED` events, when `None`).
    pub resource_version: Option<String>,
    /// Watch: end the stream (410) after this many seconds.
    pub timeout_seconds: Option<u32>,
}

/// One page of a list: the items (with `apiVersion` and `kind`), the list's resourceVersion and
/// the next page's token.
pub type Page = (Vec<String>, String, Option<String>);

/// The in-memory cluster and the `kubernetes` calls on it.
pub struct MemCluster {
    cluster: Cluster,
}

impl Default for MemCluster {
    fn default() -> Self {
        Self::new()
    }
}

impl MemCluster {
    /// A new cluster holding the default namespaces.
    pub fn new() -> Self {
        Self {
            cluster: Cluster::new(HISTORY),
        }
    }

    /// Resolves `apiVersion` + `kind` through the simulator's discovery documents; 404 when no
    /// served resource has that kind.
    pub fn resolve(&self, api_version: &str, kind: &str) -> Answer<Kind> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let path = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let doc = self.cluster.handle(&Request::get(&path));
        doc.body["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["kind"] == kind)
            .filter_map(|r| r["name"].as_str().map(|name| (name, r)))
            .find(|(name, _)| !name.contains('/'))
            .map(|(name, r)| Kind {
                group: group.to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
                plural: name.to_string(),
                namespaced: r["namespaced"].as_bool().unwrap_or(false),
            })
            .ok_or_else(|| Failure {
                code: 404,
                reason: "NotFound".into(),
                message: format!(
                    "no resource type {api_version}/{kind} is served by the cluster (is the CRD installed?)"
                ),
                causes: Vec::new(),
                retry_after_seconds: None,
            })
    }

    /// Reads one object; `None` on 404.
    pub fn get(&self, kind: &Kind, namespace: Option<&str>, name: &str) -> Answer<Option<String>> {
        match self.call(Request::get(&kind.object(namespace, name))) {
            Ok(object) => Ok(Some(object.to_string())),
            Err(failure) if failure.code == 404 => Ok(None),
            Err(failure) => Err(failure),
        }
    }

    /// Creates an object and returns it as stored.
    pub fn create(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        object: &str,
        dry_run: bool,
        field_manager: Option<&str>,
    ) -> Answer<String> {
        let request = Request::post(&kind.collection(namespace), object.as_bytes().to_vec());
        let request = write_params(request, dry_run, field_manager);
        self.call(request).map(|v| v.to_string())
    }

    /// Patches an object with a patch of type `patch_type` and returns it as stored.
    pub fn patch(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &str,
        options: &PatchOptions,
    ) -> Answer<String> {
        let content_type = match patch_type {
            PatchType::JsonMerge => "application/merge-patch+json",
            PatchType::StrategicMerge => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
            PatchType::JsonPatch => "application/json-patch+json",
        };
        let manager = match (&options.field_manager, patch_type) {
            (Some(m), _) => Some(m.as_str()),
            (None, PatchType::Apply) => Some("krt"),
            (None, _) => None,
        };
        let request = Request::patch(
            &kind.object(namespace, name),
            content_type,
            body.as_bytes().to_vec(),
        );
        let mut request = write_params(request, options.dry_run, manager);
        if options.force && patch_type == PatchType::Apply {
            request = request.query("force", "true");
        }
        self.call(request).map(|v| v.to_string())
    }

    /// Deletes an object: the object while it still exists (finalizers pending), `None` once
    /// gone.
    pub fn delete(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Answer<Option<String>> {
        let mut body = json!({"kind": "DeleteOptions", "apiVersion": "v1"});
        if let Some(policy) = options.propagation_policy {
            body["propagationPolicy"] = json!(policy);
        }
        if options.uid.is_some() || options.resource_version.is_some() {
            body["preconditions"] =
                json!({"uid": options.uid, "resourceVersion": options.resource_version});
        }
        if let Some(seconds) = options.grace_period_seconds {
            body["gracePeriodSeconds"] = json!(seconds);
        }
        let request = Request::delete(&kind.object(namespace, name))
            .body("application/json", body.to_string().into_bytes());
        let object = self.call(write_params(request, options.dry_run, None))?;
        let pending =
            object["kind"] != "Status" && !object["metadata"]["deletionTimestamp"].is_null();
        Ok(pending.then(|| object.to_string()))
    }

    /// Lists objects (one page when `query.limit` is set); items get their `apiVersion` and
    /// `kind`, which list items leave out.
    pub fn list(&self, kind: &Kind, namespace: Option<&str>, query: &Query) -> Answer<Page> {
        let mut list = self.call(selectors(Request::get(&kind.collection(namespace)), query))?;
        let api_version = kind.api_version();
        let items = list["items"]
            .as_array_mut()
            .into_iter()
            .flatten()
            .map(|item| {
                if let Some(object) = item.as_object_mut() {
                    object
                        .entry("apiVersion")
                        .or_insert_with(|| api_version.clone().into());
                    object
                        .entry("kind")
                        .or_insert_with(|| kind.kind.clone().into());
                }
                item.to_string()
            })
            .collect();
        let meta = &list["metadata"];
        let continue_token = meta["continue"]
            .as_str()
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        let rv = meta["resourceVersion"].as_str().unwrap_or_default();
        Ok((items, rv.to_string(), continue_token))
    }

    /// Starts a watch: the stored events after `query.resource_version` (or `ADDED` for every
    /// object), then every later change.
    pub fn watch(&self, kind: &Kind, namespace: Option<&str>, query: &Query) -> Answer<Stream> {
        let mut request = selectors(Request::get(&kind.collection(namespace)), query);
        if let Some(rv) = &query.resource_version {
            request = request.query("resourceVersion", rv);
        }
        let watch = self.cluster.watch(&request).map_err(Failure::from)?;
        Ok(Stream {
            watch,
            pending: VecDeque::new(),
            ends: query
                .timeout_seconds
                .map(|s| Instant::now() + Duration::from_secs(s.into())),
        })
    }

    /// Sends `request`; a code of 400 or more is a failure.
    fn call(&self, request: Request) -> Answer<Value> {
        let response = self.cluster.handle(&request);
        if response.code >= 400 {
            Err(response.into())
        } else {
            Ok(response.body)
        }
    }
}

fn write_params(mut request: Request, dry_run: bool, field_manager: Option<&str>) -> Request {
    if dry_run {
        request = request.query("dryRun", "All");
    }
    if let Some(manager) = field_manager {
        request = request.query("fieldManager", manager);
    }
    request
}

fn selectors(mut request: Request, query: &Query) -> Request {
    let params = [
        ("labelSelector", query.label_selector.clone()),
        ("fieldSelector", query.field_selector.clone()),
        ("limit", query.limit.map(|l| l.to_string())),
        ("continue", query.continue_token.clone()),
    ];
    for (name, value) in params {
        if let Some(value) = value {
            request = request.query(name, &value);
        }
    }
    request
}

/// The type of a watch event: the guest library's, one definition for both sides.
pub use krt_guest::model::EventType;

/// A watch stream over the cluster's event history.
pub struct Stream {
    watch: Watch,
    pending: VecDeque<Value>,
    /// When the stream ends (the `timeout-seconds` the caller asked for).
    ends: Option<Instant>,
}

impl Stream {
    /// The next event, waiting up to `timeout_ms` for one. While it waits, the simulated
    /// controllers take a step every 20 ms (as in krt-sim), so workloads progress towards ready.
    /// `None` when nothing happened in time; 410 once the stream's `timeout-seconds` passed or
    /// the history no longer reaches it.
    pub fn next(
        &mut self,
        cluster: &MemCluster,
        timeout_ms: u32,
    ) -> Answer<Option<(EventType, String)>> {
        let deadline = Instant::now() + Duration::from_millis(timeout_ms.into());
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(Some(event_out(event)));
            }
            if self.ends.is_some_and(|ends| Instant::now() >= ends) {
                return Err(Failure {
                    code: 410,
                    reason: "Expired".into(),
                    message: "the watch stream was closed by the API server; list again and start a new watch".into(),
                    causes: Vec::new(),
                    retry_after_seconds: None,
                });
            }
            self.pending
                .extend(self.watch.poll(&cluster.cluster).map_err(Response::from)?);
            if !self.pending.is_empty() {
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            std::thread::sleep(left.min(CONTROLLER_INTERVAL));
            cluster.cluster.reconcile();
        }
    }
}

fn event_out(mut event: Value) -> (EventType, String) {
    let kind = match event["type"].as_str() {
        Some("ADDED") => EventType::Added,
        Some("DELETED") => EventType::Deleted,
        Some("BOOKMARK") => EventType::Bookmark,
        _ => EventType::Modified,
    };
    (kind, event["object"].take().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployments(cluster: &MemCluster) -> Kind {
        cluster.resolve("apps/v1", "Deployment").expect("served")
    }

    const WEB: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}}"#;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("JSON")
    }

    #[test]
    fn resolves_built_in_kinds_through_discovery() {
        let cluster = MemCluster::new();
        assert_eq!(
            deployments(&cluster),
            Kind {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
                plural: "deployments".into(),
                namespaced: true,
            }
        );
        let namespaces = cluster.resolve("v1", "Namespace").expect("served");
        assert_eq!(
            (namespaces.plural.as_str(), namespaces.namespaced),
            ("namespaces", false)
        );
        let missing = cluster.resolve("example.com/v1", "Widget").unwrap_err();
        assert_eq!((missing.code, missing.reason.as_str()), (404, "NotFound"));
        assert!(
            missing.message.contains("example.com/v1/Widget"),
            "{}",
            missing.message
        );
    }

    #[test]
    fn create_get_patch_delete_round_trip() {
        let cluster = MemCluster::new();
        let kind = deployments(&cluster);
        let ns = Some("default");
        assert_eq!(cluster.get(&kind, ns, "web"), Ok(None));

        let dry = parse(
            &cluster
                .create(&kind, ns, WEB, true, Some("krt"))
                .expect("dry run"),
        );
        assert_eq!(dry["spec"]["replicas"], 1, "defaulted");
        assert_eq!(
            cluster.get(&kind, ns, "web"),
            Ok(None),
            "a dry run stores nothing"
        );

        let created = parse(
            &cluster
                .create(&kind, ns, WEB, false, Some("krt"))
                .expect("create"),
        );
        assert!(created["metadata"]["uid"].is_string());
        let again = cluster.create(&kind, ns, WEB, false, None).unwrap_err();
        assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"));

        let patches = [
            (PatchType::JsonMerge, r#"{"spec": {"replicas": 2}}"#, 2),
            (PatchType::StrategicMerge, r#"{"spec": {"replicas": 3}}"#, 3),
            (
                PatchType::JsonPatch,
                r#"[{"op": "replace", "path": "/spec/replicas", "value": 4}]"#,
                4,
            ),
            (
                PatchType::Apply,
                r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 5}}"#,
                5,
            ),
        ];
        for (patch_type, body, replicas) in patches {
            let options = PatchOptions {
                force: true,
                ..PatchOptions::default()
            };
            let patched = cluster.patch(&kind, ns, "web", patch_type, body, &options);
            let patched = parse(&patched.unwrap_or_else(|e| panic!("{patch_type:?}: {e:?}")));
            assert_eq!(patched["spec"]["replicas"], replicas, "{patch_type:?}");
        }
        let live = parse(&cluster.get(&kind, ns, "web").expect("get").expect("exists"));
        let managers: Vec<&str> = live["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields")
            .iter()
            .filter_map(|m| m["manager"].as_str())
            .collect();
        assert!(
            managers.contains(&"krt"),
            "apply's default manager: {managers:?}"
        );

        let stale = DeleteOptions {
            uid: Some("not-the-uid".into()),
            ..DeleteOptions::default()
        };
        let refused = cluster.delete(&kind, ns, "web", &stale).unwrap_err();
        assert_eq!(refused.code, 409);
        assert_eq!(
            cluster.delete(&kind, ns, "web", &DeleteOptions::default()),
            Ok(None)
        );
        let gone = cluster
            .delete(&kind, ns, "web", &DeleteOptions::default())
            .unwrap_err();
        assert_eq!(gone.code, 404);
    }

    #[test]
    fn invalid_objects_carry_the_status_causes() {
        let cluster = MemCluster::new();
        let kind = deployments(&cluster);
        let bad = r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bad"},
            "spec": {"replicas": -1}}"#;
        let failure = cluster
            .create(&kind, Some("default"), bad, false, None)
            .unwrap_err();
        assert_eq!((failure.code, failure.reason.as_str()), (422, "Invalid"));
        assert!(!failure.causes.is_empty(), "{failure:?}");
    }

    #[test]
    fn lists_pages_with_kind_and_selectors() {
        let cluster = MemCluster::new();
        let kind = cluster.resolve("v1", "ConfigMap").expect("served");
        for (name, tier) in [("a", "web"), ("b", "web"), ("c", "db")] {
            let object = json!({"metadata": {"name": name, "labels": {"tier": tier}}});
            cluster
                .create(&kind, Some("default"), &object.to_string(), false, None)
                .expect("create");
        }
        let query = Query {
            label_selector: Some("tier=web".into()),
            limit: Some(1),
            ..Query::default()
        };
        let (items, rv, token) = cluster.list(&kind, Some("default"), &query).expect("list");
        assert_eq!(items.len(), 1);
        let first = parse(&items[0]);
        assert_eq!(
            (first["apiVersion"].as_str(), first["kind"].as_str()),
            (Some("v1"), Some("ConfigMap"))
        );
        assert!(!rv.is_empty());
        let next = Query {
            continue_token: token,
            ..query
        };
        let (rest, _, token) = cluster.list(&kind, Some("default"), &next).expect("page 2");
        assert_eq!(parse(&rest[0])["metadata"]["name"], "b");
        assert_eq!(token, None);
    }

    #[test]
    fn watches_replay_stored_events_and_controllers_progress_while_waiting() {
        let cluster = MemCluster::new();
        let kind = deployments(&cluster);
        let ns = Some("default");
        let created = parse(&cluster.create(&kind, ns, WEB, false, None).expect("create"));
        let rv = created["metadata"]["resourceVersion"].as_str().expect("rv");

        let mut from_now = cluster.watch(&kind, ns, &Query::default()).expect("watch");
        let (added, object) = from_now.next(&cluster, 0).expect("next").expect("event");
        assert_eq!(
            (added, parse(&object)["metadata"]["name"].as_str()),
            (EventType::Added, Some("web"))
        );

        cluster
            .patch(
                &kind,
                ns,
                "web",
                PatchType::JsonMerge,
                r#"{"spec": {"replicas": 2}}"#,
                &PatchOptions::default(),
            )
            .expect("patch");
        let resumed = Query {
            resource_version: Some(rv.to_string()),
            ..Query::default()
        };
        let mut replay = cluster.watch(&kind, ns, &resumed).expect("watch");
        let (modified, object) = replay.next(&cluster, 0).expect("next").expect("event");
        assert_eq!(
            (modified, parse(&object)["spec"]["replicas"].as_u64()),
            (EventType::Modified, Some(2))
        );

        // The simulated Deployment controller reports the rollout while the watch waits.
        let ready = loop {
            match replay.next(&cluster, 5_000).expect("next") {
                Some((_, object)) if parse(&object)["status"]["readyReplicas"] == 2 => break true,
                Some(_) => {}
                None => break false,
            }
        };
        assert!(ready, "the controllers never made the Deployment ready");
        assert_eq!(replay.next(&cluster, 0), Ok(None), "nothing left to report");
    }

    #[test]
    fn a_stream_past_its_timeout_seconds_is_expired() {
        let cluster = MemCluster::new();
        let kind = cluster.resolve("v1", "ConfigMap").expect("served");
        let query = Query {
            timeout_seconds: Some(0),
            ..Query::default()
        };
        let mut stream = cluster.watch(&kind, None, &query).expect("watch");
        assert_eq!(stream.next(&cluster, 0).unwrap_err().code, 410);
    }
}
