//! `krt`: stacks of Kubernetes resources applied through a sandboxed
//! WebAssembly runtime. This crate is only the command line: argument
//! parsing ([`args`]), sessions ([`session`]), printing ([`output`],
//! [`table`], [`plan`]) and live progress ([`progress`]); the stack engine is
//! krt-stack and the sandbox krt-host.

mod args;
mod commands;
mod output;
mod plan;
mod policy_args;
mod progress;
mod session;
mod table;

use clap::Parser;

/// mimalloc in place of the C library's allocator: krt allocates for every
/// object it reads, prints and sends, and glibc's malloc and free were the
/// largest native item of its instruction counts (`cargo bench -p krt-cli
/// --bench krt -- instructions`), which mimalloc cuts to a fraction.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = args::Cli::parse();
    cli.init_logging();
    std::process::ExitCode::from(cli.execute().await.code())
}
