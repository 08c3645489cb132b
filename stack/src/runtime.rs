//! The single-resource contract the stack engine drives: Kusion's `Runtime`
//! (apply, read, delete, watch) plus the pure logic a preview needs (diff,
//! drift, health), so that swapping the runtime swaps what the user sees.

use krt_guest::model::{
    ApplyOptions, ApplyResponse, DeleteRequest, Health, ObjectDiff, Observation, ObservedResponse,
    ReadOptions, ReadResponse, Resource, Status, WatchRequest, WatchResponse,
};
use serde_json::Value;

/// Kusion's `Runtime` contract: one resource per call, each answer carrying a
/// status (`None` = success), and the logic calls of `kusion:runtime/logic`.
///
/// `krt-host` implements it with a sandboxed component (`ComponentRuntime`)
/// and with the same logic linked natively (`NativeRuntime`).
pub trait Runtime: Send + Sync {
    /// Makes the cluster match `plan` (`None` deletes `prior`).
    fn apply(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ApplyOptions,
    ) -> impl Future<Output = ApplyResponse> + Send;

    /// [`Runtime::apply`], starting from `observation` (what an earlier apply
    /// of this plan saw, for example a preview's dry run) instead of reading
    /// the object again, and returning what it saw (WIT `observed-apply`).
    ///
    /// A runtime without it answers as [`Runtime::apply`] and observes nothing,
    /// which is what this default does.
    fn apply_observed(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        observation: Option<&Observation>,
        options: &ApplyOptions,
    ) -> impl Future<Output = ObservedResponse> + Send {
        let _ = observation;
        async move {
            ObservedResponse {
                response: self.apply(prior, plan, options).await,
                observation: None,
            }
        }
    }

    /// Reads the live object of `plan` (or `prior`).
    fn read(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        options: &ReadOptions,
    ) -> impl Future<Output = ReadResponse> + Send;

    /// Deletes the object; already gone is a success.
    fn delete(
        &self,
        resource: &Resource,
        options: &DeleteRequest,
    ) -> impl Future<Output = Option<Status>> + Send;

    /// Waits until the object is current, failed or the timeout passes.
    fn watch(
        &self,
        resource: &Resource,
        options: &WatchRequest,
    ) -> impl Future<Output = WatchResponse> + Send;

    /// The difference between two objects after normalizing both (`None`
    /// stands for absent), leaving out `ignore_paths`.
    fn diff(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        ignore_paths: &[String],
    ) -> impl Future<Output = Result<ObjectDiff, Status>> + Send;

    /// The fields of `prior` (the last applied state) whose value in `live`
    /// differs or is gone, leaving out `ignore_paths`.
    fn drift(
        &self,
        prior: &Value,
        live: Option<&Value>,
        ignore_paths: &[String],
    ) -> impl Future<Output = Result<ObjectDiff, Status>> + Send;

    /// The health of a live object.
    fn health(&self, object: &Value) -> impl Future<Output = Result<Health, Status>> + Send;
}
