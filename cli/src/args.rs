//! The command line's shape: global options, the subcommands, exit codes,
//! logging, and the dispatch to `commands/`.

use crate::commands::{
    ApplyCommand, ComponentCommand, ControllerCommand, DestroyCommand, DriftCommand, ImportCommand,
    PreviewCommand, ReadCommand, StateCommand, WatchCommand,
};
use crate::output::{OutputFormat, Printer};
use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use krt_host::oci::OciReference;
use krt_stack::Verdict;
use std::path::PathBuf;
use tracing_subscriber::EnvFilter;

/// Exit codes of `krt`, the only place they are defined (clap itself exits
/// with 2 on a usage error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// 0: everything succeeded (for `drift`: no drift).
    Success,
    /// 1: invalid input, an error before any change, or at least one resource failed.
    Failure,
    /// 2: `krt drift` found drift.
    Drift,
    /// 3: a resource did not become healthy, or a deleted one was still
    /// terminating, within `--timeout` (and nothing else failed).
    Timeout,
    /// 4: an object to delete was left alone because krt does not own it
    /// (and nothing failed or timed out).
    NotOwned,
}

impl ExitCode {
    /// The exit code of a walk's verdict.
    pub fn of(verdict: Verdict) -> ExitCode {
        match verdict {
            Verdict::Succeeded => ExitCode::Success,
            Verdict::Failed => ExitCode::Failure,
            Verdict::TimedOut => ExitCode::Timeout,
            Verdict::NotOwned => ExitCode::NotOwned,
        }
    }

    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            ExitCode::Success => 0,
            ExitCode::Failure => 1,
            ExitCode::Drift => 2,
            ExitCode::Timeout => 3,
            ExitCode::NotOwned => 4,
        }
    }
}

/// krt: apply stacks of Kubernetes resources through a sandboxed WebAssembly runtime.
#[derive(Debug, Parser)]
#[command(name = "krt", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success; 1 invalid input or a failed resource; \
2 usage error, or drift found (krt drift); 3 timeout waiting for health or for a deletion; \
4 an object to delete was left alone because krt does not own it."
)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// The capability policy enforced on every cluster call of the component.
    #[command(flatten)]
    pub policy: crate::policy_args::PolicyArgs,
    /// Path to a kubeconfig file (default: KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, env = "KRT_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// Namespace for resources that name none (default: the context's namespace).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
    /// Send every request (state included) as USER, through the API server's
    /// impersonation, as kubectl's --as: the server checks that the
    /// kubeconfig's user may impersonate USER, then authorizes as USER.
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,
    /// A group to impersonate along with --as (repeatable), as kubectl's --as-group.
    #[arg(
        long = "as-group",
        global = true,
        value_name = "GROUP",
        requires = "as_user"
    )]
    pub as_groups: Vec<String>,
    /// Which cluster: a kubeconfig when one exists else the embedded simulator
    /// (auto), always the simulator (sim), or always a kubeconfig (kubeconfig).
    #[arg(long, global = true, value_enum, default_value_t = ClusterArg::Auto)]
    pub cluster: ClusterArg,
    /// Where the embedded cluster keeps its objects between runs.
    #[arg(long, global = true, default_value = ".krt/sim-state.json")]
    pub sim_state: PathBuf,
    /// A runtime component to use instead of the built-in guest: a file, or
    /// oci://REGISTRY/REPOSITORY:TAG (resolved to a digest on every run) or
    /// oci://REGISTRY/REPOSITORY@sha256:DIGEST.
    #[arg(long, global = true, value_name = "FILE|oci://REF", value_parser = parse_component)]
    pub component: Option<ComponentArg>,
    /// A middleware component in front of the runtime, a file or an oci://
    /// reference (repeatable, outermost first; give them all on one side of
    /// the command name): every call goes through each middleware, then the
    /// runtime. A middleware has no cluster access unless --middleware-policy
    /// grants it.
    #[arg(long = "middleware", global = true, value_name = "FILE|oci://REF", value_parser = parse_component)]
    pub middleware: Vec<ComponentArg>,
    /// Reach the registry HOST[:PORT] over plain HTTP (localhost and
    /// 127.0.0.1 always are). Repeatable.
    #[arg(long = "insecure-registry", global = true, value_name = "HOST")]
    pub insecure_registries: Vec<String>,
    /// Trust this CA certificate (PEM) for registries, beside the system's
    /// roots. Repeatable. Credentials come from REGISTRY_AUTH_FILE, else
    /// $DOCKER_CONFIG/config.json, else ~/.docker/config.json.
    #[arg(long = "registry-ca", global = true, value_name = "FILE")]
    pub registry_cas: Vec<PathBuf>,
    /// Require every oci:// component to carry a cosign signature that this
    /// public key (PEM, as cosign.pub) verifies; repeatable, any one key
    /// suffices. An unsigned component is refused before it is compiled.
    #[arg(long = "verify-key", global = true, value_name = "FILE")]
    pub verify_keys: Vec<PathBuf>,
    /// Grants the middleware named NAME (its file's stem, `org_rules` for
    /// org_rules.wasm, or its repository's last segment for an oci://
    /// reference) the cluster access of the policy file FILE (the format of
    /// --policy). Repeatable.
    #[arg(
        long = "middleware-policy",
        global = true,
        value_name = "NAME=FILE",
        value_parser = parse_middleware_policy
    )]
    pub middleware_policies: Vec<(String, PathBuf)>,
    /// The stack: the set of resources whose state is recorded together.
    #[arg(
        short = 's',
        long,
        global = true,
        env = "KRT_STACK",
        default_value = "default"
    )]
    pub stack: String,
    /// Where the stack's state is kept: files under --state-dir (local), or a
    /// Secret `krt-state-<stack>` in --state-namespace (kubernetes).
    #[arg(long, global = true, value_enum, default_value_t = StateArg::Local)]
    pub state: StateArg,
    /// The directory of local states.
    #[arg(long, global = true, default_value = ".krt/state")]
    pub state_dir: PathBuf,
    /// The namespace of state Secrets (default: -n, else the context's namespace).
    #[arg(long, global = true)]
    pub state_namespace: Option<String>,
    /// How results are printed: for people (table), or one JSON or YAML document on stdout.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// How apply writes: server-side apply, or a client-side three-way merge
    /// against the state (strategic merge patch for built-in kinds).
    #[arg(long, global = true, value_enum, default_value_t = ModeArg::ServerSide)]
    pub mode: ModeArg,
    /// More logs on stderr (-v info, -vv debug, -vvv trace); KRT_LOG overrides.
    #[arg(short = 'v', long, global = true, action = ArgAction::Count)]
    pub verbose: u8,
}

