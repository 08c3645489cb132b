//! An in-memory cluster and host for runtime tests: objects in a map, a
//! resourceVersion counter, uid and generation, 404 / 409 AlreadyExists /
//! 409 Conflict on a stale resourceVersion, patches applied with the guest's own
//! merge code, injectable failures, scripted watch streams and a request log.

use krt_guest::cluster::{Cluster, HostServices, WatchStream};
use krt_guest::merge::{self, strategic};
use krt_guest::model::{
    ApiError, ApiResource, Cause, CreateOptions, DeleteOptions, ListOptions, LogLevel, ObjectList,
    PatchOptions, PatchType, Progress, Resource, WatchEvent, WatchOptions,
};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// One request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Resolve(String),
    Get(String),
    Create {
        name: String,
        dry_run: bool,
        body: Value,
        field_manager: Option<String>,
    },
    Patch {
        name: String,
        patch_type: PatchType,
        body: Value,
        options: PatchOptions,
    },
    Delete {
        name: String,
        options: DeleteOptions,
    },
    List,
    Watch(WatchOptions),
}

impl Request {
    /// Whether the request changes the cluster.
    pub fn is_write(&self) -> bool {
        match self {
            Request::Create { dry_run, .. } => !dry_run,
            Request::Patch { options, .. } => !options.dry_run,
            Request::Delete { options, .. } => !options.dry_run,
            _ => false,
        }
    }
}

/// Which call an injected failure hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Resolve,
    Get,
    Create,
    Patch,
    /// A non-dry-run patch only.
    RealPatch,
    Delete,
    Watch,
}

type Key = (String, Option<String>, String);

/// The fake's state.
#[derive(Default)]
pub struct State {
    pub kinds: Vec<ApiResource>,
    pub objects: BTreeMap<Key, Value>,
    pub rv: u64,
    pub uid: u64,
    pub log: Vec<Request>,
    pub failures: VecDeque<(Verb, ApiError)>,
    /// One script per `watch` call: events returned in order, then nothing.
    pub watches: VecDeque<Vec<Result<Option<WatchEvent>, ApiError>>>,
    /// Deployment `spec.selector` changes are rejected with 422 like the API server.
    pub enforce_immutable_selector: bool,
}

/// A fake cluster; clones share state.
#[derive(Clone, Default)]
pub struct FakeCluster(pub Rc<RefCell<State>>);

fn api(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced,
    }
}

impl FakeCluster {
    /// A cluster serving a few core kinds and one CRD (`example.com/v1 Widget`).
    pub fn new() -> Self {
        let c = FakeCluster::default();
        c.0.borrow_mut().kinds = vec![
            api("", "v1", "Namespace", "namespaces", false),
            api("", "v1", "ConfigMap", "configmaps", true),
            api("", "v1", "Secret", "secrets", true),
            api("", "v1", "Service", "services", true),
            api("", "v1", "Pod", "pods", true),
            api("apps", "v1", "Deployment", "deployments", true),
            api("example.com", "v1", "Widget", "widgets", true),
        ];
        c
    }

    /// Fails the next call of `verb` with `err`.
    pub fn fail_next(&self, verb: Verb, err: ApiError) {
        self.0.borrow_mut().failures.push_back((verb, err));
    }

    /// Adds a scripted watch stream.
    pub fn script_watch(&self, events: Vec<Result<Option<WatchEvent>, ApiError>>) {
        self.0.borrow_mut().watches.push_back(events);
    }

    /// The request log.
    pub fn log(&self) -> Vec<Request> {
        self.0.borrow().log.clone()
    }

    /// Whether any write request was made.
    pub fn wrote(&self) -> bool {
        self.0.borrow().log.iter().any(Request::is_write)
    }

    /// Clears the request log.
    pub fn clear_log(&self) {
        self.0.borrow_mut().log.clear();
    }

