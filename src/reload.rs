//! Hot reload: a [`Library`] kept current by a file watcher.
//!
//! A [`WatchedLibrary`] watches the templates folder, the snippets folder and
//! `promptpack.toml`, reloads the whole set after a burst of changes has
//! settled (notify-debouncer-full), and swaps the new [`Library`] in
//! atomically (`arc_swap`), so a render sees either the old set or the new
//! one, never a mix. An edit that does not load keeps the last good set
//! serving and is reported, with its location, through `log` and
//! [`WatchedLibrary::subscribe`].
//!
//! The same machinery backs the dev path of generated code
//! ([`dev_render`]): one watcher per prompt folder for the whole process.

use crate::__private::DevSource;
use crate::config::{CONFIG_FILE, Config};
use crate::diagnostics::{Style, render_error};
use crate::error::{Diagnostic, Error, ErrorCode, Result};
use crate::library::{Library, Prompt};
use crate::render::MissingVars;
use crate::resolve::{SnippetSource, TemplateSource};
use crate::source::read_sources;
use crate::vars::Vars;
use arc_swap::ArcSwap;
use notify_debouncer_full::notify::{
    self, EventKind, PollWatcher, RecommendedWatcher, RecursiveMode, event::ModifyKind,
};
use notify_debouncer_full::{
    DebounceEventResult, DebouncedEvent, Debouncer, NoCache, RecommendedCache, new_debouncer_opt,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The environment variable that turns the dev hot reload of generated code
/// off: set to anything but empty or `0`, `build_prompt` renders the prompts
/// embedded at build time even in dev builds.
pub const NO_RELOAD_ENV: &str = "PROMPTPACK_NO_RELOAD";

/// How long a change must settle before it is reloaded, by default.
const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(50);

/// Shortest polling interval honoured: below it a poller would spin.
const MIN_POLL: Duration = Duration::from_millis(10);

/// How often the dev path polls when the native watcher cannot start.
const DEV_POLL_FALLBACK: Duration = Duration::from_millis(500);

/// Reads of the prompt folder compared before giving up on a stable one.
const MAX_READS: usize = 8;

/// How a [`WatchedLibrary`] watches: debounce time, native events or polling.
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
    pub poll: Option<Duration>,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            debounce: DEFAULT_DEBOUNCE,
            poll: None,
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

    /// Polls every `interval` instead of listening to file system events.
    pub fn poll(mut self, interval: Duration) -> WatchOptions {
        self.poll = Some(interval);
        self
    }
}

/// What happened to a [`WatchedLibrary`], as sent to [`WatchedLibrary::subscribe`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReloadEvent {
    /// The prompts were reloaded and the new set is serving.
    #[non_exhaustive]
    Reloaded {
        /// The new [`WatchedLibrary::generation`].
        generation: u64,
        /// How many prompts the new set has.
        prompts: usize,
        /// The changed files that caused the reload, when a watcher saw
        /// them; empty for [`WatchedLibrary::reload`].
        paths: Vec<PathBuf>,
        /// How long reading and checking the files took.
        took: Duration,
    },
    /// A reload failed, or the watcher did (code [`ErrorCode::Watch`]). The
    /// last good prompts keep serving. Template errors carry their file,
    /// line and column.
    Failed(Error),
}

/// A [`Library`] kept current by a file watcher.
///
/// Made by [`Library::watch`], [`Library::watch_config`],
/// [`Library::watch_polling`] or [`WatchedLibrary::new`]. Each successful
/// reload swaps a whole new [`Library`] in atomically, so a render sees one
/// complete set of files; an edit that fails to load leaves the last good set
/// serving. Dropping the handle stops the watcher and its thread.
///
/// ```no_run
/// use promptpack::{Library, ReloadEvent};
/// let prompts = Library::watch("prompts")?;
/// let events = prompts.subscribe();
/// std::thread::spawn(move || {
///     for event in events {
///         if let ReloadEvent::Failed(error) = event {
///             eprintln!("{error}");
///         }
///     }
/// });
/// let prompt = prompts.build_prompt("greet", &serde_json::json!({"name": "Ada"}))?;
/// # Ok::<(), promptpack::Error>(())
/// ```
pub struct WatchedLibrary {
    shared: Arc<Shared>,
    /// Wakes the watcher thread to stop it or to re-check its watches.
    worker_tx: Sender<Msg>,
    worker: Option<JoinHandle<()>>,
    polling: bool,
}

