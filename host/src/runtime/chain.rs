//! The chain one call runs through: middleware 1 → … → middleware n → the
//! runtime. Each link runs in its own fresh store with its own limits and
//! capability policy; a middleware's `runtime` import calls the next link
//! through [`NextLink`].

use super::failure::{self, too_large};
use super::stats::Counters;
use crate::bindings::{logic as l, next as n, observed as o, runtime as rt, types as t};
use crate::cluster::KubeCluster;
use crate::engine::{EPOCH_TICK, Loaded};
use crate::link::{BoxFuture, LinkSettings, NextLink};
use crate::state::{HostState, LimitHit};
use krt_guest::model::{Observation, Status};
use krt_stack::EventSink;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use wasmtime::{Store, UpdateDeadline};

/// One link of a call's chain: a component and its settings.
pub(crate) struct Link {
    pub(crate) loaded: Arc<Loaded>,
    pub(crate) settings: Arc<LinkSettings>,
}

/// The links of one call, outermost first, and what every store needs.
pub(crate) struct Chain {
    pub(crate) links: Vec<Link>,
    pub(crate) cluster: Arc<KubeCluster>,
    pub(crate) events: Arc<dyn EventSink>,
    pub(crate) counters: Arc<Counters>,
}

/// What a middleware's `runtime` import calls: link `at` of `chain`.
struct Next {
    chain: Arc<Chain>,
    at: usize,
    /// The observation of the apply the middleware runs in, when it is one:
    /// an apply carries it on, for the runtime link.
    observed: Option<Arc<Observed>>,
}

impl NextLink for Next {
    fn apply(
        &self,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: n::ApplyOptions,
    ) -> BoxFuture<'_, n::ApplyResponse> {
        let observed = self.observed.clone();
        Box::pin(
            self.chain
                .apply_next(self.at, prior, plan, options, observed),
        )
    }

    fn read(
        &self,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: n::ReadOptions,
    ) -> BoxFuture<'_, n::ReadResponse> {
        Box::pin(self.chain.read_next(self.at, prior, plan, options))
    }

    fn delete(
        &self,
        resource: t::Resource,
        options: n::DeleteOptions,
    ) -> BoxFuture<'_, n::DeleteResponse> {
        Box::pin(self.chain.delete_next(self.at, resource, options))
    }

    fn watch(
        &self,
        resource: t::Resource,
        options: n::WatchOptions,
    ) -> BoxFuture<'_, n::WatchResponse> {
        Box::pin(self.chain.watch_next(self.at, resource, options))
    }
}

/// An apply's observation on its way through a chain. The runtime link takes
/// it, around the middleware in front (which see `runtime.apply` alone, and
/// whose calls on it get no other treatment), and leaves what it saw, for the
/// caller.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    /// What the caller observed before; the first apply to reach the runtime takes it.
    given: Mutex<Option<Observation>>,
    /// What the runtime saw, on the last apply of the call to reach it.
    seen: Mutex<Option<Observation>>,
}

impl Observed {
    /// A call that starts from `given`.
    pub(crate) fn new(given: Option<Observation>) -> Arc<Self> {
        Arc::new(Observed {
            given: Mutex::new(given),
            seen: Mutex::default(),
        })
    }

    /// The caller's observation, once.
    pub(crate) fn take_given(&self) -> Option<Observation> {
        lock(&self.given).take()
    }

    /// Records what the runtime saw.
    pub(crate) fn set_seen(&self, seen: Option<Observation>) {
        *lock(&self.seen) = seen;
    }

