//! krt-sim: a Kubernetes API server simulator served over plain HTTP on 127.0.0.1, the embedded
//! default cluster of `krt` and the cluster every test runs against; real `kubectl` works with it.
//!
//! It is not a real API server: no authentication, no admission webhooks, no etcd, and
//! controllers that only simulate the state machines of the built-in workloads.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sim::SimError> {
//! let sim = sim::Sim::start().await?;
//! println!("{}", sim.url());
//! sim.shutdown().await;
//! # Ok(()) }
//! ```

mod cluster;
mod controllers;
mod defaults;
mod discovery;
mod faults;
mod handlers;
mod lifecycle;
mod meta;
mod persist;
mod registry;
mod selectors;
mod ssa;
mod status;
mod store;
mod validation;
mod watch;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

pub use faults::{Fault, FaultAction};

use cluster::Cluster;
use store::{Key, Store};

/// Errors starting the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The state file could not be loaded.
    #[error("{0}")]
    State(String),
    /// The listen address could not be bound.
    #[error("failed to listen on {address}")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// How to run the simulator.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Time between controller steps (how fast rollouts progress).
    pub controller_interval: Duration,
    /// How many events the watch history keeps before old resourceVersions get 410 Gone.
    pub history_limit: usize,
    /// A file the objects are loaded from at start and saved to when the simulator stops
    /// (`krt`'s embedded cluster keeps its state this way); `None` keeps nothing.
    pub state_file: Option<PathBuf>,
}

impl Default for SimConfig {
    /// `127.0.0.1:0`, 20 ms controller steps, 10,000 retained events.
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            controller_interval: Duration::from_millis(20),
            history_limit: 10_000,
            state_file: None,
        }
    }
}

/// A running simulator. Dropping it (or calling [`Sim::shutdown`]) stops it.
pub struct Sim {
    url: String,
    state_file: Option<PathBuf>,
    cluster: Arc<Cluster>,
    stop: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<()>>,
    controllers: JoinHandle<()>,
}

impl Sim {
    /// Starts a simulator on `127.0.0.1:0` with default settings, as tasks on the current tokio
    /// runtime.
    ///
    /// # Errors
    /// [`SimError::Bind`] when the port cannot be bound.
    pub async fn start() -> Result<Sim, SimError> {
        Self::start_with(SimConfig::default()).await
    }

    /// Starts a simulator with `config`.
    ///
    /// # Errors
    /// [`SimError::Bind`] when the listen address cannot be bound.
    pub async fn start_with(config: SimConfig) -> Result<Sim, SimError> {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| SimError::Bind {
                address: config.listen,
                source,
            })?;
        let address = listener.local_addr().map_err(|source| SimError::Bind {
            address: config.listen,
            source,
        })?;
        let cluster = Arc::new(Cluster {
            store: Store::new(config.history_limit),
            faults: faults::Faults::default(),
            controller_interval: config.controller_interval,
            address: address.to_string(),
            changed: Notify::new(),
        });
        let restored = match &config.state_file {
            Some(path) => {
                persist::load(&mut cluster.store.lock(), path).map_err(SimError::State)?
            }
            None => false,
        };
        if !restored {
            seed(&cluster);
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let app = handlers::router(cluster.clone());
        let server = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                tracing::error!(error = %e, "krt-sim server stopped");
            }
        });
        let controllers = tokio::spawn(controllers::run(cluster.clone()));
        Ok(Sim {
            url: format!("http://{address}"),
            state_file: config.state_file,
            cluster,
            stop: Some(stop),
            server: Some(server),
            controllers,
        })
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A kubeconfig whose cluster, context and user are all `krt-sim`, namespace `default`.
    pub fn kubeconfig_yaml(&self) -> String {
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: krt-sim
  cluster:
    server: {}
contexts:
- name: krt-sim
  context:
    cluster: krt-sim
    user: krt-sim
    namespace: default
current-context: krt-sim
users:
- name: krt-sim
  user: {{}}
",
            self.url
        )
    }

    /// Writes [`Sim::kubeconfig_yaml`] to `path`.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig_yaml())
    }

    /// Fails (or delays) the next requests matching the rule; see [`Fault`].
    pub fn inject_fault(&self, fault: Fault) {
        self.cluster.faults.inject(fault);
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        self.cluster.faults.clear();
    }

    /// Ends every open watch stream (clients must re-watch).
    pub fn close_watches(&self) {
        self.cluster.faults.close_watches();
    }

    /// Forgets the event history, so watches from any earlier resourceVersion get 410 Gone.
    pub fn expire_resource_versions(&self) {
        self.cluster.store.lock().compact();
    }

    /// Writes the objects to the configured state file, if any.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn save(&self) -> std::io::Result<()> {
        match &self.state_file {
            Some(path) => persist::save(&self.cluster.store.lock(), path),
            None => Ok(()),
        }
    }

    /// Stops the server and controllers and waits for the server to finish.
    pub async fn shutdown(mut self) {
        self.controllers.abort();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.cluster.faults.close_watches();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Err(e) = self.save() {
            tracing::error!(error = %e, "krt-sim could not save its state");
        }
        self.controllers.abort();
        self.cluster.faults.close_watches();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The namespaces every cluster starts with.
fn seed(cluster: &Cluster) {
    let mut state = cluster.store.lock();
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let key = Key {
            group: String::new(),
            resource: "namespaces".into(),
            namespace: String::new(),
            name: name.into(),
        };
        state.put(
            key,
            json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "uid": meta::uid(), "creationTimestamp": meta::now(),
                    "labels": {"kubernetes.io/metadata.name": name}},
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
        );
    }
}
