//! The `krt` binary: parse, dispatch, exit.

use clap::Parser;
use host::cli::Cli;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("KRT_LOG")
                .unwrap_or_else(|_| EnvFilter::new("warn,kube_client::client::builder=off")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    std::process::ExitCode::from(cli.execute().await as u8)
}