/// Where a component named on the command line comes from.
#[derive(Debug, Clone)]
pub enum ComponentArg {
    /// A component file.
    File(PathBuf),
    /// A component in a registry.
    Oci(OciReference),
}

impl ComponentArg {
    /// Its name in a chain: a file's stem, or a repository's last segment.
    pub fn name(&self) -> String {
        match self {
            ComponentArg::File(path) => krt_host::Middleware::file(path).name,
            ComponentArg::Oci(reference) => reference.name().to_owned(),
        }
    }
}

impl std::fmt::Display for ComponentArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ComponentArg::File(path) => write!(f, "'{}'", path.display()),
            ComponentArg::Oci(reference) => write!(f, "{reference}"),
        }
    }
}

/// A `--component` or `--middleware` value: `oci://…` or a file.
fn parse_component(value: &str) -> Result<ComponentArg, String> {
    match value.starts_with(krt_host::oci::SCHEME) {
        true => OciReference::parse(value)
            .map(ComponentArg::Oci)
            .map_err(|e| e.to_string()),
        false => Ok(ComponentArg::File(PathBuf::from(value))),
    }
}

/// A `--middleware-policy` value: `NAME=FILE`.
fn parse_middleware_policy(value: &str) -> Result<(String, PathBuf), String> {
    match value.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!(
            "expected NAME=FILE (a middleware's name, its file's stem, and a policy file), got '{value}'"
        )),
    }
}

/// `--cluster` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClusterArg {
    /// A kubeconfig if one exists, else the embedded simulator.
    Auto,
    /// The embedded simulator.
    Sim,
    /// A kubeconfig.
    Kubeconfig,
}

/// `--state` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StateArg {
    /// `<state-dir>/<stack>.json`, locked with `<stack>.lock`.
    Local,
    /// A Secret in the cluster, locked with a second Secret.
    Kubernetes,
}

/// `--mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Server-side apply with a field manager.
    ServerSide,
    /// Client-side three-way merge against the recorded state.
    ClientSide,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what `apply` would do: create, update, replace, delete or unchanged, with diffs.
    Preview(PreviewCommand),
    /// Preview, confirm, then apply in dependency order and wait for health.
    Apply(ApplyCommand),
    /// Delete the stack's resources (or those of -f), dependents first.
    #[command(visible_alias = "delete")]
    Destroy(DestroyCommand),
    /// Print live objects with their health and drift from the state.
    Read(ReadCommand),
    /// Compare live objects with the state; exit 2 when they drifted.
    Drift(DriftCommand),
    /// Wait until the resources are healthy, showing progress.
    Watch(WatchCommand),
    /// Adopt live objects into the stack's state.
    Import(ImportCommand),
    /// Inspect and unlock recorded states.
    #[command(subcommand)]
    State(StateCommand),
    /// Run krt as a Kubernetes controller reconciling Stack resources, or install it.
    #[command(subcommand)]
    Controller(ControllerCommand),
    /// Push, pull, inspect and sign components in OCI registries.
    #[command(subcommand)]
    Component(ComponentCommand),
}