impl Library {
    /// Loads the prompts under `root` (as [`Library::load`] does) and keeps
    /// them current: the returned handle reloads when a template, a snippet
    /// or `promptpack.toml` changes. Fails when the first load fails, or with
    /// [`ErrorCode::Watch`] when the watcher cannot start (then try
    /// [`Library::watch_polling`]).
    pub fn watch(root: impl Into<PathBuf>) -> Result<WatchedLibrary> {
        WatchedLibrary::new(root, WatchOptions::default())
    }

    /// Like [`Library::watch`] for the folders and delimiters of `config`,
    /// which stays fixed: `promptpack.toml` is not read again.
    pub fn watch_config(config: &Config) -> Result<WatchedLibrary> {
        WatchedLibrary::with_config(config, WatchOptions::default())
    }

    /// Like [`Library::watch`], but finds changes by scanning the folders
    /// every `interval` instead of through file system events.
    pub fn watch_polling(root: impl Into<PathBuf>, interval: Duration) -> Result<WatchedLibrary> {
        WatchedLibrary::new(root, WatchOptions::default().poll(interval))
    }
}

impl WatchedLibrary {
    /// Watches the prompts under `root`, re-reading `root/promptpack.toml`
    /// on each reload.
    pub fn new(root: impl Into<PathBuf>, options: WatchOptions) -> Result<WatchedLibrary> {
        let root = root.into();
        // Absolute, so that a later change of the working directory does not
        // move the folder being watched.
        let root = std::path::absolute(&root).unwrap_or(root);
        WatchedLibrary::start(ConfigSource::Root(root), &options, Start::NeedsGood)
    }

    /// Watches the folders of `config`, with its delimiters.
    pub fn with_config(config: &Config, options: WatchOptions) -> Result<WatchedLibrary> {
        WatchedLibrary::start(
            ConfigSource::Fixed(config.clone()),
            &options,
            Start::NeedsGood,
        )
    }

    /// The prompts as they are now. The `Arc` keeps this version alive and
    /// unchanged while you hold it, whatever reloads happen meanwhile.
    pub fn current(&self) -> Arc<Library> {
        self.shared.library.load_full()
    }

    /// [`Library::build_prompt`] on the current prompts.
    pub fn build_prompt<T: serde::Serialize + ?Sized>(&self, id: &str, vars: &T) -> Result<Prompt> {
        self.shared.library.load().build_prompt(id, vars)
    }

    /// [`Library::render`] on the current prompts.
    pub fn render(&self, id: &str, vars: &impl Vars, missing_vars: MissingVars) -> Result<Prompt> {
        self.shared.library.load().render(id, vars, missing_vars)
    }

    /// Reloads now, in this thread, without waiting for the watcher. On
    /// failure the last good prompts keep serving and the error is returned
    /// (and sent to subscribers).
    pub fn reload(&self) -> Result<()> {
        let result = self.shared.reload(Vec::new());
        // promptpack.toml may have moved the folders: let the watcher thread
        // check what it watches. It only fails when that thread is gone.
        let _ = self.worker_tx.send(Msg::Rearm);
        result
    }

    /// A channel that receives a [`ReloadEvent`] for every reload or reload
    /// error from now on. Each call makes a new channel; dropping the
    /// receiver unsubscribes it.
    pub fn subscribe(&self) -> Receiver<ReloadEvent> {
        let (tx, rx) = mpsc::channel();
        lock(&self.shared.subscribers).push(tx);
        rx
    }

