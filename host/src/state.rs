//! Per-call store state: WASI with nothing granted, the resource table, the
//! resource limiter and krt's own context, split into ctx, view and table the
//! way wasmtime-wasi does.

use crate::cluster::KubeCluster;
use crate::link::{Limits, LinkSettings, NextLink};
use krt_stack::EventSink;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::{HasData, ResourceTable};
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Core instances, tables and memories one store may create (a component of
/// a std Rust guest needs a handful of each).
const MAX_STORE_INSTANCES: usize = 16;
const MAX_STORE_TABLES: usize = 16;
const MAX_STORE_MEMORIES: usize = 4;

/// Bytes of guest stderr kept for failure reports (panic messages).
const STDERR_CAPTURE: usize = 64 << 10;

/// A sandbox limit the guest ran into; recorded in the store so the failure
/// is reported by name whatever error wasmtime surfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitHit {
    /// Linear memory would grow past [`Limits::memory_bytes`].
    Memory(usize),
    /// A table would grow past [`Limits::table_elements`], or too many
    /// instances, tables or memories.
    Table(usize),
    /// Guest execution passed [`Limits::cpu_time`].
    Cpu(Duration),
    /// More host calls than [`Limits::max_host_calls`].
    HostCalls(u32),
    /// More log and progress bytes than [`Limits::max_output_bytes`].
    Output(usize),
    /// A host call (a sleep) would run past [`Limits::call_timeout`].
    Deadline(Duration),
}

impl fmt::Display for LimitHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitHit::Memory(n) => write!(f, "its memory limit of {} MiB", n >> 20),
            LimitHit::Table(n) => write!(f, "its table limit of {n} elements"),
            LimitHit::Cpu(d) => write!(f, "its CPU time limit of {d:?}"),
            LimitHit::HostCalls(n) => write!(f, "its limit of {n} host calls"),
            LimitHit::Output(n) => write!(f, "its limit of {n} bytes of logs and progress"),
            LimitHit::Deadline(d) => write!(f, "its wall-clock limit of {d:?}"),
        }
    }
}

impl std::error::Error for LimitHit {}

/// wasmtime's [`StoreLimits`] plus a record of which limit was hit (a memory
/// limit failure is a plain error, not a [`wasmtime::Trap`]).
pub(crate) struct Limiter {
    inner: StoreLimits,
    memory_bytes: usize,
    table_elements: usize,
    /// Bytes of linear memory the instance's memories hold now.
    pub(crate) memory_in_use: usize,
    pub(crate) hit: Option<LimitHit>,
}

impl Limiter {
    fn new(limits: &Limits) -> Self {
        Limiter {
            inner: StoreLimitsBuilder::new()
                .memory_size(limits.memory_bytes)
                .table_elements(limits.table_elements)
                .instances(MAX_STORE_INSTANCES)
                .tables(MAX_STORE_TABLES)
                .memories(MAX_STORE_MEMORIES)
                .trap_on_grow_failure(true)
                .build(),
            memory_bytes: limits.memory_bytes,
            table_elements: limits.table_elements,
            memory_in_use: 0,
            hit: None,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let answer = self.inner.memory_growing(current, desired, maximum);
        if matches!(answer, Ok(true)) {
            self.memory_in_use += desired.saturating_sub(current);
        } else {
            self.hit.get_or_insert(LimitHit::Memory(self.memory_bytes));
        }
        answer
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let answer = self.inner.table_growing(current, desired, maximum);
        if !matches!(answer, Ok(true)) {
            self.hit.get_or_insert(LimitHit::Table(self.table_elements));
        }
        answer
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

/// krt's part of the store: what the `kubernetes`, `host` and `runtime`
/// imports need.
pub struct KrtCtx {
    pub(crate) cluster: Arc<KubeCluster>,
    pub(crate) events: Arc<dyn EventSink>,
    /// The link this store runs: its place in the chain, limits and policy.
    pub(crate) link: Arc<LinkSettings>,
    /// The link after it, which a middleware's `runtime` import calls;
    /// `None` for the runtime at the end of the chain.
    pub(crate) next: Option<Arc<dyn NextLink>>,
    /// When the call started.
    pub(crate) started: Instant,
    /// The wall-clock deadline of the call.
    pub(crate) deadline: Instant,
    /// Time spent in krt's host calls, not charged to the guest's CPU budget.
    pub(crate) host_time: Duration,
    /// Host calls made (all imports).
    pub(crate) host_calls: u32,
    /// Cluster calls made (the policy's request budget).
    pub(crate) requests: u32,
    /// Bytes of logs and progress emitted.
    pub(crate) output_bytes: usize,
    /// A limit hit by a host call or the CPU budget.
    pub(crate) hit: Option<LimitHit>,
}

impl KrtCtx {
    /// Guest execution time so far: wall-clock time minus time in host calls.
    pub(crate) fn guest_time(&self) -> Duration {
        self.started.elapsed().saturating_sub(self.host_time)
    }

    /// Counts one host call; traps once the call budget is spent.
    pub(crate) fn enter(&mut self) -> wasmtime::Result<()> {
        self.host_calls += 1;
        let max = self.link.limits.max_host_calls;
        if self.host_calls > max {
            return Err(self.trip(LimitHit::HostCalls(max)));
        }
        Ok(())
    }

    /// Records a hit limit and returns the trap that stops the guest.
    pub(crate) fn trip(&mut self, hit: LimitHit) -> wasmtime::Error {
        self.hit.get_or_insert(hit);
        wasmtime::Error::new(hit)
    }
}

/// The data of one store.
pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: Limiter,
    pub(crate) krt: KrtCtx,
    stderr: MemoryOutputPipe,
}

impl HostState {
    /// A fresh state: WASI with no args, env, preopens or sockets, stdin
    /// closed, stdout discarded and stderr captured (64 KiB) so a panic message
    /// can be reported; the limits and the policy of one link's call, and the
    /// link after it.
    pub(crate) fn new(
        cluster: Arc<KubeCluster>,
        events: Arc<dyn EventSink>,
        link: Arc<LinkSettings>,
        next: Option<Arc<dyn NextLink>>,
    ) -> Self {
        let stderr = MemoryOutputPipe::new(STDERR_CAPTURE);
        let wasi = WasiCtx::builder()
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .stderr(stderr.clone())
            .build();
        let now = Instant::now();
        let limiter = Limiter::new(&link.limits);
        let deadline = now + link.limits.call_timeout;
        HostState {
            wasi,
            table: ResourceTable::new(),
            limiter,
            krt: KrtCtx {
                cluster,
                events,
                link,
                next,
                started: now,
                deadline,
                host_time: Duration::ZERO,
                host_calls: 0,
                requests: 0,
                output_bytes: 0,
                hit: None,
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

    /// The limit the guest ran into, if any.
    pub(crate) fn limit_hit(&self) -> Option<LimitHit> {
        self.krt.hit.or(self.limiter.hit)
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
