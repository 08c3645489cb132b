//! The runtime tests' cluster and host. The cluster is krt-sim's in-process cluster behind
//! [`GuestCluster`] (kube-apiserver's semantics: defaulting, validation, resourceVersions,
//! server-side apply, finalizers, watches), decorated with a request log and injected failures.
//! The host records logs, progress and sleeps without sleeping; each sleep is time passing, so
//! the simulated controllers take a step.

use krt_guest::cluster::{Cluster, HostServices, WatchStream};
use krt_guest::model::{
    ApiError, ApiResource, CreateOptions, DeleteOptions, ListOptions, LogLevel, ObjectList,
    PatchOptions, PatchType, Progress, WatchEvent, WatchOptions,
};
use krt_sim::{GuestCluster, GuestWatch};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// The field manager of the writes tests make as another client.
pub const OTHER_MANAGER: &str = "other";

/// One request the cluster received.
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
    List(ListOptions),
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

#[derive(Default)]
struct Record {
    log: Vec<Request>,
    failures: VecDeque<(Verb, ApiError)>,
    /// How the next watch streams end: once they delivered this many events, with this error.
    stream_ends: VecDeque<(usize, ApiError)>,
    /// What the next dry-run patches answer instead of the simulator.
    dry_run_answers: VecDeque<Value>,
}

/// The simulator with a request log and injected failures; clones share all three.
#[derive(Clone)]
pub struct TestCluster {
    sim: GuestCluster,
    record: Rc<RefCell<Record>>,
}

impl TestCluster {
    /// A new simulated cluster with the namespace `web` the tests' objects live in.
    pub fn new() -> Self {
        let c = TestCluster {
            sim: GuestCluster::new(),
            record: Rc::default(),
        };
        c.put(krt_testkit::namespace("web").value());
        c
    }

    /// Fails the next call of `verb` with `err` (the request is logged, the cluster untouched).
    pub fn fail_next(&self, verb: Verb, err: ApiError) {
        self.record.borrow_mut().failures.push_back((verb, err));
    }

    /// Answers the next dry-run patch with `object` (the request is logged, the simulator not
    /// asked), as a server whose validation lacks a rule the simulator has would: for instance
    /// one that lets the dry run of a change to an immutable field through.
    pub fn answer_next_dry_run(&self, object: Value) {
        self.record.borrow_mut().dry_run_answers.push_back(object);
    }

    /// Ends the next watch stream opened with `err` once it has delivered `after` events, as
    /// an API server closes or expires a stream.
    pub fn end_next_watch(&self, after: usize, err: ApiError) {
        self.record.borrow_mut().stream_ends.push_back((after, err));
    }

    /// The request log.
    pub fn log(&self) -> Vec<Request> {
        self.record.borrow().log.clone()
    }

    /// Whether any write request was made.
    pub fn wrote(&self) -> bool {
        self.record.borrow().log.iter().any(Request::is_write)
    }

    /// Clears the request log.
    pub fn clear_log(&self) {
        self.record.borrow_mut().log.clear();
    }

    /// The simulator itself, as other clients reach it (nothing logged, nothing injected).
    pub fn sim(&self) -> &GuestCluster {
        &self.sim
    }

    fn kind(&self, api_version: &str, kind: &str) -> ApiResource {
        self.sim
            .resolve(api_version, kind)
            .unwrap_or_else(|e| panic!("{api_version}/{kind} is not served: {e:?}"))
    }

    /// The REST resource of `object`'s `apiVersion` and `kind`.
    fn kind_of(&self, object: &Value) -> ApiResource {
        let text = |field: &str| object[field].as_str().expect("apiVersion and kind");
        self.kind(text("apiVersion"), text("kind"))
    }

    /// The stored object, if any.
    pub fn object(&self, api_version: &str, kind: &str, ns: &str, name: &str) -> Option<Value> {
        let resource = self.kind(api_version, kind);
        self.sim.get(&resource, Some(ns), name).expect("get")
    }