    /// How many times a set of prompts was loaded: 1 after the first load,
    /// one more for each successful reload.
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::Acquire)
    }

    /// The last problem: the error of the last reload when it failed, or a
    /// later watcher error; `None` once a reload succeeds.
    pub fn last_error(&self) -> Option<Error> {
        lock(&self.shared.last_error).clone()
    }

    /// The configuration of the last reload that could read one.
    pub fn config(&self) -> Config {
        lock(&self.shared.config).clone()
    }

    /// Whether changes are found by polling rather than file system events.
    pub fn is_polling(&self) -> bool {
        self.polling
    }

    fn start(source: ConfigSource, options: &WatchOptions, start: Start) -> Result<WatchedLibrary> {
        let config = match source.load_config() {
            Ok(config) => config,
            Err(e) if start == Start::NeedsGood => return Err(e),
            // Watch the default folders meanwhile; the first good reload
            // brings the real ones.
            Err(_) => Config::new(source.root()),
        };
        let (worker_tx, worker_rx) = mpsc::channel();
        let events_tx = worker_tx.clone();
        let mut backend = Backend::new(options, move |result| {
            // Fails only when the watcher thread is gone, which means the
            // handle is being dropped: nothing left to tell.
            let _ = events_tx.send(Msg::Events(result));
        })?;
        let polling = options.poll.is_some();
        let follows_file = source.follows_config_file();
        let mut watches = Watches::default();
        // Watch before the first read, so that no change after it is missed.
        // Setup errors are the caller's to handle: never swallowed.
        if let Some(error) = watches
            .arm(&mut backend, &config, follows_file, &[])
            .into_iter()
            .next()
        {
            return Err(error);
        }
        let shared = Arc::new(Shared::new(source, config));
        // With `MayFail` the error is logged and kept for the renders.
        if let Err(error) = shared.reload(Vec::new())
            && start == Start::NeedsGood
        {
            return Err(error);
        }
        let worker_shared = Arc::clone(&shared);
        let timing = Timing::new(options);
        let worker = std::thread::Builder::new()
            .name("promptpack-watch".into())
            .spawn(move || run_worker(&worker_shared, backend, watches, &worker_rx, timing))
            .map_err(|e| {
                Error::new(
                    ErrorCode::Watch,
                    format!("cannot start the watcher thread: {e}"),
                )
            })?;
        Ok(WatchedLibrary {
            shared,
            worker_tx,
            worker: Some(worker),
            polling,
        })
    }

    /// The dev path of generated code: renders from the last good prompts,
    /// explaining what a typed vars struct cannot express.
    fn dev_render(&self, id: &str, vars: &dyn Vars) -> Result<Prompt> {
        if self.generation() == 0 {
            // Never loaded: there is nothing good to fall back on.
            return Err(self.last_error().unwrap_or_else(|| {
                Error::new(
                    ErrorCode::Io,
                    "the prompts on disk have not been loaded yet",
                )
            }));
        }
        let library = self.shared.library.load();
        library
            .render(id, &vars, MissingVars::Error)
            .map_err(|error| match error.code() {
                ErrorCode::MissingVar => stale_build(&library, id, vars, error),
                ErrorCode::UnknownPrompt => deleted_prompt(&self.config(), id),
                _ => error,
            })
    }
}

impl fmt::Debug for WatchedLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchedLibrary")
            .field("root", &self.config().root())
            .field("generation", &self.generation())
            .field("polling", &self.polling)
            .finish_non_exhaustive()
    }
}

impl Drop for WatchedLibrary {
    fn drop(&mut self) {
        // The thread may already be gone (it never panics on purpose, but a
        // panic must not turn into a second one here).
        let _ = self.worker_tx.send(Msg::Stop);
        if let Some(worker) = self.worker.take() {
            // Joining makes "dropped" mean "stopped": no reload, event or
            // watch outlives the handle.
            let _ = worker.join();
        }
    }
}

