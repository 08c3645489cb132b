//! Per-call store state: WASI with nothing granted, the resource table, the
//! store limits and krt's own context, split into ctx, view and table the way
//! wasmtime-wasi does.

use crate::cluster::KubeCluster;
use crate::events::EventSink;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasData, ResourceTable};
use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Limits applied to every guest call.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Linear-memory cap per instance, in bytes.
    pub memory_bytes: usize,
    /// Wall-clock budget of one export call (guest execution plus host calls).
    pub call_timeout: std::time::Duration,
    /// Most cluster calls one export call may make.
    pub max_host_calls: u32,
    /// Most bytes of logs and progress text one export call may emit.
    pub max_output_bytes: usize,
}

impl Default for Limits {
    /// 64 MiB of memory, 5 minutes per call (watches wait), 10,000 host calls, 1 MiB of output.
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            call_timeout: std::time::Duration::from_secs(300),
            max_host_calls: 10_000,
            max_output_bytes: 1 << 20,
        }
    }
}

/// krt's part of the store: what the `kubernetes` and `host` imports need.
pub struct KrtCtx {
    pub(crate) cluster: Arc<KubeCluster>,
    pub(crate) events: Arc<dyn EventSink>,
    pub(crate) deadline: Instant,
    pub(crate) host_calls: u32,
    pub(crate) output_bytes: usize,
    pub(crate) limits: Limits,
}

/// The data of one store.
pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) store_limits: StoreLimits,
    pub(crate) krt: KrtCtx,
    stderr: MemoryOutputPipe,
}

impl HostState {
    /// A fresh state: WASI with no args, env, preopens or sockets; guest
    /// stderr captured (64 KiB) so a panic message can be reported.
    pub fn new(cluster: Arc<KubeCluster>, events: Arc<dyn EventSink>, limits: &Limits) -> Self {
        let stderr = MemoryOutputPipe::new(64 << 10);
        let wasi = WasiCtx::builder()
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .stderr(stderr.clone())
            .build();
        let store_limits = StoreLimitsBuilder::new()
            .memory_size(limits.memory_bytes)
            .instances(16)
            .tables(16)
            .memories(4)
            .trap_on_grow_failure(true)
            .build();
        HostState {
            wasi,
            table: ResourceTable::new(),
            store_limits,
            krt: KrtCtx {
                cluster,
                events,
                deadline: Instant::now() + limits.call_timeout,
                host_calls: 0,
                output_bytes: 0,
                limits: limits.clone(),
            },
            stderr,
        }
    }

    /// What the guest wrote to stderr (panic messages), lossily decoded.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents())
            .trim()
            .to_string()
    }

    /// The borrowed view the imports are implemented on.
    pub(crate) fn krt_view(&mut self) -> KrtView<'_> {
        KrtView {
            ctx: &mut self.krt,
            table: &mut self.table,
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// krt's context plus the resource table, borrowed from the store for one import call.
pub struct KrtView<'a> {
    pub(crate) ctx: &'a mut KrtCtx,
    pub(crate) table: &'a mut ResourceTable,
}

/// The `HasData` marker that gives imports a [`KrtView`].
pub struct Krt;

impl HasData for Krt {
    type Data<'a> = KrtView<'a>;
}
