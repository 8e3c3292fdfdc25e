//! `promptpack lsp`: the language server, with `check`'s token budgets.

use crate::budget::token_range;
use crate::check::findings;
use crate::list::shown_tokens;
use crate::tokens::{Counter, Encoding};
use clap::Args;
use promptpack::{Config, Style};
use promptpack_core::sources::Sources;
use promptpack_lsp::{Checker, Findings, Options};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `promptpack lsp`.
#[derive(Debug, Args)]
pub(crate) struct LspArgs {
    /// The prompt root [default: found from the editor's workspace folder,
    /// as the other commands find it from the current folder].
    #[arg(long, value_name = "ROOT")]
    root: Option<PathBuf>,
    /// The encoding `max_tokens` budgets and hovers count tokens in.
    #[arg(long, value_enum, default_value_t)]
    tokenizer: Encoding,
}

/// `check`'s own findings: the build's checks, then the token budgets,
/// counted with one tokenizer loaded at the first count (loading one takes
/// hundreds of milliseconds: once per server, not once per check).
struct CheckChecker {
    counter: Counter,
}

impl Checker for CheckChecker {
    fn check(&self, config: &Config, sources: Sources) -> Findings {
        let report = promptpack_build::house::check_sources(sources, config);
        let (errors, warnings) = findings(config, report, &self.counter);
        Findings { errors, warnings }
    }

    fn check_without_lints(&self, config: &Config, sources: Sources) -> Findings {
        let report = promptpack_build::house::check_sources_without_lints(sources, config);
        let (errors, warnings) = findings(config, report, &self.counter);
        Findings { errors, warnings }
    }

    fn token_range(&self, config: &Config, sources: Sources, id: &str) -> Option<String> {
        let checked = promptpack_build::house::check_sources(sources, config);
        let prompt = checked.resolved.iter().find(|p| p.id == id)?.clone();
        let budget = prompt.front_matter.max_tokens;
        let library = promptpack::house::library_of(checked.resolved, config.delimiters().clone());
        let range = token_range(&library, &prompt, &|text| self.counter.count(text)).ok()?;
        Some(format!(
            "tokens {}",
            shown_tokens(&range, self.counter.encoding(), budget)
        ))
    }
}

/// Serves an editor over stdio until it exits.
pub(crate) fn run(args: &LspArgs, style: Style) -> ExitCode {
    let options = Options {
        root: args.root.clone(),
    };
    let checker = CheckChecker {
        counter: Counter::new(args.tokenizer),
    };
    match promptpack_lsp::run_stdio(options, &checker) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::warn(&format!("the language server stopped: {e}"), style);
            ExitCode::FAILURE
        }
    }
}
