//! From parsed files to programs: checks the snippet graph (missing names,
//! cycles), splices snippets into templates, numbers variables and turns
//! blocks into jumps. Knows nothing of files on disk.

use crate::error::Location;
use crate::error::{Diagnostic, ErrorCode};
use crate::front_matter::{
    DeclaredVar, FileRole, FrontMatter, apply_contract, read_front_matter, unused_snippet_vars,
};
use crate::program::{ChoiceBlock, Op, Program, StableHasher, VarInfo, VarUses, hash_program};
use crate::sections::Headings;
use crate::settings::Settings;
use crate::similar::nearest;
use crate::source_file::SourceFile;
use crate::sources::Sources;
pub use crate::sources::{SnippetSource, TemplateSource};
use crate::syntax::{
    Condition, Delimiters, Include, Item, Name, Parsed, parse, strip_standalone_tags,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;

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
    /// Every variable either part uses, in order of first use.
    pub vars: Vec<VarInfo>,
    /// Every snippet either part includes, directly or through other snippets.
    pub snippets: BTreeSet<String>,
    /// Stable content hash of the resolved parts.
    pub hash: u64,
    /// The front matter of `system.md` and `user.md`, merged.
    pub front_matter: FrontMatter,
}

struct ParsedSnippet<'a> {
    file: &'a SourceFile,
    parsed: Option<Parsed>,
    front_matter: FrontMatter,
}

/// Resolves every template against the snippets. Returns the prompts that
/// resolved and every problem found; callers should treat any problem as
/// failure of the whole set.
pub fn resolve(
    templates: &[TemplateSource],
    snippets: &[SnippetSource],
    delims: &Delimiters,
) -> (Vec<ResolvedPrompt>, Vec<Diagnostic>) {
    let settings = Settings {
        delimiters: delims.clone(),
        ..Settings::default()
    };
    resolve_with(templates, snippets, &settings)
}

/// [`resolve`] with every setting of the language: the delimiters and
/// [`Settings::standalone_tags`].
pub fn resolve_with(
    templates: &[TemplateSource],
    snippets: &[SnippetSource],
    settings: &Settings,
) -> (Vec<ResolvedPrompt>, Vec<Diagnostic>) {
    let counted = resolve_counting(templates, snippets, settings);
    (counted.prompts, counted.errors)
}

/// [`resolve_with`] on what a reader read: an include of one of
/// [`Sources::unreadable_snippets`] fails its template without being
/// reported again as missing (the reader reported why it was not read).
/// Front matter warnings (unknown keys, unused declarations) are in
/// [`Counted::warnings`].
pub fn resolve_sources(sources: &Sources, settings: &Settings) -> Counted {
    let (templates, snippets) = (&sources.templates, &sources.snippets);
    resolve_read(templates, snippets, &sources.unreadable_snippets, settings)
}

/// What [`resolve_counting`] returns: [`resolve_with`]'s result and the
/// work it took.
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
            .flat_map(|t| std::iter::once(&t.system).chain(&t.user))
            .map(size)
            .chain(
                snippets
                    .iter()
                    .map(|s| size(&s.file) * (1 + Headings::of(&s.file).levels() as u64)),
            )
            .sum();
        let parts = |t: &TemplateSource| 1 + u64::from(t.user.is_some());
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
            .flat_map(|p| std::iter::once(&p.system).chain(&p.user))
            .map(|program| program.ops.len() as u64)
            .sum();
        all_parts * input + output + unresolved_parts * MAX_EXPANDED_OPS as u64
    }
}

/// [`resolve_with`], counting its work: what tests and fuzzing bound.
pub fn resolve_counting(
    templates: &[TemplateSource],
    snippets: &[SnippetSource],
    settings: &Settings,
) -> Counted {
    resolve_read(templates, snippets, &[], settings)
}

