//! `promptpack`: check, list, render and watch a folder of prompt templates.
//!
//! Built on promptpack's public API only. Exit codes: 0 when all is well,
//! 1 when the prompts (or the values given) have errors, 2 on a usage error.

mod budget;
#[cfg(feature = "catalog")]
mod catalog;
mod check;
#[cfg(feature = "console")]
mod console;
mod contract;
mod init;
mod list;
#[cfg(feature = "lsp")]
mod lsp;
mod not_built;
#[cfg(feature = "console")]
mod relay;
mod render;
#[cfg(feature = "catalog")]
mod store_args;
mod tokens;
mod watch;

use clap::{Args, Parser, Subcommand};
use promptpack::{Config, Diagnostic, Error, ErrorCode, Severity, Style, render_diagnostic};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Check, list, render and watch Markdown prompt templates.
#[derive(Debug, Parser)]
#[command(name = "promptpack", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load and validate every prompt; print every error and warning.
    Check(check::CheckArgs),
    /// List every prompt: parts, variables and their types, snippets, size, hash.
    List(list::ListArgs),
    /// Print the contract of the program the prompts compile to: every
    /// prompt id with its variables and their kinds, as JSON.
    Contract(contract::ContractArgs),
    /// Render one prompt: the system part, then the user part.
    Render(render::RenderArgs),
    /// Render one prompt again on every change to the prompt folder.
    Watch(watch::WatchArgs),
    /// Create a prompt folder: promptpack.toml, a sample prompt and a snippet
    /// (with --cargo, also the build script and the dependencies).
    Init(init::InitArgs),
    /// Keep prompts in a versioned catalog (SQLite or PostgreSQL): import,
    /// publish, label, diff, roll back.
    #[cfg(feature = "catalog")]
    Catalog(catalog::CatalogArgs),
    /// Keep prompts in a versioned catalog [not in this build: needs the
    /// `catalog` feature].
    #[cfg(not(feature = "catalog"))]
    Catalog(not_built::NotBuilt),
    /// Serve the catalog's web console and JSON API; manage its users.
    #[cfg(feature = "console")]
    Console(console::ConsoleArgs),
    /// Serve the catalog's web console [not in this build: needs the
    /// `console` feature].
    #[cfg(not(feature = "console"))]
    Console(not_built::NotBuilt),
    /// Serve a fleet's live prompt handles from one catalog connection
    /// (a relay: snapshots and streams of labels over HTTP).
    #[cfg(feature = "console")]
    Relay(relay::RelayArgs),
    /// Serve a fleet's live prompt handles [not in this build: needs the
    /// `console` feature].
    #[cfg(not(feature = "console"))]
    Relay(not_built::NotBuilt),
    /// Run the language server over stdio, for an editor: the checks of
    /// `check` as you type, hover, go to definition, references,
    /// completion, rename and quick fixes.
    #[cfg(feature = "lsp")]
    Lsp(lsp::LspArgs),
    /// Run the language server, for an editor [not in this build: needs
    /// the `lsp` feature].
    #[cfg(not(feature = "lsp"))]
    Lsp(not_built::NotBuilt),
}

/// Where the prompts are: the options every subcommand takes.
#[derive(Debug, Clone, Args)]
pub(crate) struct Folders {
    /// The prompt root: holds templates/, snippets/ and optionally promptpack.toml
    /// [default: the current folder if it holds promptpack.toml or templates/,
    /// else the nearest one above it holding promptpack.toml, or a Cargo.toml
    /// beside a templates/ folder].
    #[arg(long, value_name = "ROOT")]
    root: Option<PathBuf>,
    /// The templates folder [default: ROOT/templates, or as promptpack.toml says].
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// The snippets folder [default: ROOT/snippets, or as promptpack.toml says].
    #[arg(long, value_name = "DIR")]
    snippets: Option<PathBuf>,
    /// Token delimiters, overriding promptpack.toml, e.g. `--delimiters '<<' '>>'`.
    #[arg(long, num_args = 2, value_names = ["OPEN", "CLOSE"])]
    delimiters: Option<Vec<String>>,
    /// The most bytes one part of a prompt may render to; more is refused
    /// (`too_large`) before it is allocated [default: promptpack.toml's
    /// `[render] max_bytes`, else 16 MiB].
    #[arg(long, value_name = "BYTES", value_parser = parse_byte_count)]
    max_render_bytes: Option<usize>,
}

/// A count of bytes given on the command line: a whole number above 0.
pub(crate) fn parse_byte_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("a number of bytes above 0".to_string()),
        Ok(bytes) => Ok(bytes),
        Err(_) => Err(format!("`{text}` is not a number of bytes")),
    }
}

impl Folders {
    /// The configuration: `ROOT/promptpack.toml` when there is one, then the
    /// command-line overrides.
    pub(crate) fn config(&self) -> Result<Config, Error> {
        let mut config = Config::load(self.root())?;
        if let Some(dir) = &self.templates {
            config = config.with_templates(dir);
        }
        if let Some(dir) = &self.snippets {
            config = config.with_snippets(dir);
        }
        if let Some([open, close]) = self.delimiters.as_deref() {
            config = config.with_delimiters(open, close)?;
        }
        if let Some(bytes) = self.max_render_bytes {
            config = config.with_max_render_bytes(bytes);
        }
        Ok(config)
    }

    /// The prompt root: `--root`, or the one found from the current folder.
    pub(crate) fn root(&self) -> PathBuf {
        match &self.root {
            Some(root) => root.clone(),
            None => std::env::current_dir()
                .ok()
                .and_then(|cwd| find_root(&cwd))
                .unwrap_or_else(|| PathBuf::from(".")),
        }
    }