/// The input, required.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// Input: a file (Kubernetes YAML/JSON, multi-document, or a Kusion spec
    /// with `resources:`), a directory of them (not recursive), or `-` for stdin.
    #[arg(short = 'f', long = "filename", required = true)]
    pub files: Vec<PathBuf>,
}

/// The input, optional: without it, a command works on the stack's recorded state.
#[derive(Debug, Clone, Args)]
pub struct StateOrInputArgs {
    /// Input (as for apply) naming the resources to work on; default: every
    /// resource recorded in the stack's state.
    #[arg(short = 'f', long = "filename")]
    pub files: Vec<PathBuf>,
}

impl Cli {
    /// Sets up logging on stderr: `KRT_LOG` when set, else by `-v`.
    pub fn init_logging(&self) {
        // kube-rs logs every failed connection attempt at ERROR, and
        // sigstore warns of every signature source a component does not
        // have; krt reports what matters itself, so that noise is off unless
        // asked for (-vv).
        let level = match self.global.verbose {
            0 => "warn,kube_client::client::builder=off,sigstore=error",
            1 => "info,kube_client::client::builder=off,sigstore=error",
            2 => "debug",
            _ => "trace",
        };
        tracing_subscriber::fmt()
            .with_env_filter(
                EnvFilter::try_from_env("KRT_LOG").unwrap_or_else(|_| EnvFilter::new(level)),
            )
            .with_writer(std::io::stderr)
            .with_ansi(crate::output::stderr_takes_colors())
            .init();
    }

    /// Runs the parsed command and returns the process exit code; an error is
    /// printed with its causes.
    pub async fn execute(self) -> ExitCode {
        let printer = Printer::new(self.global.output);
        let global = &self.global;
        let result = match self.command {
            Command::Preview(cmd) => cmd.execute(global, &printer).await,
            Command::Apply(cmd) => cmd.execute(global, &printer).await,
            Command::Destroy(cmd) => cmd.execute(global, &printer).await,
            Command::Read(cmd) => cmd.execute(global, &printer).await,
            Command::Drift(cmd) => cmd.execute(global, &printer).await,
            Command::Watch(cmd) => cmd.execute(global, &printer).await,
            Command::Import(cmd) => cmd.execute(global, &printer).await,
            Command::State(cmd) => cmd.execute(global, &printer).await,
            Command::Controller(cmd) => cmd.execute(global, &printer).await,
            Command::Component(cmd) => cmd.execute(global, &printer).await,
        };
        result.unwrap_or_else(|e| {
            printer.error(format!("{e:#}"));
            ExitCode::Failure
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn middleware_flags_keep_their_order_and_split_name_and_file() {
        let chain = [
            "--middleware",
            "outer.wasm",
            "--middleware",
            "inner.wasm",
            "--middleware-policy",
            "inner=grant.yaml",
        ];
        let before = [&["krt"][..], &chain, &["preview", "-f", "x.yaml"]].concat();
        let after = [&["krt", "preview", "-f", "x.yaml"][..], &chain].concat();
        for args in [before, after] {
            let cli = Cli::try_parse_from(&args).expect("parses");
            let links: Vec<String> = cli
                .global
                .middleware
                .iter()
                .map(|m| m.to_string())
                .collect();
            assert_eq!(links, ["'outer.wasm'", "'inner.wasm'"]);
            assert_eq!(
                cli.global.middleware_policies,
                [("inner".to_string(), PathBuf::from("grant.yaml"))]
            );
        }
        let oci = Cli::try_parse_from([
            "krt",
            "--component",
            "oci://localhost:5000/krt/guest:v1",
            "--middleware",
            "oci://localhost:5000/team/org-rules@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "state",
            "list",
        ])
        .expect("parses");
        assert!(
            matches!(&oci.global.component, Some(ComponentArg::Oci(r)) if r.tag() == Some("v1"))
        );
        assert_eq!(oci.global.middleware[0].name(), "org-rules");
        let err = Cli::try_parse_from(["krt", "--component", "oci://guest:v1", "state", "list"])
            .unwrap_err();
        assert!(
            err.to_string().contains("'guest' is not a registry host")
                || err.to_string().contains("no repository"),
            "{err}"
        );
        let err =
            Cli::try_parse_from(["krt", "--middleware-policy", "grant.yaml", "state", "list"])
                .unwrap_err();
        assert!(err.to_string().contains("expected NAME=FILE"), "{err}");
    }
}