    /// Creates `object` as another client would (field manager [`OTHER_MANAGER`]); returns it
    /// as stored.
    pub fn put(&self, object: Value) -> Value {
        let options = CreateOptions {
            dry_run: false,
            field_manager: Some(OTHER_MANAGER.into()),
        };
        let ns = object["metadata"]["namespace"].as_str();
        self.sim
            .create(&self.kind_of(&object), ns, &object, &options)
            .unwrap_or_else(|e| panic!("create {object}: {e:?}"))
    }

    /// Changes a stored object by a JSON merge patch, as another client would; returns it as
    /// stored.
    pub fn edit(&self, api_version: &str, kind: &str, ns: &str, name: &str, patch: Value) -> Value {
        let resource = self.kind(api_version, kind);
        let options = PatchOptions {
            field_manager: Some(OTHER_MANAGER.into()),
            ..PatchOptions::default()
        };
        self.sim
            .patch(
                &resource,
                Some(ns),
                name,
                PatchType::JsonMerge,
                &patch,
                &options,
            )
            .unwrap_or_else(|e| panic!("patch {name} with {patch}: {e:?}"))
    }

    /// Deletes a stored object, as another client would.
    pub fn remove(&self, api_version: &str, kind: &str, ns: &str, name: &str) {
        let resource = self.kind(api_version, kind);
        self.sim
            .delete(&resource, Some(ns), name, &DeleteOptions::default())
            .unwrap_or_else(|e| panic!("delete {name}: {e:?}"));
    }

    /// Applies `object` as another client would (server-side apply with field manager
    /// `manager`, forced: it takes the fields it sets over).
    pub fn apply_as(&self, manager: &str, object: Value) {
        let options = PatchOptions {
            dry_run: false,
            field_manager: Some(manager.into()),
            force: true,
        };
        let meta = &object["metadata"];
        let (ns, name) = (meta["namespace"].as_str(), meta["name"].as_str());
        self.sim
            .patch(
                &self.kind_of(&object),
                ns,
                name.expect("name"),
                PatchType::Apply,
                &object,
                &options,
            )
            .unwrap_or_else(|e| panic!("apply {object}: {e:?}"));
    }

    /// Installs the CRD of a namespaced `kind` at `group`/`version` that keeps any fields.
    pub fn install_crd(&self, group: &str, version: &str, kind: &str, plural: &str) {
        self.put(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase()},
                "versions": [{"name": version, "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}
        }));
    }

    /// A host whose every sleep steps this cluster's controllers.
    pub fn host(&self) -> FakeHost {
        FakeHost {
            logs: RefCell::default(),
            progress: RefCell::default(),
            slept: RefCell::default(),
            sim: self.sim.clone(),
            on_progress: RefCell::new(Box::new(|_| {})),
            on_sleep: RefCell::new(Box::new(|_| {})),
        }
    }

    fn logged(&self, request: Request) {
        self.record.borrow_mut().log.push(request);
    }

    /// The first injected failure for one of `verbs`, taken from the queue.
    fn fail(&self, verbs: &[Verb]) -> Result<(), ApiError> {
        let mut record = self.record.borrow_mut();
        let at = record.failures.iter().position(|(v, _)| verbs.contains(v));
        match at.and_then(|at| record.failures.remove(at)) {
            Some((_, err)) => Err(err),
            None => Ok(()),
        }
    }
}

impl Cluster for TestCluster {
    type Watch = TestWatch;

    fn resolve(&self, api_version: &str, kind: &str) -> Result<ApiResource, ApiError> {
        self.logged(Request::Resolve(format!("{api_version}/{kind}")));
        self.fail(&[Verb::Resolve])?;
        self.sim.resolve(api_version, kind)
    }

    fn get(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        self.logged(Request::Get(name.into()));
        self.fail(&[Verb::Get])?;
        self.sim.get(resource, namespace, name)
    }

