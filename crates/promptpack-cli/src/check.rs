//! `promptpack check`: every error and every lint, then a summary line.

use crate::Folders;
use clap::Args;
use promptpack::{Diagnostic, Severity, Style};
use std::io::Write;
use std::process::ExitCode;

/// Options of `promptpack check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    #[command(flatten)]
    folders: Folders,
}

/// Loads and validates everything, prints every error and warning at once.
pub(crate) fn run(args: &CheckArgs, style: Style) -> ExitCode {
    let (mut errors, lints, prompts, snippets) = match args.folders.config() {
        Err(e) => (e.into_diagnostics(), Vec::new(), 0, 0),
        Ok(config) => {
            // Everything the build checks, so that a tree `check` accepts
            // is a tree `cargo build` accepts.
            let report = promptpack_build::check(&config);
            (
                report.errors,
                report.warnings,
                report.prompts,
                report.snippets,
            )
        }
    };
    errors.sort_by_key(place);

    crate::print_diagnostics(&errors, Severity::Error, style);
    crate::print_diagnostics(&lints, Severity::Warning, style);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "checked {}, {}: {}, {}",
        count(prompts, "prompt"),
        count(snippets, "snippet"),
        count(errors.len(), "error"),
        count(lints.len(), "warning"),
    );
    let failed = !errors.is_empty() || (args.deny_warnings && !lints.is_empty());
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Sort key: file, line, column; diagnostics without a place come first.
fn place(d: &Diagnostic) -> (String, usize, usize) {
    d.location
        .as_ref()
        .map(|l| (l.path().to_string(), l.line(), l.column()))
        .unwrap_or_default()
}

/// `1 prompt`, `2 prompts`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
