//! The dev path of generated code: one watcher per prompt folder for the
//! whole process, and the errors that say the build is stale.

use super::handle::{Start, WatchedLibrary};
use super::options::WatchOptions;
use super::shared::ConfigSource;
use crate::__private::{DevSource, NO_FIELDS, PromptInfo};
use crate::library::Library;
use crate::prompt::Prompt;
use promptpack_core::contract::check;
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Result};
use promptpack_core::vars::Vars;
use promptpack_load::Config;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// The environment variable that turns the dev hot reload of generated code
/// off: set to anything but empty or `0`, `build_prompt` renders the prompts
/// embedded at build time even in dev builds.
pub const NO_RELOAD_ENV: &str = "PROMPTPACK_NO_RELOAD";

/// How often the dev path polls when the native watcher cannot start.
const DEV_POLL_FALLBACK: Duration = Duration::from_millis(500);

/// The contract of prompt `id`'s compiled vars struct; no fields when the
/// generated code has none for it (then every variable on disk is new).
pub(super) fn contract<'s>(source: &'s DevSource, id: &str) -> &'s PromptInfo {
    source
        .prompts
        .iter()
        .find(|p| p.id == id)
        .unwrap_or(&NO_FIELDS)
}

/// `stale_build` when prompt `id` on disk leaves the contract of its
/// compiled vars struct: [`promptpack_core::contract::check`]'s rules, one
/// diagnostic per variable at its first use, each a render the struct cannot
/// express as the edited template means it.
pub(super) fn stale_build(library: &Library, id: &str, contract: &PromptInfo) -> Option<Error> {
    let prompt = library.get(id)?;
    // The common case told in one pass, without building the contract.
    if contract.fits_in_order(prompt) {
        return None;
    }
    Error::from_diagnostics(check(prompt, &contract.contract(), ErrorCode::StaleBuild))
}

/// An id the compiled code knows but the files on disk no longer have.
pub(super) fn deleted_prompt(config: &Config, id: &str) -> Error {
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
pub(super) fn reload_disabled_by(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// How long the dev path renders the embedded prompts before it looks for
/// the folder (or tries the watcher) again.
const EMBEDDED_RETRY: Duration = Duration::from_millis(500);

/// One entry per prompt folder of generated code.
pub(super) enum DevEntry {
    /// Rendered from disk through this watcher.
    Disk(Arc<WatchedLibrary>),
    /// Rendered from the embedded code: the folder is missing or the watcher
    /// could not start (logged the first time). Not for good: a folder
    /// restored (a checkout, a move back) is picked up at `retry_at`.
    Embedded {
        /// When to look again.
        retry_at: Instant,
    },
}

pub(super) type DevKey = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    usize,
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
    Some(library.dev_render(id, vars, contract(source, id)))
}

/// The events of the dev path's watcher of `source`'s folder (see
/// `__private::dev_reload_events`).
pub(crate) fn dev_reload_events(
    source: &DevSource,
) -> Option<std::sync::mpsc::Receiver<super::ReloadEvent>> {
    dev_library(source).map(|library| library.subscribe())
}

pub(super) fn dev_library(source: &DevSource) -> Option<Arc<WatchedLibrary>> {
    static REGISTRY: OnceLock<RwLock<HashMap<DevKey, DevEntry>>> = OnceLock::new();
    let key = (
        source.root,
        source.templates,
        source.snippets,
        source.open,
        source.close,
        source.standalone_tags,
        source.max_render_bytes,
    );
    let registry = REGISTRY.get_or_init(Default::default);
    // `Err(first)`: no watcher yet; `first` when none was tried before.
    let found = |entry: Option<&DevEntry>, now: Instant| match entry {
        Some(DevEntry::Disk(library)) => Ok(Some(Arc::clone(library))),
        Some(DevEntry::Embedded { retry_at }) if now < *retry_at => Ok(None),
        Some(DevEntry::Embedded { .. }) => Err(false),
        None => Err(true),
    };
    // Every render looks its folder up: a shared lock, so that threads
    // rendering at once do not queue behind each other.
    let read = registry.read().unwrap_or_else(PoisonError::into_inner);
    if let Ok(library) = found(read.get(&key), Instant::now()) {
        return library;
    }
    drop(read);
    // Held while a watcher starts, so that threads rendering at once start
    // one watcher, not one each.
    let mut write = registry.write().unwrap_or_else(PoisonError::into_inner);
    let now = Instant::now();
    let first = match found(write.get(&key), now) {
        Ok(library) => return library,
        Err(first) => first,
    };
    let entry = match start_dev(source) {
        Ok(library) => DevEntry::Disk(library),
        Err(why) => {
            // Said once: a missing folder stays missing on most machines
            // (a dev binary run elsewhere), and retries must not flood the log.
            if first {
                log::warn!("promptpack: {why}; using the prompts embedded at build time");
            } else {
                log::debug!("promptpack: {why}");
            }
            DevEntry::Embedded {
                retry_at: now + EMBEDDED_RETRY,
            }
        }
    };
    let library = found(Some(&entry), now).ok().flatten();
    write.insert(key, entry);
    library
}

/// Starts the watcher of a prompt folder, or says why it cannot.
pub(super) fn start_dev(source: &DevSource) -> std::result::Result<Arc<WatchedLibrary>, String> {
    let root = Path::new(source.root);
    // `join` keeps an absolute path as it is and anchors a relative one at
    // the root.
    let templates = root.join(source.templates);
    let snippets = root.join(source.snippets);
    if !root.is_dir() || !templates.is_dir() {
        return Err(format!(
            "templates folder {} not found",
            templates.display()
        ));
    }
    let config = Config::new(root)
        .with_templates(templates)
        .with_snippets(snippets)
        .with_standalone_tags(source.standalone_tags)
        .with_max_render_bytes(source.max_render_bytes)
        .with_delimiters(source.open, source.close)
        .map_err(|error| error.to_string())?;
    let start = |options: WatchOptions| {
        WatchedLibrary::start(
            ConfigSource::Fixed(config.clone()),
            &options,
            Start::MayFail,
        )
    };
    match start(WatchOptions::default()) {
        Ok(library) => return Ok(Arc::new(library)),
        Err(error) => log::warn!(
            "promptpack: {error}\npromptpack: watching {} by polling every {} ms instead",
            root.display(),
            DEV_POLL_FALLBACK.as_millis()
        ),
    }
    start(WatchOptions::default().poll(DEV_POLL_FALLBACK))
        .map(Arc::new)
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn no_reload_values() {
        assert!(!reload_disabled_by(None));
        assert!(!reload_disabled_by(Some(OsStr::new(""))));
        assert!(!reload_disabled_by(Some(OsStr::new("0"))));
        assert!(reload_disabled_by(Some(OsStr::new("1"))));
        assert!(reload_disabled_by(Some(OsStr::new("true"))));
    }
}
