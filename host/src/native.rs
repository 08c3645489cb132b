//! [`NativeRuntime`]: the same guest logic (the `krt-guest` crate as a library)
//! run natively, without a sandbox — for comparison with the component and for
//! trusted use. It reaches the cluster through the same [`KubeCluster`].

use crate::cluster::{EventStream, KubeCluster};
use futures::StreamExt;
use krt_guest::cluster::{Cluster, HostServices, WatchStream};
use krt_guest::model::{
    ApiError, ApiResource, ApplyOptions, ApplyResponse, CreateOptions, DeleteOptions,
    DeleteRequest, Health, ListOptions, LogLevel, ObjectDiff, ObjectList, Observation,
    ObservedResponse, PatchOptions, PatchType, Progress, ReadOptions, ReadResponse, Resource,
    Status, StatusCode, WatchEvent, WatchOptions, WatchRequest, WatchResponse,
};
use krt_guest::normalize::{parse_live, parse_result};
use krt_stack::{Event, EventSink, Runtime, TracingSink};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::runtime::Handle;

/// A [`Runtime`] running the guest logic natively on a blocking thread.
#[derive(Clone)]
pub struct NativeRuntime {
    cluster: Arc<KubeCluster>,
    events: Arc<dyn EventSink>,
}

impl NativeRuntime {
    /// A native runtime over `cluster`.
    pub fn new(cluster: Arc<KubeCluster>) -> Self {
        NativeRuntime {
            cluster,
            events: Arc::new(TracingSink),
        }
    }

    /// Sends logs and progress events to `events`.
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    fn default_namespace(&self, given: &Option<String>) -> Option<String> {
        given
            .clone()
            .or_else(|| Some(self.cluster.default_namespace().to_string()))
    }

    /// Runs `f` on a blocking thread with a cluster and host bound to this
    /// runtime. Dropping the returned future cancels the work: every later
    /// cluster call, watch wait and sleep of `f` returns at once.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&NativeCluster, &NativeHost) -> T + Send + 'static,
    ) -> Result<T, Status> {
        let cluster = self.cluster.clone();
        let events = self.events.clone();
        let canceled = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = CancelOnDrop(canceled.clone());
        tokio::task::spawn_blocking(move || {
            let handle = Handle::current();
            let cluster = NativeCluster {
                cluster,
                handle,
                canceled: canceled.clone(),
            };
            f(&cluster, &NativeHost { events, canceled })
        })
        .await
        .map_err(|e| {
            Status::error(
                StatusCode::Internal,
                "NativePanic",
                format!("the native runtime failed: {e}"),
            )
        })
    }
}

impl Runtime for NativeRuntime {
    async fn apply(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ApplyOptions,
    ) -> ApplyResponse {
        self.apply_observed(prior, plan, None, options)
            .await
            .response
    }

    async fn apply_observed(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        observation: Option<&Observation>,
        options: &ApplyOptions,
    ) -> ObservedResponse {
        let (prior, plan) = (prior.cloned(), plan.cloned());
        let observation = observation.cloned();
        let mut options = options.clone();
        options.default_namespace = self.default_namespace(&options.default_namespace);
        let deleting = plan.is_none();
        self.run(move |c, h| {
            let (prior, plan) = (prior.as_ref(), plan.as_ref());
            krt_guest::runtime::apply_observed(c, h, prior, plan, observation.as_ref(), &options)
        })
        .await
        .unwrap_or_else(|status| ObservedResponse {
            response: ApplyResponse::failed(status, deleting),
            observation: None,
        })
    }

    async fn read(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ReadOptions,
    ) -> ReadResponse {
        let (prior, plan) = (prior.cloned(), plan.cloned());
        let options = ReadOptions {
            default_namespace: self.default_namespace(&options.default_namespace),
        };
        self.run(move |c, _| krt_guest::runtime::read(c, prior.as_ref(), plan.as_ref(), &options))
            .await
            .unwrap_or_else(ReadResponse::failed)
    }

    async fn delete(&self, resource: &Resource, options: &DeleteRequest) -> Option<Status> {
        let resource = resource.clone();
        let mut options = options.clone();
        options.default_namespace = self.default_namespace(&options.default_namespace);
        self.run(move |c, h| krt_guest::runtime::delete(c, h, &resource, &options).status)
            .await
            .unwrap_or_else(Some)
    }

    async fn watch(&self, resource: &Resource, options: &WatchRequest) -> WatchResponse {
        let resource = resource.clone();
        let mut options = options.clone();
        options.default_namespace = self.default_namespace(&options.default_namespace);
        self.run(move |c, h| krt_guest::runtime::watch(c, h, &resource, &options))
            .await
            .unwrap_or_else(WatchResponse::failed)
    }

    async fn diff(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        ignore_paths: &[String],
    ) -> Result<ObjectDiff, Status> {
        Ok(krt_guest::diff::diff(before, after, ignore_paths))
    }

    async fn drift(
        &self,
        prior: &Value,
        live: Option<&Value>,
        ignore_paths: &[String],
    ) -> Result<ObjectDiff, Status> {
        Ok(krt_guest::diff::drift(prior, live, ignore_paths))
    }

    async fn health(&self, object: &Value) -> Result<Health, Status> {
        Ok(krt_guest::health::compute(
            object,
            krt_guest::runtime::now_unix_secs(),
        ))
    }
}

