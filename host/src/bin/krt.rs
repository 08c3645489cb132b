//! The `krt` binary: parse, dispatch, exit.

use clap::Parser;
use host::cli::Cli;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    cli.init_logging();
    std::process::ExitCode::from(cli.execute().await.code())
}
