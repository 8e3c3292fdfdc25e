//! A snippet's draft checked against every prompt that includes it: the
//! newest version of each live prompt that pins the snippet, compiled with
//! the draft in place of the snippet's newest revision (and the newest
//! revision of every other snippet) through the build's own pipeline, as a
//! prompt's edit page checks its draft. What publishing the draft and then
//! upgrading each prompt's pins would meet.

use promptpack::Diagnostic;
use promptpack_catalog::{Catalog, Draft, Error, Selector, Version};
use promptpack_core::SourceFile;
use promptpack_core::sources::SnippetSource;

/// What one including prompt says of the draft.
pub(crate) struct PromptCheck {
    /// The prompt.
    pub(crate) prompt_id: String,
    /// Its newest version, the one checked.
    pub(crate) version: u32,
    /// The errors, located in the prompt's files or the snippet's.
    pub(crate) errors: Vec<Diagnostic>,
    /// The warnings of the same files.
    pub(crate) warnings: Vec<Diagnostic>,
}

/// The newest version of every live prompt whose newest version pins
/// snippet `name` (a prompt that included it once and no longer does is
/// not one), by id.
pub(crate) fn including(catalog: &mut Catalog, name: &str) -> Result<Vec<Version>, Error> {
    let mut ids: Vec<String> = catalog
        .snippet_uses(name)?
        .into_iter()
        .map(|pin| pin.prompt_id)
        .collect();
    ids.dedup();
    let mut newest = Vec::with_capacity(ids.len());
    for id in ids {
        let version = catalog.get(&id, &Selector::Latest)?;
        if version.pins.iter().any(|pin| pin.snippet == name) {
            newest.push(version);
        }
    }
    Ok(newest)
}

/// `text` as the next revision of snippet `name`, checked in each of
/// `prompts` (from [`including`]).
pub(crate) fn check_against(
    catalog: &mut Catalog,
    name: &str,
    text: &str,
    prompts: &[Version],
) -> Result<Vec<PromptCheck>, Error> {
    let snippet_path = format!("snippets/{name}.md");
    let mut checks = Vec::with_capacity(prompts.len());
    for version in prompts {
        let id = &version.prompt_id;
        let draft = Draft {
            system: version.system.clone(),
            user: version.user.clone(),
            messages: version.messages.clone(),
            message: String::new(),
            syntax: version.syntax.clone(),
        };
        let mut sources = catalog.draft_sources(id, &draft)?;
        sources.snippets.retain(|s| s.name != name);
        sources.snippets.push(SnippetSource {
            name: name.to_string(),
            file: SourceFile::new(snippet_path.clone(), text),
        });
        let report =
            promptpack_build::house::check_sources(sources, &draft.syntax.config()?).report;
        let templates = format!("templates/{id}/");
        // This prompt's files and the snippet's: another snippet's lint is
        // not this draft's business.
        let ours = |d: &Diagnostic| {
            d.location
                .as_ref()
                .is_none_or(|at| at.path().starts_with(&templates) || at.path() == snippet_path)
        };
        checks.push(PromptCheck {
            prompt_id: id.clone(),
            version: version.version,
            errors: report.errors,
            warnings: report.warnings.into_iter().filter(|d| ours(d)).collect(),
        });
    }
    Ok(checks)
}