    fn create(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        object: &Value,
        options: &CreateOptions,
    ) -> Result<Value, ApiError> {
        let name = object.pointer("/metadata/name").and_then(Value::as_str);
        self.logged(Request::Create {
            name: name.unwrap_or_default().into(),
            dry_run: options.dry_run,
            body: object.clone(),
            field_manager: options.field_manager.clone(),
        });
        self.fail(&[Verb::Create])?;
        self.sim.create(resource, namespace, object, options)
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
        self.logged(Request::Patch {
            name: name.into(),
            patch_type,
            body: body.clone(),
            options: options.clone(),
        });
        self.fail(&[Verb::Patch])?;
        if !options.dry_run {
            self.fail(&[Verb::RealPatch])?;
        } else if let Some(answer) = self.record.borrow_mut().dry_run_answers.pop_front() {
            return Ok(answer);
        }
        self.sim
            .patch(resource, namespace, name, patch_type, body, options)
    }

    fn delete(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Option<Value>, ApiError> {
        self.logged(Request::Delete {
            name: name.into(),
            options: options.clone(),
        });
        self.fail(&[Verb::Delete])?;
        self.sim.delete(resource, namespace, name, options)
    }

    fn list(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        self.logged(Request::List(options.clone()));
        self.sim.list(resource, namespace, options)
    }

    fn watch(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &WatchOptions,
    ) -> Result<TestWatch, ApiError> {
        self.logged(Request::Watch(options.clone()));
        self.fail(&[Verb::Watch])?;
        let stream = self.sim.watch(resource, namespace, options)?;
        Ok(TestWatch {
            stream,
            end: self.record.borrow_mut().stream_ends.pop_front(),
            delivered: 0,
        })
    }
}

/// A watch stream of the simulator that may end early with an injected error.
pub struct TestWatch {
    stream: GuestWatch,
    end: Option<(usize, ApiError)>,
    delivered: usize,
}

impl WatchStream for TestWatch {
    fn next(&mut self, timeout_ms: u32) -> Result<Option<WatchEvent>, ApiError> {
        if let Some((_, err)) = self.end.take_if(|(after, _)| self.delivered >= *after) {
            return Err(err);
        }
        let event = self.stream.next(timeout_ms)?;
        self.delivered += usize::from(event.is_some());
        Ok(event)
    }
}

/// What a test runs when the logic reports progress.
type ProgressHook = Box<dyn FnMut(&Progress)>;

/// What a test runs when the logic sleeps, told how many sleeps there were so far.
type SleepHook = Box<dyn FnMut(usize)>;

/// A host that records logs, progress and sleeps, made by [`TestCluster::host`]. A sleep
/// returns at once after one step of the simulated controllers; hooks let a test act (as
/// another client) when progress is reported or the logic sleeps.
pub struct FakeHost {
    pub logs: RefCell<Vec<(LogLevel, String)>>,
    pub progress: RefCell<Vec<Progress>>,
    pub slept: RefCell<Vec<u32>>,
    sim: GuestCluster,
    on_progress: RefCell<ProgressHook>,
    on_sleep: RefCell<SleepHook>,
}

impl FakeHost {
    /// Calls `hook` with every progress event, after recording it.
    pub fn on_progress(self, hook: impl FnMut(&Progress) + 'static) -> Self {
        *self.on_progress.borrow_mut() = Box::new(hook);
        self
    }

    /// Calls `hook` with the number of sleeps so far on every sleep, before the controllers
    /// step.
    pub fn on_sleep(self, hook: impl FnMut(usize) + 'static) -> Self {
        *self.on_sleep.borrow_mut() = Box::new(hook);
        self
    }
}

impl HostServices for FakeHost {
    fn log(&self, level: LogLevel, message: &str, _fields: &[(&str, &str)]) {
        self.logs.borrow_mut().push((level, message.into()));
    }

    fn progress(&self, event: &Progress) {
        self.progress.borrow_mut().push(event.clone());
        (self.on_progress.borrow_mut())(event);
    }

    fn sleep(&self, ms: u32) {
        self.slept.borrow_mut().push(ms);
        let sleeps = self.slept.borrow().len();
        (self.on_sleep.borrow_mut())(sleeps);
        self.sim.cluster().reconcile();
    }
}
