//! `kusion:runtime/kubernetes`: cluster access for the guest through the
//! process's shared [`KubeCluster`](crate::cluster::KubeCluster). Every call
//! counts against the operation's host-call budget; failures are returned as
//! `api-error` values, never traps.

use crate::bindings::kubernetes::{
    ApiError, ApiResource, CreateOptions, DeleteOptions, Host, HostWatchStream, ListOptions,
    ObjectList, PatchOptions, PatchType, WatchEvent, WatchOptions,
};
use crate::cluster::EventStream;
use crate::convert::{
    api_error_to_wit, api_resource_from_wit, api_resource_to_wit, delete_options_from_wit,
    event_type_to_wit, patch_type_from_wit,
};
use crate::state::KrtView;
use futures::StreamExt;
use guest::model as m;
use std::time::{Duration, Instant};
use wasmtime::component::Resource;

/// The longest a single `watch-stream.next` may block, whatever the guest asks.
const MAX_NEXT_WAIT: Duration = Duration::from_secs(5);

/// Host side of a `watch-stream` resource.
pub struct WatchState {
    events: EventStream,
}

type Answer<T> = wasmtime::Result<Result<T, ApiError>>;

impl KrtView<'_> {
    /// Counts one host call; refuses it once the operation's budget is spent.
    fn admit(&mut self, what: &str) -> Result<(), ApiError> {
        self.ctx.host_calls += 1;
        if self.ctx.host_calls > self.ctx.limits.max_host_calls {
            return Err(api_error_to_wit(m::ApiError {
                source: m::ErrorSource::Limit,
                ..m::ApiError::api(
                    429,
                    "HostCallLimit",
                    format!(
                        "{what}: the operation made more than {} cluster calls",
                        self.ctx.limits.max_host_calls
                    ),
                )
            }));
        }
        Ok(())
    }
}

fn wit<T>(r: Result<T, m::ApiError>) -> Result<T, ApiError> {
    r.map_err(api_error_to_wit)
}

impl Host for KrtView<'_> {
    async fn resolve(&mut self, api_version: String, kind: String) -> Answer<ApiResource> {
        if let Err(e) = self.admit("resolve") {
            return Ok(Err(e));
        }
        let found = self.ctx.cluster.resolve(&api_version, &kind).await;
        Ok(wit(found.map(api_resource_to_wit)))
    }

    async fn get(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        name: String,
    ) -> Answer<Option<String>> {
        if let Err(e) = self.admit("get") {
            return Ok(Err(e));
        }
        let ar = api_resource_from_wit(resource);
        Ok(wit(self
            .ctx
            .cluster
            .get(&ar, namespace.as_deref(), &name)
            .await))
    }

    async fn create(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        object: String,
        options: CreateOptions,
    ) -> Answer<String> {
        if let Err(e) = self.admit("create") {
            return Ok(Err(e));
        }
        let ar = api_resource_from_wit(resource);
        let options = m::CreateOptions {
            dry_run: options.dry_run,
            field_manager: options.field_manager,
        };
        let created = self
            .ctx
            .cluster
            .create(&ar, namespace.as_deref(), &object, &options)
            .await;
        Ok(wit(created))
    }

    async fn patch(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        name: String,
        type_: PatchType,
        body: String,
        options: PatchOptions,
    ) -> Answer<String> {
        if let Err(e) = self.admit("patch") {
            return Ok(Err(e));
        }
        let ar = api_resource_from_wit(resource);
        let options = m::PatchOptions {
            dry_run: options.dry_run,
            field_manager: options.field_manager,
            force: options.force,
        };
        let patched = self
            .ctx
            .cluster
            .patch(
                &ar,
                namespace.as_deref(),
                &name,
                patch_type_from_wit(type_),
                &body,
                &options,
            )
            .await;
        Ok(wit(patched))
    }

    async fn delete(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        name: String,
        options: DeleteOptions,
    ) -> Answer<Option<String>> {
        if let Err(e) = self.admit("delete") {
            return Ok(Err(e));
        }
        let ar = api_resource_from_wit(resource);
        let options = delete_options_from_wit(options);
        let deleted = self
            .ctx
            .cluster
            .delete(&ar, namespace.as_deref(), &name, &options)
            .await;
        Ok(wit(deleted))
    }

    async fn list(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        options: ListOptions,
    ) -> Answer<ObjectList> {
        if let Err(e) = self.admit("list") {
            return Ok(Err(e));
        }
        let ar = api_resource_from_wit(resource);
        let options = m::ListOptions {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            limit: options.limit,
            continue_token: options.continue_token,
        };
        let listed = self
            .ctx
            .cluster
            .list(&ar, namespace.as_deref(), &options)
            .await;
        Ok(wit(listed.map(
            |(items, resource_version, continue_token)| ObjectList {
                items,
                resource_version,
                continue_token,
            },
        )))
    }

    async fn watch(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        options: WatchOptions,
    ) -> Answer<Resource<WatchState>> {
        if let Err(e) = self.admit("watch") {
            return Ok(Err(e));
        }
        let ar = api_resource_from_wit(resource);
        let options = m::WatchOptions {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            resource_version: options.resource_version,
            timeout_seconds: options.timeout_seconds,
            allow_bookmarks: options.allow_bookmarks,
        };
        match self
            .ctx
            .cluster
            .watch(&ar, namespace.as_deref(), &options)
            .await
        {
            Ok(events) => Ok(Ok(self.table.push(WatchState { events })?)),
            Err(e) => Ok(Err(api_error_to_wit(e))),
        }
    }
}

impl HostWatchStream for KrtView<'_> {
    async fn next(
        &mut self,
        stream: Resource<WatchState>,
        timeout_ms: u32,
    ) -> Answer<Option<WatchEvent>> {
        if let Err(e) = self.admit("watch-stream.next") {
            return Ok(Err(e));
        }
        // Epochs do not interrupt a guest blocked here, so the wait is clamped
        // to a few seconds and to what is left of the call's deadline.
        let left = self.ctx.deadline.saturating_duration_since(Instant::now());
        let wait = Duration::from_millis(timeout_ms.into())
            .min(MAX_NEXT_WAIT)
            .min(left);
        let state = self.table.get_mut(&stream)?;
        match tokio::time::timeout(wait, state.events.next()).await {
            Err(_) => Ok(Ok(None)),
            Ok(None) => Ok(Err(api_error_to_wit(m::ApiError::api(
                410,
                "Expired",
                "the watch stream was closed by the API server; list again and start a new watch",
            )))),
            Ok(Some(Ok((kind, object)))) => Ok(Ok(Some(WatchEvent {
                type_: event_type_to_wit(kind),
                object,
            }))),
            Ok(Some(Err(e))) => Ok(Err(api_error_to_wit(e))),
        }
    }

    async fn drop(&mut self, stream: Resource<WatchState>) -> wasmtime::Result<()> {
        self.table.delete(stream)?;
        Ok(())
    }
}