fn resolve_read(
    templates: &[TemplateSource],
    snippets: &[SnippetSource],
    unreadable: &[String],
    settings: &Settings,
) -> Counted {
    let delims = &settings.delimiters;
    let parse = |file: &SourceFile, delims: &Delimiters| {
        let mut parsed = parse(file, delims)?;
        if settings.standalone_tags {
            strip_standalone_tags(file, &mut parsed);
        }
        Ok::<Parsed, Vec<Diagnostic>>(parsed)
    };
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut by_name: HashMap<&str, ParsedSnippet<'_>> = HashMap::new();
    for s in snippets {
        if let Some(first) = by_name.get(s.name.as_str()) {
            errors.push(
                Diagnostic::new(
                    ErrorCode::DuplicateSnippet,
                    format!(
                        "snippet `{}` is defined twice: {} and {}",
                        s.name,
                        first.file.path(),
                        s.file.path()
                    ),
                )
                .at(crate::error::Location::file(s.file.path())),
            );
            continue;
        }
        let parsed = parse(&s.file, delims).map_err(|e| errors.extend(e)).ok();
        let read = read_front_matter(&s.file, FileRole::Snippet);
        errors.extend(read.errors);
        warnings.extend(read.warnings);
        if let Some(parsed) = &parsed {
            warnings.extend(unused_snippet_vars(&read.front_matter, parsed));
        }
        by_name.insert(
            &s.name,
            ParsedSnippet {
                file: &s.file,
                parsed,
                front_matter: read.front_matter,
            },
        );
    }
    let mut graph = SnippetGraph::new(&by_name, delims, unreadable);
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
                .at(crate::error::Location::file(t.system.path())),
            );
            continue;
        }
        let mut builder = PromptBuilder::default();
        let mut ok = true;
        let mut parts = Vec::new();
        let mut front_matter = FrontMatter::default();
        for file in std::iter::once(&t.system).chain(t.user.as_ref()) {
            let read = read_front_matter(file, FileRole::Template);
            ok &= read.errors.is_empty();
            errors.extend(read.errors);
            warnings.extend(read.warnings);
            front_matter.merge(read.front_matter, &mut errors);
            let parsed = match parse(file, delims) {
                Ok(p) => p,
                Err(e) => {
                    errors.extend(e);
                    ok = false;
                    continue;
                }
            };
            for include in snippet_refs(&parsed) {
                // A problem of what it includes is reported once, however
                // many includes reach it.
                if !graph.usable(file, include, &parse, &mut errors) {
                    ok = false;
                }
            }
            if ok {
                match builder.expand(file, &parsed, &graph) {
                    Ok(program) => parts.push(program),
                    Err(e) => {
                        errors.push(*e);
                        ok = false;
                    }
                }
            }
        }
        steps += builder.steps;
        if !ok {
            continue;
        }
        let mut parts = parts.into_iter();
        let (Some(system), user) = (parts.next(), parts.next()) else {
            continue;
        };
        let mut hasher = StableHasher::default();
        hash_program(&mut hasher, &system, &builder.vars);
        if let Some(user) = &user {
            hasher.write(b"\0user\0");
            hash_program(&mut hasher, user, &builder.vars);
        }
        let mut vars = builder.vars;
        // Resolved prompts are kept for as long as a library lives: give
        // back the room the buffers grew into (up to half their memory).
        vars.shrink_to_fit();
        let snippet_vars: Vec<&DeclaredVar> = builder
            .snippets
            .iter()
            .filter_map(|name| by_name.get(name.as_str()))
            .flat_map(|s| s.front_matter.vars.iter().flatten())
            .collect();
        let errors_before = errors.len();
        let mut found = Vec::new();
        apply_contract(
            &mut vars,
            &front_matter,
            &snippet_vars,
            &mut errors,
            &mut found,
        );
        // A snippet's declared choice is checked in every prompt that
        // includes it: its warning, at the snippet, is told once.
        for warning in found {
            if !(warning.code == ErrorCode::UnhandledChoice && warnings.contains(&warning)) {
                warnings.push(warning);
            }
        }
        if errors.len() > errors_before {
            continue;
        }
        prompts.push(ResolvedPrompt {
            id: t.id.clone(),
            system,
            user,
            system_path: t.system.path().to_string(),
            user_path: t.user.as_ref().map(|u| u.path().to_string()),
            vars,
            snippets: builder.snippets,
            hash: hasher.finish(),
            front_matter,
        });
    }
    Counted {
        prompts,
        errors,
        warnings,
        steps,
    }
}

fn snippet_refs(parsed: &Parsed) -> impl Iterator<Item = &Include> {
    parsed.items.iter().filter_map(|i| match i {
        Item::Snippet(include) => Some(include),
        _ => None,
    })
}

/// `snippet_not_found` for `name`, in `file`; the help names the snippet
/// meant when one of `snippets` (the names that exist) is a typo away.
fn snippet_not_found(
    file: &SourceFile,
    name: &Name,
    snippets: &[&str],
    delims: &Delimiters,
) -> Diagnostic {
    let help = match nearest(&name.name, snippets.iter().copied(), 1).first() {
        Some(near) => format!(
            "did you mean `{near}`? Or create `snippets/{}.md`",
            name.name
        ),
        None => format!(
            "create `snippets/{}.md`, or fix the name in `{}snippet:…{}`",
            name.name,
            delims.open(),
            delims.close()
        ),
    };
    Diagnostic::new(
        ErrorCode::SnippetNotFound,
        format!(
            "{} names no file in the snippets folder",
            file.slice(name.span)
        ),
    )
    .at(file.location(name.span))
    .with_help(help)
}

/// The most headings [`section_not_found`] lists.
const HEADINGS_LISTED: usize = 10;

/// `section_not_found` for `include` in `file`, naming the headings that
/// `snippet` (the file of the snippet it names) has, or the one meant when
/// the section is a heading's text written as is (`Usage` for `usage`).
fn section_not_found(
    file: &SourceFile,
    include: &Include,
    snippet: &SourceFile,
    headings: &Headings,
    delims: &Delimiters,
) -> Diagnostic {
    let name = &include.name;
    let section = include.section.as_deref().unwrap_or_default();
    let meant = headings
        .find(&crate::sections::slug(section))
        .map(|i| headings.list[i].name());
    let listed: Vec<String> = headings
        .list
        .iter()
        .take(HEADINGS_LISTED)
        .map(|h| format!("`{}`", h.name()))
        .collect();
    let help = match (meant, headings.list.len()) {
        (Some(meant), _) => format!(
            "write `{}snippet:{}#{meant}{}`: a heading is named by its slug, in lowercase, or its `{{#id}}`",
            delims.open(),
            name.name,
            delims.close()
        ),
        (None, 0) => format!(
            "{} has no headings: include it whole, or add a heading",
            snippet.path()
        ),
        (None, n) if n > HEADINGS_LISTED => format!(
            "the headings of {} are {} and {} more",
            snippet.path(),
            listed.join(", "),
            n - HEADINGS_LISTED
        ),
        _ => format!(
            "the headings of {} are {}",
            snippet.path(),
            listed.join(", ")
        ),
    };
    Diagnostic::new(
        ErrorCode::SectionNotFound,
        format!(
            "{}: snippet `{}` has no heading `{section}`",
            file.slice(name.span),
            name.name
        ),
    )
    .at(file.location(name.span))
    .with_help(help)
}

