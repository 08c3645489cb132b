//! `krt-sim --listen 127.0.0.1:PORT`: serves the simulator until killed, printing its URL and the
//! path of a kubeconfig for it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;

/// A Kubernetes API server simulator for krt and its tests.
#[derive(Debug, Parser)]
#[command(name = "krt-sim", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Where to write the kubeconfig (default: a file in the temp directory).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Milliseconds between simulated controller steps.
    #[arg(long, default_value_t = 20)]
    controller_interval_ms: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let sim = krt_sim::Sim::start_with(krt_sim::SimConfig {
        listen: args.listen,
        controller_interval: Duration::from_millis(args.controller_interval_ms),
        ..krt_sim::SimConfig::default()
    })
    .await?;
    let path = args.kubeconfig.unwrap_or_else(|| {
        let port = sim.url().rsplit(':').next().unwrap_or("0").to_string();
        std::env::temp_dir().join(format!("krt-sim-{port}.kubeconfig"))
    });
    sim.write_kubeconfig(&path)
        .with_context(|| format!("failed to write kubeconfig '{}'", path.display()))?;
    println!("krt-sim listening on {}", sim.url());
    println!("kubeconfig: {}", path.display());
    tokio::signal::ctrl_c()
        .await
        .context("failed to wait for ctrl-c")?;
    sim.shutdown().await;
    Ok(())
}
