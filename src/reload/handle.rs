//! The public handle, [`WatchedLibrary`](crate::WatchedLibrary): starts the watcher thread, serves
//! renders from the current set, stops everything when dropped.

use super::backend::{Backend, Watches, arm_error, is_limit, polling_instead};
use super::dev::{deleted_prompt, stale_build};
use super::event::ReloadEvent;
use super::options::WatchOptions;
use super::shared::{ConfigSource, Shared, lock};
use super::worker::{Fallback, Msg, Timing, Worker, sender};
use crate::__private::PromptInfo;
use crate::library::Library;
use crate::prompt::Prompt;
use promptpack_core::error::{Error, ErrorCode, Result};
use promptpack_core::render::MissingVars;
use promptpack_core::vars::Vars;
use promptpack_load::Config;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

/// A [`Library`](crate::Library) kept current by a file watcher.
///
/// Made by [`Library::watch`](crate::Library::watch), or by [`WatchedLibrary::new`] and
/// [`WatchedLibrary::with_config`] with [`WatchOptions`](crate::WatchOptions). Each successful
/// reload swaps a whole new [`Library`](crate::Library) in atomically, so a render sees one
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
            // Absolute, as for `new`, and because the watcher reports
            // absolute paths: relative folders through a link would match
            // none of them.
            ConfigSource::Fixed(config.clone().into_absolute()),
            &options,
            Start::NeedsGood,
        )
    }

    /// The prompts as they are now. The `Arc` keeps this version alive and
    /// unchanged while you hold it, whatever reloads happen meanwhile.
    pub fn current(&self) -> Arc<Library> {
        self.shared.library.load_full()
    }

    /// [`Library::build_prompt`](crate::Library::build_prompt) on the current prompts.
    pub fn build_prompt<T: serde::Serialize + ?Sized>(&self, id: &str, vars: &T) -> Result<Prompt> {
        self.shared.library.load().build_prompt(id, vars)
    }

    /// [`Library::render`](crate::Library::render) on the current prompts.
    pub fn render(
        &self,
        id: &str,
        vars: &(impl Vars + ?Sized),
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
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

    /// A channel that receives a [`ReloadEvent`](crate::ReloadEvent) for every reload or reload
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
    /// later watcher error; after a reload succeeds, `None`, or the `watch`
    /// error that made the watcher poll instead of using native events
    /// (kept while it polls, that is for the life of the handle).
    pub fn last_error(&self) -> Option<Error> {
        lock(&self.shared.last_error).clone()
    }

    /// The configuration of the last reload that could read one.
    pub fn config(&self) -> Config {
        lock(&self.shared.config).clone()
    }

    /// Whether changes are found by polling rather than file system
    /// events: asked for, or fallen back to when the native watcher failed
    /// (the inotify limit reached; [`WatchedLibrary::last_error`](crate::WatchedLibrary::last_error) then says so).
    pub fn is_polling(&self) -> bool {
        self.shared.polling.load(Ordering::Acquire)
    }

    pub(super) fn start(
        source: ConfigSource,
        options: &WatchOptions,
        start: Start,
    ) -> Result<WatchedLibrary> {
        let config = match source.load_config() {
            Ok(config) => config,
            Err(e) if start == Start::NeedsGood => return Err(e),
            // Watch the default folders meanwhile; the first good reload
            // brings the real ones.
            Err(_) => Config::new(source.root()),
        };
        let (worker_tx, worker_rx) = mpsc::channel();
        let fallback = Fallback {
            options: options.clone(),
            tx: worker_tx.clone(),
        };
        let mut backend = Backend::new(options, sender(worker_tx.clone()))?;
        let follows_file = source.follows_config_file();
        let mut watches = Watches::default();
        // Watch before the first read, so that no change after it is missed.
        // Setup errors are the caller's to handle: never swallowed. Only the
        // system's limit of native watches is met by polling instead.
        let mut fell_back = None;
        if let Some((path, error)) = watches
            .arm(&mut backend, &config, follows_file, &[])
            .into_iter()
            .next()
        {
            if !(is_limit(&error) && backend.is_native()) {
                return Err(arm_error(&path, &error));
            }
            backend.stop();
            backend = fallback.poller()?;
            watches = Watches::default();
            if let Some((path, error)) = watches
                .arm(&mut backend, &config, follows_file, &[])
                .into_iter()
                .next()
            {
                return Err(arm_error(&path, &error));
            }
            fell_back = Some(polling_instead(arm_error(&path, &error)));
        }
        let shared = Arc::new(Shared::new(
            source,
            config,
            options.stderr_without_logger,
            !backend.is_native(),
        ));
        if let Some(error) = fell_back {
            shared.fall_back(error);
        }
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
            .spawn(move || {
                let worker = Worker {
                    shared: &worker_shared,
                    backend,
                    watches,
                    fallback,
                    follows_file,
                };
                worker.run(&worker_rx, timing);
            })
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
        })
    }

    /// The dev path of generated code: renders from the last good prompts
    /// with the values of a compiled vars struct whose fields are
    /// `contract`, explaining what that struct cannot express.
    pub(super) fn dev_render(
        &self,
        id: &str,
        vars: &dyn Vars,
        contract: &PromptInfo,
    ) -> Result<Prompt> {
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
        if let Some(stale) = stale_build(&library, id, contract) {
            return Err(stale);
        }
        // The values come from the compiled struct: an edit on disk that
        // declares fewer values still renders the ones it dropped (their
        // `{{else}}`), as a catalog version would.
        library
            .render_typed(id, &vars, MissingVars::Error)
            .map_err(|error| match error.code() {
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
            .field("polling", &self.is_polling())
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
pub(super) enum Start {
    /// The public constructors: a handle always has a good set to serve.
    NeedsGood,
    /// The dev path: start anyway, report the error until a fix is saved.
    MayFail,
}
