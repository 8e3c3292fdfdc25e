//! The watcher thread: gathers bursts of events into reloads, and re-arms
//! the watches when folders come and go.

use super::backend::{Backend, Watches, is_benign, watch_error};
use super::options::WatchOptions;
use super::paths::{Entry, Targets};
use super::shared::{Shared, lock};
use notify_debouncer_full::notify::EventKind;
use notify_debouncer_full::{DebounceEventResult, DebouncedEvent};
use promptpack_load::Config;
use std::collections::BTreeSet;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// How the watcher thread gathers a burst of changes into one reload.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    /// Quiet time that ends a burst.
    pub(super) settle: Duration,
    /// Longest time a reload waits for a burst to end.
    pub(super) hold: Duration,
}

impl Timing {
    pub(super) fn new(options: &WatchOptions) -> Timing {
        let debounce = options.debounce.max(Duration::from_millis(1));
        // Half the debounce time is two ticks of the debouncer, which sends a
        // batch every tick while a burst goes on.
        Timing {
            settle: debounce / 2,
            hold: debounce * 10,
        }
    }
}

/// A message to the watcher thread.
pub(super) enum Msg {
    /// A debounced batch of file system events, or watcher errors.
    Events(DebounceEventResult),
    /// Check the watched folders against the configuration.
    Rearm,
    /// The handle was dropped.
    Stop,
}

/// The watcher thread: turns batches of events into reloads until the handle
/// is dropped.
pub(super) fn run_worker(
    shared: &Shared,
    mut backend: Backend,
    mut watches: Watches,
    rx: &Receiver<Msg>,
    timing: Timing,
) {
    let follows_file = shared.source.follows_config_file();
    'run: while let Ok(first) = rx.recv() {
        let mut events = Vec::new();
        let mut errors = Vec::new();
        let mut rearm = false;
        // The debouncer delays each event by the debounce time, but a burst
        // longer than that (a script saving 100 times, a checkout) still
        // arrives as a batch per tick. Gather batches until they stop coming
        // for `settle`, so that the burst gives one reload; `hold` bounds the
        // wait when changes never stop.
        let hold_until = Instant::now() + timing.hold;
        let mut next = Some(first);
        while let Some(msg) = next {
            match msg {
                Msg::Stop => break 'run,
                Msg::Rearm => rearm = true,
                Msg::Events(Ok(batch)) => events.extend(batch),
                Msg::Events(Err(batch)) => errors.extend(batch),
            }
            let wait = if events.is_empty() && errors.is_empty() {
                Duration::ZERO
            } else {
                timing
                    .settle
                    .min(hold_until.saturating_duration_since(Instant::now()))
            };
            next = if wait.is_zero() {
                rx.try_recv().ok()
            } else {
                rx.recv_timeout(wait).ok()
            };
        }

        let mut look_again = false;
        for error in &errors {
            if is_benign(error) {
                log::debug!("promptpack: watcher: {error}");
                look_again = true;
            } else {
                shared.report_watch_error(watch_error("the file watcher failed", error));
            }
        }

        let config = lock(&shared.config).clone();
        let targets = Targets::new(&config, follows_file, &watches.links);
        let mut paths = BTreeSet::new();
        for event in &events {
            if matches!(event.kind, EventKind::Access(_)) {
                continue;
            }
            if event.need_rescan() {
                // The kernel dropped events: anything may have changed.
                look_again = true;
            }
            paths.extend(
                event
                    .paths
                    .iter()
                    .filter(|p| targets.is_relevant(p, Entry::of(&event.kind)))
                    .cloned(),
            );
        }
        if paths.is_empty() && !look_again {
            if rearm {
                arm(
                    shared,
                    &mut backend,
                    &mut watches,
                    &config,
                    follows_file,
                    &[],
                );
            }
            continue;
        }

        // Watch again first, then read: a change after the new watches is
        // seen by them, a change before them by this read.
        arm(
            shared,
            &mut backend,
            &mut watches,
            &config,
            follows_file,
            &events,
        );
        let _ = shared.reload(paths.into_iter().collect());
        let reloaded = lock(&shared.config).clone();
        if reloaded.templates() != config.templates() || reloaded.snippets() != config.snippets() {
            // promptpack.toml moved the folders: watch the new ones, then
            // read again for what changed before they were watched.
            arm(
                shared,
                &mut backend,
                &mut watches,
                &reloaded,
                follows_file,
                &[],
            );
            let _ = shared.reload(Vec::new());
        }
    }
    backend.stop();
}

pub(super) fn arm(
    shared: &Shared,
    backend: &mut Backend,
    watches: &mut Watches,
    config: &Config,
    follows_file: bool,
    events: &[DebouncedEvent],
) {
    for error in watches.arm(backend, config, follows_file, events) {
        shared.report_watch_error(error);
    }
}
