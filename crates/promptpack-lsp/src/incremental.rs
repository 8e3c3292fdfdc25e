//! Checking again only the prompts an edit can change.
//!
//! What `check` says of a tree is, but for a few whole-tree rules, the union
//! of what it says of each prompt checked alone with every snippet (its
//! files, and the snippets it reaches: an undeclared variable of its
//! contract may sit in a snippet), of the snippets checked with no prompt,
//! and of the lints over the whole tree. So each prompt's own findings are
//! kept, and an edit re-checks the prompts whose files changed and those
//! that reach a changed snippet: an edit to a snippet re-checks the prompts
//! that include it, and only those.
//!
//! The whole-tree rules: the code generator runs only on a tree without
//! errors and compares names across prompts (`id_collision`, the size
//! limits of all prompts together), and budgets are counted only on a tree
//! without errors. A prompt checked alone that meets the generator's codes
//! sends the check back to the whole tree; budgets are dropped from a tree
//! with errors. And the parts are trusted only after a whole check of the
//! same tree said the same: every check of the whole tree (at the start,
//! when files change on disk or the settings do) is compared with the union
//! of its parts, and a difference turns the parts off until the next one.

use crate::checker::{Checker, Findings};
use promptpack_build::{Config, Diagnostic, ErrorCode};
use promptpack_core::lint::{LintCache, lint_sources_cached};
use promptpack_core::scan::{FindingKind, find_tokens};
use promptpack_core::source_file::SourceFile;
use promptpack_core::sources::{SnippetSource, Sources, TemplateSource};
use promptpack_core::syntax::Delimiters;
use std::collections::{HashMap, HashSet};

/// Codes only a check of the whole tree tells right: the code generator's
/// (it compares names across prompts and sums their code, and runs only on
/// a tree without errors). `invalid_choice` and `too_large` come from
/// resolving too, where they are a prompt's own; both send a check back
/// to the whole tree anyway, which is never wrong.
const WHOLE_TREE: [ErrorCode; 6] = [
    ErrorCode::InvalidVarName,
    ErrorCode::VarCollision,
    ErrorCode::InvalidId,
    ErrorCode::IdCollision,
    ErrorCode::TooLarge,
    ErrorCode::InvalidChoice,
];

/// What one prompt's check found that is its own.
struct Part {
    /// The snippets its files include, directly or through others, by name.
    reach: HashSet<String>,
    findings: Findings,
}

/// The parts of the last check, and the tree they were made of.
#[derive(Default)]
pub(crate) struct Incremental {
    parts: HashMap<String, Part>,
    /// The tree last checked, and what the check found.
    last: Option<(Sources, Findings)>,
    /// Whether the parts are known to add up to the whole check.
    trusted: bool,
    /// Whether they were found not to, on a tree where they should: the
    /// whole tree is checked every time until the next reset.
    mismatched: bool,
    /// What the whole tree's lints owe to each file alone, so that an edit
    /// scans only the file it changed.
    lints: LintCache,
}

/// What a check did: every finding, and the prompts it checked (all of
/// them for a check of the whole tree).
pub(crate) struct Checked {
    pub(crate) findings: Findings,
    /// `None`: the whole tree; else the ids of the prompts checked again.
    pub(crate) prompts: Option<Vec<String>>,
}

impl Incremental {
    /// Forgets the parts: the next check is of the whole tree (the
    /// settings changed, or files appeared on disk).
    pub(crate) fn reset(&mut self) {
        *self = Incremental::default();
    }

    /// Checks `sources`, again only where it differs from the tree last
    /// checked when the parts can be trusted.
    pub(crate) fn check(
        &mut self,
        checker: &dyn Checker,
        config: &Config,
        sources: &Sources,
    ) -> Checked {
        if let (true, Some((last, found))) = (self.trusted, &self.last)
            && let Some(change) = affected(last, sources, &self.parts)
        {
            if change.is_none() {
                // Nothing the check reads changed (a buffer opened as
                // saved, a save): what it found stands.
                return Checked {
                    findings: found.clone(),
                    prompts: Some(Vec::new()),
                };
            }
            let affected = change.prompts;
            if let Some(findings) = self.recheck(checker, config, sources, &affected) {
                self.last = Some((sources.clone(), findings.clone()));
                let mut prompts: Vec<String> = affected.into_iter().collect();
                prompts.sort();
                return Checked {
                    findings,
                    prompts: Some(prompts),
                };
            }
        }
        let whole = checker.check(config, sources.clone());
        if !self.mismatched {
            self.rebuild(checker, config, sources, &whole);
        }
        self.last = Some((sources.clone(), whole.clone()));
        Checked {
            findings: whole,
            prompts: None,
        }
    }