    /// The stored object.
    pub fn object(&self, plural: &str, ns: Option<&str>, name: &str) -> Option<Value> {
        self.0.borrow().objects.get(&key(plural, ns, name)).cloned()
    }

    /// Stores an object directly (as another writer would), assigning server fields.
    pub fn put(&self, plural: &str, object: Value) {
        let ns = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut state = self.0.borrow_mut();
        let stored = state.stamp(None, object, "other");
        state.objects.insert((plural.into(), ns, name), stored);
    }

    fn take_failure(&self, verb: Verb) -> Option<ApiError> {
        let mut state = self.0.borrow_mut();
        let at = state.failures.iter().position(|(v, _)| *v == verb)?;
        state.failures.remove(at).map(|(_, e)| e)
    }

    fn fail(&self, verbs: &[Verb]) -> Result<(), ApiError> {
        verbs
            .iter()
            .find_map(|v| self.take_failure(*v))
            .map_or(Ok(()), Err)
    }
}

fn key(plural: &str, ns: Option<&str>, name: &str) -> Key {
    (plural.into(), ns.map(str::to_owned), name.into())
}

fn not_found(plural: &str, name: &str) -> ApiError {
    ApiError::api(404, "NotFound", format!("{plural} \"{name}\" not found"))
}

fn spec_of(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("metadata");
        o.remove("status");
    }
    v
}

impl State {
    /// Sets resourceVersion, uid, creationTimestamp, generation and managedFields.
    fn stamp(&mut self, old: Option<&Value>, mut new: Value, manager: &str) -> Value {
        self.rv += 1;
        let rv = self.rv.to_string();
        let (uid, created, generation) = match old {
            Some(old) => (
                old.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
                old.pointer("/metadata/creationTimestamp")
                    .cloned()
                    .unwrap_or(Value::Null),
                old.pointer("/metadata/generation")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
                    + i64::from(spec_of(old) != spec_of(&new)),
            ),
            None => {
                self.uid += 1;
                (
                    json!(format!("uid-{}", self.uid)),
                    json!("2024-01-01T00:00:00Z"),
                    1,
                )
            }
        };
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), json!(rv));
            meta.insert("uid".into(), uid);
            meta.insert("creationTimestamp".into(), created);
            meta.insert("generation".into(), json!(generation));
            meta.insert(
                "managedFields".into(),
                json!([{"manager": manager, "operation": "Update"}]),
            );
        }
        new
    }
}

impl Cluster for FakeCluster {
    type Watch = FakeStream;

    fn resolve(&self, api_version: &str, kind: &str) -> Result<ApiResource, ApiError> {
        self.0
            .borrow_mut()
            .log
            .push(Request::Resolve(format!("{api_version}/{kind}")));
        self.fail(&[Verb::Resolve])?;
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        self.0
            .borrow()
            .kinds
            .iter()
            .find(|a| a.group == group && a.version == version && a.kind == kind)
            .cloned()
            .ok_or_else(|| {
                ApiError::api(404, "NotFound", format!("no kind {kind} in {api_version}"))
            })
    }

    fn get(
        &self,
        r: &ApiResource,
        ns: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        self.0.borrow_mut().log.push(Request::Get(name.into()));
        self.fail(&[Verb::Get])?;
        Ok(self.object(&r.plural, ns, name))
    }

    fn create(
        &self,
        r: &ApiResource,
        ns: Option<&str>,
        object: &Value,
        o: &CreateOptions,
    ) -> Result<Value, ApiError> {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        self.0.borrow_mut().log.push(Request::Create {
            name: name.clone(),
            dry_run: o.dry_run,
            body: object.clone(),
            field_manager: o.field_manager.clone(),
        });
        self.fail(&[Verb::Create])?;
        let k = key(&r.plural, ns, &name);
        let mut state = self.0.borrow_mut();
        if state.objects.contains_key(&k) {
            return Err(ApiError::api(
                409,
                "AlreadyExists",
                format!("{} \"{name}\" already exists", r.plural),
            ));
        }
        let manager = o.field_manager.clone().unwrap_or_default();
        let stored = state.stamp(None, object.clone(), &manager);
        if !o.dry_run {
            state.objects.insert(k, stored.clone());
        } else {
            state.rv -= 1;
        }
        Ok(stored)
    }

