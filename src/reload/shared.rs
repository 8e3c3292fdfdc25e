//! State shared by a handle, its watcher thread and the dev registry: the
//! current set, its generation, the last error, the subscribers; and the one
//! reload that swaps a new set in.

use super::event::ReloadEvent;
use super::snapshot::stable_snapshot;
use crate::library::Library;
use arc_swap::ArcSwap;
use promptpack_core::diagnostics::{Severity, Style, render_diagnostic, render_error};
use promptpack_core::error::{Error, ErrorCode, Result};
use promptpack_load::Config;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// Where each reload takes its configuration from.
#[derive(Debug)]
pub(super) enum ConfigSource {
    /// `Config::load(root)`: promptpack.toml is read again on each reload.
    Root(PathBuf),
    /// A configuration fixed by the caller.
    Fixed(Config),
}

impl ConfigSource {
    pub(super) fn load_config(&self) -> Result<Config> {
        match self {
            ConfigSource::Root(root) => Config::load(root),
            ConfigSource::Fixed(config) => Ok(config.clone()),
        }
    }

    pub(super) fn root(&self) -> &Path {
        match self {
            ConfigSource::Root(root) => root,
            ConfigSource::Fixed(config) => config.root(),
        }
    }

    pub(super) fn follows_config_file(&self) -> bool {
        matches!(self, ConfigSource::Root(_))
    }
}

/// State shared by the handle, its watcher thread and the dev registry.
pub(super) struct Shared {
    /// Print failed reloads on stderr when no logger is installed.
    pub(super) stderr_without_logger: bool,
    pub(super) source: ConfigSource,
    pub(super) library: ArcSwap<Library>,
    /// Successful loads so far; 0 means `library` is a placeholder.
    pub(super) generation: AtomicU64,
    pub(super) last_error: Mutex<Option<Error>>,
    pub(super) config: Mutex<Config>,
    pub(super) subscribers: Mutex<Vec<Sender<ReloadEvent>>>,
    /// Serializes reloads, so that an older read never replaces a newer one.
    pub(super) reload_lock: Mutex<()>,
    /// Whether changes are found by polling (asked for, or fallen back to).
    pub(super) polling: AtomicBool,
    /// Why the native watcher was given up for polling: kept as the last
    /// error even after good reloads, since the watcher is not what was
    /// asked for.
    pub(super) degraded: Mutex<Option<Error>>,
}

impl Shared {
    pub(super) fn new(
        source: ConfigSource,
        config: Config,
        stderr_without_logger: bool,
        polling: bool,
    ) -> Shared {
        // Served by nobody: `generation` 0 says there is no good set yet.
        let placeholder = Library::from_resolved(Vec::new(), config.delimiters().clone());
        Shared {
            stderr_without_logger,
            source,
            library: ArcSwap::from_pointee(placeholder),
            generation: AtomicU64::new(0),
            last_error: Mutex::new(None),
            config: Mutex::new(config),
            subscribers: Mutex::new(Vec::new()),
            reload_lock: Mutex::new(()),
            polling: AtomicBool::new(polling),
            degraded: Mutex::new(None),
        }
    }

    /// Reads and checks every file, swaps the result in when it is good, and
    /// tells the log and the subscribers either way.
    pub(super) fn reload(&self, paths: Vec<PathBuf>) -> Result<()> {
        let _one_at_a_time = lock(&self.reload_lock);
        let started = Instant::now();
        let (config, loaded) = stable_snapshot(&self.source).load();
        if let Some(config) = config {
            *lock(&self.config) = config;
        }
        match loaded {
            Ok((library, warnings)) => {
                // What the build would warn of in the edited prompts: a
                // declared choice value no branch compares now renders its
                // `{{else}}`, which an edit in dev should hear about.
                for warning in warnings
                    .iter()
                    .filter(|w| w.code == ErrorCode::UnhandledChoice)
                {
                    let shown = render_diagnostic(warning, Severity::Warning, Style::Plain);
                    self.tell(log::Level::Warn, &format!("promptpack: {shown}"));
                }
                let prompts = library.ids().len();
                self.library.store(Arc::new(library));
                // After the store: whoever sees the new generation sees the
                // new library too.
                let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
                *lock(&self.last_error) = lock(&self.degraded).clone();
                let took = started.elapsed();
                log::info!(
                    "promptpack: reloaded {prompts} prompt(s) from {} in {} ms",
                    self.source.root().display(),
                    took.as_millis()
                );
                self.emit(ReloadEvent::Reloaded {
                    generation,
                    prompts,
                    paths,
                    took,
                });
                Ok(())
            }
            Err(error) => {
                *lock(&self.last_error) = Some(error.clone());
                // With the line and a caret under the problem, as rustc shows it.
                let shown = render_error(&error, Style::Plain);
                if self.generation.load(Ordering::Acquire) == 0 {
                    self.tell(
                        log::Level::Error,
                        &format!(
                            "promptpack: the prompts in {} do not load:\n{shown}",
                            self.source.root().display()
                        ),
                    );
                } else {
                    self.tell(
                        log::Level::Warn,
                        &format!(
                            "promptpack: an edit does not load; the last good prompts keep serving:\n{shown}"
                        ),
                    );
                }
                self.emit(ReloadEvent::Failed(error.clone()));
                Err(error)
            }
        }
    }

    /// The native watcher failed and a poller took over: `error` says so
    /// (the log, the subscribers, and `last_error` from now on).
    pub(super) fn fall_back(&self, error: Error) {
        self.polling.store(true, Ordering::Release);
        *lock(&self.degraded) = Some(error.clone());
        self.report_watch_error(error);
    }

    pub(super) fn report_watch_error(&self, error: Error) {
        self.tell(log::Level::Error, &format!("promptpack: {error}"));
        *lock(&self.last_error) = Some(error.clone());
        self.emit(ReloadEvent::Failed(error));
    }

    /// Logs `message`; in a dev build of an application that installed no
    /// logger (`log`'s level is still `Off`), prints it on stderr instead,
    /// so that a broken save is never silent while the last good version
    /// serves.
    fn tell(&self, level: log::Level, message: &str) {
        let no_logger = log::max_level() == log::LevelFilter::Off;
        if cfg!(debug_assertions) && no_logger && self.stderr_without_logger {
            eprintln!("{message}");
        } else {
            log::log!(level, "{message}");
        }
    }

    pub(super) fn emit(&self, event: ReloadEvent) {
        // A failed send means the receiver was dropped: unsubscribe it.
        lock(&self.subscribers).retain(|tx| tx.send(event.clone()).is_ok());
    }
}

/// Locks a mutex, going on after a panic elsewhere: every value guarded here
/// is replaced whole, so a poisoned one is still consistent.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
