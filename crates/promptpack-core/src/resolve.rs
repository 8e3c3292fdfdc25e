//! From parsed files to programs: checks the snippet graph (missing names,
//! cycles), splices snippets into templates, numbers variables and turns
//! blocks into jumps. Knows nothing of files on disk.

use crate::error::{Diagnostic, ErrorCode};
use crate::front_matter::{
    DeclaredVar, FileRole, FrontMatter, apply_contract, read_front_matter, unused_snippet_vars,
};
use crate::program::{Op, Program, StableHasher, VarInfo, VarUses, hash_program};
use crate::settings::Settings;
use crate::source_file::SourceFile;
use crate::sources::Sources;
pub use crate::sources::{SnippetSource, TemplateSource};
use crate::syntax::{Condition, Delimiters, Item, Name, Parsed, parse, strip_standalone_tags};
use std::collections::{BTreeSet, HashMap};
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
    pub fn step_bound(&self, templates: &[TemplateSource], snippets: &[SnippetSource]) -> u64 {
        let input: u64 = templates
            .iter()
            .flat_map(|t| std::iter::once(&t.system).chain(&t.user))
            .chain(snippets.iter().map(|s| &s.file))
            .map(|f| f.text().len() as u64 + 1)
            .sum();
        let parts = |t: &TemplateSource| 1 + u64::from(t.user.is_some());
        let all_parts: u64 = templates.iter().map(parts).sum();
        let resolved: BTreeSet<&str> = self.prompts.iter().map(|p| p.id.as_str()).collect();
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
    let usable = check_snippet_graph(snippets, &by_name, delims, unreadable, &mut errors);

    let mut prompts = Vec::new();
    let mut ids = BTreeSet::new();
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
            for name in snippet_refs(&parsed) {
                if !by_name.contains_key(name.name.as_str()) {
                    if !unreadable.contains(&name.name) {
                        errors.push(snippet_not_found(file, name, delims));
                    }
                    ok = false;
                } else if !usable.contains(name.name.as_str()) {
                    // The snippet's own problem is already reported.
                    ok = false;
                }
            }
            if ok {
                match builder.expand(file, &parsed, &by_name) {
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
        apply_contract(
            &mut vars,
            &front_matter,
            &snippet_vars,
            &mut errors,
            &mut warnings,
        );
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

fn snippet_refs(parsed: &Parsed) -> impl Iterator<Item = &Name> {
    parsed.items.iter().filter_map(|i| match i {
        Item::Snippet(n) => Some(n),
        _ => None,
    })
}

fn snippet_not_found(file: &SourceFile, name: &Name, delims: &Delimiters) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::SnippetNotFound,
        format!(
            "{} names no file in the snippets folder",
            file.slice(name.span)
        ),
    )
    .at(file.location(name.span))
    .with_help(format!(
        "create `snippets/{}.md`, or fix the name in `{}snippet:…{}`",
        name.name,
        delims.open(),
        delims.close()
    ))
}

/// Reports missing includes and cycles among snippets, and returns the names
/// of the snippets that can be spliced: parsed, and everything they include,
/// transitively, exists, parses and is free of cycles.
fn check_snippet_graph<'a>(
    snippets: &'a [SnippetSource],
    by_name: &HashMap<&'a str, ParsedSnippet<'a>>,
    delims: &Delimiters,
    unreadable: &[String],
    errors: &mut Vec<Diagnostic>,
) -> BTreeSet<&'a str> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Visiting,
        Done(bool),
    }
    let mut state: HashMap<&str, State> = HashMap::new();
    for root in snippets {
        if state.contains_key(root.name.as_str()) {
            continue;
        }
        // Iterative depth-first search; the path is the include chain so far.
        let mut path: Vec<(&str, Vec<&Name>, usize, bool)> = Vec::new();
        let refs_of = |name: &str| -> Vec<&Name> {
            by_name[name]
                .parsed
                .as_ref()
                .map(|p| snippet_refs(p).collect())
                .unwrap_or_default()
        };
        state.insert(&root.name, State::Visiting);
        let ok = by_name[root.name.as_str()].parsed.is_some();
        path.push((&root.name, refs_of(&root.name), 0, ok));
        while let Some((current, refs, next, ok)) = path.last_mut() {
            let Some(include) = refs.get(*next).copied() else {
                let (name, _, _, ok) = path.pop().unwrap_or_default();
                state.insert(name, State::Done(ok));
                if let Some(parent) = path.last_mut() {
                    parent.3 &= ok;
                }
                continue;
            };
            *next += 1;
            let current: &str = current;
            let file = by_name[current].file;
            let Some((target, _)) = by_name.get_key_value(include.name.as_str()) else {
                if !unreadable.contains(&include.name) {
                    errors.push(snippet_not_found(file, include, delims));
                }
                *ok = false;
                continue;
            };
            match state.get(target) {
                Some(State::Done(good)) => *ok &= *good,
                Some(State::Visiting) => {
                    let from = path.iter().position(|p| p.0 == *target).unwrap_or(0);
                    let mut cycle: Vec<&str> = path[from..].iter().map(|p| p.0).collect();
                    cycle.push(target);
                    errors.push(
                        Diagnostic::new(
                            ErrorCode::SnippetCycle,
                            format!(
                                "snippets include each other in a cycle: {}",
                                cycle.join(" -> ")
                            ),
                        )
                        .at(file.location(include.span))
                        .with_help("a snippet may not include itself, directly or through others"),
                    );
                    if let Some(last) = path.last_mut() {
                        last.3 = false;
                    }
                }
                None => {
                    state.insert(target, State::Visiting);
                    let ok = by_name[*target].parsed.is_some();
                    path.push((target, refs_of(target), 0, ok));
                }
            }
        }
    }
    state
        .into_iter()
        .filter(|(_, s)| *s == State::Done(true))
        .map(|(n, _)| n)
        .collect()
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
/// snippet's first splice, its name and where its [`Fragment`] starts.
struct Walk<'a> {
    file: &'a SourceFile,
    items: &'a [Item],
    first_splice: Option<(&'a str, usize, usize)>,
}

