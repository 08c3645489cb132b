//! The `krt` command line: global options, one module per subcommand, and the
//! session (cluster + runtime) they share. `host/src/bin/krt.rs` only parses
//! and dispatches.

mod apply;
mod delete;
mod output;
mod plan;
mod read;
mod session;

pub use apply::{ApplyCommand, PreviewCommand};
pub use delete::DeleteCommand;
pub use read::ReadCommand;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Exit codes of `krt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Everything succeeded.
    Success = 0,
    /// Bad input, or at least one resource failed.
    Failure = 1,
    /// Wrong command-line usage (printed by clap).
    Usage = 2,
}

/// krt: apply Kubernetes resources through a sandboxed WebAssembly runtime.
#[derive(Debug, Parser)]
#[command(name = "krt", version, about, long_about = None)]
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
    /// Path to a kubeconfig file (default: KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, env = "KRT_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// Namespace for resources that name none (default: the context's namespace).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
    /// Which cluster: a kubeconfig when one exists else the embedded simulator
    /// (auto), always the simulator (sim), or always a kubeconfig (kubeconfig).
    #[arg(long, global = true, value_enum, default_value_t = ClusterArg::Auto)]
    pub cluster: ClusterArg,
    /// Where the embedded cluster keeps its objects between runs.
    #[arg(long, global = true, default_value = ".krt/sim-state.json")]
    pub sim_state: PathBuf,
    /// A runtime component to use instead of the built-in guest.
    #[arg(long, global = true)]
    pub component: Option<PathBuf>,
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

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Preview, then apply the resources of a manifest file.
    Apply(ApplyCommand),
    /// Show what `apply` would do, with a diff per changed resource.
    Preview(PreviewCommand),
    /// Print the live objects of a manifest's resources.
    Read(ReadCommand),
    /// Delete the resources of a manifest file (in reverse order).
    Delete(DeleteCommand),
}

/// Input files shared by the commands.
#[derive(Debug, Clone, Args)]
pub struct FileArgs {
    /// Manifest file: multi-document Kubernetes YAML or JSON; `-` reads standard input.
    #[arg(short = 'f', long = "filename", required = true)]
    pub files: Vec<PathBuf>,
}

impl Cli {
    /// Runs the parsed command and returns the process exit code.
    pub async fn execute(self) -> ExitCode {
        match self.command {
            Command::Apply(cmd) => cmd.execute(&self.global).await,
            Command::Preview(cmd) => cmd.execute(&self.global).await,
            Command::Read(cmd) => cmd.execute(&self.global).await,
            Command::Delete(cmd) => cmd.execute(&self.global).await,
        }
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
}
