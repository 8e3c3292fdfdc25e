//! `promptpack watch`: renders one prompt again on every change.
//!
//! Changes are found by promptpack's [`WatchedLibrary`] (file system events,
//! or polling with `--poll`); the values file of `--vars` is polled here.
//! Each update prints `=== render N ===` and the prompt to stdout, or
//! `=== render N: failed ===` to stdout and the errors to stderr, and the
//! watch goes on. With `--json`, each successful render is one JSON object on
//! one line of stdout. Ctrl-C stops it (nothing needs cleaning up: the default
//! signal handling ends the process).

use crate::Written;
use crate::render::{RenderArgs, Rendered, render, write_prompt};
use clap::Args;
use promptpack::{
    Config, Error, ErrorCode, ReloadEvent, Severity, Style, WatchOptions, WatchedLibrary,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, SystemTime};

/// How often the values file is checked, and a failed start is retried.
const TICK: Duration = Duration::from_millis(200);

/// Options of `promptpack watch`.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    render: RenderArgs,
    /// Find changes by scanning the folders every MS milliseconds instead of
    /// through file system events (for network or container file systems).
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,
    /// Stop after this many updates (renders or failures). For tests.
    #[arg(long, value_name = "N", hide = true)]
    max_renders: Option<u64>,
}

/// Prints updates and counts them against `--max-renders`.
struct Updates<'a> {
    args: &'a WatchArgs,
    style: Style,
    done: u64,
    /// The prompt root, as found from the arguments.
    root: PathBuf,
    /// The warnings about the values last printed: printed again only when
    /// they change (an edit to the prompt or to the values file).
    warnings: Vec<String>,
    /// Set when standard output takes no more: its reader closed it (`Ok`)
    /// or a write failed (`Err`). The watch ends then, rather than render
    /// for no one until it is killed.
    ended: Option<Result<(), Error>>,
}

impl Updates<'_> {
    /// Whether the watch should stop.
    fn finished(&self) -> bool {
        self.ended.is_some() || self.args.max_renders.is_some_and(|max| self.done >= max)
    }

    /// Notes what became of a write to standard output.
    fn wrote(&mut self, written: Result<Written, Error>) {
        match written {
            Ok(Written::All) => {}
            Ok(Written::Closed) => self.ended = Some(Ok(())),
            Err(e) => self.ended = Some(Err(e)),
        }
    }

    /// The exit code of the watch, once it is over.
    fn exit_code(&self) -> ExitCode {
        match &self.ended {
            Some(Err(e)) => crate::fail(e, self.style),
            _ => ExitCode::SUCCESS,
        }
    }

    fn rendered(&mut self, library: &promptpack::Library) {
        let Rendered { warnings, result } = render(library, &self.args.render, "watch");
        if warnings != self.warnings {
            for warning in &warnings {
                crate::warn(warning, self.style);
            }
            self.warnings = warnings;
        }
        match result {
            Ok(prompt) => {
                self.done += 1;
                let json = self.args.render.json;
                let done = self.done;
                let written = crate::write_out(|out| {
                    if !json {
                        writeln!(out, "=== render {done} ===")?;
                    }
                    write_prompt(out, &prompt, library.front_matter(&prompt.id), json, false)
                });
                self.wrote(written);
            }
            Err(error) => self.failed(&error),
        }
    }

    fn failed(&mut self, error: &Error) {
        self.done += 1;
        if !self.args.render.json {
            let header = format!("=== render {}: failed ===\n", self.done);
            let written = crate::write_out(|out| out.write_all(header.as_bytes()));
            self.wrote(written);
        }
        crate::print_diagnostics(error.diagnostics(), Severity::Error, self.style);
    }
}

/// Watches until Ctrl-C (or `--max-renders`).
pub(crate) fn run(args: &WatchArgs, style: Style) -> ExitCode {
    let mut updates = Updates {
        args,
        style,
        done: 0,
        root: args.render.folders.root(),
        warnings: Vec::new(),
        ended: None,
    };
    // Errors are shown here, with the render they belong to.
    let mut options = WatchOptions::default().stderr_without_logger(false);
    if let Some(ms) = args.poll {
        options = options.poll(Duration::from_millis(ms));
    }
    let Some(watched) = start(&mut updates, &mut options) else {
        return updates.exit_code();
    };
    let config = watched.config();
    let shown = |p: &Path| format!("{}/", config.display_path(p));
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "watching {} and {} for changes to `{}` (Ctrl-C to stop)",
        shown(config.templates()),
        shown(config.snippets()),
        args.render.id
    );
    drop(err);

    let events = watched.subscribe();
    let mut vars_stamp = args.render.vars_file.as_deref().map(stamp);
    updates.rendered(&watched.current());
    while !updates.finished() {
        match events.recv_timeout(TICK) {
            Ok(event) => {
                // A burst of reloads gives one update, for where it ended.
                let last = events.try_iter().last().unwrap_or(event);
                match last {
                    ReloadEvent::Failed(error) => updates.failed(&error),
                    _ => updates.rendered(&watched.current()),
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = args.render.vars_file.as_deref().map(stamp);
                if now != vars_stamp {
                    vars_stamp = now;
                    updates.rendered(&watched.current());
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    updates.exit_code()
}

/// Starts the watcher. While the prompts do not load, shows the error (once
/// per distinct error) and tries again; when file system events cannot be
/// watched, falls back to polling. `None` when `--max-renders` was reached
/// first.
fn start(updates: &mut Updates<'_>, options: &mut WatchOptions) -> Option<WatchedLibrary> {
    let folders = &updates.args.render.folders;
    let mut last_error: Option<Error> = None;
    loop {
        // Without overrides, promptpack.toml is read again on each reload.
        let watched = if folders.overrides_config() {
            folders
                .config()
                .and_then(|config: Config| WatchedLibrary::with_config(&config, options.clone()))
        } else {
            WatchedLibrary::new(&updates.root, options.clone())
        };
        match watched {
            Ok(watched) => return Some(watched),
            Err(error) if error.code() == ErrorCode::Watch && options.poll.is_none() => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(
                    err,
                    "{error}\nwatching by polling every {} ms instead",
                    TICK.as_millis()
                );
                *options = options.clone().poll(TICK);
            }
            Err(error) => {
                if last_error.as_ref() != Some(&error) {
                    updates.failed(&error);
                    if updates.finished() {
                        return None;
                    }
                    last_error = Some(error);
                }
                std::thread::sleep(TICK);
            }
        }
    }
}

/// What tells a values file changed: its modification time and size.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}