    fn patch(
        &self,
        r: &ApiResource,
        ns: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &Value,
        o: &PatchOptions,
    ) -> Result<Value, ApiError> {
        self.0.borrow_mut().log.push(Request::Patch {
            name: name.into(),
            patch_type,
            body: body.clone(),
            options: o.clone(),
        });
        self.fail(&[Verb::Patch])?;
        if !o.dry_run {
            self.fail(&[Verb::RealPatch])?;
        }
        let k = key(&r.plural, ns, name);
        let mut state = self.0.borrow_mut();
        let live = state.objects.get(&k).cloned();
        let api_version = if r.group.is_empty() {
            r.version.clone()
        } else {
            format!("{}/{}", r.group, r.version)
        };
        let schema = strategic::schema_for(&api_version, &r.kind);
        let unsupported = |what: &str| {
            ApiError::api(
                415,
                "UnsupportedMediaType",
                format!("{what} is not supported for {}", r.kind),
            )
        };
        let merged = match live.as_ref() {
            None if patch_type == PatchType::Apply => body.clone(),
            None => return Err(not_found(&r.plural, name)),
            Some(live) => match (patch_type, schema) {
                (PatchType::JsonMerge, _) | (PatchType::Apply, None) => {
                    let mut out = live.clone();
                    merge::json::apply(&mut out, body);
                    out
                }
                (PatchType::StrategicMerge | PatchType::Apply, Some(schema)) => {
                    strategic::apply(live, body, schema)
                        .map_err(|e| ApiError::api(422, "Invalid", e.to_string()))?
                }
                (PatchType::StrategicMerge, None) => {
                    return Err(unsupported("strategic merge patch"));
                }
                (PatchType::JsonPatch, _) => return Err(unsupported("json patch")),
            },
        };
        if let (Some(live), Some(want)) = (live.as_ref(), body.pointer("/metadata/resourceVersion"))
            && live.pointer("/metadata/resourceVersion") != Some(want)
        {
            return Err(ApiError::api(
                409,
                "Conflict",
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        if let Some(live) = live.as_ref()
            && state.enforce_immutable_selector
            && live.pointer("/spec/selector") != merged.pointer("/spec/selector")
        {
            let mut err = ApiError::api(
                422,
                "Invalid",
                format!(
                    "{} \"{name}\" is invalid: spec.selector: Invalid value: field is immutable",
                    r.kind
                ),
            );
            err.causes = vec![Cause {
                field: "spec.selector".into(),
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: field is immutable".into(),
            }];
            return Err(err);
        }
        let manager = o.field_manager.clone().unwrap_or_default();
        let stored = state.stamp(live.as_ref(), merged, &manager);
        if o.dry_run {
            state.rv -= 1;
            let mut out = stored;
            if let (Some(meta), Some(live)) = (
                out.get_mut("metadata").and_then(Value::as_object_mut),
                live.as_ref(),
            ) {
                meta.insert(
                    "resourceVersion".into(),
                    live.pointer("/metadata/resourceVersion")
                        .cloned()
                        .unwrap_or(Value::Null),
                );
            }
            return Ok(out);
        }
        state.objects.insert(k, stored.clone());
        Ok(stored)
    }

    fn delete(
        &self,
        r: &ApiResource,
        ns: Option<&str>,
        name: &str,
        o: &DeleteOptions,
    ) -> Result<Option<Value>, ApiError> {
        self.0.borrow_mut().log.push(Request::Delete {
            name: name.into(),
            options: o.clone(),
        });
        self.fail(&[Verb::Delete])?;
        let k = key(&r.plural, ns, name);
        let mut state = self.0.borrow_mut();
        let Some(mut live) = state.objects.get(&k).cloned() else {
            return Err(not_found(&r.plural, name));
        };
        if o.dry_run {
            return Ok(Some(live));
        }
        let has_finalizers = live
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if has_finalizers {
            live["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:01Z");
            state.objects.insert(k, live.clone());
            return Ok(Some(live));
        }
        state.objects.remove(&k);
        Ok(None)
    }

    fn list(
        &self,
        r: &ApiResource,
        ns: Option<&str>,
        _o: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        self.0.borrow_mut().log.push(Request::List);
        let state = self.0.borrow();
        Ok(ObjectList {
            items: state
                .objects
                .iter()
                .filter(|((p, n, _), _)| p == &r.plural && (ns.is_none() || n.as_deref() == ns))
                .map(|(_, v)| v.clone())
                .collect(),
            resource_version: state.rv.to_string(),
            continue_token: None,
        })
    }

    fn watch(
        &self,
        _r: &ApiResource,
        _ns: Option<&str>,
        o: &WatchOptions,
    ) -> Result<FakeStream, ApiError> {
        self.0.borrow_mut().log.push(Request::Watch(o.clone()));
        self.fail(&[Verb::Watch])?;
        let script = self.0.borrow_mut().watches.pop_front().unwrap_or_default();
        Ok(FakeStream(script.into()))
    }
}

/// A scripted watch stream.
pub struct FakeStream(VecDeque<Result<Option<WatchEvent>, ApiError>>);

impl WatchStream for FakeStream {
    fn next(&mut self, timeout_ms: u32) -> Result<Option<WatchEvent>, ApiError> {
        match self.0.pop_front() {
            Some(item) => item,
            None => {
                std::thread::sleep(std::time::Duration::from_millis(u64::from(
                    timeout_ms.min(5),
                )));
                Ok(None)
            }
        }
    }
}

/// A host that records logs, progress and sleeps (without sleeping).
#[derive(Default)]
pub struct FakeHost {
    pub logs: RefCell<Vec<(LogLevel, String)>>,
    pub progress: RefCell<Vec<Progress>>,
    pub slept: RefCell<Vec<u32>>,
}

impl HostServices for FakeHost {
    fn log(&self, level: LogLevel, message: &str, _fields: &[(&str, &str)]) {
        self.logs.borrow_mut().push((level, message.into()));
    }
    fn progress(&self, event: &Progress) {
        self.progress.borrow_mut().push(event.clone());
    }
    fn sleep(&self, ms: u32) {
        self.slept.borrow_mut().push(ms);
    }
}

/// A resource with `id` and `attributes`.
pub fn resource(id: &str, attributes: Value) -> Resource {
    Resource {
        id: id.into(),
        type_: "Kubernetes".into(),
        attributes,
        depends_on: vec!["v1:Namespace:web".into()],
        extensions: json!({"note": "kept"}),
    }
}

/// A ConfigMap resource in namespace `web`.
pub fn configmap(name: &str, data: Value) -> Resource {
    resource(
        &format!("v1:ConfigMap:web:{name}"),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "web"}, "data": data}),
    )
}

/// A Deployment resource in namespace `web`.
pub fn deployment(name: &str, replicas: i64, containers: Value) -> Resource {
    resource(
        &format!("apps/v1:Deployment:web:{name}"),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "web", "labels": {"app": name}},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}}
            }
        }),
    )
}

/// A field-manager conflict on `field` with manager `manager`.
pub fn field_conflict(field: &str, manager: &str) -> ApiError {
    let mut err = ApiError::api(
        409,
        "Conflict",
        format!("Apply failed with 1 conflict: conflict with \"{manager}\": {field}"),
    );
    err.causes = vec![Cause {
        field: field.into(),
        reason: "FieldManagerConflict".into(),
        message: format!("conflict with \"{manager}\""),
    }];
    err
}
