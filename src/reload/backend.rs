//! The debounced notify watcher (native events or polling) and the folders
//! it watches.

use super::options::{FALLBACK_POLL, MIN_POLL, WatchOptions};
use super::paths::{Links, both_forms};
use notify_debouncer_full::notify::{
    self, EventKind, PollWatcher, RecommendedWatcher, RecursiveMode, event::ModifyKind,
};
use notify_debouncer_full::{
    DebounceEventResult, DebouncedEvent, Debouncer, NoCache, RecommendedCache, new_debouncer_opt,
};
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Result};
use promptpack_load::{CONFIG_FILE, Config};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The debounced watcher: native events, or a poller.
pub(super) enum Backend {
    Native(Debouncer<RecommendedWatcher, RecommendedCache>),
    Poll(Debouncer<PollWatcher, NoCache>),
}

impl Backend {
    pub(super) fn new(
        options: &WatchOptions,
        handler: impl FnMut(DebounceEventResult) + Send + 'static,
    ) -> Result<Backend> {
        // The debouncer checks its queue every `tick`; a zero debounce would
        // make that a busy loop.
        let debounce = options.debounce.max(Duration::from_millis(1));
        let tick = Some((debounce / 4).max(Duration::from_millis(1)));
        let setup_error = |e: notify::Error| watch_error("cannot start the file watcher", &e);
        match options.poll {
            None => new_debouncer_opt(
                debounce,
                tick,
                handler,
                RecommendedCache::new(),
                notify::Config::default(),
            )
            .map(Backend::Native)
            .map_err(setup_error),
            Some(interval) => {
                // Comparing contents, not only modification times: two saves
                // within the file system's timestamp granularity still differ.
                let config = notify::Config::default()
                    .with_poll_interval(interval.max(MIN_POLL))
                    .with_compare_contents(true);
                new_debouncer_opt(debounce, tick, handler, NoCache, config)
                    .map(Backend::Poll)
                    .map_err(setup_error)
            }
        }
    }

    pub(super) fn watch(&mut self, path: &Path, recursive: bool) -> notify::Result<()> {
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        match self {
            Backend::Native(d) => d.watch(path, mode),
            Backend::Poll(d) => d.watch(path, mode),
        }
    }

    pub(super) fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        match self {
            Backend::Native(d) => d.unwatch(path),
            Backend::Poll(d) => d.unwatch(path),
        }
    }

    /// Whether this watcher listens to native events (and so can fall back
    /// to polling).
    pub(super) fn is_native(&self) -> bool {
        matches!(self, Backend::Native(_))
    }

    /// Stops the debouncer and waits for its thread.
    pub(super) fn stop(self) {
        match self {
            Backend::Native(d) => d.stop(),
            Backend::Poll(d) => d.stop(),
        }
    }
}

/// A failed watch of `path` as promptpack's error.
pub(super) fn arm_error(path: &Path, e: &notify::Error) -> Error {
    watch_error(&format!("cannot watch {}", path.display()), e)
}

/// A watcher error as promptpack's error, with a hint on what to do.
pub(super) fn watch_error(context: &str, e: &notify::Error) -> Error {
    let message = format!("{context}: {e}");
    let help = match e.kind {
        notify::ErrorKind::MaxFilesWatch => {
            "the limit of inotify watches is reached: raise it (`sysctl fs.inotify.max_user_watches=524288`) \
             or watch by polling (`WatchedLibrary::new` with `WatchOptions::poll`)"
        }
        _ => "watch by polling instead (`WatchedLibrary::new` with `WatchOptions::poll`)",
    };
    Error::from(Diagnostic::new(ErrorCode::Watch, message).with_help(help))
}

/// Whether `e` says the system allows no more native watches (inotify's
/// `max_user_watches`), which polling does not need.
pub(super) fn is_limit(e: &notify::Error) -> bool {
    matches!(e.kind, notify::ErrorKind::MaxFilesWatch)
}

/// `error`, saying that the watcher polls from now on.
pub(super) fn polling_instead(error: Error) -> Error {
    let diagnostics = error
        .into_diagnostics()
        .into_iter()
        .map(|mut d| {
            d.message = format!(
                "{}; watching by polling every {} ms instead",
                d.message,
                FALLBACK_POLL.as_millis()
            );
            d
        })
        .collect();
    Error::from_diagnostics(diagnostics)
        .unwrap_or_else(|| Error::new(ErrorCode::Watch, "the file watcher failed"))
}

