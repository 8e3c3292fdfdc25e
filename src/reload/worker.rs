//! The watcher thread: gathers bursts of events into reloads, and re-arms
//! the watches when folders come and go.

use super::backend::{Backend, Watches, arm_error, is_benign, polling_instead, watch_error};
use super::options::{FALLBACK_POLL, WatchOptions};
use super::paths::{Entry, Targets};
use super::shared::{Shared, lock};
use notify_debouncer_full::notify::{self, EventKind};
use notify_debouncer_full::{DebounceEventResult, DebouncedEvent};
use promptpack_core::error::{Error, Result};
use promptpack_load::Config;
use std::collections::BTreeSet;
use std::sync::mpsc::{Receiver, Sender};
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

/// What the watcher thread needs to start a poller in place of a native
/// watcher that failed.
pub(super) struct Fallback {
    pub(super) options: WatchOptions,
    /// The watcher thread's own channel, for the poller's events.
    pub(super) tx: Sender<Msg>,
}

impl Fallback {
    /// A poller sending to the watcher thread.
    pub(super) fn poller(&self) -> Result<Backend> {
        Backend::new(
            &self.options.clone().poll(FALLBACK_POLL),
            sender(self.tx.clone()),
        )
    }
}

/// A watcher's event handler: every batch goes to the watcher thread.
pub(super) fn sender(tx: Sender<Msg>) -> impl FnMut(DebounceEventResult) + Send + 'static {
    move |result| {
        // Fails only when the watcher thread is gone, which means the
        // handle is being dropped: nothing left to tell.
        let _ = tx.send(Msg::Events(result));
    }
}

/// The watcher thread's state.
pub(super) struct Worker<'a> {
    pub(super) shared: &'a Shared,
    pub(super) backend: Backend,
    pub(super) watches: Watches,
    pub(super) fallback: Fallback,
    pub(super) follows_file: bool,
}

impl Worker<'_> {
    /// Turns batches of events into reloads until the handle is dropped.
    pub(super) fn run(mut self, rx: &Receiver<Msg>, timing: Timing) {
        'run: while let Ok(first) = rx.recv() {
            let mut events = Vec::new();
            let mut errors = Vec::new();
            let mut rearm = false;
            // The debouncer delays each event by the debounce time, but a
            // burst longer than that (a script saving 100 times, a checkout)
            // still arrives as a batch per tick. Gather batches until they
            // stop coming for `settle`, so that the burst gives one reload;
            // `hold` bounds the wait when changes never stop.
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
            self.batch(&events, &errors, rearm);
        }
        self.backend.stop();
    }

    /// One gathered burst: watcher errors, then at most one reload.
    fn batch(&mut self, events: &[DebouncedEvent], errors: &[notify::Error], rearm: bool) {
        let config = lock(&self.shared.config).clone();
        let mut look_again = false;
        let native = self.backend.is_native();
        for error in errors {
            if is_benign(error) {
                log::debug!("promptpack: watcher: {error}");
                look_again = true;
            } else if native && !self.backend.is_native() {
                // The rest of a failed native watcher's errors (one per
                // folder it could not watch): the poller covers them.
                log::debug!("promptpack: native watcher, replaced: {error}");
            } else {
                self.failed(watch_error("the file watcher failed", error), &config);
            }
        }

        let targets = Targets::new(&config, self.follows_file, &self.watches.links);
        let mut paths = BTreeSet::new();
        for event in events {
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
                self.arm(&config, &[]);
            }
            return;
        }

        // Watch again first, then read: a change after the new watches is
        // seen by them, a change before them by this read.
        self.arm(&config, events);
        let _ = self.shared.reload(paths.into_iter().collect());
        let reloaded = lock(&self.shared.config).clone();
        if reloaded.templates() != config.templates() || reloaded.snippets() != config.snippets() {
            // promptpack.toml moved the folders: watch the new ones, then
            // read again for what changed before they were watched.
            self.arm(&reloaded, &[]);
            let _ = self.shared.reload(Vec::new());
        }
    }

    /// Brings the watches in line with `config`.
    fn arm(&mut self, config: &Config, events: &[DebouncedEvent]) {
        let failures = self
            .watches
            .arm(&mut self.backend, config, self.follows_file, events);
        for (path, error) in failures {
            self.failed(arm_error(&path, &error), config);
        }
    }

    /// A watch failed. A native watcher then misses every edit in the
    /// folders it failed to watch, for good: a poller takes over, and reads
    /// the files again for what was missed meanwhile. A poller's failure is
    /// only told (there is nothing left to fall back on).
    fn failed(&mut self, error: Error, config: &Config) {
        if !self.backend.is_native() {
            self.shared.report_watch_error(error);
            return;
        }
        match self.fallback.poller() {
            Ok(poller) => {
                std::mem::replace(&mut self.backend, poller).stop();
                self.watches = Watches::default();
                self.shared.fall_back(polling_instead(error));
                self.arm(config, &[]);
                let _ = self.shared.reload(Vec::new());
            }
            Err(poll_error) => {
                self.shared.report_watch_error(error);
                self.shared.report_watch_error(poll_error);
            }
        }
    }
}
