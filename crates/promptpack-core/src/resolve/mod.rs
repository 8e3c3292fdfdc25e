//! From parsed files to programs: checks the snippet graph (missing names,
//! cycles), splices snippets into templates, numbers variables and turns
//! blocks into jumps. Knows nothing of files on disk.
//!
//! One stage a file: `snippets` reads the snippets once, `graph` finds
//! what each include names and refuses cycles (`missing` words what is not
//! found), `template` resolves one template, whose parts `expand` splices,
//! numbering variables as `vars` says and writing items as `splice` does,
//! within `limits`.

mod conversation;
mod expand;
mod graph;
mod limits;
mod missing;
mod snippets;
mod splice;
mod template;
#[cfg(test)]
mod tests;
mod vars;

use crate::error::{Diagnostic, ErrorCode, Location};
use crate::front_matter::FrontMatter;
use crate::program::{Program, VarInfo};
use crate::sections::Headings;
use crate::settings::Settings;
use crate::source_file::SourceFile;
pub use crate::sources::{SnippetSource, TemplateSource};
use crate::syntax::{Delimiters, Parsed, parse, parse_conversation, strip_standalone_tags};
pub use limits::{MAX_EXPANDED_OPS, MAX_EXPANDED_TEXT, MAX_PROMPT_BYTES};
use std::collections::{BTreeSet, HashSet};

/// A prompt with every snippet spliced in, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPrompt {
    /// The prompt id.
    pub id: String,
    /// The system part.
    pub system: Program,
    /// The user part, when there is a `user.md`.
    pub user: Option<Program>,
    /// Path of `system.md`, for docs and diagnostics.
    pub system_path: String,
    /// Path of `user.md`, when there is one.
    pub user_path: Option<String>,
    /// The turns after the system message, when the prompt is a
    /// conversation (`messages.md`).
    pub conversation: Option<crate::conversation::Conversation>,
    /// Path of `messages.md`, when there is one.
    pub messages_path: Option<String>,
    /// Every variable either part uses, in order of first use.
    pub vars: Vec<VarInfo>,
    /// Every snippet either part includes, directly or through other snippets.
    pub snippets: BTreeSet<String>,
    /// Stable content hash of the resolved parts.
    pub hash: u64,
    /// The front matter of `system.md` and `user.md`, merged.
    pub front_matter: FrontMatter,
}

/// Resolves every template against the snippets, under the default settings
/// but for the delimiters. Returns the prompts that resolved and every
/// problem found; callers should treat any problem as failure of the whole
/// set. [`resolve_with`] takes every setting and says more.
pub fn resolve(
    templates: &[TemplateSource],
    snippets: &[SnippetSource],
    delims: &Delimiters,
) -> (Vec<ResolvedPrompt>, Vec<Diagnostic>) {
    let settings = Settings {
        delimiters: delims.clone(),
        ..Settings::default()
    };
    let resolved = resolve_with(templates, snippets, &[], &settings);
    (resolved.prompts, resolved.errors)
}

/// Resolves every template against the snippets under every setting of the
/// language (the delimiters, [`Settings::standalone_tags`]), counting its
/// work. `unreadable` names the snippets a reader found but could not read
/// ([`Sources::unreadable_snippets`](crate::sources::Sources::unreadable_snippets)):
/// an include of one fails its template without being reported again as
/// missing (the reader reported why it was not read). Front matter warnings
/// (unknown keys, unused declarations) are in [`Counted::warnings`].
pub fn resolve_with(
    templates: &[TemplateSource],
    snippets: &[SnippetSource],
    unreadable: &[String],
    settings: &Settings,
) -> Counted {
    let parse = |file: &SourceFile| {
        let mut parsed = parse(file, &settings.delimiters)?;
        if settings.standalone_tags {
            strip_standalone_tags(file, &mut parsed);
        }
        Ok::<Parsed, Vec<Diagnostic>>(parsed)
    };
    let parse_messages = |file: &SourceFile| {
        let mut parsed = parse_conversation(file, &settings.delimiters)?;
        if settings.standalone_tags {
            strip_standalone_tags(file, &mut parsed);
        }
        Ok::<Parsed, Vec<Diagnostic>>(parsed)
    };
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let by_name = snippets::read_snippets(snippets, &parse, &mut errors, &mut warnings);
    let mut graph = graph::SnippetGraph::new(&by_name, &settings.delimiters, unreadable);
    graph.check_all(snippets, &parse, &mut errors);

    let mut prompts = Vec::new();
    let mut ids = HashSet::new();
    let mut steps = 0;
    for t in templates {
        if !ids.insert(t.id.as_str()) {
            errors.push(
                Diagnostic::new(
                    ErrorCode::IdCollision,
                    format!("prompt id `{}` is defined twice", t.id),
                )
                .at(Location::file(t.system.path())),
            );
            continue;
        }
        let parsers = template::Parsers {
            part: &parse,
            conversation: &parse_messages,
        };
        let (prompt, spent) =
            template::resolve_template(t, &mut graph, parsers, &mut errors, &mut warnings);
        steps += spent;
        prompts.extend(prompt);
    }
    Counted {
        prompts,
        errors,
        warnings,
        steps,
    }
}

