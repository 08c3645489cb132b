//! The wasm32 component glue: exports `kusion:runtime/kubernetes` backed by one [`MemCluster`]
//! per instance, and `kusion:runtime/host` (logs to stderr, progress dropped, sleep on the WASI
//! monotonic clock).

use std::cell::RefCell;
use std::sync::LazyLock;
use std::time::Duration;

use crate::{Answer, DeleteOptions, EventType, Failure, Kind, MemCluster, PatchOptions, Query};

wit_bindgen::generate!({ path: "../wit", world: "in-memory-cluster" });

use exports::kusion::runtime::types as t;
use exports::kusion::runtime::{host, kubernetes as k8s};

/// The cluster of this instance.
static CLUSTER: LazyLock<MemCluster> = LazyLock::new(MemCluster::new);

/// The component: exports both interfaces.
struct Component;

export!(Component);

fn kind_in(r: k8s::ApiResource) -> Kind {
    Kind {
        group: r.group,
        version: r.version,
        kind: r.kind,
        plural: r.plural,
        namespaced: r.namespaced,
    }
}

fn error_out(f: Failure) -> k8s::ApiError {
    k8s::ApiError {
        source: k8s::ErrorSource::Api,
        code: f.code,
        reason: f.reason,
        message: f.message,
        causes: f
            .causes
            .into_iter()
            .map(|(field, reason, message)| t::Cause {
                field,
                reason,
                message,
            })
            .collect(),
        retry_after_seconds: f.retry_after_seconds,
    }
}

fn wit<T>(answer: Answer<T>) -> Result<T, k8s::ApiError> {
    answer.map_err(error_out)
}

/// A watch stream resource.
struct Stream(RefCell<crate::Stream>);

impl k8s::GuestWatchStream for Stream {
    fn next(&self, timeout_ms: u32) -> Result<Option<k8s::WatchEvent>, k8s::ApiError> {
        let event = wit(self.0.borrow_mut().next(&CLUSTER, timeout_ms))?;
        Ok(event.map(|(kind, object)| k8s::WatchEvent {
            type_: match kind {
                EventType::Added => k8s::EventType::Added,
                EventType::Modified => k8s::EventType::Modified,
                EventType::Deleted => k8s::EventType::Deleted,
                EventType::Bookmark => k8s::EventType::Bookmark,
            },
            object,
        }))
    }
}

impl k8s::Guest for Component {
    type WatchStream = Stream;

    fn resolve(api_version: String, kind: String) -> Result<k8s::ApiResource, k8s::ApiError> {
        let k = wit(CLUSTER.resolve(&api_version, &kind))?;
        Ok(k8s::ApiResource {
            group: k.group,
            version: k.version,
            kind: k.kind,
            plural: k.plural,
            namespaced: k.namespaced,
        })
    }

    fn get(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        name: String,
    ) -> Result<Option<String>, k8s::ApiError> {
        wit(CLUSTER.get(&kind_in(resource), namespace.as_deref(), &name))
    }

    fn create(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        object: String,
        options: k8s::CreateOptions,
    ) -> Result<String, k8s::ApiError> {
        wit(CLUSTER.create(
            &kind_in(resource),
            namespace.as_deref(),
            &object,
            options.dry_run,
            options.field_manager.as_deref(),
        ))
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
            t::PatchType::JsonMerge => crate::PatchType::JsonMerge,
            t::PatchType::StrategicMerge => crate::PatchType::StrategicMerge,
            t::PatchType::Apply => crate::PatchType::Apply,
            t::PatchType::JsonPatch => crate::PatchType::JsonPatch,
        };
        let options = PatchOptions {
            dry_run: options.dry_run,
            field_manager: options.field_manager,
            force: options.force,
        };
        wit(CLUSTER.patch(
            &kind_in(resource),
            namespace.as_deref(),
            &name,
            patch_type,
            &body,
            &options,
        ))
    }

    fn delete(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        name: String,
        options: k8s::DeleteOptions,
    ) -> Result<Option<String>, k8s::ApiError> {
        let preconditions = options.preconditions.unwrap_or(k8s::Preconditions {
            uid: None,
            resource_version: None,
        });
        let options = DeleteOptions {
            dry_run: options.dry_run,
            propagation_policy: options.propagation_policy.map(|p| match p {
                t::PropagationPolicy::Background => "Background",
                t::PropagationPolicy::Foreground => "Foreground",
                t::PropagationPolicy::Orphan => "Orphan",
            }),
            uid: preconditions.uid,
            resource_version: preconditions.resource_version,
            grace_period_seconds: options.grace_period_seconds,
        };
        wit(CLUSTER.delete(&kind_in(resource), namespace.as_deref(), &name, &options))
    }

    fn list(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        options: k8s::ListOptions,
    ) -> Result<k8s::ObjectList, k8s::ApiError> {
        let query = Query {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            limit: options.limit,
            continue_token: options.continue_token,
            ..Query::default()
        };
        let (items, resource_version, continue_token) =
            wit(CLUSTER.list(&kind_in(resource), namespace.as_deref(), &query))?;
        Ok(k8s::ObjectList {
            items,
            resource_version,
            continue_token,
        })
    }

    fn watch(
        resource: k8s::ApiResource,
        namespace: Option<String>,
        options: k8s::WatchOptions,
    ) -> Result<k8s::WatchStream, k8s::ApiError> {
        let query = Query {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            resource_version: options.resource_version,
            timeout_seconds: options.timeout_seconds,
            ..Query::default()
        };
        let stream = wit(CLUSTER.watch(&kind_in(resource), namespace.as_deref(), &query))?;
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
