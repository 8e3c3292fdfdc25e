//! What a watcher tells its subscribers: [`ReloadEvent`](crate::ReloadEvent).

use promptpack_core::error::Error;
use std::path::PathBuf;
use std::time::Duration;

/// What happened to a [`WatchedLibrary`](crate::WatchedLibrary), as sent to [`WatchedLibrary::subscribe`](crate::WatchedLibrary::subscribe).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReloadEvent {
    /// The prompts were reloaded and the new set is serving.
    #[non_exhaustive]
    Reloaded {
        /// The new [`WatchedLibrary::generation`](crate::WatchedLibrary::generation).
        generation: u64,
        /// How many prompts the new set has.
        prompts: usize,
        /// The changed files that caused the reload, when a watcher saw
        /// them; empty for [`WatchedLibrary::reload`](crate::WatchedLibrary::reload).
        paths: Vec<PathBuf>,
        /// How long reading and checking the files took.
        took: Duration,
    },
    /// A reload failed, or the watcher did (code [`ErrorCode::Watch`](crate::ErrorCode::Watch)). The
    /// last good prompts keep serving. Template errors carry their file,
    /// line and column.
    Failed(Error),
}