/// What [`resolve_with`] returns: the prompts, the problems and the work it
/// took.
#[derive(Debug)]
pub struct Counted {
    /// The prompts that resolved.
    pub prompts: Vec<ResolvedPrompt>,
    /// Every problem found.
    pub errors: Vec<Diagnostic>,
    /// What front matter warns of: unknown keys, declarations no template
    /// uses.
    pub warnings: Vec<Diagnostic>,
    /// The steps splicing took: one per item of a file walked, one per op
    /// copied from an earlier splice of the same snippet. Each part walks a
    /// file's items at most once (a snippet spliced again is copied from its
    /// first splice, which costs what it adds to the output), so this stays
    /// within the parts' input plus their output however snippets fan out:
    /// for every template, at most its parts times (the items of its files
    /// and of every snippet), plus the ops of the programs made, plus those
    /// of a part refused as [`too_large`](ErrorCode::TooLarge).
    pub steps: u64,
}

impl Counted {
    /// The most [`Counted::steps`] resolving `templates` and `snippets` may
    /// take: every part of every template (system and user) walks the whole
    /// input once (one step per byte and one per file), plus the ops of the
    /// programs made, plus [`MAX_EXPANDED_OPS`] for each part of a template
    /// that did not resolve (a part refused as `too_large` stops there).
    /// A snippet counts once more for each heading level it has: its
    /// sections of one level do not overlap, and each is walked at most
    /// once per part, as the whole is.
    pub fn step_bound(&self, templates: &[TemplateSource], snippets: &[SnippetSource]) -> u64 {
        let size = |f: &SourceFile| f.text().len() as u64 + 1;
        let input: u64 = templates
            .iter()
            .flat_map(|t| std::iter::once(&t.system).chain(&t.user).chain(&t.messages))
            .map(size)
            .chain(
                snippets
                    .iter()
                    .map(|s| size(&s.file) * (1 + Headings::of(&s.file).levels() as u64)),
            )
            .sum();
        // Each message of a conversation is spliced as a part is, and a
        // conversation has at most `MAX_TURNS` of them, snippets of turns
        // spliced.
        let messages =
            |t: &TemplateSource| t.messages.as_ref().map_or(0, |_| limits::MAX_TURNS as u64);
        let parts = |t: &TemplateSource| 1 + u64::from(t.user.is_some()) + messages(t);
        let all_parts: u64 = templates.iter().map(parts).sum();
        let resolved: HashSet<&str> = self.prompts.iter().map(|p| p.id.as_str()).collect();
        let unresolved_parts: u64 = templates
            .iter()
            .filter(|t| !resolved.contains(t.id.as_str()))
            .map(parts)
            .sum();
        let output: u64 = self
            .prompts
            .iter()
            .flat_map(|p| {
                let messages = p.conversation.iter().flat_map(|c| c.programs());
                std::iter::once(&p.system).chain(&p.user).chain(messages)
            })
            .map(|program| program.ops.len() as u64)
            .sum();
        all_parts * input + output + unresolved_parts * MAX_EXPANDED_OPS as u64
    }
}
