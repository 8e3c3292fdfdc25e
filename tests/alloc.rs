//! The generated renderer reserves the exact output size up front: one
//! allocation per rendered part, and no reallocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

promptpack::include_prompts!();

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter is a thread-local so parallel tests do not disturb each other.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_during<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

#[test]
fn typed_render_allocates_once_with_exact_capacity() {
    let state = "x".repeat(4096);
    for (has_tools, memory) in [(true, Some("likes tea")), (false, None), (true, Some(""))] {
        let vars = AgentSystemVars {
            agent_name: "Ada",
            user_name: "Grace",
            has_tools,
            tool_list: "- search\n- calculator",
            memory,
            state_context: &state,
        };
        let (count, system) = allocations_during(|| vars.render_system());
        let system = system.expect("within the render bound");
        assert_eq!(
            count, 1,
            "allocations for has_tools={has_tools} memory={memory:?}"
        );
        assert_eq!(system.capacity(), system.len(), "capacity must be exact");
    }
}

#[test]
fn the_counter_sees_allocations() {
    // Proves the test above can fail: a growing String allocates more than once.
    let (count, _) = allocations_during(|| {
        let mut s = String::new();
        for _ in 0..100 {
            s.push_str("grow ");
        }
        s
    });
    assert!(count > 1);
}