/// What an include splices: a whole snippet, or the section under one of
/// its headings (by index, so that a heading's slug and its id are one
/// target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Target<'a> {
    name: &'a str,
    section: Option<usize>,
}

/// How a part of a file is parsed: the same way as every file.
type Parse<'p> = &'p dyn Fn(&SourceFile, &Delimiters) -> Result<Parsed, Vec<Diagnostic>>;

/// The sections of one snippet that includes name.
struct Sections {
    headings: Headings,
    /// The heading each section name included names.
    found: HashMap<String, usize>,
    /// The sections included, parsed, by heading.
    parsed: HashMap<usize, SectionFile>,
}

/// One section as a file of its own: the snippet's file narrowed to it.
struct SectionFile {
    file: SourceFile,
    parsed: Option<Parsed>,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Visiting,
    Done(bool),
}

/// One file on the include chain of the graph check: the includes it
/// makes, how many were followed, and whether all so far are usable.
struct Frame<'a> {
    target: Target<'a>,
    file: SourceFile,
    refs: Vec<Include>,
    next: usize,
    ok: bool,
}

/// The include graph: whole snippets and the sections included, as nodes.
/// Reports missing snippets and sections and cycles, each once, and knows
/// which targets can be spliced: parsed, and everything they include,
/// transitively, exists, parses and is free of cycles. A section is parsed
/// on its first include, with the snippet's headings found then.
struct SnippetGraph<'s, 'a> {
    snippets: &'s HashMap<&'a str, ParsedSnippet<'a>>,
    sections: HashMap<&'a str, Sections>,
    state: HashMap<Target<'a>, State>,
    delims: &'s Delimiters,
    unreadable: &'s [String],
}

impl<'s, 'a> SnippetGraph<'s, 'a> {
    fn new(
        snippets: &'s HashMap<&'a str, ParsedSnippet<'a>>,
        delims: &'s Delimiters,
        unreadable: &'s [String],
    ) -> Self {
        SnippetGraph {
            snippets,
            sections: HashMap::new(),
            state: HashMap::new(),
            delims,
            unreadable,
        }
    }

    /// Checks every snippet, in order, and all it includes.
    fn check_all(
        &mut self,
        snippets: &'a [SnippetSource],
        parse: Parse<'_>,
        errors: &mut Vec<Diagnostic>,
    ) {
        for root in snippets {
            let root = Target {
                name: root.name.as_str(),
                section: None,
            };
            if !self.state.contains_key(&root) {
                self.check(root, parse, errors);
            }
        }
    }

    /// Whether `include`, in `file`, can be spliced; reports what it finds
    /// wrong that was not reported before.
    fn usable(
        &mut self,
        file: &SourceFile,
        include: &Include,
        parse: Parse<'_>,
        errors: &mut Vec<Diagnostic>,
    ) -> bool {
        self.target(file, include, parse, errors)
            .is_some_and(|target| self.check(target, parse, errors))
    }

