//! The guest's view of the host: cluster access (`kubernetes` import) and host
//! services (`host` import) as traits, so the runtime logic runs natively
//! against krt-sim's in-process cluster in tests (`krt_sim::GuestCluster`) and
//! against a real API server in the host's `NativeRuntime`, and against the WIT
//! imports inside the component.

use crate::model::{
    ApiError, ApiResource, CreateOptions, DeleteOptions, ListOptions, LogLevel, ObjectList,
    PatchOptions, PatchType, Progress, WatchEvent, WatchOptions,
};
use serde_json::Value;

/// A live watch stream (`kubernetes.watch-stream`).
pub trait WatchStream {
    /// Waits up to `timeout_ms` for the next event; `None` when none arrived in time.
    fn next(&mut self, timeout_ms: u32) -> Result<Option<WatchEvent>, ApiError>;
}

/// Access to one Kubernetes cluster (`kubernetes` interface).
pub trait Cluster {
    /// The watch stream type.
    type Watch: WatchStream;

    /// Resolves `apiVersion` + `kind` to its REST resource (404 when not served).
    fn resolve(&self, api_version: &str, kind: &str) -> Result<ApiResource, ApiError>;

    /// Reads an object; `None` when absent.
    fn get(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError>;

    /// Reads an object as an apply compares it: without `metadata.managedFields`,
    /// the server's record of field owners (often most of an object), which no apply
    /// decision reads. `None` when absent. The component's imports parse only what is kept.
    fn get_live(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let object = self.get(resource, namespace, name)?;
        Ok(object.map(crate::normalize::without_managed_fields))
    }

    /// Reads an object as the runtime's answers carry it
    /// ([`normalize_result`](crate::normalize::normalize_result)); `None` when absent.
    /// The component's imports parse only what is kept.
    fn get_result(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let object = self.get(resource, namespace, name)?;
        Ok(object.as_ref().map(crate::normalize::normalize_result))
    }

    /// Creates an object.
    fn create(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        object: &Value,
        options: &CreateOptions,
    ) -> Result<Value, ApiError>;

    /// Patches an object.
    fn patch(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &Value,
        options: &PatchOptions,
    ) -> Result<Value, ApiError>;

    /// Deletes an object; returns it while it still exists (finalizers), `None` once gone.
    fn delete(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Option<Value>, ApiError>;

    /// Lists objects.
    fn list(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError>;

    /// Starts a watch.
    fn watch(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        options: &WatchOptions,
    ) -> Result<Self::Watch, ApiError>;
}

/// Host services (`host` interface).
pub trait HostServices {
    /// Emits a structured log record.
    fn log(&self, level: LogLevel, message: &str, fields: &[(&str, &str)]);
    /// Reports progress.
    fn progress(&self, event: &Progress);
    /// Sleeps (bounded by the host).
    fn sleep(&self, ms: u32);
}
