//! Choosing and connecting to a cluster the way kubectl does, or starting the
//! embedded simulator when there is no cluster configuration at all.

use crate::cluster::{Impersonation, KubeCluster};
use crate::error::Error;
use kube::config::{KubeConfigOptions, Kubeconfig};
use std::path::PathBuf;
use std::sync::Arc;

/// Which cluster to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClusterChoice {
    /// A kubeconfig when one exists (`--kubeconfig`, `KUBECONFIG`,
    /// `~/.kube/config`, in-cluster service account), else the embedded simulator.
    #[default]
    Auto,
    /// Always the embedded simulator (needs the `sim` feature).
    Sim,
    /// Always a kubeconfig; fail when there is none.
    Kubeconfig,
}

/// How to find the cluster.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// Which cluster.
    pub choice: ClusterChoice,
    /// An explicit kubeconfig file (`--kubeconfig`).
    pub kubeconfig: Option<PathBuf>,
    /// The context to use (`--context`).
    pub context: Option<String>,
    /// Overrides the context's namespace (`-n`).
    pub namespace: Option<String>,
    /// Where the embedded simulator keeps its objects between runs; `None` keeps nothing.
    pub sim_state: Option<PathBuf>,
    /// The most requests in flight at once (the ceiling of the adaptive
    /// limit); `None` is [`DEFAULT_MAX_IN_FLIGHT`](crate::DEFAULT_MAX_IN_FLIGHT).
    pub max_in_flight: Option<usize>,
    /// Who every request impersonates (`--as`, `--as-group`); `None` sends
    /// them as the kubeconfig's user.
    pub impersonate: Option<Impersonation>,
}

/// A connected cluster.
pub struct Connected {
    /// The cluster client.
    pub cluster: Arc<KubeCluster>,
    /// The embedded simulator, when one was started; keep it alive while in use.
    #[cfg(feature = "sim")]
    pub sim: Option<krt_sim::Sim>,
    /// One line saying which cluster this is, for the user.
    pub description: String,
    /// The kubeconfig context used, when one was.
    pub context: Option<String>,
}

impl Connected {
    /// The identity of the connected cluster, as a state records it
    /// ([`KubeCluster::identity`]).
    ///
    /// # Errors
    /// The cluster could not be asked.
    pub async fn identity(&self) -> Result<krt_stack::ClusterIdentity, Error> {
        self.cluster.identity(self.context.as_deref()).await
    }
}

#[cfg(feature = "sim")]
fn has_kubeconfig(options: &ConnectOptions) -> bool {
    options.kubeconfig.is_some()
        || std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty())
        || std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".kube/config").exists())
            .unwrap_or(false)
        || std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
}

/// Connects as `options` says.
///
/// # Errors
/// A missing, unreadable or invalid kubeconfig (the message names the file), an
/// unknown context, or a simulator that cannot start. Without the `sim`
/// feature, no kubeconfig is [`Error::NoCluster`] and `Sim` is ignored.
pub async fn connect(options: &ConnectOptions) -> Result<Connected, Error> {
    #[cfg(feature = "sim")]
    {
        let use_sim = match options.choice {
            ClusterChoice::Sim => true,
            ClusterChoice::Kubeconfig => false,
            ClusterChoice::Auto => !has_kubeconfig(options),
        };
        if use_sim {
            return start_sim(options).await;
        }
    }
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        ..Default::default()
    };
    let (config, source, current) = if let Some(path) = &options.kubeconfig {
        let what = format!("'{}'", path.display());
        let kubeconfig = Kubeconfig::read_from(path).map_err(kubeconfig_error(&what))?;
        let current = kubeconfig.current_context.clone();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube_options)
            .await
            .map_err(kubeconfig_error(&what))?;
        (config, path.display().to_string(), current)
    } else if std::env::var_os("KUBECONFIG").is_some()
        || std::env::var_os("HOME").is_some_and(|h| PathBuf::from(h).join(".kube/config").exists())
    {
        let source = std::env::var("KUBECONFIG").unwrap_or_else(|_| "~/.kube/config".into());
        let config = kube::Config::from_kubeconfig(&kube_options)
            .await
            .map_err(kubeconfig_error(&format!("'{source}'")))?;
        let current = Kubeconfig::read().ok().and_then(|k| k.current_context);
        (config, source, current)
    } else {
        let config = kube::Config::incluster().map_err(Error::NoCluster)?;
        (config, "in-cluster service account".to_string(), None)
    };
    let namespace = options
        .namespace
        .clone()
        .unwrap_or_else(|| config.default_namespace.clone());
    let mut config = config;
    // KubeCluster retries with Retry-After inside one deadline; kube-rs's own
    // retry layer would stack on top of it.
    config.default_retry = false;
    let url = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).map_err(|source| Error::Client {
        url: url.clone(),
        source,
    })?;
    Ok(Connected {
        cluster: Arc::new(configured(
            KubeCluster::new(client, namespace).with_server(url.clone()),
            options,
        )?),
        #[cfg(feature = "sim")]
        sim: None,
        description: format!("cluster {url} (from {source}){}", acting(options)),
        context: options.context.clone().or(current),
    })
}

/// `cluster` with the request ceiling of `options`, acting as the user
/// `options` impersonates.
fn configured(cluster: KubeCluster, options: &ConnectOptions) -> Result<KubeCluster, Error> {
    let cluster = match options.max_in_flight {
        Some(ceiling) => cluster.with_max_in_flight(ceiling),
        None => cluster,
    };
    match &options.impersonate {
        Some(who) => cluster.acting_as(who),
        None => Ok(cluster),
    }
}

/// `, as USER` when `options` impersonate someone.
fn acting(options: &ConnectOptions) -> String {
    options
        .impersonate
        .as_ref()
        .map(|who| format!(", as {who}"))
        .unwrap_or_default()
}

/// An error of the kubeconfig `what`.
fn kubeconfig_error(what: &str) -> impl FnOnce(kube::config::KubeconfigError) -> Error {
    let what = what.to_owned();
    move |source| Error::Kubeconfig { what, source }
}

#[cfg(feature = "sim")]
async fn start_sim(options: &ConnectOptions) -> Result<Connected, Error> {
    let config = krt_sim::SimConfig {
        state_file: options.sim_state.clone(),
        ..krt_sim::SimConfig::default()
    };
    let sim = krt_sim::Sim::start_with(config).await.map_err(Error::Sim)?;
    let what = "of the embedded cluster";
    let kubeconfig =
        Kubeconfig::from_yaml(&sim.kubeconfig_yaml()).map_err(kubeconfig_error(what))?;
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(kubeconfig_error(what))?;
    config.default_retry = false;
    let client = kube::Client::try_from(config).map_err(|source| Error::Client {
        url: sim.url().to_owned(),
        source,
    })?;
    let namespace = options
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let why = match options.choice {
        ClusterChoice::Sim => "--cluster sim",
        _ => "no kubeconfig found",
    };
    let kept = match &options.sim_state {
        Some(path) => format!(", state kept in {}", path.display()),
        None => String::new(),
    };
    let description = format!(
        "the embedded cluster krt-sim at {} ({why}{kept}){}",
        sim.url(),
        acting(options)
    );
    Ok(Connected {
        cluster: Arc::new(configured(
            KubeCluster::new(client, namespace).with_server(sim.url()),
            options,
        )?),
        sim: Some(sim),
        description,
        context: None,
    })
}
