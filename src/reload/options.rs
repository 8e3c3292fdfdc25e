//! How a watcher watches: [`WatchOptions`](crate::WatchOptions).

use std::time::Duration;

/// How long a change must settle before it is reloaded, by default.
const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(50);

/// Shortest polling interval honoured: below it a poller would spin.
pub(super) const MIN_POLL: Duration = Duration::from_millis(10);

/// How often a watcher polls once the native watcher failed to watch (the
/// inotify limit reached): slow enough to cost little on a large tree, fast
/// enough for an edit to show while one looks.
pub(super) const FALLBACK_POLL: Duration = Duration::from_millis(500);

/// How a [`WatchedLibrary`](crate::WatchedLibrary) watches: debounce time, native events or polling.
///
/// ```
/// use promptpack::WatchOptions;
/// use std::time::Duration;
/// let options = WatchOptions::default().poll(Duration::from_millis(200));
/// assert_eq!(options.poll, Some(Duration::from_millis(200)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatchOptions {
    /// How long changes must settle before a reload (default 50 ms). Saves
    /// closer together than this form one burst, which gives one reload; a
    /// stream of changes that never settles still reloads every ten debounce
    /// periods.
    pub debounce: Duration,
    /// `Some(interval)` to find changes by scanning the folders every
    /// `interval` (`notify::PollWatcher`) instead of by file system events.
    /// Slower, but works where events do not: network and container file
    /// systems, or when the inotify watch limit is reached. At least 10 ms.
    /// With `None`, a watcher whose native events fail to watch a folder
    /// (the inotify limit reached) polls every 500 ms from then on, and says
    /// so through [`WatchedLibrary::last_error`](crate::WatchedLibrary::last_error).
    pub poll: Option<Duration>,
    /// In a dev build of an application with no logger installed, print a
    /// reload that fails on stderr (default `true`), so that a broken save
    /// is never silent. Tools that show the errors themselves, such as
    /// `promptpack watch`, turn it off.
    pub stderr_without_logger: bool,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            debounce: DEFAULT_DEBOUNCE,
            poll: None,
            stderr_without_logger: true,
        }
    }
}

impl WatchOptions {
    /// The defaults: native file system events, 50 ms debounce.
    pub fn new() -> WatchOptions {
        WatchOptions::default()
    }

    /// Uses another debounce time.
    pub fn debounce(mut self, debounce: Duration) -> WatchOptions {
        self.debounce = debounce;
        self
    }

    /// Whether a failed reload is printed on stderr when no logger is
    /// installed (see [`WatchOptions::stderr_without_logger`]).
    pub fn stderr_without_logger(mut self, on: bool) -> WatchOptions {
        self.stderr_without_logger = on;
        self
    }

    /// Polls every `interval` instead of listening to file system events.
    pub fn poll(mut self, interval: Duration) -> WatchOptions {
        self.poll = Some(interval);
        self
    }
}
