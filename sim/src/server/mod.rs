//! The HTTP(S) server around a [`Cluster`]: routing, watch streams, fault injection, a CA
//! generated at start (TLS, client certificates), authentication (client certificates, bearer
//! tokens, ServiceAccount tokens), the controllers' timer and state files.

mod authn;
mod credentials;
mod faults;
mod http;
mod impersonation;
mod persist;
mod requests;
mod tls;
mod tokens;
mod watch;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use authn::{ADMIN, StaticToken};
pub use faults::{Fault, FaultAction};
pub use requests::{RequestCounter, RequestCounts};
pub use tls::ClientCertificate;

use crate::cluster::Cluster;
use faults::Faults;

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
    /// The TLS certificates could not be made.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
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
    /// Serve HTTPS with a certificate signed by the CA generated at start ([`Sim::ca_pem`]); the
    /// kubeconfig then carries `certificate-authority-data`, and clients may authenticate with
    /// certificates that CA signed ([`Sim::client_certificate`]).
    pub tls: bool,
    /// The bearer token of the admin user `krt-sim-admin` (group `system:masters`), which the
    /// kubeconfig carries; `None` generates one ([`Sim::admin_token`]).
    pub token: Option<String>,
    /// More users known by bearer token, as kube-apiserver's `--token-auth-file` lists them.
    pub users: Vec<StaticToken>,
    /// Whether a request without credentials is served as `system:anonymous` (in group
    /// `system:unauthenticated`, which RBAC lets read only health and version), as with
    /// kube-apiserver's default `--anonymous-auth=true`; `false` answers it 401.
    pub anonymous: bool,
    /// Whether the cluster has its simulated worker: the node `krt-sim-node` that Pods are
    /// scheduled to and run on (Running and Ready at once), and kind's default StorageClass
    /// `standard` with its provisioner. `false` is a bare control plane, as kube-apiserver and
    /// kube-controller-manager alone: Pods stay Pending without a node, and claims get no class.
    pub worker: bool,
}

impl Default for SimConfig {
    /// `127.0.0.1:0`, 20 ms controller steps, 10,000 retained events, plain HTTP, a generated
    /// admin token, anonymous requests allowed (as `system:anonymous`), a worker.
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            controller_interval: Duration::from_millis(20),
            history_limit: 10_000,
            state_file: None,
            tls: false,
            token: None,
            users: Vec::new(),
            anonymous: true,
            worker: true,
        }
    }
}

/// How the user of a kubeconfig authenticates.
#[derive(Debug, Clone)]
pub enum Credential {
    /// A bearer token.
    Token(String),
    /// A client certificate signed by the cluster's CA (needs [`SimConfig::tls`]).
    Certificate(ClientCertificate),
    /// None: the requests are anonymous.
    None,
}

