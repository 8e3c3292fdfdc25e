//! Quiet panics: a case's failed assertion is kept for the summary, not printed.

#[allow(unused_imports)]
use super::prelude::*;

pub(super) type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

thread_local! {
    /// Whether this thread is running a case, whose panic is kept for the
    /// summary rather than printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// How many cases run quietly now, on any thread, and the hook that was in
/// place before the first of them.
pub(super) static QUIET_HOOK: Mutex<(usize, Option<Arc<PanicHook>>)> = Mutex::new((0, None));

/// While it lives, panics on this thread print nothing; panics elsewhere go
/// to the hook that was in place. The hook is put back when the last one
/// ends.
pub(super) struct QuietPanics;

impl QuietPanics {
    pub(super) fn enter() -> QuietPanics {
        let mut state = QUIET_HOOK.lock().unwrap_or_else(PoisonError::into_inner);
        if state.0 == 0 {
            let previous: Arc<PanicHook> = Arc::new(std::panic::take_hook());
            let forward = Arc::clone(&previous);
            std::panic::set_hook(Box::new(move |info| {
                if !QUIET.with(Cell::get) {
                    forward(info);
                }
            }));
            state.1 = Some(previous);
        }
        state.0 += 1;
        QUIET.with(|quiet| quiet.set(true));
        QuietPanics
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        QUIET.with(|quiet| quiet.set(false));
        let mut state = QUIET_HOOK.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 = state.0.saturating_sub(1);
        // The hook cannot be changed while this thread panics; the quiet one
        // then stays, forwarding every panic, and is replaced next time.
        if state.0 > 0 || std::thread::panicking() {
            return;
        }
        drop(std::panic::take_hook());
        if let Some(previous) = state.1.take() {
            match Arc::try_unwrap(previous) {
                Ok(hook) => std::panic::set_hook(hook),
                Err(shared) => std::panic::set_hook(Box::new(move |info| shared(info))),
            }
        }
    }
}
