//! krt as a Kubernetes controller: `Stack` custom resources
//! (`stacks.krt.dev/v1alpha1`) reconciled continuously through krt's
//! sandboxed runtime, as Flux's kustomize-controller reconciles
//! Kustomizations.
//!
//! - [`crd`]: the `Stack` resource, its spec and its kstatus-shaped status;
//! - [`StackController`]: kube-runtime's `Controller` over Stacks; each one is
//!   read ([`sources`]), placed and checked against its own capability policy
//!   ([`scope`], [`grants`]) before anything is written, then planned and
//!   applied by krt-stack in dependency order ([`reconcile`]) as its
//!   ServiceAccount ([`tenancy`]), so the API server's RBAC is the second
//!   line of defence; its inventory is kept in its status ([`inventory`]);
//! - [`shards`]: replicas share the Stacks through shard Leases held with
//!   `kube-lease-manager`;
//! - [`metrics`]: Prometheus text metrics;
//! - [`install`]: the CRD, RBAC and Deployment that run the controller.
//!
//! It is a user of krt-stack and krt-host: no apply logic of its own.

pub mod conditions;
pub mod crd;
pub mod grants;
pub mod install;
pub mod inventory;
pub mod metrics;
pub mod outcome;
pub mod reconcile;
pub mod runtimes;
pub mod scope;
pub mod shards;
pub mod sources;
pub mod status;
pub mod tenancy;

pub use crd::{Stack, StackSpec, StackStatus};
pub use grants::{Grant, Grants, GrantsError, VerificationRule};
pub use shards::ShardSettings;
pub use tenancy::Tenancy;

use futures::StreamExt;
use krt_host::oci::OciOptions;
use krt_host::{EngineOptions, KubeCluster};
use kube::runtime::controller::{self, Controller};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::watcher;
use metrics::Metrics;
use reconcile::{Context, MAX_TIMEOUT};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How a controller process runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How replicas share the Stacks.
    pub shards: ShardSettings,
    /// What Stacks may touch beyond their own namespace.
    pub grants: Grants,
    /// Who Stacks act as, and which references they may make.
    pub tenancy: Tenancy,
    /// Directories `spec.component.path` and middleware paths may point into.
    pub component_dirs: Vec<PathBuf>,
    /// Stacks reconciled at once.
    pub concurrency: u16,
    /// Resources worked on at once within one Stack.
    pub resource_concurrency: usize,
    /// Where `/metrics` and `/healthz` are served; `None` serves nothing.
    pub metrics_address: Option<SocketAddr>,
    /// The wasmtime engine's settings (compile cache, instance pool); the
    /// per-call time limit is raised to cover the longest `spec.timeout`.
    pub engine: EngineOptions,
    /// How registries are reached (cache, insecure registries, CA
    /// certificates) for `oci` components; each Stack's credentials come from
    /// its pull secrets, and the signatures it needs from `grants`.
    pub registries: OciOptions,
}

/// What can stop the controller from starting or running.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The wasmtime engine could not be set up.
    #[error("cannot set up krt's sandbox")]
    Host(#[from] krt_host::Error),
    /// The metrics address could not be bound.
    #[error("cannot serve metrics at {address}")]
    Metrics {
        /// The address.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The `stacks.krt.dev` CRD is not installed.
    #[error(
        "the Stack custom resource (stacks.krt.dev) is not installed in the cluster: \
         run `krt controller install --apply` (or apply its output) first"
    )]
    NoCrd(#[source] kube::Error),
}

/// A controller process, set up and ready to [`run`](StackController::run).
pub struct StackController {
    ctx: Arc<Context>,
    settings: Settings,
    metrics_listener: Option<tokio::net::TcpListener>,
    acquired: futures::channel::mpsc::UnboundedReceiver<()>,
}

impl StackController {
    /// Builds the sandbox, checks that the CRD is installed and binds the
    /// metrics address.
    ///
    /// # Errors
    /// [`Error`].
    pub async fn new(settings: Settings, cluster: Arc<KubeCluster>) -> Result<Self, Error> {
        let client = cluster.client().clone();
        let stacks: kube::Api<Stack> = kube::Api::all(client.clone());
        stacks
            .list(&kube::api::ListParams::default().limit(1))
            .await
            .map_err(Error::NoCrd)?;
        let mut engine = settings.engine.clone();
        engine.limits.call_timeout = engine
            .limits
            .call_timeout
            .max(MAX_TIMEOUT + Duration::from_secs(30));
        let runtimes = runtimes::Runtimes::new(&engine)?;
        let metrics = Arc::new(Metrics::default());
        let (tx, acquired) = futures::channel::mpsc::unbounded();
        let shards = Arc::new(shards::Shards::new(
            settings.shards.clone(),
            tx,
            metrics.clone(),
        ));
        let reporter = Reporter {
            controller: "krt-controller".into(),
            instance: Some(settings.shards.identity.clone()),
        };
        let ctx = Arc::new(Context::new(
            client.clone(),
            cluster,
            runtimes,
            settings.grants.clone(),
            settings.tenancy.clone(),
            settings.component_dirs.clone(),
            settings.registries.clone(),
            shards,
            metrics,
            Recorder::new(client, reporter),
            settings.resource_concurrency,
        ));
        let metrics_listener = match settings.metrics_address {
            Some(address) => Some(
                tokio::net::TcpListener::bind(address)
                    .await
                    .map_err(|source| Error::Metrics { address, source })?,
            ),
            None => None,
        };
        Ok(StackController {
            ctx,
            settings,
            metrics_listener,
            acquired,
        })
    }

    /// Where the metrics are served (the bound address, when the port was 0).
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// The metrics of this process.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.ctx.metrics.clone()
    }

    /// Reconciles Stacks until `shutdown` completes: then stops starting
    /// reconciles, lets the running ones finish, and gives its shards and
    /// member Lease back so that other replicas take over at once.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) {
        let StackController {
            ctx,
            settings,
            metrics_listener,
            acquired,
        } = self;
        let client = ctx.client.clone();
        let (stop_tx, stop_rx) = watch::channel(false);
        let shard_task = tokio::spawn(ctx.shards.clone().run(client.clone(), stop_rx.clone()));
        let forget = ctx.clone();
        // A shard that moves here: every Stack is looked at (those of other
        // shards are skipped at once).
        let trigger = acquired.map(move |()| forget.forget_done());
        let mut stopping = stop_rx.clone();
        let controller =
            Controller::new(kube::Api::<Stack>::all(client), watcher::Config::default())
                .with_config(controller::Config::default().concurrency(settings.concurrency))
                .reconcile_all_on(trigger)
                .graceful_shutdown_on(async move { shards::stopped(&mut stopping).await });
        let store = controller.store();
        if let Some(listener) = metrics_listener {
            let depth_ctx = ctx.clone();
            let refresh: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
                let stacks = store.state();
                let depth = depth_ctx.queue_depth(stacks.iter().map(|s| s.as_ref()));
                depth_ctx.metrics.queue_depth.set(depth as i64);
            });
            let metrics = ctx.metrics.clone();
            tokio::spawn(async move {
                if let Err(e) = metrics::serve(listener, metrics, refresh).await {
                    tracing::error!(error = %e, "the metrics server stopped");
                }
            });
        }
        tokio::spawn(async move {
            shutdown.await;
            let _ = stop_tx.send(true);
        });
        controller
            .run(reconcile::reconcile, reconcile::error_policy, ctx)
            .for_each(|result| async move {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "reconcile ended with an error");
                }
            })
            .await;
        if let Err(e) = shard_task.await {
            tracing::warn!(error = %e, "the shard task failed");
        }
    }
}
