//! Counters a [`ComponentRuntime`](super::ComponentRuntime) keeps across calls,
//! for embedders' metrics and for the benchmarks.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What the calls of a runtime (and its clones) have used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimeStats {
    /// Instances created, one per call.
    pub instances: u64,
    /// The most linear memory any one instance held, in bytes.
    pub peak_instance_memory_bytes: usize,
}

/// The shared, lock-free counters behind [`RuntimeStats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    instances: AtomicU64,
    peak_memory: AtomicUsize,
}

impl Counters {
    /// Records one finished instance that held `memory` bytes at most.
    pub(crate) fn record(&self, memory: usize) {
        self.instances.fetch_add(1, Ordering::Relaxed);
        self.peak_memory.fetch_max(memory, Ordering::Relaxed);
    }

    /// A snapshot.
    pub(crate) fn snapshot(&self) -> RuntimeStats {
        RuntimeStats {
            instances: self.instances.load(Ordering::Relaxed),
            peak_instance_memory_bytes: self.peak_memory.load(Ordering::Relaxed),
        }
    }
}