/// A random bearer token (128 bits, hex) from the TLS stack's generator.
fn random_token() -> Result<String, SimError> {
    let mut bytes = [0u8; 16];
    rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut bytes)
        .map_err(|e| SimError::Tls(format!("{e:?}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What request handlers share.
pub(crate) struct Shared {
    pub(crate) cluster: Cluster,
    pub(crate) faults: Faults,
    /// The latest resourceVersion, changed after every commit: wakes watches and controllers.
    pub(crate) changed: tokio::sync::watch::Sender<u64>,
    /// Who a request's credentials name.
    pub(crate) authenticator: authn::Authenticator,
    /// The API requests answered so far.
    pub(crate) requests: RequestCounter,
}

/// A running simulator. Dropping it (or calling [`Sim::shutdown`]) stops it.
pub struct Sim {
    url: String,
    tls: bool,
    certificates: tls::Certificates,
    token: String,
    state_file: Option<PathBuf>,
    shared: Arc<Shared>,
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
    /// [`SimError::Bind`] when the listen address cannot be bound, [`SimError::State`] for an
    /// unreadable state file, [`SimError::Tls`] when certificates cannot be made.
    pub async fn start_with(config: SimConfig) -> Result<Sim, SimError> {
        let bind_error = |source| SimError::Bind {
            address: config.listen,
            source,
        };
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let cluster = Cluster::empty(config.history_limit, &address.to_string());
        let restored = match &config.state_file {
            Some(path) => {
                persist::load(&mut cluster.store.lock(), path).map_err(SimError::State)?
            }
            None => false,
        };
        if !config.worker {
            cluster.remove_worker();
        }
        if !restored {
            cluster.seed();
        }
        let certificates = tls::Certificates::generate(address.ip()).map_err(SimError::Tls)?;
        cluster.set_root_ca(certificates.ca_pem.clone());
        let token = match &config.token {
            Some(token) => token.clone(),
            None => random_token()?,
        };
        let issuer = tokens::TokenIssuer::generate().map_err(SimError::Tls)?;
        let authenticator =
            authn::Authenticator::new(&token, &config.users, issuer, config.anonymous);
        let (changed, _) = tokio::sync::watch::channel(cluster.resource_version());
        let notify = changed.clone();
        cluster.observe(move |rv| {
            notify.send_replace(rv);
        });
        let shared = Arc::new(Shared {
            cluster,
            faults: Faults::default(),
            changed,
            authenticator,
            requests: RequestCounter::default(),
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let app = http::router(shared.clone());
        let stopped = async {
            let _ = stopped.await;
        };
        let (scheme, server) = if config.tls {
            let listener = tls::TlsListener::new(listener, &certificates).map_err(SimError::Tls)?;
            let app = app.into_make_service_with_connect_info::<tls::PeerCertificate>();
            let serve = axum::serve(listener, app).with_graceful_shutdown(stopped);
            ("https", tokio::spawn(log_end(serve.into_future())))
        } else {
            let app = app.into_make_service_with_connect_info::<tls::PeerCertificate>();
            let serve = axum::serve(listener, app).with_graceful_shutdown(stopped);
            ("http", tokio::spawn(log_end(serve.into_future())))
        };
        let controllers = tokio::spawn(run_controllers(shared.clone(), config.controller_interval));
        Ok(Sim {
            url: format!("{scheme}://{address}"),
            tls: config.tls,
            certificates,
            token,
            state_file: config.state_file,
            shared,
            stop: Some(stop),
            server: Some(server),
            controllers,
        })
    }

    /// The base URL, `http://127.0.0.1:PORT` (or `https://` with [`SimConfig::tls`]).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The PEM of the CA that signed the server certificate, with [`SimConfig::tls`].
    pub fn ca_pem(&self) -> Option<&str> {
        self.tls.then_some(self.certificates.ca_pem.as_str())
    }

    /// The admin's bearer token (user `krt-sim-admin`, group `system:masters`).
    pub fn admin_token(&self) -> &str {
        &self.token
    }

    /// A client certificate for `username` in `group`, signed by the cluster's CA: with
    /// [`SimConfig::tls`], a client presenting it is that user.
    ///
    /// # Errors
    /// [`SimError::Tls`] when the certificate cannot be made.
    pub fn client_certificate(
        &self,
        username: &str,
        group: Option<&str>,
    ) -> Result<ClientCertificate, SimError> {
        self.certificates
            .client(username, group)
            .map_err(SimError::Tls)
    }

    /// The in-process cluster behind the server (the same objects the API serves).
    pub fn cluster(&self) -> &Cluster {
        &self.shared.cluster
    }

    /// A kubeconfig for the admin: cluster and context `krt-sim`, user `krt-sim-admin` with the
    /// admin token, namespace `default`; with TLS it carries `certificate-authority-data`.
    pub fn kubeconfig_yaml(&self) -> String {
        self.kubeconfig_yaml_as(ADMIN, &Credential::Token(self.token.clone()))
    }

    /// A kubeconfig like [`Sim::kubeconfig_yaml`] whose user `name` authenticates with
    /// `credential`.
    pub fn kubeconfig_yaml_as(&self, name: &str, credential: &Credential) -> String {
        let b64 = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
        let ca = self
            .ca_pem()
            .map(|pem| format!("\n    certificate-authority-data: {}", b64(pem)))
            .unwrap_or_default();
        let user = match credential {
            Credential::Token(token) => format!("\n    token: {token}"),
            Credential::Certificate(cert) => format!(
                "\n    client-certificate-data: {}\n    client-key-data: {}",
                b64(&cert.cert_pem),
                b64(&cert.key_pem)
            ),
            Credential::None => "{}".to_string(),
        };
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: krt-sim
  cluster:
    server: {}{ca}
contexts:
- name: krt-sim
  context:
    cluster: krt-sim
    user: {name}
    namespace: default
current-context: krt-sim
users:
- name: {name}
  user: {user}
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
        self.shared.faults.inject(fault);
    }

    /// The API requests answered since the start (or the last [`Sim::reset_requests`]).
    pub fn requests(&self) -> RequestCounts {
        self.shared.requests.snapshot()
    }

    /// Counts requests from zero again.
    pub fn reset_requests(&self) {
        self.shared.requests.reset();
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        self.shared.faults.clear();
    }

    /// Ends every open watch stream (clients must re-watch).
    pub fn close_watches(&self) {
        self.shared.faults.close_watches();
    }

    /// Forgets the event history, so watches from any earlier resourceVersion get 410 Gone.
    pub fn expire_resource_versions(&self) {
        self.shared.cluster.expire_resource_versions();
    }

    /// Writes the objects to the configured state file, if any.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn save(&self) -> std::io::Result<()> {
        match &self.state_file {
            Some(path) => persist::save(&self.shared.cluster.store.lock(), path),
            None => Ok(()),
        }
    }

    /// Stops the server and controllers and waits for the server to finish.
    pub async fn shutdown(mut self) {
        self.controllers.abort();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.shared.faults.close_watches();
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
        self.shared.faults.close_watches();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn log_end(serve: impl Future<Output = std::io::Result<()>>) {
    if let Err(e) = serve.await {
        tracing::error!(error = %e, "krt-sim server stopped");
    }
}

/// Runs controller passes every `interval`, and a quarter interval after a write the passes did
/// not make themselves.
async fn run_controllers(shared: Arc<Shared>, interval: Duration) {
    let mut changed = shared.changed.subscribe();
    loop {
        shared.cluster.reconcile();
        changed.borrow_and_update();
        tokio::select! {
            result = changed.changed() => {
                if result.is_err() {
                    return;
                }
                tokio::time::sleep(interval / 4).await;
            }
            () = tokio::time::sleep(interval) => {}
        }
    }
}