    /// Whether a command-line option overrides what promptpack.toml says.
    pub(crate) fn overrides_config(&self) -> bool {
        self.templates.is_some()
            || self.snippets.is_some()
            || self.delimiters.is_some()
            || self.max_render_bytes.is_some()
    }
}

fn main() -> ExitCode {
    // Usage errors exit with clap's code 2; `--help` and `--version` with 0.
    let cli = Cli::parse();
    let style = stderr_style();
    match cli.command {
        Command::Check(args) => check::run(&args, style),
        Command::List(args) => list::run(&args, style),
        Command::Contract(args) => contract::run(&args, style),
        Command::Render(args) => render::run(&args, style),
        Command::Watch(args) => watch::run(&args, style),
        Command::Init(args) => init::run(&args, style),
        #[cfg(feature = "catalog")]
        Command::Catalog(args) => catalog::run(&args, style),
        #[cfg(not(feature = "catalog"))]
        Command::Catalog(_) => not_built::exit("catalog", "catalog"),
        #[cfg(feature = "console")]
        Command::Console(args) => console::run(&args, style),
        #[cfg(not(feature = "console"))]
        Command::Console(_) => not_built::exit("console", "console"),
        #[cfg(feature = "console")]
        Command::Relay(args) => relay::run(&args, style),
        #[cfg(not(feature = "console"))]
        Command::Relay(_) => not_built::exit("relay", "console"),
        #[cfg(feature = "lsp")]
        Command::Lsp(args) => lsp::run(&args, style),
        #[cfg(not(feature = "lsp"))]
        Command::Lsp(_) => not_built::exit("lsp", "lsp"),
    }
}

/// The prompt root for a command run in `cwd`, as cargo finds `Cargo.toml`:
/// `cwd` itself when it holds promptpack.toml or templates/, else the
/// nearest folder above that holds promptpack.toml, or a Cargo.toml beside a
/// templates/ folder. The root is given relative to `cwd` (`..`, `../..`),
/// so that paths in messages stay short. `None` when there is none.
fn find_root(cwd: &Path) -> Option<PathBuf> {
    promptpack_load::root_above(cwd).map(|up| {
        if up == 0 {
            PathBuf::from(".")
        } else {
            std::iter::repeat_n("..", up).collect()
        }
    })
}

/// Colour on a terminal, unless `NO_COLOR` is set (to anything non-empty,
/// as <https://no-color.org> says).
fn stderr_style() -> Style {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    if std::io::stderr().is_terminal() && !no_color {
        Style::Color
    } else {
        Style::Plain
    }
}

/// Prints diagnostics to stderr, each followed by a blank line.
pub(crate) fn print_diagnostics(diagnostics: &[Diagnostic], severity: Severity, style: Style) {
    let mut err = std::io::stderr().lock();
    for d in diagnostics {
        // A closed stderr leaves nothing to report to.
        let _ = writeln!(err, "{}\n", render_diagnostic(d, severity, style));
    }
}

/// Prints an error's diagnostics and returns exit code 1.
pub(crate) fn fail(error: &Error, style: Style) -> ExitCode {
    print_diagnostics(error.diagnostics(), Severity::Error, style);
    ExitCode::FAILURE
}

/// Prints a one-line warning to stderr.
pub(crate) fn warn(message: &str, style: Style) {
    // Warnings name keys of a values file and `--var` names, which may hold
    // escape sequences: shown escaped, as diagnostics are.
    let message = promptpack_core::diagnostics::escape_controls(message);
    let mut err = std::io::stderr().lock();
    let _ = match style {
        Style::Color => writeln!(err, "\x1b[1;33mwarning\x1b[0m\x1b[1m: {message}\x1b[0m"),
        _ => writeln!(err, "warning: {message}"),
    };
}

/// Writes `text` to stdout, as [`write_out`] does, and returns the exit code
/// of a command that has printed its result.
pub(crate) fn print_out(text: &str, style: Style) -> ExitCode {
    finish_out(write_out(|out| out.write_all(text.as_bytes())), style)
}

/// The exit code once a command's result is written: a failure, reported,
/// when the output was lost.
pub(crate) fn finish_out(written: Result<Written, Error>, style: Style) -> ExitCode {
    match written {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => fail(&e, style),
    }
}

/// What became of output written to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// All of it went out.
    All,
    /// The reader closed the pipe (`promptpack render big | head`): it
    /// wanted no more, which is no error, but a watch has no one left to
    /// print for.
    Closed,
}

/// Lets `write` write to stdout, locked and buffered, and flushes. A write
/// error ends `write` early. A closed pipe is [`Written::Closed`]; any
/// other error (a full disk, `> /dev/full`) is an `io` error, since the
/// output was lost and the exit code must say so.
pub(crate) fn write_out(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Written, Error> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(Written::All),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Written::Closed),
        Err(e) => {
            // The buffer holds bytes that could not be written: dropping it
            // would try them again, and fail again, silently.
            let _ = out.into_parts();
            Err(usage_error(
                ErrorCode::Io,
                format!("cannot write to standard output: {e}"),
            ))
        }
    }
}

/// A hash as shown everywhere: 16 hex digits.
pub(crate) fn hex(hash: u64) -> String {
    promptpack::PromptHash::from(hash).to_string()
}

/// An error about something given on the command line, with no place in a file.
pub(crate) fn usage_error(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::from(Diagnostic::new(code, message))
}
