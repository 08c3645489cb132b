//! What one link of a chain runs under, as its store holds it: its role in
//! the chain, its [`Limits`] and its capability policy, and the link after it
//! ([`NextLink`]), which a middleware's `runtime` import calls. The imports
//! need nothing else of the chain, so they can be called without one.

use crate::bindings::{next as n, types as t};
use crate::policy::Policy;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A boxed, sendable future: links call links, so the futures are recursive.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Limits applied to every guest call.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Linear-memory cap per instance, in bytes.
    pub memory_bytes: usize,
    /// Most elements of any one table (function references).
    pub table_elements: usize,
    /// Guest execution time of one export call; time spent in host calls
    /// (cluster requests, sleeps) does not count.
    pub cpu_time: Duration,
    /// Wall-clock budget of one export call (guest execution plus host calls).
    pub call_timeout: Duration,
    /// Most host calls (cluster, logs, progress, sleep) one export call may make.
    pub max_host_calls: u32,
    /// Most bytes of logs and progress text one export call may emit.
    pub max_output_bytes: usize,
    /// Most bytes (objects, messages) one export call may return.
    pub max_response_bytes: usize,
}

impl Default for Limits {
    /// 64 MiB of memory, 20,000 table elements, 10 s of guest CPU time,
    /// 5 minutes of wall-clock time per call (watches wait), 10,000 host calls,
    /// 1 MiB of logs and progress, 8 MiB of response.
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            table_elements: 20_000,
            cpu_time: Duration::from_secs(10),
            call_timeout: Duration::from_secs(300),
            max_host_calls: 10_000,
            max_output_bytes: 1 << 20,
            max_response_bytes: 8 << 20,
        }
    }
}

/// Where a link sits in the chain; how messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    /// The runtime component at the end of the chain.
    Runtime,
    /// A middleware in front of it.
    Middleware {
        /// Its name (by default its file's stem), as `--middleware-policy` names it.
        name: String,
        /// Its place, 1 for the outermost.
        position: usize,
        /// How many links the chain has, the runtime included.
        links: usize,
    },
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::Runtime => f.write_str("the runtime component"),
            Role::Middleware {
                name,
                position,
                links,
            } => write!(f, "middleware `{name}` (link {position} of {links})"),
        }
    }
}

/// What one link runs under.
#[derive(Debug, Clone)]
pub(crate) struct LinkSettings {
    /// Its place in the chain.
    pub(crate) role: Role,
    /// Its limits.
    pub(crate) limits: Limits,
    /// Its cluster access.
    pub(crate) policy: Arc<Policy>,
}

/// The link after a middleware's: what its `runtime` import calls, in the
/// import's own WIT values, so that what a middleware hands on reaches the
/// next link as it is (no model values, no JSON printed again). Each answer
/// is already checked: a middleware, or the runtime at the end, each in its
/// own store.
pub(crate) trait NextLink: Send + Sync {
    /// `runtime.apply` of the next link.
    fn apply(
        &self,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: n::ApplyOptions,
    ) -> BoxFuture<'_, n::ApplyResponse>;

    /// `runtime.read` of the next link.
    fn read(
        &self,
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: n::ReadOptions,
    ) -> BoxFuture<'_, n::ReadResponse>;

    /// `runtime.delete` of the next link.
    fn delete(
        &self,
        resource: t::Resource,
        options: n::DeleteOptions,
    ) -> BoxFuture<'_, n::DeleteResponse>;

    /// `runtime.watch` of the next link.
    fn watch(
        &self,
        resource: t::Resource,
        options: n::WatchOptions,
    ) -> BoxFuture<'_, n::WatchResponse>;
}