    /// The target of `include`, in `file`: reports a missing snippet (one
    /// that was read) or section, and parses a section on its first include.
    fn target(
        &mut self,
        file: &SourceFile,
        include: &Include,
        parse: Parse<'_>,
        errors: &mut Vec<Diagnostic>,
    ) -> Option<Target<'a>> {
        let Some((&name, snippet)) = self.snippets.get_key_value(include.name.name.as_str()) else {
            if !self.unreadable.contains(&include.name.name) {
                // Sorted, so that of two names as near, the one suggested
                // does not depend on the map's order.
                let mut names: Vec<&str> = self.snippets.keys().copied().collect();
                names.sort_unstable();
                errors.push(snippet_not_found(file, &include.name, &names, self.delims));
            }
            return None;
        };
        let Some(section) = &include.section else {
            return Some(Target {
                name,
                section: None,
            });
        };
        let sections = self.sections.entry(name).or_insert_with(|| Sections {
            headings: Headings::of(snippet.file),
            found: HashMap::new(),
            parsed: HashMap::new(),
        });
        let Some(index) = sections.headings.find(section) else {
            errors.push(section_not_found(
                file,
                include,
                snippet.file,
                &sections.headings,
                self.delims,
            ));
            return None;
        };
        sections.found.insert(section.clone(), index);
        sections.parsed.entry(index).or_insert_with(|| {
            let file = snippet.file.with_body(sections.headings.list[index].section);
            // A snippet that does not parse has been reported whole: its
            // sections would only repeat that.
            let heading = sections.headings.list[index].name();
            let parsed = snippet.parsed.as_ref().and_then(|_| {
                parse(&file, self.delims)
                    .map_err(|found| {
                        // The whole snippet parses: what is wrong is a block
                        // that crosses the section's edge.
                        errors.extend(found.into_iter().map(|e| {
                            e.with_help(format!(
                                "a section is parsed on its own: open and close each block within the section `{heading}` of snippet `{name}`"
                            ))
                        }));
                    })
                    .ok()
            });
            SectionFile { file, parsed }
        });
        Some(Target {
            name,
            section: Some(index),
        })
    }

    /// The target an include already checked names, as [`SnippetGraph::target`]
    /// found it.
    fn find(&self, include: &Include) -> Option<Target<'a>> {
        let (&name, _) = self.snippets.get_key_value(include.name.name.as_str())?;
        let section = match &include.section {
            Some(section) => Some(*self.sections.get(name)?.found.get(section)?),
            None => None,
        };
        Some(Target { name, section })
    }

    /// The file of a target and its items, when it parsed.
    fn node(&self, target: Target<'a>) -> (&SourceFile, Option<&Parsed>) {
        let whole = &self.snippets[target.name];
        match target
            .section
            .and_then(|i| self.sections.get(target.name)?.parsed.get(&i))
        {
            Some(section) => (&section.file, section.parsed.as_ref()),
            None => (whole.file, whole.parsed.as_ref()),
        }
    }

    /// How a cycle message names a target: `name` or `name#heading`.
    fn label(&self, target: Target<'a>) -> String {
        let heading = target
            .section
            .and_then(|i| self.sections.get(target.name)?.headings.list.get(i));
        match heading {
            Some(h) => format!("{}#{}", target.name, h.name()),
            None => target.name.to_string(),
        }
    }

    fn frame(&self, target: Target<'a>) -> Frame<'a> {
        let (file, parsed) = self.node(target);
        Frame {
            target,
            file: file.clone(),
            refs: parsed
                .map(|p| snippet_refs(p).cloned().collect())
                .unwrap_or_default(),
            next: 0,
            ok: parsed.is_some(),
        }
    }

    /// Whether `root` can be spliced: a depth-first search of what it
    /// includes, reporting what is missing and every cycle met.
    fn check(&mut self, root: Target<'a>, parse: Parse<'_>, errors: &mut Vec<Diagnostic>) -> bool {
        if let Some(&State::Done(ok)) = self.state.get(&root) {
            return ok;
        }
        self.state.insert(root, State::Visiting);
        // The include chain so far.
        let mut path = vec![self.frame(root)];
        while let Some(frame) = path.last_mut() {
            let Some(include) = frame.refs.get(frame.next).cloned() else {
                if let Some(done) = path.pop() {
                    self.state.insert(done.target, State::Done(done.ok));
                    if let Some(parent) = path.last_mut() {
                        parent.ok &= done.ok;
                    }
                }
                continue;
            };
            frame.next += 1;
            let file = frame.file.clone();
            let Some(target) = self.target(&file, &include, parse, errors) else {
                frame.ok = false;
                continue;
            };
            match self.state.get(&target).copied() {
                Some(State::Done(good)) => frame.ok &= good,
                Some(State::Visiting) => {
                    frame.ok = false;
                    let from = path.iter().position(|f| f.target == target).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        path[from..].iter().map(|f| self.label(f.target)).collect();
                    cycle.push(self.label(target));
                    errors.push(
                        Diagnostic::new(
                            ErrorCode::SnippetCycle,
                            format!(
                                "snippets include each other in a cycle: {}",
                                cycle.join(" -> ")
                            ),
                        )
                        .at(file.location(include.name.span))
                        .with_help("a snippet may not include itself, directly or through others"),
                    );
                }
                None => {
                    self.state.insert(target, State::Visiting);
                    path.push(self.frame(target));
                }
            }
        }
        self.state.get(&root) == Some(&State::Done(true))
    }
}

/// How a template uses a variable.
#[derive(Clone, Copy)]
enum Usage<'a> {
    /// `{{name}}`.
    Value,
    /// `{{#if name}}`.
    Condition,
    /// `{{#if name == "value"}}`.
    Equals(&'a str),
}

/// An open block while a part is compiled: its `If` op, and whether an
/// `{{else if}}` opened it (so that the `{{/if}}` of the block it continues
/// closes it too).
struct OpenIf {
    at: usize,
    from_else_if: bool,
}

/// An `{{#if}}` chain being walked: where it opens, each test (the
/// variable, and for a comparison its value, tag and place) and its
/// `{{else}}`.
struct Chain {
    at: Location,
    tests: Vec<ChainTest>,
    else_tag: Option<(String, Location)>,
}

/// One test of a [`Chain`]: the variable tested and, for a comparison, the
/// value, the tag as written and where.
type ChainTest = (usize, Option<(String, String, Location)>);

/// One test of a [`Chain`], from its condition and the `If` op made of it.
fn chain_test(file: &SourceFile, condition: &Condition, op: &Op) -> ChainTest {
    let var = match op {
        Op::If { cond, .. } => *cond,
        _ => usize::MAX,
    };
    let compared = condition.equals.as_ref().map(|value| {
        let tag = file.slice(condition.name.span).to_string();
        (value.clone(), tag, file.location(condition.name.span))
    });
    (var, compared)
}

/// Accumulates one prompt's variable table and snippet set while its parts
/// are expanded.
#[derive(Default)]
struct PromptBuilder {
    vars: Vec<VarInfo>,
    var_index: HashMap<String, usize>,
    snippets: BTreeSet<String>,
    /// [`Counted::steps`] so far.
    steps: u64,
}

/// What a snippet's first splice into a part added: its ops and the text
/// it appended. Splicing it again copies these, which costs what it adds:
/// walking its items again would cost them however little they add, and a
/// snippet that includes another twice, included twice, and so on, walks
/// 2^depth times for an output of nothing.
#[derive(Clone)]
struct Fragment {
    ops: Range<usize>,
    text: Range<usize>,
}

/// A file being walked while a part is spliced: the items left, and for a
/// snippet's (or section's) first splice, its target and where its
/// [`Fragment`] starts.
struct Walk<'a> {
    file: &'a SourceFile,
    items: &'a [Item],
    first_splice: Option<(Target<'a>, usize, usize)>,
}