/// Errors a watcher meets in normal operation: a file or folder vanished
/// between being listed and being looked at (atomic saves, deleted folders).
/// They only mean "look again".
pub(super) fn is_benign(e: &notify::Error) -> bool {
    match &e.kind {
        notify::ErrorKind::PathNotFound | notify::ErrorKind::WatchNotFound => true,
        notify::ErrorKind::Io(io) => io.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The folders being watched, and how.
#[derive(Debug, Default)]
pub(super) struct Watches {
    /// Path → recursive.
    pub(super) armed: BTreeMap<PathBuf, bool>,
    /// The links under the prompt folders, as found by the last arming.
    pub(super) links: Links,
}

impl Watches {
    /// What should be watched for `config`: the templates and snippets
    /// folders recursively, and their parents (and the root and the folder a
    /// linked promptpack.toml leads to) non-recursively, so that a folder deleted and created
    /// again is noticed. A folder that does not exist is stood in for by its
    /// nearest existing ancestor, so that its creation is seen. The folder
    /// holding each link on the way to them, non-recursively, so that the
    /// link pointed elsewhere is seen. The folder of each hop of a link,
    /// non-recursively, so that an edit of a link's target is seen.
    pub(super) fn wanted(
        config: &Config,
        follows_file: bool,
        links: &Links,
    ) -> BTreeMap<PathBuf, bool> {
        let mut wanted = BTreeMap::new();
        let mut want = |path: &Path, recursive: bool| {
            let Some(existing) = path.ancestors().find(|p| p.is_dir()) else {
                return;
            };
            let recursive = recursive && existing == path;
            let entry = wanted.entry(existing.to_path_buf()).or_insert(false);
            *entry |= recursive;
        };
        if follows_file {
            want(config.root(), false);
            // A linked promptpack.toml is edited where it leads.
            for form in both_forms(&config.root().join(CONFIG_FILE)) {
                if let Some(folder) = form.parent() {
                    want(folder, false);
                }
            }
        }
        for dir in [config.templates(), config.snippets()] {
            if let Some(parent) = dir.parent() {
                want(parent, false);
            }
            want(dir, true);
            // A link on the way to a folder (a root `current` pointed at
            // the next release) is swapped in its own folder, which no
            // other watch sees: watch that folder too.
            for link in dir.ancestors().skip(1) {
                let is_link = std::fs::symlink_metadata(link).is_ok_and(|m| m.is_symlink());
                if let (true, Some(parent)) = (is_link, link.parent()) {
                    want(parent, false);
                }
            }
        }
        for hop in &links.hops {
            if let Some(folder) = hop.parent() {
                want(folder, false);
            }
        }
        wanted
    }

    /// Brings the watches in line with `config`, watching again every folder
    /// that `events` say was created, removed or renamed (its old watch, if
    /// any, died with the old folder). Returns the watches that failed, with
    /// their folders.
    pub(super) fn arm(
        &mut self,
        backend: &mut Backend,
        config: &Config,
        follows_file: bool,
        events: &[DebouncedEvent],
    ) -> Vec<(PathBuf, notify::Error)> {
        self.links = Links::find(config);
        let wanted = Watches::wanted(config, follows_file, &self.links);
        let replaced = |armed: &Path| {
            events.iter().any(|event| {
                let structural = matches!(
                    event.kind,
                    EventKind::Create(_)
                        | EventKind::Remove(_)
                        | EventKind::Modify(ModifyKind::Name(_))
                );
                (structural && event.paths.iter().any(|p| armed.starts_with(p)))
                    || event.need_rescan()
            })
        };
        let stale: Vec<PathBuf> = self
            .armed
            .iter()
            .filter(|&(path, recursive)| wanted.get(path) != Some(recursive) || replaced(path))
            .map(|(path, _)| path.clone())
            .collect();
        for path in stale {
            // Fails when the folder is gone, which already removed the watch.
            let _ = backend.unwatch(&path);
            self.armed.remove(&path);
        }
        let mut errors = Vec::new();
        for (path, recursive) in wanted {
            if self.armed.contains_key(&path) {
                continue;
            }
            match backend.watch(&path, recursive) {
                Ok(()) => {
                    self.armed.insert(path, recursive);
                }
                // Gone between the check and the watch: the event of its
                // removal brings another try.
                Err(e) if is_benign(&e) => {}
                Err(e) => errors.push((path, e)),
            }
        }
        errors
    }
}