/// Whether the first load must succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// The public constructors: a handle always has a good set to serve.
    NeedsGood,
    /// The dev path: start anyway, report the error until a fix is saved.
    MayFail,
}

/// Where each reload takes its configuration from.
#[derive(Debug)]
enum ConfigSource {
    /// `Config::load(root)`: promptpack.toml is read again on each reload.
    Root(PathBuf),
    /// A configuration fixed by the caller.
    Fixed(Config),
}

impl ConfigSource {
    fn load_config(&self) -> Result<Config> {
        match self {
            ConfigSource::Root(root) => Config::load(root),
            ConfigSource::Fixed(config) => Ok(config.clone()),
        }
    }

    fn root(&self) -> &Path {
        match self {
            ConfigSource::Root(root) => root,
            ConfigSource::Fixed(config) => config.root(),
        }
    }

    fn follows_config_file(&self) -> bool {
        matches!(self, ConfigSource::Root(_))
    }
}

/// State shared by the handle, its watcher thread and the dev registry.
struct Shared {
    source: ConfigSource,
    library: ArcSwap<Library>,
    /// Successful loads so far; 0 means `library` is a placeholder.
    generation: AtomicU64,
    last_error: Mutex<Option<Error>>,
    config: Mutex<Config>,
    subscribers: Mutex<Vec<Sender<ReloadEvent>>>,
    /// Serializes reloads, so that an older read never replaces a newer one.
    reload_lock: Mutex<()>,
}

impl Shared {
    fn new(source: ConfigSource, config: Config) -> Shared {
        // Served by nobody: `generation` 0 says there is no good set yet.
        let placeholder = Library::from_resolved(Vec::new(), config.delimiters_ref().clone());
        Shared {
            source,
            library: ArcSwap::from_pointee(placeholder),
            generation: AtomicU64::new(0),
            last_error: Mutex::new(None),
            config: Mutex::new(config),
            subscribers: Mutex::new(Vec::new()),
            reload_lock: Mutex::new(()),
        }
    }

    /// Reads and checks every file, swaps the result in when it is good, and
    /// tells the log and the subscribers either way.
    fn reload(&self, paths: Vec<PathBuf>) -> Result<()> {
        let _one_at_a_time = lock(&self.reload_lock);
        let started = Instant::now();
        let (config, loaded) = stable_snapshot(&self.source).load();
        if let Some(config) = config {
            *lock(&self.config) = config;
        }
        match loaded {
            Ok(library) => {
                let prompts = library.prompts().len();
                self.library.store(Arc::new(library));
                // After the store: whoever sees the new generation sees the
                // new library too.
                let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
                *lock(&self.last_error) = None;
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
                    log::error!(
                        "promptpack: the prompts in {} do not load:\n{shown}",
                        self.source.root().display()
                    );
                } else {
                    log::warn!(
                        "promptpack: an edit does not load; the last good prompts keep serving:\n{shown}"
                    );
                }
                self.emit(ReloadEvent::Failed(error.clone()));
                Err(error)
            }
        }
    }

    fn report_watch_error(&self, error: Error) {
        log::error!("promptpack: {error}");
        *lock(&self.last_error) = Some(error.clone());
        self.emit(ReloadEvent::Failed(error));
    }

    fn emit(&self, event: ReloadEvent) {
        // A failed send means the receiver was dropped: unsubscribe it.
        lock(&self.subscribers).retain(|tx| tx.send(event.clone()).is_ok());
    }
}

/// Locks a mutex, going on after a panic elsewhere: every value guarded here
/// is replaced whole, so a poisoned one is still consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Everything one read of the prompt folder saw.
#[derive(Debug, PartialEq)]
enum Snapshot {
    BadConfig(Error),
    Read {
        config: Config,
        templates: Vec<TemplateSource>,
        snippets: Vec<SnippetSource>,
        errors: Vec<Diagnostic>,
    },
}

