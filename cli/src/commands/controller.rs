//! `krt controller run|install`: krt as a Kubernetes controller reconciling
//! Stack resources (krt-controller), and what installs it.

use super::ApplyCommand;
use super::apply::WriteArgs;
use crate::args::{ExitCode, GlobalArgs, InputArgs};
use crate::output::Printer;
use crate::session;
use anyhow::Context;
use krt_controller::install::{self, InstallOptions, manifests};
use krt_controller::shards::MIN_LEASE_DURATION;
use krt_controller::{
    Grant, Grants, Settings, ShardSettings, StackController, Tenancy, VerificationRule,
};
use krt_host::oci::OciOptions;
use krt_host::{ClusterChoice, EngineOptions, connect};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// `krt controller`: run krt in the cluster.
#[derive(Debug, clap::Subcommand)]
pub enum ControllerCommand {
    /// Reconcile Stack resources (stacks.krt.dev) until stopped, sharing them
    /// with the other replicas through shard Leases.
    Run(RunArgs),
    /// Print (or apply, with --apply) the Stack CRD, the RBAC and a Deployment
    /// that runs the controller.
    Install(InstallArgs),
}

/// `krt controller run` flags.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// This replica's identity among the replicas (default: HOST-PID).
    #[arg(long)]
    pub identity: Option<String>,
    /// The namespace of the shard and member Leases.
    #[arg(long, default_value = "krt-system")]
    pub lease_namespace: String,
    /// How many shards Stacks are spread over (the same for every replica).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub shards: u32,
    /// The longest a replica that stopped renewing keeps its shards: another
    /// replica takes them within this (whole seconds, at least 3s).
    #[arg(long, default_value = "15s", value_parser = parse_lease_duration)]
    pub lease_duration: Duration,
    /// A configuration file with grants: what the Stacks of some namespaces
    /// may touch beyond their own namespace.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Lets the Stacks of namespaces STACKS (glob) touch NAMESPACES (glob)
    /// too. Repeatable.
    #[arg(long = "grant-namespace", value_name = "STACKS=NAMESPACES", value_parser = parse_grant)]
    pub grant_namespaces: Vec<(String, String)>,
    /// Lets the Stacks of namespaces STACKS (glob) touch cluster-scoped kinds.
    /// Repeatable.
    #[arg(long = "grant-cluster-scoped", value_name = "STACKS")]
    pub grant_cluster_scoped: Vec<String>,
    /// A directory whose component files Stacks may name in `path`. Repeatable.
    #[arg(long = "component-dir", value_name = "DIR")]
    pub component_dirs: Vec<PathBuf>,
    /// Stacks reconciled at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,
    /// Resources worked on at once within one Stack.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub resource_concurrency: u16,
    /// Where /metrics (Prometheus text) and /healthz are served.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_address: SocketAddr,
    /// The ServiceAccount (of each Stack's own namespace) that Stacks naming
    /// no spec.serviceAccountName run as. Without it they run as the
    /// controller: only for single-tenant clusters.
    #[arg(long, value_name = "NAME")]
    pub default_service_account: Option<String>,
    /// Refuse Stacks whose ConfigMap sources lie in another namespace than
    /// the Stack's.
    #[arg(long)]
    pub no_cross_namespace_refs: bool,
}

/// A `--lease-duration` value: whole seconds, at least the shortest the shards allow.
fn parse_lease_duration(value: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(value).map_err(|e| e.to_string())?;
    if duration.subsec_nanos() != 0 || duration < MIN_LEASE_DURATION {
        return Err(format!(
            "a lease duration is whole seconds, at least {}s (Leases count seconds), got '{value}'",
            MIN_LEASE_DURATION.as_secs()
        ));
    }
    Ok(duration)
}

/// A `--grant-namespace` value: `STACKS=NAMESPACES`.
fn parse_grant(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((stacks, namespaces)) if !stacks.is_empty() && !namespaces.is_empty() => {
            Ok((stacks.to_owned(), namespaces.to_owned()))
        }
        _ => Err(format!(
            "expected STACKS=NAMESPACES (the namespaces of the Stacks granted, and the \
             namespaces they may touch, both globs), got '{value}'"
        )),
    }
}

/// `krt controller install` flags (`-n` names the controller's namespace).
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Apply the manifests to the cluster (as stack `krt-controller`) instead of printing them.
    #[arg(long)]
    pub apply: bool,
    /// The controller's image; it must run the `krt` binary as its entry point.
    #[arg(long, default_value = concat!("krt:", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// How many replicas share the Stacks.
    #[arg(long, default_value_t = 2)]
    pub replicas: u32,
    /// How many shards Stacks are spread over.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub shards: u32,
    /// How tenants are separated: `multi` (each Stack applies as its
    /// ServiceAccount, `default` unless it names one; the controller may write
    /// no tenant objects itself) or `single` (the controller may write every
    /// kind, and Stacks naming no account run as it).
    #[arg(long, value_enum, default_value_t = TenancyArg::Multi)]
    pub tenancy: TenancyArg,
    /// The ServiceAccount Stacks naming none run as (default: `default` with
    /// --tenancy multi, the controller itself with --tenancy single).
    #[arg(long, value_name = "NAME")]
    pub default_service_account: Option<String>,
    /// With --apply: wait for the Deployment to become available.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub watch: bool,
}

/// `--tenancy` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TenancyArg {
    /// Stacks apply as ServiceAccounts of their namespaces.
    Multi,
    /// The controller applies every kind itself.
    Single,
}

