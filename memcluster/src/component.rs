//! The wasm32 component glue: exports `kusion:runtime/kubernetes` backed by one
//! [`GuestCluster`] per instance, converting WIT values to `krt_guest::model` values and back,
//! and `kusion:runtime/host` (logs to stderr, progress dropped, sleep on the WASI monotonic
//! clock).

use std::cell::RefCell;
use std::sync::LazyLock;
use std::time::Duration;

use krt_guest::cluster::{Cluster, WatchStream};
use krt_guest::model::{self as m, ErrorSource};
use krt_sim::{GuestCluster, GuestWatch};
use serde_json::Value;

wit_bindgen::generate!({ path: "../wit", world: "in-memory-cluster" });

use exports::kusion::runtime::types as t;
use exports::kusion::runtime::{host, kubernetes as k8s};

/// The cluster of this instance.
static CLUSTER: LazyLock<GuestCluster> = LazyLock::new(GuestCluster::new);

/// The component: exports both interfaces.
struct Component;

export!(Component);

fn resource_in(r: k8s::ApiResource) -> m::ApiResource {
    m::ApiResource {
        group: r.group,
        version: r.version,
        kind: r.kind,
        plural: r.plural,
        namespaced: r.namespaced,
    }
}

fn error_out(e: m::ApiError) -> k8s::ApiError {
    k8s::ApiError {
        source: match e.source {
            ErrorSource::Api => k8s::ErrorSource::Api,
            ErrorSource::Transport => k8s::ErrorSource::Transport,
            ErrorSource::Timeout => k8s::ErrorSource::Timeout,
            ErrorSource::Policy => k8s::ErrorSource::Policy,
            ErrorSource::Limit => k8s::ErrorSource::Limit,
        },
        code: e.code,
        reason: e.reason,
        message: e.message,
        causes: e
            .causes
            .into_iter()
            .map(|c| t::Cause {
                field: c.field,
                reason: c.reason,
                message: c.message,
            })
            .collect(),
        retry_after_seconds: e.retry_after_seconds,
    }
}

/// Parses JSON text from the guest; 400 BadRequest when it is not JSON, as an API server answers.
fn json_in(text: &str) -> Result<Value, k8s::ApiError> {
    serde_json::from_str(text).map_err(|e| {
        error_out(m::ApiError::api(
            400,
            "BadRequest",
            format!("the body is not JSON: {e}"),
        ))
    })
}

/// A watch stream resource.
struct Stream(RefCell<GuestWatch>);

impl k8s::GuestWatchStream for Stream {
    fn next(&self, timeout_ms: u32) -> Result<Option<k8s::WatchEvent>, k8s::ApiError> {
        let event = self.0.borrow_mut().next(timeout_ms).map_err(error_out)?;
        Ok(event.map(|e| k8s::WatchEvent {
            type_: match e.type_ {
                m::EventType::Added => k8s::EventType::Added,
                m::EventType::Modified => k8s::EventType::Modified,
                m::EventType::Deleted => k8s::EventType::Deleted,
                m::EventType::Bookmark => k8s::EventType::Bookmark,
            },
            object: e.object.to_string(),
        }))
    }
}

impl k8s::Guest for Component {
    type WatchStream = Stream;

    fn resolve(api_version: String, kind: String) -> Result<k8s::ApiResource, k8s::ApiError> {
        let r = CLUSTER.resolve(&api_version, &kind).map_err(error_out)?;
        Ok(k8s::ApiResource {
            group: r.group,
            version: r.version,
            kind: r.kind,
            plural: r.plural,
            namespaced: r.namespaced,
        })
    }

    fn get(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        name: String,
    ) -> Result<Option<String>, k8s::ApiError> {
        let found = CLUSTER.get(&resource_in(resource), namespace.as_deref(), &name);
        Ok(found.map_err(error_out)?.map(|o| o.to_string()))
    }

    fn create(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        object: String,
        options: k8s::CreateOptions,
    ) -> Result<String, k8s::ApiError> {
        let options = m::CreateOptions {
            dry_run: options.dry_run,
            field_manager: options.field_manager,
        };
        let object = json_in(&object)?;
        let created = CLUSTER.create(
            &resource_in(resource),
            namespace.as_deref(),
            &object,
            &options,
        );
        Ok(created.map_err(error_out)?.to_string())
    }

    fn patch(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        name: String,
        type_: t::PatchType,
        body: String,
        options: k8s::PatchOptions,
    ) -> Result<String, k8s::ApiError> {
        let patch_type = match type_ {
            t::PatchType::JsonMerge => m::PatchType::JsonMerge,
            t::PatchType::StrategicMerge => m::PatchType::StrategicMerge,
            t::PatchType::Apply => m::PatchType::Apply,
            t::PatchType::JsonPatch => m::PatchType::JsonPatch,
        };
        let options = m::PatchOptions {
            dry_run: options.dry_run,
            field_manager: options.field_manager,
            force: options.force,
        };
        let body = json_in(&body)?;
        let resource = resource_in(resource);
        let patched = CLUSTER.patch(
            &resource,
            namespace.as_deref(),
            &name,
            patch_type,
            &body,
            &options,
        );
        Ok(patched.map_err(error_out)?.to_string())
    }

    fn delete(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        name: String,
        options: k8s::DeleteOptions,
    ) -> Result<Option<String>, k8s::ApiError> {
        let options = m::DeleteOptions {
            dry_run: options.dry_run,
            propagation_policy: options.propagation_policy.map(|p| match p {
                t::PropagationPolicy::Background => m::PropagationPolicy::Background,
                t::PropagationPolicy::Foreground => m::PropagationPolicy::Foreground,
                t::PropagationPolicy::Orphan => m::PropagationPolicy::Orphan,
            }),
            preconditions: options.preconditions.map(|p| m::Preconditions {
                uid: p.uid,
                resource_version: p.resource_version,
            }),
            grace_period_seconds: options.grace_period_seconds,
        };
        let left = CLUSTER.delete(
            &resource_in(resource),
            namespace.as_deref(),
            &name,
            &options,
        );
        Ok(left.map_err(error_out)?.map(|o| o.to_string()))
    }

    fn list(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        options: k8s::ListOptions,
    ) -> Result<k8s::ObjectList, k8s::ApiError> {
        let options = m::ListOptions {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            limit: options.limit,
            continue_token: options.continue_token,
        };
        let list = CLUSTER
            .list(&resource_in(resource), namespace.as_deref(), &options)
            .map_err(error_out)?;
        Ok(k8s::ObjectList {
            items: list.items.iter().map(Value::to_string).collect(),
            resource_version: list.resource_version,
            continue_token: list.continue_token,
        })
    }

    fn watch(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        options: k8s::WatchOptions,
    ) -> Result<k8s::WatchStream, k8s::ApiError> {
        let options = m::WatchOptions {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            resource_version: options.resource_version,
            timeout_seconds: options.timeout_seconds,
            allow_bookmarks: options.allow_bookmarks,
        };
        let stream = CLUSTER
            .watch(&resource_in(resource), namespace.as_deref(), &options)
            .map_err(error_out)?;
        Ok(k8s::WatchStream::new(Stream(RefCell::new(stream))))
    }
}

impl host::Guest for Component {
    fn log(level: host::LogLevel, message: String, fields: Vec<(String, String)>) {
        let fields: String = fields.iter().map(|(k, v)| format!(" {k}={v}")).collect();
        eprintln!("[{level:?}] {message}{fields}");
    }

    fn progress(_event: host::ProgressEvent) {}

    fn sleep(ms: u32) {
        std::thread::sleep(Duration::from_millis(ms.into()));
    }
}