    /// What the runtime saw last.
    pub(crate) fn take_seen(&self) -> Option<Observation> {
        lock(&self.seen).take()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Epoch ticks in `d`, at least one.
fn ticks(d: Duration) -> u64 {
    (d.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

impl Chain {
    /// The settings of link `at`.
    pub(crate) fn settings(&self, at: usize) -> &LinkSettings {
        &self.links[at].settings
    }

    /// The first link, outermost first, that exports `logic`.
    pub(crate) fn logic_link(&self) -> Option<usize> {
        self.links.iter().position(|l| l.loaded.logic.is_some())
    }

    /// Whether link `at` is the runtime and exports `observed-apply`.
    pub(crate) fn observes(&self, at: usize) -> bool {
        at + 1 == self.links.len() && self.links[at].loaded.observed.is_some()
    }

    /// A fresh store for link `at` with its limits applied; a middleware's
    /// store can call the link after it. The CPU budget is enforced by the
    /// epoch callback, which charges the guest only for time outside host
    /// calls (calls to the next link included) and yields to tokio at every
    /// tick.
    fn store(self: &Arc<Self>, at: usize, observed: Option<Arc<Observed>>) -> Store<HostState> {
        let link = &self.links[at];
        let next = (at + 1 < self.links.len()).then(|| {
            Arc::new(Next {
                chain: self.clone(),
                at: at + 1,
                observed,
            }) as Arc<dyn NextLink>
        });
        let state = HostState::new(
            self.cluster.clone(),
            self.events.clone(),
            link.settings.clone(),
            next,
        );
        let mut store = Store::new(link.loaded.pre.engine(), state);
        store.limiter(|s| &mut s.limiter);
        let budget = link.settings.limits.cpu_time;
        store.set_epoch_deadline(ticks(budget));
        store.epoch_deadline_callback(move |mut ctx| {
            let krt = &mut ctx.data_mut().krt;
            let used = krt.guest_time();
            if used >= budget {
                krt.hit.get_or_insert(LimitHit::Cpu(budget));
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Yield(ticks(budget - used)))
        });
        store
    }

    /// Runs `call` on link `at` in a fresh store, bounded by the link's
    /// wall-clock limit; traps, limit hits, deadlines and oversized responses
    /// come back as a [`Status`] naming the link and `interface.export`. A
    /// middleware's calls on the next link carry `observed`.
    async fn run<T>(
        self: &Arc<Self>,
        at: usize,
        observed: Option<Arc<Observed>>,
        export: &str,
        size: impl FnOnce(&T) -> usize,
        call: impl for<'a> FnOnce(
            &'a Loaded,
            &'a mut Store<HostState>,
        ) -> BoxFuture<'a, wasmtime::Result<T>>,
    ) -> Result<T, Status> {
        let link = &self.links[at];
        let limits = &link.settings.limits;
        let who = link.settings.role.to_string();
        let mut store = self.store(at, observed);
        let timeout = limits.call_timeout;
        let outcome = tokio::time::timeout(timeout, call(&link.loaded, &mut store)).await;
        self.counters.record(store.data().limiter.memory_in_use);
        match outcome {
            Ok(Ok(value)) => {
                let bytes = size(&value);
                if bytes > limits.max_response_bytes {
                    return Err(too_large(&who, export, bytes, limits.max_response_bytes));
                }
                Ok(value)
            }
            Ok(Err(err)) => Err(failure::classify(&who, export, &err, store.data())),
            Err(_) => Err(failure::deadline(&who, export, timeout, store.data())),
        }
    }

    /// Calls `<interface>.<export>` of a fresh instance of link `at` through
    /// `call`, within the apply `observed` stands for, if any. An interface
    /// `I` the link lacks (only `runtime` is required; see
    /// [`Chain::logic_link`]) fails the call.
    pub(crate) async fn call<I: Export, T>(
        self: &Arc<Self>,
        at: usize,
        observed: Option<Arc<Observed>>,
        export: &str,
        size: impl FnOnce(&T) -> usize,
        call: impl for<'a> FnOnce(
            &'a I::Guest,
            &'a mut Store<HostState>,
        ) -> BoxFuture<'a, wasmtime::Result<T>>
        + Send
        + 'static,
    ) -> Result<T, Status> {
        let export = format!("{}.{export}", I::INTERFACE);
        self.run(at, observed, &export, size, move |loaded, store| {
            Box::pin(async move {
                let indices = I::of(loaded).ok_or_else(|| {
                    wasmtime::Error::msg(format!("the component exports no `{}`", I::INTERFACE))
                })?;
                let instance = loaded.pre.instantiate_async(&mut *store).await?;
                let guest = indices.load(&mut *store, &instance)?;
                call(&guest, store).await
            })
        })
        .await
    }
}

/// An interface a link exports (`runtime`, and maybe others): where it is in a
/// loaded component, and its functions in an instance.
pub(crate) trait Export: Sized + Send + Sync + 'static {
    /// Its functions in one instance.
    type Guest: Send + Sync;
    /// Its name in messages, for example `logic`.
    const INTERFACE: &'static str;
    /// Where it is in `loaded`; `None` when the component lacks it.
    fn of(loaded: &Loaded) -> Option<&Self>;
    /// Its functions in `instance`.
    fn load(
        &self,
        store: &mut Store<HostState>,
        instance: &wasmtime::component::Instance,
    ) -> wasmtime::Result<Self::Guest>;
}

/// Implements [`Export`] for the generated `GuestIndices` of interface module
/// `$module`, named `$name` and found in a [`Loaded`] by `$of`.
macro_rules! export {
    ($module:ident, $name:literal, |$loaded:ident| $of:expr) => {
        impl Export for $module::GuestIndices {
            type Guest = $module::Guest;
            const INTERFACE: &'static str = $name;
            fn of($loaded: &Loaded) -> Option<&Self> {
                $of
            }
            fn load(
                &self,
                store: &mut Store<HostState>,
                instance: &wasmtime::component::Instance,
            ) -> wasmtime::Result<$module::Guest> {
                $module::GuestIndices::load(self, store, instance)
            }
        }
    };
}

export!(rt, "runtime", |loaded| Some(&loaded.runtime));
export!(l, "logic", |loaded| loaded.logic.as_ref());
export!(o, "observed-apply", |loaded| loaded.observed.as_ref());
