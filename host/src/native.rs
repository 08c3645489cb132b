//! [`NativeRuntime`]: the same guest logic (the `guest` crate as a library)
//! run natively, without a sandbox — for comparison with the component and for
//! trusted use. It reaches the cluster through the same [`KubeCluster`].

use crate::cluster::{EventStream, KubeCluster};
use crate::events::{EventSink, TracingSink};
use crate::runtime::Runtime;
use futures::StreamExt;
use guest::cluster::{Cluster, HostServices, WatchStream};
use guest::model::{
    ApiError, ApiResource, ApplyOptions, ApplyResponse, CreateOptions, DeleteOptions,
    DeleteRequest, Health, HealthState, ListOptions, LogLevel, ObjectList, PatchOptions, PatchType,
    Progress, ReadOptions, ReadResponse, Resource, Status, StatusCode, WatchEvent, WatchOptions,
    WatchRequest, WatchResponse,
};
use serde_json::Value;
use std::sync::Arc;
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

    /// Runs `f` on a blocking thread with a cluster and host bound to this runtime.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&NativeCluster, &NativeHost) -> T + Send + 'static,
    ) -> Result<T, Status> {
        let cluster = self.cluster.clone();
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            let handle = Handle::current();
            let cluster = NativeCluster { cluster, handle };
            f(&cluster, &NativeHost { events })
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
        let (prior, plan) = (prior.cloned(), plan.cloned());
        let mut options = options.clone();
        options.default_namespace = self.default_namespace(&options.default_namespace);
        let deleting = plan.is_none();
        self.run(move |c, h| guest::runtime::apply(c, h, prior.as_ref(), plan.as_ref(), &options))
            .await
            .unwrap_or_else(|status| ApplyResponse {
                resource: None,
                live: None,
                action: if deleting {
                    guest::model::Action::Delete
                } else {
                    guest::model::Action::Unchanged
                },
                status: Some(status),
                retries: 0,
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
        self.run(move |c, _| guest::runtime::read(c, prior.as_ref(), plan.as_ref(), &options))
            .await
            .unwrap_or_else(|status| ReadResponse {
                resource: None,
                status: Some(status),
            })
    }

    async fn delete(&self, resource: &Resource, options: &DeleteRequest) -> Option<Status> {
        let resource = resource.clone();
        let mut options = options.clone();
        options.default_namespace = self.default_namespace(&options.default_namespace);
        self.run(move |c, _| guest::runtime::delete(c, &resource, &options).status)
            .await
            .unwrap_or_else(Some)
    }

    async fn watch(&self, resource: &Resource, options: &WatchRequest) -> WatchResponse {
        let resource = resource.clone();
        let mut options = options.clone();
        options.default_namespace = self.default_namespace(&options.default_namespace);
        self.run(move |c, h| guest::runtime::watch(c, h, &resource, &options))
            .await
            .unwrap_or_else(|status| WatchResponse {
                resource: None,
                health: Health::new(HealthState::Unknown, &status.reason, &status.message),
                status: Some(status),
            })
    }
}

/// [`Cluster`] over [`KubeCluster`], blocking on its async calls.
struct NativeCluster {
    cluster: Arc<KubeCluster>,
    handle: Handle,
}

fn parse(text: String) -> Result<Value, ApiError> {
    serde_json::from_str(&text).map_err(|e| {
        ApiError::api(
            500,
            "InternalError",
            format!("the API server sent invalid JSON: {e}"),
        )
    })
}

impl Cluster for NativeCluster {
    type Watch = NativeWatch;

    fn resolve(&self, api_version: &str, kind: &str) -> Result<ApiResource, ApiError> {
        self.handle
            .block_on(self.cluster.resolve(api_version, kind))
    }

    fn get(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let found = self
            .handle
            .block_on(self.cluster.get(resource, namespace, name))?;
        found.map(parse).transpose()
    }

    fn create(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        object: &Value,
        options: &CreateOptions,
    ) -> Result<Value, ApiError> {
        let body = object.to_string();
        parse(
            self.handle
                .block_on(self.cluster.create(resource, namespace, &body, options))?,
        )
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
            self.handle.block_on(
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
        let left = self
            .handle
            .block_on(self.cluster.delete(resource, namespace, name, options))?;
        left.map(parse).transpose()
    }

    fn list(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        let (items, resource_version, continue_token) = self
            .handle
            .block_on(self.cluster.list(resource, namespace, options))?;
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
        let events = self
            .handle
            .block_on(self.cluster.watch(resource, namespace, options))?;
        Ok(NativeWatch {
            events,
            handle: self.handle.clone(),
        })
    }
}

/// [`WatchStream`] over a kube-rs event stream.
struct NativeWatch {
    events: EventStream,
    handle: Handle,
}

impl WatchStream for NativeWatch {
    fn next(&mut self, timeout_ms: u32) -> Result<Option<WatchEvent>, ApiError> {
        let wait = Duration::from_millis(timeout_ms.into());
        let next = self
            .handle
            .block_on(async { tokio::time::timeout(wait, self.events.next()).await });
        match next {
            Err(_) => Ok(None),
            Ok(None) => Err(ApiError::api(
                410,
                "Expired",
                "the watch stream was closed by the API server; list again and start a new watch",
            )),
            Ok(Some(Ok((type_, object)))) => Ok(Some(WatchEvent {
                type_,
                object: parse(object)?,
            })),
            Ok(Some(Err(e))) => Err(e),
        }
    }
}

/// [`HostServices`] forwarding to an [`EventSink`].
struct NativeHost {
    events: Arc<dyn EventSink>,
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
        self.events.progress(event);
    }

    fn sleep(&self, ms: u32) {
        std::thread::sleep(Duration::from_millis(ms.into()).min(Duration::from_secs(30)));
    }
}
