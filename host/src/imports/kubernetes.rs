//! `kusion:runtime/kubernetes`: cluster access for the guest through the
//! process's shared [`KubeCluster`](crate::cluster::KubeCluster).
//!
//! Every call counts against the operation's host-call limit (a trap when
//! exceeded) and the policy's request budget, has its kind resolved by the host
//! (the guest's `api-resource` is never trusted for the URL or the scope), and
//! is checked against the capability [`Policy`](crate::policy::Policy) of the
//! link making it (the runtime's, or a middleware's own) before it reaches
//! the cluster. Refusals and cluster failures are `api-error`
//! values, never traps. Time spent here is not charged to the guest's CPU.

use crate::bindings::kubernetes::{
    ApiError, ApiResource, CreateOptions, DeleteOptions, Host, HostWatchStream, ListOptions,
    ObjectList, PatchOptions, PatchType, WatchEvent, WatchOptions,
};
use crate::cluster::{EventStream, KubeCluster};
use crate::convert::{
    api_error_to_wit, api_resource_to_wit, delete_options_from_wit, event_type_to_wit,
    patch_type_from_wit,
};
use crate::link::Role;
use crate::policy::{Denial, Request, Verb};
use crate::state::KrtView;
use futures::StreamExt;
use krt_guest::model as m;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::Resource;

/// The longest a single `watch-stream.next` may block, whatever the guest asks.
const MAX_NEXT_WAIT: Duration = Duration::from_secs(5);

/// Host side of a `watch-stream` resource.
pub struct WatchState {
    events: EventStream,
}

type Answer<T> = wasmtime::Result<Result<T, ApiError>>;

/// A call to authorize: everything but the kind, which the host resolves.
struct Call<'a> {
    verb: Verb,
    namespace: Option<&'a str>,
    name: Option<&'a str>,
    field_manager: Option<&'a str>,
    dry_run: bool,
}

impl<'a> Call<'a> {
    fn new(verb: Verb, namespace: &'a Option<String>, name: Option<&'a str>) -> Self {
        Call {
            verb,
            namespace: namespace.as_deref(),
            name,
            field_manager: None,
            dry_run: false,
        }
    }
}

impl KrtView<'_> {
    /// A policy refusal as the guest sees it: HTTP 403 with `source: policy`;
    /// a middleware's names the link and how to grant the call to it.
    fn refusal(&self, denial: &Denial) -> ApiError {
        tracing::warn!(target: "krt::policy", rule = denial.rule, link = %self.ctx.link.role, "{denial}");
        let message = match &self.ctx.link.role {
            Role::Runtime => denial.to_string(),
            role @ Role::Middleware { name, .. } => denial.for_middleware(&role.to_string(), name),
        };
        api_error_to_wit(m::ApiError {
            source: m::ErrorSource::Policy,
            ..m::ApiError::api(403, "Forbidden", message)
        })
    }

    /// Spends one request of the policy's budget.
    fn spend_request(&mut self, what: &str) -> Result<(), ApiError> {
        self.ctx.requests += 1;
        let budget = self.ctx.link.policy.max_requests;
        if self.ctx.requests > budget {
            let role = &self.ctx.link.role;
            tracing::warn!(target: "krt::policy", rule = "maxRequests", link = %role, "{what}: request budget of {budget} spent");
            let how = match role {
                Role::Runtime => {
                    "pass `--max-requests N` (or set `maxRequests` in the policy file)".to_string()
                }
                Role::Middleware { name, .. } => format!(
                    "set `maxRequests` in the policy file of `--middleware-policy {name}=FILE`"
                ),
            };
            return Err(api_error_to_wit(m::ApiError {
                source: m::ErrorSource::Limit,
                ..m::ApiError::api(
                    429,
                    "RequestBudgetExceeded",
                    format!(
                        "{what}: {role} made more than {budget} cluster requests in one operation (policy `maxRequests`); to allow more, {how}"
                    ),
                )
            }));
        }
        Ok(())
    }

    /// Charges the budget, resolves the kind on the host and checks the
    /// policy; the resolved kind is what the call must use.
    async fn authorize(
        &mut self,
        call: Call<'_>,
        wire: ApiResource,
    ) -> Result<m::ApiResource, ApiError> {
        self.spend_request(&format!("{} {}", call.verb, wire.kind))?;
        let resource = self
            .ctx
            .cluster
            .resolve(&m::api_version(&wire.group, &wire.version), &wire.kind)
            .await
            .map_err(api_error_to_wit)?;
        let request = Request {
            verb: call.verb,
            resource: &resource,
            namespace: call.namespace,
            name: call.name,
            field_manager: call.field_manager,
            dry_run: call.dry_run,
        };
        if let Err(denial) = self.ctx.link.policy.check(&request) {
            return Err(self.refusal(&denial));
        }
        Ok(resource)
    }

    /// Runs one cluster import: counts it, authorizes it, performs `op` with
    /// the resolved kind, and books the time as host time.
    async fn run<T, F, Fut>(&mut self, call: Call<'_>, wire: ApiResource, op: F) -> Answer<T>
    where
        F: FnOnce(Arc<KubeCluster>, m::ApiResource) -> Fut,
        Fut: Future<Output = Result<T, m::ApiError>>,
    {
        self.ctx.enter()?;
        let started = Instant::now();
        let answer = match self.authorize(call, wire).await {
            Ok(resource) => op(self.ctx.cluster.clone(), resource)
                .await
                .map_err(api_error_to_wit),
            Err(e) => Err(e),
        };
        self.ctx.host_time += started.elapsed();
        Ok(answer)
    }
}