impl Snapshot {
    fn read(source: &ConfigSource) -> Snapshot {
        match source.load_config() {
            Err(error) => Snapshot::BadConfig(error),
            Ok(config) => {
                let (sources, errors) = read_sources(&config);
                Snapshot::Read {
                    config,
                    templates: sources.templates,
                    snippets: sources.snippets,
                    errors,
                }
            }
        }
    }

    /// Checks the files read, as `Library::load_config` does (which cannot be
    /// used here: the stability check needs the raw sources).
    fn load(self) -> (Option<Config>, Result<Library>) {
        match self {
            Snapshot::BadConfig(error) => (None, Err(error)),
            Snapshot::Read {
                config,
                templates,
                snippets,
                mut errors,
            } => {
                let library =
                    Library::from_sources(templates, snippets, config.delimiters_ref().clone());
                let library = match library {
                    Ok(library) if errors.is_empty() => Ok(library),
                    Ok(_) => Err(errors),
                    Err(error) => {
                        errors.extend(error.into_diagnostics());
                        Err(errors)
                    }
                };
                let library = library.map_err(|errors| {
                    Error::from_diagnostics(errors).unwrap_or_else(|| {
                        Error::new(ErrorCode::Io, "loading failed without a reason")
                    })
                });
                (Some(config), library)
            }
        }
    }
}

/// Reads the folder until two reads in a row agree.
///
/// Files are read one after another, so a read racing an editor can see
/// `system.md` from before a save and a snippet from after a later one: a
/// set of files that never existed together. When two consecutive reads
/// agree, every file held its content across the moment the first read
/// ended, so the set existed at that moment. Prompt folders are small, so the
/// second read is cheap; if the files keep changing the last read is used,
/// and the events of those changes bring another reload.
fn stable_snapshot(source: &ConfigSource) -> Snapshot {
    let mut last = Snapshot::read(source);
    for _ in 1..MAX_READS {
        let next = Snapshot::read(source);
        if next == last {
            return next;
        }
        last = next;
    }
    last
}

/// How the watcher thread gathers a burst of changes into one reload.
#[derive(Debug, Clone, Copy)]
struct Timing {
    /// Quiet time that ends a burst.
    settle: Duration,
    /// Longest time a reload waits for a burst to end.
    hold: Duration,
}

