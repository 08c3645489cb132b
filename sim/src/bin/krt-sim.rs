//! `krt-sim --listen 127.0.0.1:PORT`: serves the simulator until killed, printing its URL and the
//! path of a kubeconfig for its admin.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::{ArgAction, Parser};
use krt_sim::StaticToken;
use krt_sim::api::UserInfo;

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
    /// Serve HTTPS (the CA is in the kubeconfig), where clients may also authenticate with
    /// certificates the simulator's CA signed; `--tls=false` serves plain HTTP, over which
    /// kubectl sends no credentials (every request is then `system:anonymous`).
    #[arg(long, default_value_t = true, action = ArgAction::Set)]
    tls: bool,
    /// The admin's bearer token (default: a random one, written in the kubeconfig).
    #[arg(long)]
    token: Option<String>,
    /// Users known by bearer token, as kube-apiserver's file: CSV lines
    /// `token,user,uid,"group1,group2"`.
    #[arg(long, value_name = "FILE")]
    token_auth_file: Option<PathBuf>,
    /// Serve requests without credentials as `system:anonymous` (`--anonymous-auth=false`
    /// answers them 401).
    #[arg(long, default_value_t = true, action = ArgAction::Set)]
    anonymous_auth: bool,
    /// Simulate a worker node that Pods are scheduled to and run on, and kind's default
    /// StorageClass (`--worker=false` is a bare control plane: Pods stay Pending).
    #[arg(long, default_value_t = true, action = ArgAction::Set)]
    worker: bool,
}

/// The users of a token file in kube-apiserver's `--token-auth-file` format.
fn token_file(path: &Path) -> anyhow::Result<Vec<StaticToken>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .with_context(|| format!("cannot read the token file '{}'", path.display()))?;
    let mut users = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("'{}' line {}", path.display(), line + 1))?;
        let field = |i: usize| record.get(i).unwrap_or_default().trim();
        anyhow::ensure!(
            record.len() >= 3 && !field(0).is_empty() && !field(1).is_empty(),
            "'{}' line {}: expected token,user,uid[,\"group1,group2\"]",
            path.display(),
            line + 1
        );
        let groups: Vec<&str> = field(3)
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .collect();
        let mut user = UserInfo::new(field(1), &groups);
        user.uid = field(2).to_string();
        users.push(StaticToken {
            token: field(0).to_string(),
            user,
        });
    }
    Ok(users)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let users = match &args.token_auth_file {
        Some(path) => token_file(path)?,
        None => Vec::new(),
    };
    let sim = krt_sim::Sim::start_with(krt_sim::SimConfig {
        listen: args.listen,
        controller_interval: Duration::from_millis(args.controller_interval_ms),
        tls: args.tls,
        token: args.token,
        users,
        anonymous: args.anonymous_auth,
        worker: args.worker,
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