impl Host for KrtView<'_> {
    async fn resolve(&mut self, api_version: String, kind: String) -> Answer<ApiResource> {
        self.ctx.enter()?;
        let started = Instant::now();
        let answer = match self.spend_request(&format!("resolve {kind}")) {
            Ok(()) => self
                .ctx
                .cluster
                .resolve(&api_version, &kind)
                .await
                .map_err(api_error_to_wit),
            Err(e) => Err(e),
        };
        // Discovery of a kind the policy does not allow is refused here already.
        let answer = answer.and_then(|found| match self.ctx.link.policy.check_kind(&found) {
            Ok(()) => Ok(api_resource_to_wit(found)),
            Err(denial) => Err(self.refusal(&denial)),
        });
        self.ctx.host_time += started.elapsed();
        Ok(answer)
    }

    async fn get(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        name: String,
    ) -> Answer<Option<String>> {
        let call = Call::new(Verb::Get, &namespace, Some(&name));
        self.run(call, resource, async |cluster, ar| {
            cluster.get(&ar, namespace.as_deref(), &name).await
        })
        .await
    }

    async fn create(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        object: String,
        options: CreateOptions,
    ) -> Answer<String> {
        let name = serde_json::from_str::<serde_json::Value>(&object)
            .ok()
            .and_then(|o| o["metadata"]["name"].as_str().map(str::to_string));
        let call = Call {
            field_manager: options.field_manager.as_deref(),
            dry_run: options.dry_run,
            ..Call::new(Verb::Create, &namespace, name.as_deref())
        };
        let options = m::CreateOptions {
            dry_run: options.dry_run,
            field_manager: options.field_manager.clone(),
        };
        self.run(call, resource, async |cluster, ar| {
            cluster
                .create(&ar, namespace.as_deref(), &object, &options)
                .await
        })
        .await
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
        let patch_type = patch_type_from_wit(type_);
        // Server-side apply without a field manager writes as `krt`.
        let manager = match (&options.field_manager, patch_type) {
            (Some(m), _) => Some(m.as_str()),
            (None, m::PatchType::Apply) => Some("krt"),
            (None, _) => None,
        };
        let call = Call {
            field_manager: manager,
            dry_run: options.dry_run,
            ..Call::new(Verb::Patch, &namespace, Some(&name))
        };
        let options = m::PatchOptions {
            dry_run: options.dry_run,
            field_manager: options.field_manager.clone(),
            force: options.force,
        };
        self.run(call, resource, async |cluster, ar| {
            cluster
                .patch(
                    &ar,
                    namespace.as_deref(),
                    &name,
                    patch_type,
                    &body,
                    &options,
                )
                .await
        })
        .await
    }

    async fn delete(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        name: String,
        options: DeleteOptions,
    ) -> Answer<Option<String>> {
        let options = delete_options_from_wit(options);
        let call = Call {
            dry_run: options.dry_run,
            ..Call::new(Verb::Delete, &namespace, Some(&name))
        };
        self.run(call, resource, async |cluster, ar| {
            cluster
                .delete(&ar, namespace.as_deref(), &name, &options)
                .await
        })
        .await
    }

    async fn list(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        options: ListOptions,
    ) -> Answer<ObjectList> {
        let call = Call::new(Verb::List, &namespace, None);
        let options = m::ListOptions {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            limit: options.limit,
            continue_token: options.continue_token,
        };
        self.run(call, resource, async |cluster, ar| {
            let (items, resource_version, continue_token) =
                cluster.list(&ar, namespace.as_deref(), &options).await?;
            Ok(ObjectList {
                items,
                resource_version,
                continue_token,
            })
        })
        .await
    }

    async fn watch(
        &mut self,
        resource: ApiResource,
        namespace: Option<String>,
        options: WatchOptions,
    ) -> Answer<Resource<WatchState>> {
        let call = Call::new(Verb::Watch, &namespace, None);
        let options = m::WatchOptions {
            label_selector: options.label_selector,
            field_selector: options.field_selector,
            resource_version: options.resource_version,
            timeout_seconds: options.timeout_seconds,
            allow_bookmarks: options.allow_bookmarks,
        };
        let started = self
            .run(call, resource, async |cluster, ar| {
                cluster.watch(&ar, namespace.as_deref(), &options).await
            })
            .await?;
        Ok(match started {
            Ok(events) => Ok(self.table.push(WatchState { events })?),
            Err(e) => Err(e),
        })
    }
}

impl HostWatchStream for KrtView<'_> {
    async fn next(
        &mut self,
        stream: Resource<WatchState>,
        timeout_ms: u32,
    ) -> Answer<Option<WatchEvent>> {
        self.ctx.enter()?;
        // Epochs do not interrupt a guest blocked here, so the wait is clamped
        // to a few seconds and to what is left of the call's deadline.
        let started = Instant::now();
        let left = self.ctx.deadline.saturating_duration_since(started);
        let wait = Duration::from_millis(timeout_ms.into())
            .min(MAX_NEXT_WAIT)
            .min(left);
        let state = self.table.get_mut(&stream)?;
        let answer = match tokio::time::timeout(wait, state.events.next()).await {
            Err(_) => Ok(None),
            Ok(None) => Err(api_error_to_wit(m::ApiError::api(
                410,
                "Expired",
                "the watch stream was closed by the API server; list again and start a new watch",
            ))),
            Ok(Some(Ok((kind, object)))) => Ok(Some(WatchEvent {
                type_: event_type_to_wit(kind),
                object,
            })),
            Ok(Some(Err(e))) => Err(api_error_to_wit(e)),
        };
        self.ctx.host_time += started.elapsed();
        Ok(answer)
    }

    async fn drop(&mut self, stream: Resource<WatchState>) -> wasmtime::Result<()> {
        self.table.delete(stream)?;
        Ok(())
    }
}
