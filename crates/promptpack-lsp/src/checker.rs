//! What the server runs over a prompt tree: the build's checks, and what a
//! caller adds to them (the CLI adds token budgets, which need a tokenizer
//! this crate does not carry).

use promptpack_build::{Config, Diagnostic};
use promptpack_core::lint::lint_sources;
use promptpack_core::sources::Sources;

/// Every problem found in a prompt tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// What fails the build.
    pub errors: Vec<Diagnostic>,
    /// Lints: what builds but is probably a mistake.
    pub warnings: Vec<Diagnostic>,
}

/// Checks a prompt tree held in memory: what `promptpack check` would say
/// of the same files.
pub trait Checker {
    /// Every error and lint of `sources`, read under `config`'s settings.
    fn check(&self, config: &Config, sources: Sources) -> Findings;

    /// [`Checker::check`] without the lints of `promptpack_core::lint`,
    /// for the parts of a tree the server checks alone (it lints the whole
    /// tree once). By default the check with those lints taken out again;
    /// a checker that can skip them says so by overriding this.
    fn check_without_lints(&self, config: &Config, sources: Sources) -> Findings {
        let lints = lint_sources(&sources, config.settings());
        let mut findings = self.check(config, sources);
        for lint in lints {
            if let Some(i) = findings.warnings.iter().position(|w| *w == lint) {
                findings.warnings.remove(i);
            }
        }
        findings
    }

    /// The range of token counts of prompt `id`'s renders, as shown on
    /// hover over a prompt file's first line (`120–340 tokens (o200k)`);
    /// `None` when the checker counts no tokens or the prompt does not load.
    fn token_range(&self, config: &Config, sources: Sources, id: &str) -> Option<String> {
        let _ = (config, sources, id);
        None
    }
}

/// The build's own checks, `promptpack_build::house::check_sources`: every error
/// and lint but the token budgets (`over_budget`), which need a tokenizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildChecker;

impl Checker for BuildChecker {
    fn check(&self, config: &Config, sources: Sources) -> Findings {
        let report = promptpack_build::house::check_sources(sources, config).report;
        Findings {
            errors: report.errors,
            warnings: report.warnings,
        }
    }

    fn check_without_lints(&self, config: &Config, sources: Sources) -> Findings {
        let report = promptpack_build::house::check_sources_without_lints(sources, config).report;
        Findings {
            errors: report.errors,
            warnings: report.warnings,
        }
    }
}
