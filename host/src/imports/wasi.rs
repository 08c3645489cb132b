//! The part of WASI p2 a guest gets: clocks, randomness, and what a std Rust
//! guest imports whether it uses it or not (`wasi:cli/*` stdio and
//! environment, `wasi:io/*`). The [`WasiCtx`](wasmtime_wasi::WasiCtx) behind
//! them grants nothing: no arguments or environment, stdin closed, stdout
//! discarded, stderr captured. Filesystem, sockets and HTTP are not linked.

use crate::state::HostState;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::p2::bindings::{cli, clocks, io, random};
use wasmtime_wasi::random::{WasiRandom, WasiRandomView};

/// The WASI interfaces linked (any `0.2.x` version), `package/interface`.
pub(crate) const ALLOWED: &[&str] = &[
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:clocks/wall-clock",
    "wasi:clocks/monotonic-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
];

/// The `HasData` marker of `wasi:io`, whose host side needs only the table.
struct WasiIo;

impl HasData for WasiIo {
    type Data<'a> = &'a mut ResourceTable;
}

/// Adds exactly the [`ALLOWED`] interfaces to `linker`.
pub(crate) fn add_to_linker(l: &mut Linker<HostState>) -> wasmtime::Result<()> {
    type S = HostState;
    io::error::add_to_linker::<S, WasiIo>(l, |s| s.ctx().table)?;
    io::poll::add_to_linker::<S, WasiIo>(l, |s| s.ctx().table)?;
    io::streams::add_to_linker::<S, WasiIo>(l, |s| s.ctx().table)?;
    clocks::wall_clock::add_to_linker::<S, WasiClocks>(l, S::clocks)?;
    clocks::monotonic_clock::add_to_linker::<S, WasiClocks>(l, S::clocks)?;
    random::random::add_to_linker::<S, WasiRandom>(l, S::random)?;
    random::insecure::add_to_linker::<S, WasiRandom>(l, S::random)?;
    random::insecure_seed::add_to_linker::<S, WasiRandom>(l, S::random)?;
    cli::environment::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::exit::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::stdin::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::stdout::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::stderr::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::terminal_input::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::terminal_output::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::terminal_stdin::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::terminal_stdout::add_to_linker::<S, WasiCli>(l, S::cli)?;
    cli::terminal_stderr::add_to_linker::<S, WasiCli>(l, S::cli)?;
    Ok(())
}