/// Sets the flag when the future running the native logic is dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How often a waiting native call looks at the cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// [`Cluster`] over [`KubeCluster`], blocking on its async calls.
struct NativeCluster {
    cluster: Arc<KubeCluster>,
    handle: Handle,
    canceled: Arc<AtomicBool>,
}

impl NativeCluster {
    /// The object the cluster answers, parsed by `parse`; `None` when absent.
    fn get_parsed(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        parse: fn(&str) -> Result<Value, serde_json::Error>,
    ) -> Result<Option<Value>, ApiError> {
        let found = self.block(self.cluster.get(resource, namespace, name))?;
        found
            .map(|text| parse(&text).map_err(invalid_json))
            .transpose()
    }

    /// Blocks on `fut`; once the caller is gone, stops the logic instead.
    fn block<T>(&self, fut: impl Future<Output = Result<T, ApiError>>) -> Result<T, ApiError> {
        stop_if_canceled(&self.canceled);
        self.handle.block_on(fut)
    }
}

/// The payload that unwinds a canceled native call.
struct Canceled;

/// Unwinds the blocking thread when its caller dropped the call's future: the
/// logic stops at its next cluster call, watch wait or sleep, and nothing
/// observes the (discarded) result. `resume_unwind` skips the panic hook, so
/// nothing is printed.
fn stop_if_canceled(canceled: &AtomicBool) {
    if canceled.load(Ordering::Relaxed) {
        std::panic::resume_unwind(Box::new(Canceled));
    }
}

fn parse(text: String) -> Result<Value, ApiError> {
    serde_json::from_str(&text).map_err(invalid_json)
}

/// The error of an answer that does not parse.
fn invalid_json(e: serde_json::Error) -> ApiError {
    ApiError::api(
        500,
        "InternalError",
        format!("the API server sent invalid JSON: {e}"),
    )
}

impl Cluster for NativeCluster {
    type Watch = NativeWatch;

    fn resolve(&self, api_version: &str, kind: &str) -> Result<ApiResource, ApiError> {
        self.block(self.cluster.resolve(api_version, kind))
    }

    fn get(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let found = self.block(self.cluster.get(resource, namespace, name))?;
        found.map(parse).transpose()
    }

    fn get_live(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        self.get_parsed(resource, namespace, name, parse_live)
    }

    fn get_result(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        self.get_parsed(resource, namespace, name, parse_result)
    }

    fn create(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        object: &Value,
        options: &CreateOptions,
    ) -> Result<Value, ApiError> {
        let body = object.to_string();
        parse(self.block(self.cluster.create(resource, namespace, &body, options))?)
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
        let body = body.to_string();
        parse(
            self.block(
                self.cluster
                    .patch(resource, namespace, name, patch_type, &body, options),
            )?,
        )
    }

    fn delete(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Option<Value>, ApiError> {
        let left = self.block(self.cluster.delete(resource, namespace, name, options))?;
        left.map(parse).transpose()
    }

    fn list(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        let (items, resource_version, continue_token) =
            self.block(self.cluster.list(resource, namespace, options))?;
        Ok(ObjectList {
            items: items.into_iter().map(parse).collect::<Result<_, _>>()?,
            resource_version,
            continue_token,
        })
    }

    fn watch(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &WatchOptions,
    ) -> Result<NativeWatch, ApiError> {
        let events = self.block(self.cluster.watch(resource, namespace, options))?;
        Ok(NativeWatch {
            events,
            handle: self.handle.clone(),
            canceled: self.canceled.clone(),
        })
    }
}

/// [`WatchStream`] over a kube-rs event stream.
struct NativeWatch {
    events: EventStream,
    handle: Handle,
    canceled: Arc<AtomicBool>,
}

impl WatchStream for NativeWatch {
    fn next(&mut self, timeout_ms: u32) -> Result<Option<WatchEvent>, ApiError> {
        let deadline = std::time::Instant::now() + Duration::from_millis(timeout_ms.into());
        let canceled = &self.canceled;
        let events = &mut self.events;
        let next = self.handle.block_on(async {
            loop {
                stop_if_canceled(canceled);
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return None;
                }
                if let Ok(event) = tokio::time::timeout(left.min(CANCEL_POLL), events.next()).await
                {
                    return Some(event);
                }
            }
        });
        match next {
            None => Ok(None),
            Some(None) => Err(ApiError::api(
                410,
                "Expired",
                "the watch stream was closed by the API server; list again and start a new watch",
            )),
            Some(Some(Ok((type_, object)))) => Ok(Some(WatchEvent {
                type_,
                object: parse(object)?,
            })),
            Some(Some(Err(e))) => Err(e),
        }
    }
}

/// [`HostServices`] forwarding to an [`EventSink`].
struct NativeHost {
    events: Arc<dyn EventSink>,
    canceled: Arc<AtomicBool>,
}

impl HostServices for NativeHost {
    fn log(&self, level: LogLevel, message: &str, fields: &[(&str, &str)]) {
        let fields: Vec<(String, String)> = fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.events.log(level, message, &fields);
    }

    fn progress(&self, event: &Progress) {
        self.events.event(&Event::Progress(event));
    }

    fn sleep(&self, ms: u32) {
        let until = std::time::Instant::now()
            + Duration::from_millis(ms.into()).min(Duration::from_secs(30));
        loop {
            stop_if_canceled(&self.canceled);
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(CANCEL_POLL));
        }
    }
}