impl PromptBuilder {
    fn var(&mut self, file: &SourceFile, name: &Name, usage: Usage<'_>) -> usize {
        let index = *self.var_index.entry(name.name.clone()).or_insert_with(|| {
            self.vars.push(VarInfo {
                name: name.name.clone(),
                as_value: false,
                as_condition: false,
                choices: Vec::new(),
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
                if !info.choices.iter().any(|c| c == value) {
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

    /// Splices snippets into one part and compiles it. The snippet graph must
    /// have been checked: every include exists, parses and has no cycle.
    fn expand(
        &mut self,
        file: &SourceFile,
        parsed: &Parsed,
        snippets: &HashMap<&str, ParsedSnippet<'_>>,
    ) -> Result<Program, Box<Diagnostic>> {
        let mut program = Program::default();
        let mut open_ifs: Vec<OpenIf> = Vec::new();
        // The snippets spliced into this part so far: what a splice added
        // depends on the program it went into, so each part has its own.
        let mut fragments: HashMap<&str, Fragment> = HashMap::new();
        let mut stack = vec![Walk {
            file,
            items: &parsed.items,
            first_splice: None,
        }];
        while let Some(walk) = stack.last_mut() {
            let Some((item, rest)) = walk.items.split_first() else {
                if let Some((name, ops, text)) = walk.first_splice {
                    let fragment = Fragment {
                        ops: ops..program.ops.len(),
                        text: text..program.text.len(),
                    };
                    fragments.insert(name, fragment);
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
                    open_ifs.push(OpenIf {
                        at: program.ops.len(),
                        from_else_if: true,
                    });
                    program.ops.push(op);
                }
                Item::Else(_) => start_else(&mut program.ops, &open_ifs),
                Item::EndIf(_) => {
                    while let Some(open) = open_ifs.pop() {
                        let here = program.ops.len();
                        close_block(&mut program.ops, open.at, here);
                        program.ops.push(Op::EndIf);
                        if !open.from_else_if {
                            break;
                        }
                    }
                }
                Item::Snippet(name) => {
                    // Snippets that include others more than once multiply:
                    // a short chain can expand past any memory. Stop there.
                    if program.text.len() > MAX_EXPANDED_TEXT
                        || program.ops.len() > MAX_EXPANDED_OPS
                    {
                        return Err(Box::new(too_large(file, name)));
                    }
                    if let Some(fragment) = fragments.get(name.name.as_str()) {
                        let adds_text = program.text.len().saturating_add(fragment.text.len());
                        let adds_ops = program.ops.len().saturating_add(fragment.ops.len());
                        if adds_text > MAX_EXPANDED_TEXT || adds_ops > MAX_EXPANDED_OPS {
                            return Err(Box::new(too_large(file, name)));
                        }
                        self.steps += fragment.ops.len() as u64;
                        splice_again(&mut program, fragment);
                    } else if let Some((key, snippet)) = snippets.get_key_value(name.name.as_str())
                    {
                        self.snippets.insert(name.name.clone());
                        if let Some(parsed) = &snippet.parsed {
                            stack.push(Walk {
                                file: snippet.file,
                                items: &parsed.items,
                                first_splice: Some((key, program.ops.len(), program.text.len())),
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
}
