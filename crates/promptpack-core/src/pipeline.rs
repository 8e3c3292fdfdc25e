//! The pure half of the one load pipeline: sources already read → parse →
//! resolve → lint. `promptpack-load` puts the reading in front of it; the
//! build script, `Library::load`, the reload worker and `check` all go
//! through both.

use crate::error::{Diagnostic, Error};
use crate::resolve::{ResolvedPrompt, resolve_with};
use crate::settings::Settings;
use crate::sources::Sources;

/// Which optional stages to run: [`Stages::default`] resolves only;
/// `Stages::with_lints` runs the lints too (`check`, the build script),
/// which an application that only renders does not need.
///
/// `with_lints` exists only with the `lint` feature, so that lints asked of
/// a core built without them do not compile, rather than come back empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stages {
    #[cfg(feature = "lint")]
    lint: bool,
}

impl Stages {
    /// Resolving and the lints.
    #[cfg(feature = "lint")]
    pub fn with_lints() -> Stages {
        Stages { lint: true }
    }
}

/// What the pipeline made of a prompt set: the prompts that resolved, and
/// every problem found on the way, errors and warnings apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compiled {
    /// The sources as read.
    pub sources: Sources,
    /// The prompts that resolved, sorted by id.
    pub prompts: Vec<ResolvedPrompt>,
    /// Every error: of reading, of the templates. Empty when all is well.
    pub errors: Vec<Diagnostic>,
    /// Every warning: front matter's (unknown keys, unused declarations,
    /// unhandled choice values) always, the lints when `Stages::with_lints`
    /// asked for them.
    pub warnings: Vec<Diagnostic>,
}

impl Compiled {
    /// `Ok` when there is no error, else one [`Error`] holding every error:
    /// the one multi-error convention of the house.
    pub fn into_result(mut self) -> Result<Compiled, Error> {
        match Error::from_diagnostics(std::mem::take(&mut self.errors)) {
            Some(error) => Err(error),
            None => Ok(self),
        }
    }
}

/// Runs the pure stages on `sources`; `read_errors` are the problems the
/// reader already met, which come first in [`Compiled::errors`].
pub fn compile(
    sources: Sources,
    read_errors: Vec<Diagnostic>,
    settings: &Settings,
    stages: Stages,
) -> Compiled {
    let mut errors = read_errors;
    let resolved = resolve_with(
        &sources.templates,
        &sources.snippets,
        &sources.unreadable_snippets,
        settings,
    );
    errors.extend(resolved.errors);
    let mut prompts = resolved.prompts;
    prompts.sort_by(|a, b| a.id.cmp(&b.id));
    // Front matter's warnings cost nothing more (resolve finds them on the
    // way) and the dev reload and catalog publish show some of them.
    let mut warnings = lints(&sources, settings, stages);
    warnings.extend(resolved.warnings);
    Compiled {
        sources,
        prompts,
        errors,
        warnings,
    }
}

#[cfg(feature = "lint")]
fn lints(sources: &Sources, settings: &Settings, stages: Stages) -> Vec<Diagnostic> {
    if stages.lint {
        crate::lint::lint_sources(sources, settings)
    } else {
        Vec::new()
    }
}

#[cfg(not(feature = "lint"))]
fn lints(_: &Sources, _: &Settings, _: Stages) -> Vec<Diagnostic> {
    // No `Stages` asks for lints here: `Stages::with_lints` is the lint
    // feature's.
    Vec::new()
}