/// The stack `krt controller install --apply` records its objects in.
const INSTALL_STACK: &str = "krt-controller";

impl ControllerCommand {
    /// Runs the controller command.
    ///
    /// # Errors
    /// No cluster, an unusable configuration, or (install) as `krt apply`.
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        match self {
            ControllerCommand::Run(args) => args.run(global, printer).await,
            ControllerCommand::Install(args) => args.install(global, printer).await,
        }
    }
}

impl RunArgs {
    fn grants(&self, global: &GlobalArgs) -> anyhow::Result<Grants> {
        let mut grants = match &self.config {
            Some(path) => Grants::load(path)?,
            None => Grants::default(),
        };
        for (stacks, namespaces) in &self.grant_namespaces {
            grants.grants.push(Grant {
                stacks: vec![stacks.clone()],
                namespaces: vec![namespaces.clone()],
                cluster_scoped: false,
            });
        }
        for stacks in &self.grant_cluster_scoped {
            grants.grants.push(Grant {
                stacks: vec![stacks.clone()],
                namespaces: Vec::new(),
                cluster_scoped: true,
            });
        }
        // `--verify-key` covers every namespace's `oci` components.
        if !global.verify_keys.is_empty() {
            grants.verification.push(VerificationRule {
                stacks: vec!["*".into()],
                references: Vec::new(),
                keys: global.verify_keys.clone(),
            });
        }
        Ok(grants)
    }

    async fn run(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let grants = self.grants(global)?;
        let mut options = session::connect_options(global, None);
        // A controller runs against a real cluster: never the embedded simulator.
        options.choice = ClusterChoice::Kubeconfig;
        let connected = connect(&options).await?;
        let identity = self.identity.clone().unwrap_or_else(default_identity);
        let runs_as = match &self.default_service_account {
            Some(name) => {
                format!("Stacks naming no ServiceAccount run as '{name}' of their namespace")
            }
            None => "Stacks naming no ServiceAccount run as the controller (single-tenant)".into(),
        };
        let concurrency = u32::from(self.concurrency) * u32::from(self.resource_concurrency);
        let settings = Settings {
            shards: ShardSettings {
                identity: identity.clone(),
                namespace: self.lease_namespace.clone(),
                shards: self.shards,
                lease_duration: self.lease_duration,
            },
            grants,
            tenancy: Tenancy {
                default_service_account: self.default_service_account.clone(),
                no_cross_namespace_refs: self.no_cross_namespace_refs,
            },
            component_dirs: self.component_dirs.clone(),
            concurrency: self.concurrency,
            resource_concurrency: usize::from(self.resource_concurrency),
            metrics_address: Some(self.metrics_address),
            engine: EngineOptions {
                // Each running call holds an instance per link of its chain.
                max_instances: (concurrency * 4).max(32),
                ..EngineOptions::default()
            },
            registries: OciOptions {
                insecure_registries: global.insecure_registries.clone(),
                ca_certificates: global.registry_cas.clone(),
                ..OciOptions::default()
            },
        };
        let controller = StackController::new(settings, connected.cluster.clone())
            .await
            .context("the controller cannot start")?;
        let metrics = controller
            .metrics_address()
            .map(|a| format!(", metrics at http://{a}/metrics"))
            .unwrap_or_default();
        printer.note(format!(
            "controller {identity} reconciling Stacks in {}: {} shard(s) on Leases in {}{metrics}; {runs_as}",
            connected.description, self.shards, self.lease_namespace
        ));
        controller.run(shutdown_signal()).await;
        printer.note(format!("controller {identity} stopped"));
        Ok(ExitCode::Success)
    }
}

/// `HOST-PID`.
fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "krt".into());
    format!("{host}-{}", std::process::id())
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        Some(()) = async { match term.as_mut() { Some(t) => t.recv().await, None => std::future::pending().await } } => {}
    }
}

impl InstallArgs {
    async fn install(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let options = InstallOptions {
            namespace: global
                .namespace
                .clone()
                .unwrap_or_else(|| "krt-system".into()),
            image: self.image.clone(),
            replicas: self.replicas,
            shards: self.shards,
            tenancy: match self.tenancy {
                TenancyArg::Multi => install::TenancyMode::Multi,
                TenancyArg::Single => install::TenancyMode::Single,
            },
            default_service_account: self.default_service_account.clone(),
        };
        let documents: Vec<String> = manifests(&options)
            .iter()
            .map(serde_saphyr::to_string)
            .collect::<Result<_, _>>()
            .context("cannot print the manifests")?;
        let text = documents.join("---\n");
        if !self.apply {
            printer.out(text.trim_end());
            return Ok(ExitCode::Success);
        }
        let loaded = krt_stack::manifest::parse("krt controller install", &text)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let stack = krt_stack::Stack::new(loaded).map_err(|e| anyhow::anyhow!("{e}"))?;
        let global = GlobalArgs {
            stack: INSTALL_STACK.into(),
            ..global.clone()
        };
        let apply = ApplyCommand {
            input: InputArgs { files: Vec::new() },
            write: WriteArgs {
                field_manager: "krt".into(),
                force_conflicts: false,
                replace_on_immutable: false,
                concurrency: 16,
                force_delete_unowned: false,
            },
            yes: true,
            watch: self.watch,
            timeout: Duration::from_secs(300),
            wait_for: krt_stack::WaitFor::All,
        };
        apply.apply_stack(&global, printer, &stack).await
    }
}