impl PromptBuilder {
    fn var(&mut self, file: &SourceFile, name: &Name, usage: Usage<'_>) -> usize {
        let index = *self.var_index.entry(name.name.clone()).or_insert_with(|| {
            self.vars.push(VarInfo {
                name: name.name.clone(),
                as_value: false,
                as_condition: false,
                choices: Vec::new(),
                compared: Vec::new(),
                blocks: Vec::new(),
                first_use: file.location(name.span),
                uses: VarUses::default(),
                declared: None,
            });
            self.vars.len() - 1
        });
        let info = &mut self.vars[index];
        let first = match usage {
            Usage::Value => &mut info.uses.value,
            Usage::Condition => &mut info.uses.condition,
            Usage::Equals(_) => &mut info.uses.compared,
        };
        if first.is_none() {
            *first = Some(file.location(name.span));
        }
        match usage {
            Usage::Value => info.as_value = true,
            Usage::Condition => info.as_condition = true,
            Usage::Equals(value) => {
                // Without a declaration the enum is what is compared with;
                // front matter may replace `choices` with its declared set.
                if !info.compared.iter().any(|c| c == value) {
                    info.compared.push(value.to_string());
                    info.choices.push(value.to_string());
                }
            }
        }
        index
    }

    /// The `If` op of `condition`, its literal added to `program`.
    fn test(&mut self, file: &SourceFile, condition: &Condition, program: &mut Program) -> Op {
        let (cond, equals) = match &condition.equals {
            None => (self.var(file, &condition.name, Usage::Condition), None),
            Some(value) => {
                let cond = self.var(file, &condition.name, Usage::Equals(value));
                let at = program
                    .literals
                    .iter()
                    .position(|l| **l == **value)
                    .unwrap_or_else(|| {
                        program.literals.push(value.as_str().into());
                        program.literals.len() - 1
                    });
                (cond, u32::try_from(at).ok())
            }
        };
        Op::If {
            cond,
            equals,
            else_at: 0,
            end_at: 0,
        }
    }

    /// Gives each variable a chain compares with values its
    /// [`ChoiceBlock`], once however often the chain's file is walked.
    fn record_chain(&mut self, chain: Chain) {
        let mut compared: Vec<usize> = Vec::new();
        for (var, test) in &chain.tests {
            if test.is_some() && !compared.contains(var) {
                compared.push(*var);
            }
        }
        for var in compared {
            let Some(info) = self.vars.get_mut(var) else {
                continue;
            };
            if info.blocks.iter().any(|b| b.at == chain.at) {
                continue;
            }
            info.blocks.push(ChoiceBlock {
                at: chain.at.clone(),
                branches: chain
                    .tests
                    .iter()
                    .filter(|(v, _)| *v == var)
                    .filter_map(|(_, test)| test.clone())
                    .collect(),
                other_tests: chain
                    .tests
                    .iter()
                    .any(|(v, test)| *v != var || test.is_none()),
                else_tag: chain.else_tag.clone(),
            });
        }
    }

    /// Splices snippets into one part and compiles it. The snippet graph must
    /// have been checked: every include exists, parses and has no cycle.
    fn expand(
        &mut self,
        file: &SourceFile,
        parsed: &Parsed,
        snippets: &SnippetGraph<'_, '_>,
    ) -> Result<Program, Box<Diagnostic>> {
        let mut program = Program::default();
        let mut open_ifs: Vec<OpenIf> = Vec::new();
        // The `{{#if}}` chains open, for what each compared value renders.
        // A snippet spliced again is copied, not walked: its blocks were
        // recorded at its first splice.
        let mut chains: Vec<Chain> = Vec::new();
        // The snippets spliced into this part so far: what a splice added
        // depends on the program it went into, so each part has its own.
        let mut fragments: HashMap<Target<'_>, Fragment> = HashMap::new();
        let mut stack = vec![Walk {
            file,
            items: &parsed.items,
            first_splice: None,
        }];
        while let Some(walk) = stack.last_mut() {
            let Some((item, rest)) = walk.items.split_first() else {
                if let Some((target, ops, text)) = walk.first_splice {
                    let fragment = Fragment {
                        ops: ops..program.ops.len(),
                        text: text..program.text.len(),
                    };
                    fragments.insert(target, fragment);
                }
                stack.pop();
                continue;
            };
            walk.items = rest;
            self.steps += 1;
            let file = walk.file;
            match item {
                Item::Text(span) => push_text(&mut program, file.slice(*span)),
                Item::Var(name) => {
                    let index = self.var(file, name, Usage::Value);
                    program.ops.push(Op::Var(index));
                }
                Item::If(condition) => {
                    let op = self.test(file, condition, &mut program);
                    chains.push(Chain {
                        at: file.location(condition.name.span),
                        tests: vec![chain_test(file, condition, &op)],
                        else_tag: None,
                    });
                    open_ifs.push(OpenIf {
                        at: program.ops.len(),
                        from_else_if: false,
                    });
                    program.ops.push(op);
                }
                Item::ElseIf(condition) => {
                    // `{{else}}{{#if …}}`, closed by the same `{{/if}}`.
                    start_else(&mut program.ops, &open_ifs);
                    let op = self.test(file, condition, &mut program);
                    if let Some(chain) = chains.last_mut() {
                        chain.tests.push(chain_test(file, condition, &op));
                    }
                    open_ifs.push(OpenIf {
                        at: program.ops.len(),
                        from_else_if: true,
                    });
                    program.ops.push(op);
                }
                Item::Else(span) => {
                    if let Some(chain) = chains.last_mut() {
                        let tag = file.slice(*span).to_string();
                        chain.else_tag = Some((tag, file.location(*span)));
                    }
                    start_else(&mut program.ops, &open_ifs);
                }
                Item::EndIf(_) => {
                    if let Some(chain) = chains.pop() {
                        self.record_chain(chain);
                    }
                    while let Some(open) = open_ifs.pop() {
                        let here = program.ops.len();
                        close_block(&mut program.ops, open.at, here);
                        program.ops.push(Op::EndIf);
                        if !open.from_else_if {
                            break;
                        }
                    }
                }
                Item::Snippet(include) => {
                    let name = &include.name;
                    // Snippets that include others more than once multiply:
                    // a short chain can expand past any memory. Stop there.
                    if program.text.len() > MAX_EXPANDED_TEXT
                        || program.ops.len() > MAX_EXPANDED_OPS
                    {
                        return Err(Box::new(too_large(file, name)));
                    }
                    let Some(target) = snippets.find(include) else {
                        continue;
                    };
                    if let Some(fragment) = fragments.get(&target) {
                        let adds_text = program.text.len().saturating_add(fragment.text.len());
                        let adds_ops = program.ops.len().saturating_add(fragment.ops.len());
                        if adds_text > MAX_EXPANDED_TEXT || adds_ops > MAX_EXPANDED_OPS {
                            return Err(Box::new(too_large(file, name)));
                        }
                        self.steps += fragment.ops.len() as u64;
                        splice_again(&mut program, fragment);
                    } else {
                        self.snippets.insert(name.name.clone());
                        if let (file, Some(parsed)) = snippets.node(target) {
                            stack.push(Walk {
                                file,
                                items: &parsed.items,
                                first_splice: Some((target, program.ops.len(), program.text.len())),
                            });
                        }
                    }
                }
            }
        }
        if program.text.len() > MAX_EXPANDED_TEXT || program.ops.len() > MAX_EXPANDED_OPS {
            return Err(Box::new(too_large_file(file)));
        }
        program.text.shrink_to_fit();
        program.ops.shrink_to_fit();
        program.literals.shrink_to_fit();
        Ok(program)
    }
}

