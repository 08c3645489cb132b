//! The component's global allocator: talc, not wasi-libc's dlmalloc (over a quarter of the
//! guest's instructions per object went to dlmalloc; docs/performance.md).
//!
//! An instance serves one call and is then discarded, so the heap grows fast and is never
//! handed back: it starts in a small arena of the module's own zero-initialized data (a call
//! that allocates little never grows the memory), then grows by at least as much as it already
//! has.

use core::alloc::Layout;
use core::ptr::NonNull;
use talc::base::Talc;
use talc::base::binning::Binning;
use talc::cell::TalcSyncCell;
use talc::wasm::WasmBinning;

/// The arena the heap starts in.
const ARENA_BYTES: usize = 256 * 1024;
/// A WebAssembly page.
const PAGE: usize = 64 * 1024;

/// The heap's first bytes: part of the module's zero-initialized data.
static mut ARENA: [u8; ARENA_BYTES] = [0; ARENA_BYTES];

/// Where the heap's memory comes from: the arena, then `memory.grow`.
#[derive(Debug)]
pub struct Heap {
    /// The end of the heap claimed so far, if any.
    end: Option<NonNull<u8>>,
    /// The bytes claimed so far.
    claimed: usize,
}

// SAFETY: `acquire` allocates nothing, and hands talc only memory no one else uses: the
// arena (no code touches `ARENA` but this) and pages `memory.grow` has just added.
unsafe impl talc::source::Source for Heap {
    fn acquire<B: Binning>(talc: &mut Talc<Self, B>, layout: Layout) -> Result<(), ()> {
        if talc.source.claimed == 0 {
            // SAFETY: the arena is claimed once and used by nothing else.
            let end = unsafe { talc.claim((&raw mut ARENA).cast::<u8>(), ARENA_BYTES) };
            talc.source.end = end;
            talc.source.claimed = ARENA_BYTES;
            if end.is_some() {
                return Ok(());
            }
        }
        // Enough for the allocation with talc's chunk overhead and alignment, and at least
        // as much as the heap already has.
        let needed = layout.size() + layout.align() + 4 * talc::base::CHUNK_UNIT;
        let pages = needed.max(talc.source.claimed).div_ceil(PAGE);
        let previous = core::arch::wasm32::memory_grow::<0>(pages);
        if previous == usize::MAX {
            return Err(());
        }
        let base = (previous * PAGE) as *mut u8;
        let bytes = pages * PAGE;
        talc.source.claimed += bytes;
        let new_end = base.wrapping_add(bytes);
        if let Some(old_end) = talc.source.end.take()
            && old_end.as_ptr() == base
        {
            // SAFETY: the grown pages follow the heap's end directly.
            talc.source.end = Some(unsafe { talc.extend(old_end, new_end) });
            return Ok(());
        }
        // SAFETY: the pages were just added by `memory.grow`; nothing else uses them.
        talc.source.end = unsafe { talc.claim(base, bytes) };
        Ok(())
    }
}

/// krt's component allocates from [`Heap`] with talc.
#[global_allocator]
static ALLOCATOR: TalcSyncCell<Heap, WasmBinning> = TalcSyncCell::new_wasm(Heap {
    end: None,
    claimed: 0,
});
