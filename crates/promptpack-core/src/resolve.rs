//! From parsed files to programs: checks the snippet graph (missing names,
//! cycles), splices snippets into templates, numbers variables and turns
//! blocks into jumps. Knows nothing of files on disk.

use crate::error::{Diagnostic, ErrorCode};
use crate::program::{Op, Program, StableHasher, VarInfo, hash_program};
use crate::settings::Settings;
use crate::source_file::SourceFile;
use crate::sources::Sources;
pub use crate::sources::{SnippetSource, TemplateSource};
use crate::syntax::{Condition, Delimiters, Item, Name, Parsed, parse, strip_standalone_tags};
use std::collections::{BTreeSet, HashMap};

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
}

struct ParsedSnippet<'a> {
    file: &'a SourceFile,
    parsed: Option<Parsed>,
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
    resolve_read(templates, snippets, &[], settings)
}

/// [`resolve_with`] on what a reader read: an include of one of
/// [`Sources::unreadable_snippets`] fails its template without being
/// reported again as missing (the reader reported why it was not read).
pub fn resolve_sources(
    sources: &Sources,
    settings: &Settings,
) -> (Vec<ResolvedPrompt>, Vec<Diagnostic>) {
    let (templates, snippets) = (&sources.templates, &sources.snippets);
    resolve_read(templates, snippets, &sources.unreadable_snippets, settings)
}

fn resolve_read(
    templates: &[TemplateSource],
    snippets: &[SnippetSource],
    unreadable: &[String],
    settings: &Settings,
) -> (Vec<ResolvedPrompt>, Vec<Diagnostic>) {
    let delims = &settings.delimiters;
    let parse = |file: &SourceFile, delims: &Delimiters| {
        let mut parsed = parse(file, delims)?;
        if settings.standalone_tags {
            strip_standalone_tags(file, &mut parsed);
        }
        Ok::<Parsed, Vec<Diagnostic>>(parsed)
    };
    let mut errors = Vec::new();
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
        by_name.insert(
            &s.name,
            ParsedSnippet {
                file: &s.file,
                parsed,
            },
        );
    }
    let usable = check_snippet_graph(snippets, &by_name, delims, unreadable, &mut errors);

    let mut prompts = Vec::new();
    let mut ids = BTreeSet::new();
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
        for file in std::iter::once(&t.system).chain(t.user.as_ref()) {
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
        prompts.push(ResolvedPrompt {
            id: t.id.clone(),
            system,
            user,
            system_path: t.system.path().to_string(),
            user_path: t.user.as_ref().map(|u| u.path().to_string()),
            vars,
            snippets: builder.snippets,
            hash: hasher.finish(),
        });
    }
    (prompts, errors)
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
            });
            self.vars.len() - 1
        });
        let info = &mut self.vars[index];
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
        let mut stack: Vec<(&SourceFile, &[Item])> = vec![(file, &parsed.items)];
        while let Some((file, items)) = stack.last_mut() {
            let Some((item, rest)) = items.split_first() else {
                stack.pop();
                continue;
            };
            *items = rest;
            let file: &SourceFile = file;
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
                    if let Some(snippet) = snippets.get(name.name.as_str()) {
                        self.snippets.insert(name.name.clone());
                        if let Some(parsed) = &snippet.parsed {
                            stack.push((snippet.file, &parsed.items));
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