/// The most static text one template part may expand to, snippets spliced
/// in: far beyond any real prompt, well below exhausting memory.
pub const MAX_EXPANDED_TEXT: usize = 256 << 20;

/// The most tokens and text pieces one template part may expand to.
pub const MAX_EXPANDED_OPS: usize = 4 << 20;

fn too_large(file: &SourceFile, include: &Name) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::TooLarge,
        format!(
            "{} expands the template past {} MiB of text or {} tokens",
            file.slice(include.span),
            MAX_EXPANDED_TEXT >> 20,
            MAX_EXPANDED_OPS
        ),
    )
    .at(file.location(include.span))
    .with_help("a snippet included several times, by snippets that are themselves included several times, multiplies")
}

fn too_large_file(file: &SourceFile) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::TooLarge,
        format!(
            "{} expands past {} MiB of text or {} tokens",
            file.path(),
            MAX_EXPANDED_TEXT >> 20,
            MAX_EXPANDED_OPS
        ),
    )
    .at(crate::error::Location::file(file.path()))
}

/// Appends what a snippet's first splice added, as splicing it again would:
/// the same ops (jumps set anew), the same text, the first piece of it
/// joining the text before as [`push_text`] joins any.
fn splice_again(program: &mut Program, fragment: &Fragment) {
    // The program's text grows as it is read: copy the fragment's first.
    let base = fragment.text.start;
    let text = program.text[fragment.text.clone()].to_string();
    let piece = |start: usize, end: usize| {
        let end = end.clamp(base, fragment.text.end) - base;
        &text[(start.max(base) - base).min(end)..end]
    };
    // Text the first splice joined to the op before it comes before its ops.
    let first_op_text = program.ops[fragment.ops.clone()]
        .iter()
        .find_map(|op| match op {
            Op::Text { start, .. } => Some(*start),
            _ => None,
        })
        .unwrap_or(fragment.text.end);
    push_text(program, piece(base, first_op_text));
    // The fragment's blocks open and close within it (a file's blocks are
    // balanced): they are numbered anew as they are copied.
    let mut open: Vec<usize> = Vec::new();
    for at in fragment.ops.clone() {
        match program.ops[at].clone() {
            Op::Text { start, end } => push_text(program, piece(start, end)),
            Op::Var(index) => program.ops.push(Op::Var(index)),
            Op::If { cond, equals, .. } => {
                open.push(program.ops.len());
                program.ops.push(Op::If {
                    cond,
                    equals,
                    else_at: 0,
                    end_at: 0,
                });
            }
            Op::Else { .. } => {
                let here = program.ops.len();
                if let Some(&open) = open.last()
                    && let Op::If { else_at, .. } = &mut program.ops[open]
                {
                    *else_at = here + 1;
                }
                program.ops.push(Op::Else { end_at: 0 });
            }
            Op::EndIf => {
                if let Some(open) = open.pop() {
                    let here = program.ops.len();
                    close_block(&mut program.ops, open, here);
                }
                program.ops.push(Op::EndIf);
            }
        }
    }
}

/// Ends the then-branch of the innermost open block with an `Else`.
fn start_else(ops: &mut Vec<Op>, open_ifs: &[OpenIf]) {
    let here = ops.len();
    if let Some(open) = open_ifs.last()
        && let Op::If { else_at, .. } = &mut ops[open.at]
    {
        *else_at = here + 1;
    }
    ops.push(Op::Else { end_at: 0 });
}