    /// Checks the prompts `affected` and the snippets again, and adds up
    /// the parts; `None` when a whole-tree rule came into play.
    fn recheck(
        &mut self,
        checker: &dyn Checker,
        config: &Config,
        sources: &Sources,
        affected: &HashSet<String>,
    ) -> Option<Findings> {
        let ids: HashSet<&str> = sources.templates.iter().map(|t| t.id.as_str()).collect();
        self.parts.retain(|id, _| ids.contains(id.as_str()));
        for template in sources
            .templates
            .iter()
            .filter(|t| affected.contains(&t.id))
        {
            let part = part(checker, config, sources, template)?;
            self.parts.insert(template.id.clone(), part);
        }
        let snippets = snippets_alone(checker, config, sources)?;
        let lints = lint_sources_cached(sources, config.settings(), &mut self.lints);
        Some(add_up(&snippets, self.parts.values(), lints))
    }

    /// Makes every part again after a check of the whole tree, and trusts
    /// them only if they add up to what it found.
    fn rebuild(
        &mut self,
        checker: &dyn Checker,
        config: &Config,
        sources: &Sources,
        whole: &Findings,
    ) {
        self.parts.clear();
        self.trusted = false;
        if has_whole_tree_codes(whole) {
            return;
        }
        for template in &sources.templates {
            let Some(part) = part(checker, config, sources, template) else {
                return;
            };
            self.parts.insert(template.id.clone(), part);
        }
        let Some(snippets) = snippets_alone(checker, config, sources) else {
            return;
        };
        let lints = lint_sources_cached(sources, config.settings(), &mut self.lints);
        let added = add_up(&snippets, self.parts.values(), lints);
        self.trusted = same(&added.errors, &whole.errors) && same(&added.warnings, &whole.warnings);
        self.mismatched = !self.trusted;
    }

    /// Whether the parts were found not to add up to the whole check.
    pub(crate) fn mismatched(&self) -> bool {
        self.mismatched
    }
}

/// What changed from one tree to the next.
struct Change {
    /// The prompts to check again.
    prompts: HashSet<String>,
    /// Whether a snippet changed, came or went, or a prompt went.
    beyond_prompts: bool,
}

impl Change {
    /// Whether nothing the check reads changed.
    fn is_none(&self) -> bool {
        self.prompts.is_empty() && !self.beyond_prompts
    }
}

/// The prompts to check again going from `last` to `now`: those whose
/// files changed or are new, and those reaching a snippet that changed,
/// came or went. `None` when something else changed (files that are not
/// read, or unreadable snippets): then the whole tree is checked.
fn affected(last: &Sources, now: &Sources, parts: &HashMap<String, Part>) -> Option<Change> {
    if last.stray_files != now.stray_files || last.unreadable_snippets != now.unreadable_snippets {
        return None;
    }
    let mut changed_snippets: HashSet<&str> = HashSet::new();
    let (before, after) = (by_name(&last.snippets), by_name(&now.snippets));
    for name in before.keys().chain(after.keys()) {
        if before.get(name) != after.get(name) {
            changed_snippets.insert(name);
        }
    }
    let old: HashMap<&str, &TemplateSource> =
        last.templates.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut affected = HashSet::new();
    for template in &now.templates {
        let same_files = old
            .get(template.id.as_str())
            .is_some_and(|t| same_template(t, template));
        let reaches_a_change = parts.get(&template.id).is_none_or(|part| {
            part.reach
                .iter()
                .any(|name| changed_snippets.contains(name.as_str()))
        });
        if !same_files || reaches_a_change {
            affected.insert(template.id.clone());
        }
    }
    let beyond_prompts =
        !changed_snippets.is_empty() || last.templates.len() != now.templates.len();
    Some(Change {
        prompts: affected,
        beyond_prompts,
    })
}

/// Each snippet name's files: path and text.
fn by_name(list: &[SnippetSource]) -> HashMap<&str, Vec<(&str, &str)>> {
    let mut by_name: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
    for s in list {
        by_name
            .entry(&s.name)
            .or_default()
            .push((s.file.path(), s.file.text()));
    }
    by_name
}

fn same_template(a: &TemplateSource, b: &TemplateSource) -> bool {
    fn text(f: &SourceFile) -> (&str, &str) {
        (f.path(), f.text())
    }
    text(&a.system) == text(&b.system)
        && a.user.as_ref().map(text) == b.user.as_ref().map(text)
        && a.messages.as_ref().map(text) == b.messages.as_ref().map(text)
}