impl Timing {
    fn new(options: &WatchOptions) -> Timing {
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
enum Msg {
    /// A debounced batch of file system events, or watcher errors.
    Events(DebounceEventResult),
    /// Check the watched folders against the configuration.
    Rearm,
    /// The handle was dropped.
    Stop,
}

/// The debounced watcher: native events, or a poller.
enum Backend {
    Native(Debouncer<RecommendedWatcher, RecommendedCache>),
    Poll(Debouncer<PollWatcher, NoCache>),
}

impl Backend {
    fn new(
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

    fn watch(&mut self, path: &Path, recursive: bool) -> notify::Result<()> {
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

    fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        match self {
            Backend::Native(d) => d.unwatch(path),
            Backend::Poll(d) => d.unwatch(path),
        }
    }

    /// Stops the debouncer and waits for its thread.
    fn stop(self) {
        match self {
            Backend::Native(d) => d.stop(),
            Backend::Poll(d) => d.stop(),
        }
    }
}

/// A watcher error as promptpack's error, with a hint on what to do.
fn watch_error(context: &str, e: &notify::Error) -> Error {
    let message = format!("{context}: {e}");
    let help = match e.kind {
        notify::ErrorKind::MaxFilesWatch => {
            "the limit of inotify watches is reached: raise it (`sysctl fs.inotify.max_user_watches=524288`) \
             or watch by polling (`Library::watch_polling`, `WatchOptions::poll`)"
        }
        _ => "watch by polling instead (`Library::watch_polling`, `WatchOptions::poll`)",
    };
    Error::from(Diagnostic::new(ErrorCode::Watch, message).with_help(help))
}

/// Errors a watcher meets in normal operation: a file or folder vanished
/// between being listed and being looked at (atomic saves, deleted folders).
/// They only mean "look again".
fn is_benign(e: &notify::Error) -> bool {
    match &e.kind {
        notify::ErrorKind::PathNotFound | notify::ErrorKind::WatchNotFound => true,
        notify::ErrorKind::Io(io) => io.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The folders being watched, and how.
#[derive(Debug, Default)]
struct Watches {
    /// Path → recursive.
    armed: BTreeMap<PathBuf, bool>,
}

impl Watches {
    /// What should be watched for `config`: the templates and snippets
    /// folders recursively, and their parents (and the root, for
    /// promptpack.toml) non-recursively, so that a folder deleted and created
    /// again is noticed. A folder that does not exist is stood in for by its
    /// nearest existing ancestor, so that its creation is seen.
    fn wanted(config: &Config, follows_file: bool) -> BTreeMap<PathBuf, bool> {
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
        }
        for dir in [config.templates(), config.snippets()] {
            if let Some(parent) = dir.parent() {
                want(parent, false);
            }
            want(dir, true);
        }
        wanted
    }

    /// Brings the watches in line with `config`, watching again every folder
    /// that `events` say was created, removed or renamed (its old watch, if
    /// any, died with the old folder). Returns the watches that failed.
    fn arm(
        &mut self,
        backend: &mut Backend,
        config: &Config,
        follows_file: bool,
        events: &[DebouncedEvent],
    ) -> Vec<Error> {
        let wanted = Watches::wanted(config, follows_file);
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
                Err(e) => errors.push(watch_error(&format!("cannot watch {}", path.display()), &e)),
            }
        }
        errors
    }
}

/// Which paths can change the prompts.
struct Targets {
    /// `promptpack.toml`, as configured and canonical.
    config_files: Vec<PathBuf>,
    /// The templates and snippets folders, as configured and canonical
    /// (some watchers report canonical paths: /private/var on macOS).
    dirs: Vec<PathBuf>,
}

impl Targets {
    fn new(config: &Config, follows_file: bool) -> Targets {
        let config_files = if follows_file {
            both_forms(&config.root().join(CONFIG_FILE))
        } else {
            Vec::new()
        };
        let dirs = [config.templates(), config.snippets()]
            .into_iter()
            .flat_map(both_forms)
            .collect();
        Targets { config_files, dirs }
    }

    fn is_relevant(&self, path: &Path) -> bool {
        if self.config_files.iter().any(|f| f == path) {
            return true;
        }
        for dir in &self.dirs {
            if dir.starts_with(path) {
                // The folder itself, or a folder holding it, came or went.
                return true;
            }
            if let Ok(rest) = path.strip_prefix(dir) {
                return is_prompt_path(rest, path);
            }
        }
        false
    }
}

/// `path` as given and canonical (the nearest existing ancestor resolved,
/// for a path that does not exist).
fn both_forms(path: &Path) -> Vec<PathBuf> {
    let mut forms = vec![path.to_path_buf()];
    let canonical = path.ancestors().find_map(|ancestor| {
        let real = ancestor.canonicalize().ok()?;
        let rest = path.strip_prefix(ancestor).ok()?;
        Some(if rest.as_os_str().is_empty() {
            real
        } else {
            real.join(rest)
        })
    });
    if let Some(canonical) = canonical
        && canonical != path
    {
        forms.push(canonical);
    }
    forms
}

/// Whether a change at `rest` (relative to the templates or snippets folder)
/// can change the prompts: a `.md` file, or a folder that may hold some.
/// Editor temp and swap files (`.x.swp`, `x~`, `#x#`, vim's `4913` probe,
/// dotfiles) and other extensions cannot: the loader never reads them.
fn is_prompt_path(rest: &Path, full: &Path) -> bool {
    let names: Vec<&OsStr> = rest.iter().collect();
    let Some(last) = names.last().map(|n| n.to_string_lossy()) else {
        return true;
    };
    if names.iter().any(|n| is_editor_junk(&n.to_string_lossy())) {
        return false;
    }
    if last.ends_with(".md") {
        return true;
    }
    if last.contains('.') {
        return false;
    }
    if last.bytes().all(|b| b.is_ascii_digit()) {
        // Vim probes a folder by creating and deleting `4913` (or another
        // number). A template folder may have such a name, and then exists.
        return full.is_dir();
    }
    // No extension: a template folder or a snippet subfolder that came or
    // went (moving one away gives no event for the files inside).
    true
}

fn is_editor_junk(name: &str) -> bool {
    name.starts_with('.')
        || name.ends_with('~')
        || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'))
}

/// The watcher thread: turns batches of events into reloads until the handle
/// is dropped.
fn run_worker(
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
        let targets = Targets::new(&config, follows_file);
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
                    .filter(|p| targets.is_relevant(p))
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

fn arm(
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

/// A missing variable in the dev path: the typed vars struct gives every
/// field it has, so the template on disk uses a variable the compiled struct
/// lacks.
fn stale_build(library: &Library, id: &str, vars: &dyn Vars, error: Error) -> Error {
    let Some(prompt) = library.get(id) else {
        return error;
    };
    let missing: Vec<_> = prompt
        .vars
        .iter()
        .filter(|v| vars.get(&v.name).is_none())
        .collect();
    if missing.is_empty() {
        return error;
    }
    let names: Vec<String> = missing.iter().map(|v| format!("`{}`", v.name)).collect();
    let names = names.join(", ");
    let diagnostics = missing
        .iter()
        .map(|var| {
            Diagnostic::new(
                ErrorCode::StaleBuild,
                format!(
                    "prompt `{id}` on disk now needs variable(s) {names}, which the compiled vars struct lacks: rebuild"
                ),
            )
            .at(var.first_use.clone())
            .with_help(
                "run `cargo build` so that the build script regenerates the vars struct, \
                 or undo the edit",
            )
        })
        .collect();
    Error::from_diagnostics(diagnostics).unwrap_or(error)
}

/// An id the compiled code knows but the files on disk no longer have.
fn deleted_prompt(config: &Config, id: &str) -> Error {
    let folder = config.display_path(&config.templates().join(id));
    Error::from(
        Diagnostic::new(
            ErrorCode::UnknownPrompt,
            format!("prompt `{id}` was deleted on disk: {folder}/ no longer exists"),
        )
        .with_help("restore the folder, or rebuild (`cargo build`) to remove it from `PromptId`"),
    )
}

/// Whether the value of [`NO_RELOAD_ENV`] turns hot reload off: set, not
/// empty and not `0`.
fn reload_disabled_by(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// One entry per prompt folder of generated code.
enum DevEntry {
    /// Rendered from disk through this watcher.
    Disk(Arc<WatchedLibrary>),
    /// Rendered from the embedded code: the folder is missing or the watcher
    /// could not start (both logged once).
    Embedded,
}

type DevKey = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// The dev path of generated code (see `crate::__private::dev_render`).
///
/// Starts one watcher per prompt folder on first use, for the rest of the
/// process, and renders from the last good version of the files. `None`
/// means "use the embedded prompts": hot reload is off
/// (`PROMPTPACK_NO_RELOAD`), or the folder is not there (as when a dev binary
/// runs on another machine).
pub(crate) fn dev_render(source: &DevSource, id: &str, vars: &dyn Vars) -> Option<Result<Prompt>> {
    static DISABLED: OnceLock<bool> = OnceLock::new();
    // Read once: the variable is meant to be set when the process starts,
    // and reading the environment on every render would take a global lock.
    if *DISABLED.get_or_init(|| reload_disabled_by(std::env::var_os(NO_RELOAD_ENV).as_deref())) {
        return None;
    }
    let library = dev_library(source)?;
    Some(library.dev_render(id, vars))
}

fn dev_library(source: &DevSource) -> Option<Arc<WatchedLibrary>> {
    static REGISTRY: OnceLock<RwLock<HashMap<DevKey, DevEntry>>> = OnceLock::new();
    let key = (
        source.root,
        source.templates,
        source.snippets,
        source.open,
        source.close,
    );
    let registry = REGISTRY.get_or_init(Default::default);
    let found = |entry: &DevEntry| match entry {
        DevEntry::Disk(library) => Some(Arc::clone(library)),
        DevEntry::Embedded => None,
    };
    // Every render looks its folder up: a shared lock, so that threads
    // rendering at once do not queue behind each other.
    let read = registry.read().unwrap_or_else(PoisonError::into_inner);
    if let Some(entry) = read.get(&key) {
        return found(entry);
    }
    drop(read);
    // Held while a watcher starts, so that threads rendering at once start
    // one watcher, not one each.
    let mut write = registry.write().unwrap_or_else(PoisonError::into_inner);
    found(write.entry(key).or_insert_with(|| start_dev(source)))
}

fn start_dev(source: &DevSource) -> DevEntry {
    let root = Path::new(source.root);
    // `join` keeps an absolute path as it is and anchors a relative one at
    // the root.
    let templates = root.join(source.templates);
    let snippets = root.join(source.snippets);
    if !root.is_dir() || !templates.is_dir() {
        log::warn!(
            "promptpack: templates folder {} not found; using the prompts embedded at build time",
            templates.display()
        );
        return DevEntry::Embedded;
    }
    let config = match Config::new(root)
        .templates_dir(templates)
        .snippets_dir(snippets)
        .delimiters(source.open, source.close)
    {
        Ok(config) => config,
        Err(error) => {
            log::error!("promptpack: {error}; using the prompts embedded at build time");
            return DevEntry::Embedded;
        }
    };
    let start = |options: WatchOptions| {
        WatchedLibrary::start(
            ConfigSource::Fixed(config.clone()),
            &options,
            Start::MayFail,
        )
    };
    match start(WatchOptions::default()) {
        Ok(library) => return DevEntry::Disk(Arc::new(library)),
        Err(error) => log::warn!(
            "promptpack: {error}\npromptpack: watching {} by polling every {} ms instead",
            root.display(),
            DEV_POLL_FALLBACK.as_millis()
        ),
    }
    match start(WatchOptions::default().poll(DEV_POLL_FALLBACK)) {
        Ok(library) => DevEntry::Disk(Arc::new(library)),
        Err(error) => {
            log::error!("promptpack: {error}; using the prompts embedded at build time");
            DevEntry::Embedded
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_reload_values() {
        assert!(!reload_disabled_by(None));
        assert!(!reload_disabled_by(Some(OsStr::new(""))));
        assert!(!reload_disabled_by(Some(OsStr::new("0"))));
        assert!(reload_disabled_by(Some(OsStr::new("1"))));
        assert!(reload_disabled_by(Some(OsStr::new("true"))));
    }

    #[test]
    fn junk_is_ignored() {
        let full = Path::new("/nonexistent/templates/x");
        for junk in [
            ".system.md.swp",
            "system.md~",
            "4913",
            ".hidden.md",
            "#system.md#",
            "notes.txt",
            "x.md.tmp",
        ] {
            assert!(
                !is_prompt_path(&Path::new("x").join(junk), &full.join(junk)),
                "{junk}"
            );
        }
        for real in ["system.md", "user.md"] {
            assert!(
                is_prompt_path(&Path::new("x").join(real), &full.join(real)),
                "{real}"
            );
        }
        assert!(is_prompt_path(
            Path::new("new-prompt"),
            Path::new("/nonexistent/templates/new-prompt")
        ));
        assert!(!is_prompt_path(
            Path::new(".git/x.md"),
            Path::new("/nonexistent/templates/.git/x.md")
        ));
    }
}