/// Fills in the jump targets of the block opened at `open` and ending at `end`.
fn close_block(ops: &mut [Op], open: usize, end: usize) {
    let Op::If {
        else_at, end_at, ..
    } = &mut ops[open]
    else {
        return;
    };
    *end_at = end;
    if *else_at == 0 {
        *else_at = end;
        return;
    }
    let else_op = *else_at - 1;
    if let Op::Else { end_at } = &mut ops[else_op] {
        *end_at = end;
    }
}

fn push_text(program: &mut Program, text: &str) {
    if text.is_empty() {
        return;
    }
    let start = program.text.len();
    program.text.push_str(text);
    let end = program.text.len();
    match program.ops.last_mut() {
        Some(Op::Text { end: last_end, .. }) if *last_end == start => *last_end = end,
        _ => program.ops.push(Op::Text { start, end }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snippet(name: &str, text: &str) -> SnippetSource {
        SnippetSource {
            name: name.to_string(),
            file: SourceFile::new(format!("snippets/{name}.md"), text),
        }
    }

    fn template(system: &str, user: Option<&str>) -> TemplateSource {
        TemplateSource {
            id: "t".to_string(),
            system: SourceFile::new("templates/t/system.md", system),
            user: user.map(|u| SourceFile::new("templates/t/user.md", u)),
        }
    }

    /// A chain `s0` … `s{depth}`: each link includes the next as `link`
    /// says (`{}` for each include), the last one is `bottom`.
    fn chain(depth: usize, link: &str, bottom: &str) -> Vec<SnippetSource> {
        let mut snippets: Vec<SnippetSource> = (0..depth)
            .map(|i| {
                let include = format!("{{{{snippet:s{}}}}}", i + 1);
                snippet(&format!("s{i}"), &link.replace("{}", &include))
            })
            .collect();
        snippets.push(snippet(&format!("s{depth}"), bottom));
        snippets
    }

    /// Resolves, and checks the work against what the input and the output
    /// allow: each part walks every file at most once, copies cost the ops
    /// they add, a refused part stops at the size limit.
    fn resolve_bounded(templates: &[TemplateSource], snippets: &[SnippetSource]) -> Counted {
        let counted = resolve_counting(templates, snippets, &Settings::default());
        let bound = counted.step_bound(templates, snippets);
        assert!(counted.steps <= bound, "{} steps > {bound}", counted.steps);
        counted
    }

    /// A chain of snippets to resolve, and the error expected of it.
    struct Shape<'a> {
        name: &'a str,
        depth: usize,
        link: &'a str,
        bottom: &'a str,
        both_parts: bool,
        error: Option<&'a str>,
    }

    fn shape<'a>(
        name: &'a str,
        depth: usize,
        link: &'a str,
        bottom: &'a str,
        both_parts: bool,
        error: Option<&'a str>,
    ) -> Shape<'a> {
        Shape {
            name,
            depth,
            link,
            bottom,
            both_parts,
            error,
        }
    }

    /// Fan-out ends at once in every shape: deep, wide, from both parts,
    /// down to nothing or whitespace (trimmed away) it resolves; through
    /// blocks, down to blocks, text or variables, whose ops or text pass the
    /// size limit, it is refused, at an include, as `too_large`.
    #[test]
    fn fan_out_costs_what_it_adds() {
        let twice = "{}{}";
        let wide = "{}".repeat(200);
        let blocks = "{{#if a}}{}{{else}}{}{{/if}}";
        let cases = [
            shape("deep, adds nothing", 60, twice, "", false, None),
            shape("wide", 12, &wide, "", false, None),
            shape("through blocks", 60, blocks, "", true, Some("too_large")),
            shape("whitespace only", 60, twice, " \n\t\n ", false, None),
            shape(
                "false blocks",
                60,
                twice,
                "{{#if off}}{{/if}}",
                false,
                Some("too_large"),
            ),
            shape("text", 60, twice, "x", false, Some("too_large")),
            shape("a variable", 60, "{} {}", "{{v}}", true, Some("too_large")),
        ];
        for Shape {
            name,
            depth,
            link,
            bottom,
            both_parts,
            error,
        } in cases
        {
            let snippets = chain(depth, link, bottom);
            let user = both_parts.then_some("{{snippet:s0}}{{snippet:s1}}");
            let templates = [template("Hi {{snippet:s0}}", user)];
            let counted = resolve_bounded(&templates, &snippets);
            let codes: Vec<&str> = counted.errors.iter().map(|e| e.code.as_str()).collect();
            assert_eq!(codes, error.into_iter().collect::<Vec<_>>(), "{name}");
            if let Some(e) = counted.errors.first() {
                let at = e.location.as_ref().map(|l| l.path().to_string());
                assert!(
                    at.is_some_and(|p| p.starts_with("snippets/s")),
                    "{name}: {e}"
                );
            }
        }
    }

    /// A snippet spliced again makes the same program as its text written
    /// out in its place: blocks, `else if` chains, literals and text that
    /// joins the text around it.
    #[test]
    fn splicing_again_is_writing_out() {
        let a = "x{{#if d == \"q\"}}y{{else if e}}z{{v}}{{else}}{{#if f}}w{{/if}}{{/if}}";
        let b = "{{#if c}}{{snippet:a}}{{else}}{{snippet:a}}{{/if}}";
        let system = "1{{snippet:b}}2{{snippet:a}}{{snippet:a}}{{#if g}}{{snippet:b}}{{/if}}3";
        let written = system
            .replace("{{snippet:b}}", b)
            .replace("{{snippet:a}}", a);
        let snippets = [snippet("a", a), snippet("b", b)];
        let spliced = resolve_bounded(&[template(system, Some(system))], &snippets);
        let written = resolve_bounded(&[template(&written, Some(&written))], &[]);
        let (spliced, written) = (&spliced.prompts[0], &written.prompts[0]);
        assert_eq!(spliced.system, written.system);
        assert_eq!(spliced.user, written.user);
        assert_eq!(spliced.hash, written.hash);
        let names = |p: &ResolvedPrompt| p.vars.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(spliced), names(written));
    }

    fn rendered(prompt: &ResolvedPrompt) -> &str {
        &prompt.system.text
    }

    /// A section and its whole snippet are two targets: neither's splice is
    /// copied for the other, in either order; a heading's slug and its id
    /// are one; the prompt's snippets name the snippet only.
    #[test]
    fn sections_splice_apart_from_their_snippet() {
        let guide = "intro\n# Setup {#install}\nsteps\n## Detail\nd\n# Use\nuse";
        let system = "{{snippet:g#setup}}|{{snippet:g}}|{{snippet:g#install}}|{{snippet:g#detail}}";
        let counted = resolve_bounded(&[template(system, None)], &[snippet("g", guide)]);
        assert!(counted.errors.is_empty(), "{:?}", counted.errors);
        let prompt = &counted.prompts[0];
        let whole = SourceFile::new("g.md", guide).body().to_string();
        let want = format!("steps\n## Detail\nd|{whole}|steps\n## Detail\nd|d");
        assert_eq!(rendered(prompt), want);
        assert_eq!(prompt.snippets, BTreeSet::from(["g".to_string()]));
    }

    fn codes(counted: &Counted) -> Vec<(&str, String)> {
        counted
            .errors
            .iter()
            .map(|e| (e.code.as_str(), e.message.clone()))
            .collect()
    }

    /// A section is its own node of the include graph: including another
    /// section of its own snippet is no cycle, including itself (or a
    /// section that includes it back) is.
    #[test]
    fn section_cycles_are_real_cycles() {
        let fine = "# A\n{{snippet:s#b}}\n# B\nb";
        let counted = resolve_bounded(
            &[template("{{snippet:s#a}}{{snippet:s}}", None)],
            &[snippet("s", fine)],
        );
        assert!(counted.errors.is_empty(), "{:?}", counted.errors);
        assert_eq!(rendered(&counted.prompts[0]), "b# A\nb\n# B\nb");

        let itself = "# A\nx {{snippet:s#a}}";
        let counted = resolve_bounded(
            &[template("{{snippet:s#a}}", None)],
            &[snippet("s", itself)],
        );
        assert_eq!(
            codes(&counted),
            [(
                "snippet_cycle",
                "snippets include each other in a cycle: s#a -> s#a".to_string()
            )]
        );

        let through = "# A\n{{snippet:t}}";
        let back = "{{snippet:s#a}}";
        let counted = resolve_bounded(
            &[template("{{snippet:s#a}}", None)],
            &[snippet("s", through), snippet("t", back)],
        );
        let found = codes(&counted);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "snippet_cycle");
        assert!(counted.prompts.is_empty());
    }

    /// A missing section fails its template once, located at the include,
    /// naming the headings there are (at most ten of them).
    #[test]
    fn a_missing_section_names_the_headings() {
        let many: String = (0..12).map(|i| format!("# H{i}\nx\n")).collect();
        let snippets = [snippet("many", &many), snippet("none", "no headings")];
        let system = "a {{snippet:many#h99}}\n{{snippet:none#x}} {{snippet:many#h99}}";
        let counted = resolve_bounded(&[template(system, None)], &snippets);
        let help: Vec<(String, usize, usize)> = counted
            .errors
            .iter()
            .map(|e| {
                let at = e.location.as_ref().map(|l| (l.line(), l.column()));
                assert_eq!(e.code.as_str(), "section_not_found");
                let (line, column) = at.unwrap_or_default();
                (e.help.clone().unwrap_or_default(), line, column)
            })
            .collect();
        let listed = (0..10)
            .map(|i| format!("`h{i}`"))
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(
            help,
            [
                (
                    format!("the headings of snippets/many.md are {listed} and 2 more"),
                    1,
                    3
                ),
                (
                    "snippets/none.md has no headings: include it whole, or add a heading"
                        .to_string(),
                    2,
                    1
                ),
                (
                    format!("the headings of snippets/many.md are {listed} and 2 more"),
                    2,
                    20
                ),
            ]
        );
        assert!(counted.prompts.is_empty());
    }

    /// Nested sections overlap, so one part may walk a snippet once per
    /// heading level and once whole, but no more: a section included again
    /// is copied, as a snippet is, and the work stays within the bound.
    #[test]
    fn nested_sections_stay_within_the_bound() {
        let nested: String = (1..=6)
            .map(|l| format!("{} L{l}\n{}\n", "#".repeat(l), "{{snippet:e}}".repeat(200)))
            .collect();
        let once: String = (1..=6).map(|l| format!("{{{{snippet:s#l{l}}}}}")).collect();
        let system = once.repeat(200) + "{{snippet:s}}";
        let snippets = [snippet("s", &nested), snippet("e", "")];
        let counted = resolve_bounded(&[template(&system, Some(&system))], &snippets);
        assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    }
}