/// Prompt `template` checked alone with every snippet: what it found in
/// its own files and in the snippets it reaches, without the lints (they
/// are the whole tree's). `None` when the generator's codes came up.
fn part(
    checker: &dyn Checker,
    config: &Config,
    sources: &Sources,
    template: &TemplateSource,
) -> Option<Part> {
    let alone = Sources {
        templates: vec![template.clone()],
        snippets: sources.snippets.clone(),
        stray_files: Vec::new(),
        unreadable_snippets: sources.unreadable_snippets.clone(),
    };
    let reach = reach(template, &sources.snippets, config.delimiters());
    let mut own: HashSet<&str> = crate::analysis::template_files(template)
        .map(SourceFile::path)
        .collect();
    own.extend(
        sources
            .snippets
            .iter()
            .filter(|s| reach.contains(&s.name))
            .map(|s| s.file.path()),
    );
    let findings = checker.check_without_lints(config, alone);
    if has_whole_tree_codes(&findings) {
        return None;
    }
    let mine = |d: &Diagnostic| d.location.as_ref().is_none_or(|l| own.contains(l.path()));
    let findings = Findings {
        errors: findings.errors.into_iter().filter(mine).collect(),
        warnings: findings.warnings.into_iter().filter(mine).collect(),
    };
    Some(Part { reach, findings })
}

/// The snippets checked with no prompt: what each says of itself.
fn snippets_alone(checker: &dyn Checker, config: &Config, sources: &Sources) -> Option<Findings> {
    let alone = Sources {
        templates: Vec::new(),
        snippets: sources.snippets.clone(),
        stray_files: Vec::new(),
        unreadable_snippets: sources.unreadable_snippets.clone(),
    };
    let findings = checker.check_without_lints(config, alone);
    (!has_whole_tree_codes(&findings)).then_some(findings)
}

/// The snippets `template` includes, directly or through other snippets,
/// by name (a missing one too: a new file of that name is a change to it).
fn reach(
    template: &TemplateSource,
    snippets: &[SnippetSource],
    delims: &Delimiters,
) -> HashSet<String> {
    let includes = |text: &str| -> Vec<String> {
        find_tokens(text, delims)
            .iter()
            .filter(|f| f.kind == FindingKind::Snippet)
            .filter_map(|f| f.name(text).map(str::to_string))
            .collect()
    };
    let mut reached = HashSet::new();
    let mut stack: Vec<String> = crate::analysis::template_files(template)
        .flat_map(|f| includes(f.text()))
        .collect();
    while let Some(name) = stack.pop() {
        if reached.insert(name.clone()) {
            for snippet in snippets.iter().filter(|s| s.name == name) {
                stack.extend(includes(snippet.file.text()));
            }
        }
    }
    reached
}

/// The whole check's findings from its parts, each once.
fn add_up<'p>(
    snippets: &Findings,
    parts: impl Iterator<Item = &'p Part>,
    lints: Vec<Diagnostic>,
) -> Findings {
    let mut total = Findings::default();
    let mut seen = HashSet::new();
    let mut add = |into: &mut Vec<Diagnostic>, from: &[Diagnostic]| {
        for d in from {
            if seen.insert(key(d)) {
                into.push(d.clone());
            }
        }
    };
    add(&mut total.errors, &snippets.errors);
    add(&mut total.warnings, &snippets.warnings);
    for part in parts {
        add(&mut total.errors, &part.findings.errors);
        add(&mut total.warnings, &part.findings.warnings);
    }
    add(&mut total.warnings, &lints);
    if !total.errors.is_empty() {
        // Budgets are counted on a tree that loads.
        total.warnings.retain(|w| w.code != ErrorCode::OverBudget);
    }
    total
}

/// What tells two diagnostics apart, as a value to hash: a tree of a
/// thousand prompts has thousands, and comparing each with all the others
/// costs more than the check.
fn key(d: &Diagnostic) -> String {
    let at = d
        .location
        .as_ref()
        .map(|l| (l.path(), l.line(), l.column(), l.len()));
    format!("{}\0{}\0{at:?}\0{:?}", d.code.as_str(), d.message, d.help)
}

fn has_whole_tree_codes(findings: &Findings) -> bool {
    findings
        .errors
        .iter()
        .chain(&findings.warnings)
        .any(|d| WHOLE_TREE.contains(&d.code))
}

/// The same diagnostics, each once, in any order.
fn same(a: &[Diagnostic], b: &[Diagnostic]) -> bool {
    let keys = |list: &[Diagnostic]| -> HashSet<String> { list.iter().map(key).collect() };
    keys(a) == keys(b)
}
