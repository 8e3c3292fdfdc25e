//! Counting allocator: live bytes and their peak (and the number of allocator calls that
//! returned memory), counted only while enabled so that it costs the timed renders one relaxed
//! load per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering::Relaxed};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
/// `alloc`, `alloc_zeroed` and `realloc` calls while counting.
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// A call that returned memory (`alloc`, `alloc_zeroed`, `realloc`), and its change in bytes.
fn count_call(delta: isize) {
    if COUNTING.load(Relaxed) {
        CALLS.fetch_add(1, Relaxed);
        let now = LIVE.fetch_add(delta, Relaxed) + delta;
        PEAK.fetch_max(now, Relaxed);
    }
}

fn count(delta: isize) {
    if COUNTING.load(Relaxed) {
        let now = LIVE.fetch_add(delta, Relaxed) + delta;
        PEAK.fetch_max(now, Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are
// updated on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count_call(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count_call(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count_call(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` with the counter on; returns its result, the peak of bytes
/// allocated and not yet freed during the call, and those still live after.
pub fn measure_memory<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    COUNTING.store(true, Relaxed);
    let out = f();
    COUNTING.store(false, Relaxed);
    let peak = PEAK.load(Relaxed).max(0) as usize;
    let live = LIVE.load(Relaxed).max(0) as usize;
    (out, peak, live)
}

/// Runs `f` with the counter on; returns its result and the number of allocator calls that
/// returned memory during it (`alloc`, `alloc_zeroed` and `realloc`; frees are not counted).
pub fn count_allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    CALLS.store(0, Relaxed);
    let (out, _, _) = measure_memory(f);
    (out, CALLS.load(Relaxed))
}

/// Allocator calls per run of a ready contender, `runs` runs counted; `None` for one that
/// failed or was skipped.
pub fn allocations(c: &mut super::Contender<'_>, runs: u64) -> Option<f64> {
    let super::State::Ready(run) = &mut c.state else {
        return None;
    };
    let (_, calls) = count_allocations(|| std::hint::black_box(run(runs)));
    Some(calls as f64 / runs as f64)
}
