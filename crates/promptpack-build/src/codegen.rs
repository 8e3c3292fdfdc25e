//! Library → Rust source: the `PromptId` enum, one vars struct per prompt and
//! straight-line renderers. A pure function of its input, so its output can
//! be snapshot-tested; the build script writes it to `OUT_DIR`.

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
use promptpack_core::program::{Op, Program, VarInfo, VarKind};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::sources::TemplateSource;
use quote::{format_ident, quote};
use std::collections::HashMap;
use std::fmt;

/// Where the generating crate's prompt files are, recorded in the generated
/// code so that dev builds can read them from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevPaths {
    /// The prompt root.
    pub root: String,
    /// The templates folder.
    pub templates: String,
    /// The snippets folder.
    pub snippets: String,
    /// The opening delimiter.
    pub open: String,
    /// The closing delimiter.
    pub close: String,
    /// Whether lines holding only a block tag are removed
    /// (`[syntax] standalone_tags`).
    pub standalone_tags: bool,
}

/// Blocks nested deeper than this are generated unformatted (see [`generate`]).
const FORMAT_MAX_DEPTH: usize = 64;

/// Generates the Rust source for `prompts`, formatted with prettyplease.
///
/// `templates` supplies each prompt's original text for the rustdoc of the
/// generated items. Fails as [`generate_tokens`] does.
///
/// When a template nests `{{#if}}` blocks more than 64 deep, the code is
/// written unformatted instead, as [`generate_unformatted`] does: such a
/// template is machine-made, and formatting its code would only cost time.
#[cfg(feature = "unstable-machinery")]
pub fn generate(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
) -> Result<String> {
    format(generate_tokens(prompts, templates, dev)?, prompts)
}

/// The code of [`generate_tokens`] formatted as [`generate`] does.
pub fn format(tokens: TokenStream, prompts: &[ResolvedPrompt]) -> Result<String> {
    let depth = prompts
        .iter()
        .flat_map(|p| std::iter::once(&p.system).chain(&p.user))
        .map(nesting_depth)
        .max()
        .unwrap_or(0);
    if depth > FORMAT_MAX_DEPTH {
        return Ok(write_flat(tokens));
    }
    let file: syn::File = syn::parse2(tokens).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("generated code does not parse (a promptpack bug): {e}"),
        )
    })?;
    Ok(prettyplease::unparse(&file))
}

/// How deeply the blocks of `program` nest.
fn nesting_depth(program: &Program) -> usize {
    let (mut depth, mut max) = (0usize, 0);
    for op in &program.ops {
        match op {
            Op::If { .. } => {
                depth += 1;
                max = max.max(depth);
            }
            Op::EndIf => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Writes tokens as `TokenStream`'s `Display` does (a space between tokens,
/// none after a joint punctuation mark), without its recursion per group,
/// and with a line break after each `;`, `,` and `}`.
fn write_flat(tokens: TokenStream) -> String {
    let mut out = String::new();
    // Writing to a `String` cannot fail.
    let _ = write_flat_to(tokens, &mut out);
    out
}

/// [`write_flat`] into any writer.
fn write_flat_to(tokens: TokenStream, out: &mut impl fmt::Write) -> fmt::Result {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    let mut stack = vec![(tokens.into_iter(), None::<char>)];
    // A line per statement, item and list element, not one line for the
    // whole file: rustc works out columns from the start of the line, and
    // on a line of megabytes that takes it minutes and gigabytes.
    let (mut space, mut newline) = (false, false);
    while let Some((iter, close)) = stack.last_mut() {
        let Some(token) = iter.next() else {
            if let Some(close) = *close {
                out.write_char(close)?;
                space = true;
                newline = close == '}';
            }
            stack.pop();
            continue;
        };
        if newline {
            out.write_char('\n')?;
        } else if space {
            out.write_char(' ')?;
        }
        space = true;
        newline = false;
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => (Some('('), Some(')')),
                    Delimiter::Brace => (Some('{'), Some('}')),
                    Delimiter::Bracket => (Some('['), Some(']')),
                    Delimiter::None => (None, None),
                };
                if let Some(open) = open {
                    out.write_char(open)?;
                }
                space = false;
                stack.push((group.stream().into_iter(), close));
            }
            TokenTree::Punct(punct) => {
                out.write_char(punct.as_char())?;
                space = punct.spacing() == Spacing::Alone;
                newline = space && matches!(punct.as_char(), ';' | ',');
            }
            TokenTree::Ident(ident) => write!(out, "{ident}")?,
            TokenTree::Literal(literal) => write!(out, "{literal}")?,
        }
    }
    out.write_char('\n')
}

/// The most Rust code generated for one prompt (its vars struct, its
/// renderers, its choice enums), in bytes as [`generate_unformatted`] writes
/// it: 2.5 MiB, some 7,000 nested blocks or 6,000 variables. A debug build
/// of the costliest shape at this size, blocks nested that deep, takes rustc
/// a few gigabytes; past it, minutes and more: such a prompt is `too_large`,
/// for `check` and the build alike. The template as expanded
/// (snippets spliced in) decides: every piece of text and every token is a
/// statement, so a snippet included many times multiplies the code.
pub const MAX_PROMPT_CODE: usize = 5 << 19;

/// The most Rust code generated for every prompt together, in bytes as
/// [`generate_unformatted`] writes it: 128 MiB. A backstop, not a budget:
/// many small prompts compile in time and memory that grow with their
/// number (1,000 prompts of a few KB generate some 15 MiB, 5,000 some
/// 80 MiB), so only a tree far past any real one meets it.
pub const MAX_CODE: usize = 128 << 20;

/// The most Rust code generated for all prompts together beyond the first
/// [`SMALL_PROMPT_CODE`] of each: 10 MiB. rustc's time and memory grow with
/// the size of each prompt's functions faster than with their number, so
/// big prompts share this budget (30 prompts near [`MAX_PROMPT_CODE`] took
/// more than 24 GB) while a thousand ordinary ones do not touch it.
pub const MAX_LARGE_CODE: usize = 10 << 20;

/// What a prompt may generate without drawing on [`MAX_LARGE_CODE`]: 64 KiB,
/// several times an ordinary prompt's code.
pub const SMALL_PROMPT_CODE: usize = 64 << 10;

/// A lower bound of the code generated for `prompt`, without generating it:
/// its text, and a statement per token.
fn least_code(prompt: &ResolvedPrompt) -> usize {
    std::iter::once(&prompt.system)
        .chain(&prompt.user)
        .map(|program| {
            let tokens = program
                .ops
                .iter()
                .filter(|op| matches!(op, Op::Var(_) | Op::If { .. } | Op::Else { .. }))
                .count();
            program.text.len() + tokens * LEAST_STATEMENT
        })
        .sum()
}

/// The fewest bytes any token's statement takes (`out.push_str(self.x);`).
const LEAST_STATEMENT: usize = 20;

/// Bytes as people read them: `812 KiB`, `12.5 MiB`.
fn human(bytes: usize) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    }
}

const TOO_LARGE_HELP: &str = "every piece of text and every token of the template, \
as expanded, becomes code: a snippet included many times (directly or through other \
snippets) multiplies it. Split the prompt, include less, or render it with `Library`";

fn too_large(prompt: &ResolvedPrompt, size: usize, bound: &str) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::TooLarge,
        format!(
            "prompt `{}` would generate {bound}{} of Rust, past the limit of {} per prompt",
            prompt.id,
            human(size),
            human(MAX_PROMPT_CODE)
        ),
    )
    .at(Location::file(prompt.system_path.clone()))
    .with_help(TOO_LARGE_HELP)
}

fn too_large_total(prompt: &ResolvedPrompt, total: usize, large: usize) -> Diagnostic {
    let message = if total > MAX_CODE {
        format!(
            "the prompts up to `{}` would generate {} of Rust, past the limit of {} for all prompts together",
            prompt.id,
            human(total),
            human(MAX_CODE)
        )
    } else {
        format!(
            "the prompts up to `{}` would generate {} of Rust beyond the first {} of each, past the limit of {} for big prompts together",
            prompt.id,
            human(large),
            human(SMALL_PROMPT_CODE),
            human(MAX_LARGE_CODE)
        )
    };
    Diagnostic::new(ErrorCode::TooLarge, message)
        .at(Location::file(prompt.system_path.clone()))
        .with_help(TOO_LARGE_HELP)
}

/// The length of `tokens` as [`write_flat`] writes them.
fn flat_len(tokens: &TokenStream) -> usize {
    let mut counter = Counter(0);
    // Counting cannot fail.
    let _ = write_flat_to(tokens.clone(), &mut counter);
    counter.0
}

/// Counts the bytes written to it.
struct Counter(usize);

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// The Rust names of `prompts`: each one's `PromptId` variant and fields
/// (with their choice enums), every problem in `errors`.
fn rust_names(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    errors: &mut Vec<Diagnostic>,
) -> (Vec<Ident>, Vec<Vec<Field>>) {
    let variants = variant_names(prompts, templates, errors);
    let fields: Vec<Vec<Field>> = prompts
        .iter()
        .zip(&variants)
        .map(|(p, v)| fields_of(p, v, errors))
        .collect();
    type_collisions(prompts, &variants, &fields, errors);
    (variants, fields)
}

/// The generated source without formatting (as `TokenStream::to_string`
/// writes it, without its recursion per nested block): the same code as
/// [`generate`], in about a third of the time, since it skips parsing the
/// tokens back for prettyplease.
#[cfg(feature = "unstable-machinery")]
pub fn generate_unformatted(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
) -> Result<String> {
    Ok(write_flat(generate_tokens(prompts, templates, dev)?))
}

/// The code of [`generate_tokens`] unformatted, as [`generate_unformatted`]
/// writes it.
pub fn unformatted(tokens: TokenStream) -> String {
    write_flat(tokens)
}

/// The generated code as tokens, unformatted. Fails, reporting every
/// problem, when an id or a variable cannot become a Rust name, two of them
/// would become the same one, or the code would pass [`MAX_PROMPT_CODE`] or
/// [`MAX_CODE`] (`too_large`). Give the prompts sorted by id, as the load
/// pipeline gives them: of two colliding ids, the later one is reported.
/// [`check`](crate::check) runs it, so that a check that passes means a
/// build that passes.
pub fn generate_tokens(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
) -> Result<TokenStream> {
    let mut errors = Vec::new();
    let (variants, fields) = rust_names(prompts, templates, &mut errors);
    if let Some(error) = Error::from_diagnostics(errors) {
        return Err(error);
    }
    let sources: HashMap<&str, &TemplateSource> =
        templates.iter().map(|t| (t.id.as_str(), t)).collect();

    let prompt_id = prompt_id_enum(prompts, &variants, &fields, &sources, dev);
    let mut errors = Vec::new();
    let mut total = flat_len(&prompt_id);
    if total > MAX_CODE {
        return Err(Error::new(
            ErrorCode::TooLarge,
            format!(
                "the `PromptId` enum of {} prompts alone would generate {} of Rust, past the limit of {} for all prompts together",
                prompts.len(),
                human(total),
                human(MAX_CODE)
            ),
        ));
    }
    let mut large = 0;
    let mut structs = Vec::with_capacity(prompts.len());
    for ((prompt, variant), fields) in prompts.iter().zip(&variants).zip(&fields) {
        // Refused before generating when even a lower bound is too much:
        // the expanded template may be far larger than the limit.
        let least = least_code(prompt);
        if least > MAX_PROMPT_CODE {
            errors.push(too_large(prompt, least, "at least "));
            continue;
        }
        let code = vars_struct(
            prompt,
            variant,
            fields,
            sources.get(prompt.id.as_str()).copied(),
        );
        let size = flat_len(&code);
        if size > MAX_PROMPT_CODE {
            errors.push(too_large(prompt, size, ""));
            continue;
        }
        total += size;
        large += size.saturating_sub(SMALL_PROMPT_CODE);
        if total > MAX_CODE || large > MAX_LARGE_CODE {
            errors.push(too_large_total(prompt, total, large));
            break;
        }
        structs.push(code);
    }
    if let Some(error) = Error::from_diagnostics(errors) {
        return Err(error);
    }
    let contracts = dev_contracts(prompts, &fields);
    let DevPaths {
        root,
        templates,
        snippets,
        open,
        close,
        standalone_tags,
    } = dev;
    let allows = lint_allows();
    Ok(quote! {
        #prompt_id

        /// Renders a prompt from its typed variables.
        ///
        /// Fails with `wrong_vars` when `vars` belongs to another prompt than
        /// `id`; `vars.build()` renders without that check, since the struct
        /// already names its prompt. In dev builds with hot reload the
        /// template is read from disk, so an edited prompt takes effect
        /// without a restart.
        #allows
        pub fn build_prompt<V>(id: PromptId, vars: V) -> ::core::result::Result<::promptpack::Prompt<PromptId>, ::promptpack::Error>
        where
            V: ::promptpack::TypedVars<Id = PromptId>,
        {
            if id != V::ID {
                return ::core::result::Result::Err(::promptpack::__private::wrong_vars(id.as_str(), V::ID.as_str()));
            }
            vars.build()
        }

        #allows
        #[allow(dead_code)]
        const __PROMPTPACK_DEV_SOURCE: ::promptpack::__private::DevSource = ::promptpack::__private::DevSource {
            root: #root,
            templates: #templates,
            snippets: #snippets,
            open: #open,
            close: #close,
            standalone_tags: #standalone_tags,
            prompts: &[#(#contracts),*],
        };

        #(#structs)*
    })
}

/// Each prompt's compiled contract (its fields, their kinds and choice
/// values), for the dev path to tell an edit the struct cannot express.
fn dev_contracts<'a>(
    prompts: &'a [ResolvedPrompt],
    fields: &'a [Vec<Field>],
) -> impl Iterator<Item = TokenStream> + 'a {
    prompts.iter().zip(fields).map(|(prompt, fields)| {
        let id = &prompt.id;
        let vars = fields.iter().map(|f| {
            let name = &f.name;
            let kind = match f.kind {
                VarKind::Text => quote!(Text),
                VarKind::Flag => quote!(Flag),
                VarKind::Optional => quote!(Optional),
                VarKind::Choice => quote!(Choice),
                VarKind::OptionalChoice => quote!(OptionalChoice),
            };
            let values = f
                .choice
                .iter()
                .flat_map(|c| c.values.iter().map(|(v, _)| v));
            quote!(::promptpack::__private::DevVar {
                name: #name,
                kind: ::promptpack::__private::VarKind::#kind,
                values: &[#(#values),*],
            })
        });
        quote!(::promptpack::__private::DevPrompt { id: #id, vars: &[#(#vars),*] })
    })
}

struct Field {
    name: String,
    ident: Ident,
    kind: VarKind,
    first_use: Location,
    /// For a variable compared with values: its generated enum.
    choice: Option<Choice>,
}

/// The enum generated for a variable compared with values.
struct Choice {
    ident: Ident,
    /// Each value with its variant, in order of first use.
    values: Vec<(String, Ident)>,
}

impl Choice {
    /// The variant of `value`.
    fn variant(&self, value: &str) -> Option<&Ident> {
        self.values.iter().find(|(v, _)| v == value).map(|(_, i)| i)
    }
}

/// The enum of variable `var` of the prompt whose variant is `prompt`:
/// `AgentSystemRole`, with a variant per value (`"high school"` →
/// `HighSchool`). Values that cannot become variants, or would become the
/// same one, are errors at the variable's first use.
fn choice_of(
    prompt: &ResolvedPrompt,
    variant: &Ident,
    var: &VarInfo,
    errors: &mut Vec<Diagnostic>,
) -> Option<Choice> {
    if var.choices.is_empty() {
        return None;
    }
    let ident = format_ident!("{}{}", variant, var.name.to_upper_camel_case());
    let mut values: Vec<(String, Ident)> = Vec::new();
    let mut refuse = |message: String, help: &str| {
        errors.push(
            Diagnostic::new(ErrorCode::InvalidChoice, message)
                .at(var.first_use.clone())
                .with_help(help),
        );
    };
    for value in &var.choices {
        let pascal = value.to_upper_camel_case();
        let valid = pascal.starts_with(|c: char| c.is_ascii_alphabetic())
            && pascal.chars().all(|c| c.is_ascii_alphanumeric())
            && pascal != "Self";
        if !valid {
            refuse(
                format!(
                    "value {value:?} of `{}` in prompt `{}` cannot become a variant of `{ident}`",
                    var.name, prompt.id
                ),
                "start compared values with a letter",
            );
            continue;
        }
        // A variant named like an associated constant hides it: `E::ALL`
        // would be the variant.
        if CHOICE_CONSTS.contains(&pascal.as_str()) {
            refuse(
                format!(
                    "value {value:?} of `{}` in prompt `{}` would become `{ident}::{pascal}`, the name of the enum's list of values",
                    var.name, prompt.id
                ),
                "spell the value another way (`all`, not `a-l-l`)",
            );
            continue;
        }
        if let Some((other, _)) = values.iter().find(|(_, i)| *i == pascal.as_str()) {
            refuse(
                format!(
                    "values {other:?} and {value:?} of `{}` in prompt `{}` both become `{ident}::{pascal}`",
                    var.name, prompt.id
                ),
                "compare with one spelling of the value",
            );
            continue;
        }
        values.push((value.clone(), format_ident!("{}", pascal)));
    }
    Some(Choice { ident, values })
}

/// Two generated types with one name: a choice enum against `PromptId`, a
/// vars struct or another choice enum (`agent` + `systemRole` and
/// `agent-system` + `role` both make `AgentSystemRole`).
fn type_collisions(
    prompts: &[ResolvedPrompt],
    variants: &[Ident],
    fields: &[Vec<Field>],
    errors: &mut Vec<Diagnostic>,
) {
    let mut taken: HashMap<String, String> = HashMap::new();
    taken.insert("PromptId".to_string(), "the prompt id enum".to_string());
    for (prompt, variant) in prompts.iter().zip(variants) {
        taken.insert(
            format!("{variant}Vars"),
            format!("the vars struct of `{}`", prompt.id),
        );
    }
    for (prompt, fs) in prompts.iter().zip(fields) {
        for field in fs {
            let Some(choice) = &field.choice else {
                continue;
            };
            let name = choice.ident.to_string();
            let what = format!("the values of `{}` in `{}`", field.name, prompt.id);
            if let Some(other) = taken.get(&name) {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidChoice,
                        format!("{what} would be the enum `{name}`, the name of {other}"),
                    )
                    .at(field.first_use.clone())
                    .with_help("rename the variable"),
                );
            } else {
                taken.insert(name, what);
            }
        }
    }
}

/// The associated constants of `PromptId`, which no variant may be named.
const PROMPT_ID_CONSTS: &[&str] = &["ALL", "DELIMITERS"];

/// The associated constants of a choice enum, which no variant may be named.
const CHOICE_CONSTS: &[&str] = &["ALL"];

const STRICT_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];

/// Keywords that cannot even be raw identifiers.
const UNRAWABLE_KEYWORDS: &[&str] = &["self", "Self", "super", "crate", "_"];

/// The Rust field for template variable `name`: snake_case, raw when a
/// keyword, suffixed with `_` when not even a raw identifier may be used.
pub(crate) fn field_ident(name: &str) -> Option<Ident> {
    // Parsed templates only hold such names; a hand-made program may not.
    if !promptpack_core::syntax::is_var_name(name) {
        return None;
    }
    let snake = name.to_snake_case();
    // snake_case drops leading underscores (`_1a` becomes `1a`): what is
    // left must still start like an identifier.
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if UNRAWABLE_KEYWORDS.contains(&snake.as_str()) {
        return Some(format_ident!("{}_", snake));
    }
    if STRICT_KEYWORDS.contains(&snake.as_str()) {
        return Some(Ident::new_raw(&snake, Span::call_site()));
    }
    Some(format_ident!("{}", snake))
}

fn fields_of(prompt: &ResolvedPrompt, variant: &Ident, errors: &mut Vec<Diagnostic>) -> Vec<Field> {
    let mut fields: Vec<Field> = Vec::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    for var in &prompt.vars {
        let Some(ident) = field_ident(&var.name) else {
            errors.push(
                Diagnostic::new(
                    ErrorCode::InvalidVarName,
                    format!(
                        "variable `{}` of prompt `{}` cannot become a Rust field",
                        var.name, prompt.id
                    ),
                )
                .at(var.first_use.clone())
                .with_help("put a letter before the first digit (`_` alone does not count)"),
            );
            continue;
        };
        let key = ident.to_string();
        if let Some(&other) = taken.get(&key) {
            let other: &Field = &fields[other];
            errors.push(var_collision(prompt, var, other, &key));
            continue;
        }
        let kind = var.kind();
        let choice = choice_of(prompt, variant, var, errors);
        taken.insert(key, fields.len());
        fields.push(Field {
            name: var.name.clone(),
            ident,
            kind,
            first_use: var.first_use.clone(),
            choice,
        });
    }
    fields
}

fn var_collision(prompt: &ResolvedPrompt, var: &VarInfo, other: &Field, field: &str) -> Diagnostic {
    let o = &other.first_use;
    Diagnostic::new(
        ErrorCode::VarCollision,
        format!(
            "variables `{}` and `{}` of prompt `{}` both become the field `{field}`",
            other.name, var.name, prompt.id
        ),
    )
    .at(var.first_use.clone())
    .with_help(format!(
        "`{}` is used at {}:{}:{}; rename one of them",
        other.name,
        o.path(),
        o.line(),
        o.column()
    ))
}

fn variant_names(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    errors: &mut Vec<Diagnostic>,
) -> Vec<Ident> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    let folder = |id: &str| {
        templates.iter().find(|t| t.id == id).map_or_else(
            || format!("templates/{id}"),
            |t| parent_folder(t.system.path()),
        )
    };
    prompts
        .iter()
        .map(|p| {
            let pascal = p.id.to_upper_camel_case();
            // `Self` is a keyword that cannot even be a raw identifier.
            // A variant named like an associated constant hides it:
            // `PromptId::ALL` would be the variant.
            let valid = promptpack_core::syntax::is_snippet_name(&p.id)
                && !pascal.is_empty()
                && !pascal.starts_with(|c: char| c.is_ascii_digit())
                && pascal != "Self"
                && !PROMPT_ID_CONSTS.contains(&pascal.as_str());
            if !valid {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidId,
                        format!("prompt id `{}` cannot become a Rust name", p.id),
                    )
                    .at(Location::file(folder(&p.id)))
                    .with_help(if pascal == "Self" {
                        "`Self` is a Rust keyword: rename the template folder".to_string()
                    } else if PROMPT_ID_CONSTS.contains(&pascal.as_str()) {
                        format!("`PromptId::{pascal}` is a constant of the generated enum: rename the template folder")
                    } else {
                        "start template folder names with a letter".to_string()
                    }),
                );
            } else if let Some(other) = seen.get(&pascal) {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::IdCollision,
                        format!(
                            "prompt ids `{other}` and `{}` both become `PromptId::{pascal}`",
                            p.id
                        ),
                    )
                    .at(Location::file(folder(&p.id)))
                    .with_help(format!(
                        "rename {} or {}",
                        folder(other),
                        folder(&p.id)
                    )),
                );
            } else {
                seen.insert(pascal.clone(), &p.id);
            }
            if valid {
                format_ident!(
                    "{}",
                    pascal.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_")
                )
            } else {
                // Never emitted: the error above fails the generation.
                format_ident!("_")
            }
        })
        .collect()
}

fn parent_folder(path: &str) -> String {
    path.rsplit_once('/')
        .map_or(path, |(dir, _)| dir)
        .to_string()
}

fn prompt_id_enum(
    prompts: &[ResolvedPrompt],
    variants: &[Ident],
    fields: &[Vec<Field>],
    sources: &HashMap<&str, &TemplateSource>,
    dev: &DevPaths,
) -> TokenStream {
    let (open, close) = (&dev.open, &dev.close);
    let variables = fields.iter().map(|fs| {
        let names = fs.iter().map(|f| &f.name);
        quote!(&[#(#names),*])
    });
    let conditions = fields.iter().map(|fs| {
        let names = fs
            .iter()
            .filter(|f| matches!(f.kind, VarKind::Flag | VarKind::Optional))
            .map(|f| &f.name);
        quote!(&[#(#names),*])
    });
    let choices = fields.iter().map(|fs| {
        let entries = fs.iter().filter_map(|f| {
            let choice = f.choice.as_ref()?;
            let name = &f.name;
            let values = choice.values.iter().map(|(v, _)| v);
            Some(quote!((#name, &[#(#values),*])))
        });
        quote!(&[#(#entries),*])
    });
    let generated_renders = prompts.iter().zip(variants).zip(fields).map(|((prompt, variant), fs)| {
        // No local per variable: debug info nests a scope per `let`, and
        // LLVM overflows its stack on thousands of them. The owned values
        // live in two vectors; the struct borrows from them.
        let (mut text_names, mut optional_names) = (Vec::new(), Vec::new());
        let inits: Vec<TokenStream> = fs.iter().map(|f| {
            let ident = &f.ident;
            let name = &f.name;
            match (f.kind, &f.choice) {
                (VarKind::Flag, _) => quote!(#ident: __values(#name).is_some_and(|v| !v.is_empty())),
                (VarKind::Optional, _) => {
                    let i = Literal::usize_unsuffixed(optional_names.len());
                    optional_names.push(name);
                    quote!(#ident: __optional[#i].as_deref())
                }
                (VarKind::Choice, Some(c)) => {
                    let e = &c.ident;
                    // The first value by its variant, not `ALL[0]`: a value
                    // may itself become a variant `ALL`. A choice has a value
                    // whenever the code is generated at all.
                    let first = c.values.first().map(|(_, v)| v);
                    quote!(#ident: __values(#name).and_then(|v| v.parse::<#e>().ok()).unwrap_or(#e::#first))
                }
                (VarKind::OptionalChoice, Some(c)) => {
                    let e = &c.ident;
                    quote!(#ident: __values(#name).and_then(|v| v.parse::<#e>().ok()))
                }
                _ => {
                    let i = Literal::usize_unsuffixed(text_names.len());
                    text_names.push(name);
                    quote!(#ident: &__text[#i])
                }
            }
        }).collect();
        // Borrowed arrays of literals: statics, not copies on the stack.
        let text_values = (!text_names.is_empty()).then(|| quote! {
            let __text: ::std::vec::Vec<::std::string::String> = <[&::core::primitive::str]>::iter(&[#(#text_names),*])
                .map(|n| __values(n).unwrap_or_default())
                .collect();
        });
        let optional_values = (!optional_names.is_empty()).then(|| quote! {
            let __optional: ::std::vec::Vec<::core::option::Option<::std::string::String>> = <[&::core::primitive::str]>::iter(&[#(#optional_names),*])
                .map(|n| __values(n))
                .collect();
        });
        let name = format_ident!("{}Vars", variant);
        let user = if prompt.user.is_some() {
            quote!(::core::option::Option::Some(__vars.render_user()))
        } else {
            quote!(::core::option::Option::None)
        };
        quote! {
            PromptId::#variant => {
                #text_values
                #optional_values
                let __vars = #name { #(#inits),* };
                ::promptpack::Prompt { id: self, system: __vars.render_system(), user: #user, hash: #name::HASH }
            }
        }
    });
    let count = prompts.len();
    let ids: Vec<&str> = prompts.iter().map(|p| p.id.as_str()).collect();
    let hashes: Vec<Literal> = prompts
        .iter()
        .map(|p| Literal::u64_suffixed(p.hash))
        .collect();
    let docs = prompts.iter().map(|p| {
        let files = match sources.get(p.id.as_str()) {
            Some(t) => part_paths(t),
            None => p.system_path.clone(),
        };
        doc_safe(&format!(" The `{}` prompt ({files}).", p.id))
    });
    let allows = lint_allows();
    let derive_enum = derive_enum();
    quote! {
        /// Every prompt of this crate: one variant per folder under `templates/`.
        #allows
        #derive_enum
        pub enum PromptId {
            #(#[doc = #docs] #variants,)*
        }

        #allows
        impl PromptId {
            /// Every prompt id, sorted by name.
            pub const ALL: [PromptId; #count] = [#(PromptId::#variants),*];

            /// The id as written on disk: the template folder's name.
            pub const fn as_str(self) -> &'static ::core::primitive::str {
                match self {
                    #(PromptId::#variants => #ids,)*
                }
            }

            /// Stable content hash of the resolved template (snippets included).
            pub const fn hash(self) -> ::core::primitive::u64 {
                match self {
                    #(PromptId::#variants => #hashes,)*
                }
            }

            /// The token delimiters the templates were compiled with, as
            /// `(open, close)`: what a check for surviving tokens looks for.
            pub const DELIMITERS: (&'static ::core::primitive::str, &'static ::core::primitive::str) = (#open, #close);

            /// The names of every variable the prompt uses, as written in
            /// its templates, in order of first use.
            pub const fn variables(self) -> &'static [&'static ::core::primitive::str] {
                match self {
                    #(PromptId::#variants => #variables,)*
                }
            }

            /// The names of the variables the prompt tests with `#if`.
            pub const fn conditions(self) -> &'static [&'static ::core::primitive::str] {
                match self {
                    #(PromptId::#variants => #conditions,)*
                }
            }

            /// The variables the prompt compares with values
            /// (`{{#if role == "teacher"}}`), each with every value it is
            /// compared with: the variants of its generated enum.
            pub const fn choices(self) -> &'static [(&'static ::core::primitive::str, &'static [&'static ::core::primitive::str])] {
                match self {
                    #(PromptId::#variants => #choices,)*
                }
            }

            /// Renders through the generated code (never from disk) with
            /// values looked up by variable name: a value is `""` when
            /// `values` gives `None`, a condition is true when it gives a
            /// non-empty string, a compared variable takes the value given
            /// (its first value when that is none of [`PromptId::choices`]).
            /// For tests and tools that treat every prompt alike, such as
            /// snapshot suites.
            #[allow(unused_variables)]
            pub fn render_generated(self, values: &dyn ::core::ops::Fn(&::core::primitive::str) -> ::core::option::Option<::std::string::String>) -> ::promptpack::Prompt<PromptId> {
                // Locals are named after the fields, and a field may be
                // called `values` or `vars`; field names never start with `_`.
                let __values = values;
                match self {
                    #(#generated_renders)*
                }
            }
        }

        #allows
        impl ::core::fmt::Display for PromptId {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #allows
        impl ::core::str::FromStr for PromptId {
            type Err = ::promptpack::Error;

            fn from_str(s: &::core::primitive::str) -> ::core::result::Result<Self, ::promptpack::Error> {
                match s {
                    #(#ids => ::core::result::Result::Ok(PromptId::#variants),)*
                    _ => ::core::result::Result::Err(::promptpack::__private::unknown_prompt(s, &[#(#ids),*])),
                }
            }
        }

        ::promptpack::__impl_serde_for_prompt_id!(PromptId);
    }
}

fn part_paths(t: &TemplateSource) -> String {
    match &t.user {
        Some(user) => format!("`{}`, `{}`", t.system.path(), user.path()),
        None => format!("`{}`", t.system.path()),
    }
}

/// A Markdown code fence that the text cannot close early.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}text\n{text}\n{fence}")
}

/// Text made fit for a `///` line, which prettyplease writes for each
/// `#[doc]`: rustc rejects a bare CR in a doc comment and by default denies
/// the codepoints that change the direction of text, so those are written
/// escaped (`\u{202e}`), as are line breaks in what must stay one line.
fn doc_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\r' | '\n' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// One `#[doc]` line per line of `text`; a lone CR ends a line too.
fn doc_lines(text: &str) -> Vec<String> {
    text.lines()
        .flat_map(|l| l.split('\r'))
        .map(|l| format!(" {}", doc_safe(l)))
        .collect()
}

fn vars_struct(
    prompt: &ResolvedPrompt,
    variant: &Ident,
    fields: &[Field],
    source: Option<&TemplateSource>,
) -> TokenStream {
    let name = format_ident!("{}Vars", variant);
    let borrows = fields
        .iter()
        .any(|f| matches!(f.kind, VarKind::Text | VarKind::Optional));
    let (generics, anon) = if borrows {
        (quote!(<'a>), quote!(<'_>))
    } else {
        (quote!(), quote!())
    };
    let id = &prompt.id;

    let mut doc = format!("Variables of the `{id}` prompt.\n\n");
    if let Some(t) = source {
        doc.push_str(&format!(
            "From {}.\n\n`system.md`:\n\n{}\n",
            part_paths(t),
            fenced(t.system.body())
        ));
        if let Some(user) = &t.user {
            doc.push_str(&format!("\n`user.md`:\n\n{}\n", fenced(user.body())));
        }
    }
    let struct_docs = doc_lines(&doc);

    let field_defs = fields.iter().map(|f| {
        let ident = &f.ident;
        let choice = f.choice.as_ref().map(|c| &c.ident);
        let ty = match (f.kind, choice) {
            (VarKind::Flag, _) => quote!(::core::primitive::bool),
            (VarKind::Optional, _) => quote!(::core::option::Option<&'a ::core::primitive::str>),
            (VarKind::Choice, Some(e)) => quote!(#e),
            (VarKind::OptionalChoice, Some(e)) => quote!(::core::option::Option<#e>),
            _ => quote!(&'a ::core::primitive::str),
        };
        let usage = match f.kind {
            VarKind::Flag => "a condition".to_string(),
            VarKind::Optional => "a value and a condition (true when `Some` and not empty; `None` renders as nothing)".to_string(),
            VarKind::Choice => "a choice: the prompt compares it with each value of its enum".to_string(),
            VarKind::OptionalChoice => "a choice and a condition (true when `Some`)".to_string(),
            _ => "a value".to_string(),
        };
        let loc = &f.first_use;
        let doc = doc_safe(&format!(" `{}`: used as {usage}; first at `{}:{}:{}`.", f.name, loc.path(), loc.line(), loc.column()));
        quote! { #[doc = #doc] pub #ident: #ty, }
    });

    let lookups = fields.iter().map(|f| {
        let ident = &f.ident;
        let key = &f.name;
        let value = match (f.kind, &f.choice) {
            (VarKind::Flag, _) => quote!(::promptpack::ValueRef::Bool(self.#ident)),
            (VarKind::Optional, _) => {
                quote!(::promptpack::ValueRef::Str(self.#ident.unwrap_or("")))
            }
            (VarKind::Choice, _) => quote!(::promptpack::ValueRef::Str(self.#ident.as_str())),
            (VarKind::OptionalChoice, Some(c)) => {
                let e = &c.ident;
                quote!(::promptpack::ValueRef::Str(self.#ident.map_or("", #e::as_str)))
            }
            _ => quote!(::promptpack::ValueRef::Str(self.#ident)),
        };
        quote! { #key => ::core::option::Option::Some(#value), }
    });

    let by_name: HashMap<&str, &Field> = fields.iter().map(|f| (f.name.as_str(), f)).collect();
    let by_index: Vec<&Field> = prompt
        .vars
        .iter()
        .filter_map(|v| by_name.get(v.name.as_str()).copied())
        .collect();
    let render_system = render_fn(format_ident!("render_system"), &prompt.system, &by_index);
    let (render_user, user_expr) = match &prompt.user {
        Some(user) => (
            render_fn(format_ident!("render_user"), user, &by_index),
            quote!(::core::option::Option::Some(self.render_user())),
        ),
        None => (quote!(), quote!(::core::option::Option::None)),
    };
    let hash = Literal::u64_suffixed(prompt.hash);
    let enums = fields
        .iter()
        .filter_map(|f| f.choice.as_ref().map(|c| choice_enum(prompt, f, c)));

    // `PartialEq` by hand: the derive compares the fields in one `&&` chain,
    // an expression nested once per field, on which rustc overflows its
    // stack past a few thousand fields.
    let field_idents = fields.iter().map(|f| &f.ident);
    let allows = lint_allows();
    quote! {
        #(#enums)*

        #allows
        #(#[doc = #struct_docs])*
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::core::marker::Copy,
            ::core::cmp::Eq,
            ::core::hash::Hash
        )]
        pub struct #name #generics {
            #(#field_defs)*
        }

        #allows
        impl ::core::cmp::PartialEq for #name #anon {
            fn eq(&self, other: &Self) -> ::core::primitive::bool {
                #(if self.#field_idents != other.#field_idents {
                    return false;
                })*
                true
            }
        }

        #allows
        impl #generics #name #generics {
            /// Stable content hash of the resolved template (snippets included).
            pub const HASH: ::core::primitive::u64 = #hash;

            /// Renders the prompt: from the files on disk in dev builds with
            /// hot reload (so edits show without a restart), from the code
            /// generated at build time otherwise.
            pub fn build(&self) -> ::core::result::Result<::promptpack::Prompt<PromptId>, ::promptpack::Error> {
                #[cfg(debug_assertions)]
                let from_disk = ::promptpack::__private::dev_render(&__PROMPTPACK_DEV_SOURCE, #id, self);
                #[cfg(not(debug_assertions))]
                let from_disk: ::core::option::Option<::core::result::Result<::promptpack::Prompt, ::promptpack::Error>> = ::core::option::Option::None;
                if let ::core::option::Option::Some(rendered) = from_disk {
                    return rendered.map(|p| ::promptpack::Prompt { id: PromptId::#variant, system: p.system, user: p.user, hash: p.hash });
                }
                ::core::result::Result::Ok(::promptpack::Prompt {
                    id: PromptId::#variant,
                    system: self.render_system(),
                    user: #user_expr,
                    hash: Self::HASH,
                })
            }

            #render_system
            #render_user
        }

        #allows
        impl ::promptpack::Vars for #name #anon {
            fn get(&self, name: &::core::primitive::str) -> ::core::option::Option<::promptpack::ValueRef<'_>> {
                match name {
                    #(#lookups)*
                    _ => ::core::option::Option::None,
                }
            }
        }

        #allows
        impl ::promptpack::TypedVars for #name #anon {
            type Id = PromptId;
            const ID: PromptId = PromptId::#variant;

            fn build(&self) -> ::core::result::Result<::promptpack::Prompt<PromptId>, ::promptpack::Error> {
                #name::build(self)
            }
        }
    }
}

/// The enum of a compared variable, with `ALL`, `as_str`, `Display` and
/// `FromStr`.
fn choice_enum(prompt: &ResolvedPrompt, field: &Field, choice: &Choice) -> TokenStream {
    let ident = &choice.ident;
    let doc = doc_safe(&format!(
        " The values `{}` is compared with in the `{}` prompt.",
        field.name, prompt.id
    ));
    let variants: Vec<&Ident> = choice.values.iter().map(|(_, i)| i).collect();
    let values: Vec<&String> = choice.values.iter().map(|(v, _)| v).collect();
    let docs = values.iter().map(|v| doc_safe(&format!(" `{v:?}`")));
    let count = variants.len();
    let name = &field.name;
    let allows = lint_allows();
    let derive_enum = derive_enum();
    quote! {
        #[doc = #doc]
        #allows
        #derive_enum
        pub enum #ident {
            #(#[doc = #docs] #variants,)*
        }

        #allows
        impl #ident {
            /// Every value, in the order the templates first use them.
            pub const ALL: [#ident; #count] = [#(#ident::#variants),*];

            /// The value as the templates write it.
            pub const fn as_str(self) -> &'static ::core::primitive::str {
                match self {
                    #(#ident::#variants => #values,)*
                }
            }
        }

        #allows
        impl ::core::fmt::Display for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #allows
        impl ::core::str::FromStr for #ident {
            type Err = ::promptpack::Error;

            fn from_str(s: &::core::primitive::str) -> ::core::result::Result<Self, ::promptpack::Error> {
                match s {
                    #(#values => ::core::result::Result::Ok(#ident::#variants),)*
                    _ => ::core::result::Result::Err(::promptpack::__private::unknown_choice(#name, s, &[#(#values),*])),
                }
            }
        }
    }
}

/// The derives of `PromptId` and the choice enums, by full path: no
/// generated name may stand for one.
fn derive_enum() -> TokenStream {
    quote!(#[derive(
        ::core::fmt::Debug,
        ::core::clone::Clone,
        ::core::marker::Copy,
        ::core::cmp::PartialEq,
        ::core::cmp::Eq,
        ::core::hash::Hash,
        ::core::cmp::PartialOrd,
        ::core::cmp::Ord
    )])
}

/// The lints generated code answers to none of, as generated code
/// conventionally does (prost's output too): clippy's groups, on each
/// generated item, so that the user's own code keeps every lint it asks for.
fn lint_allows() -> TokenStream {
    quote!(#[allow(clippy::all, clippy::pedantic, clippy::nursery)])
}

/// The statements of one renderer, flat: every `{{#if}}` branch becomes a
/// boolean (an element of the array `__b`, true when the branch renders: its
/// parent renders and its condition holds), and every piece of the output an
/// `if` on one of them. However deep the template nests, the code nests one level, which
/// rustc (whose passes recurse per nested expression and block) handles at
/// any size.
#[derive(Default)]
struct FlatRender {
    /// `__b[N] = …;`, parents before children.
    flags: Vec<TokenStream>,
    /// Static bytes per branch; index 0 is the top level, `N + 1` is `__bN`.
    static_len: Vec<usize>,
    /// Lengths of values per branch (expressions), indexed as `static_len`.
    value_len: Vec<Vec<TokenStream>>,
    /// Pushes in output order, each run of one branch together.
    runs: Vec<(usize, Vec<TokenStream>)>,
    /// Text not yet pushed, of the branch the last run belongs to.
    pending: String,
}

impl FlatRender {
    /// A new branch under `parent` rendering when `cond` holds.
    fn branch(&mut self, parent: usize, cond: TokenStream) -> usize {
        let n = self.static_len.len();
        let value = if parent == 0 {
            cond
        } else {
            let parent = flag(parent);
            quote!(#parent && #cond)
        };
        let this = flag(n);
        self.flags.push(quote!(#this = #value;));
        self.static_len.push(0);
        self.value_len.push(Vec::new());
        n
    }

    /// `statement` at the end of the output, in branch `at`.
    fn push(&mut self, at: usize, statement: TokenStream) {
        self.flush_text();
        match self.runs.last_mut() {
            Some((branch, run)) if *branch == at => run.push(statement),
            _ => self.runs.push((at, vec![statement])),
        }
    }

    /// Static `text` at the end of the output, in branch `at`: joined with
    /// the text before it when nothing comes between.
    fn text(&mut self, at: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        self.static_len[at] += text.len();
        if self.runs.last().is_none_or(|(branch, _)| *branch != at) {
            self.flush_text();
            self.runs.push((at, Vec::new()));
        }
        self.pending.push_str(text);
    }

    fn flush_text(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.pending);
        let mut chars = text.chars();
        let statement = match (chars.next(), chars.next()) {
            (Some(c), None) => quote!(out.push(#c);),
            _ => {
                let lit = Literal::string(&text);
                quote!(out.push_str(#lit);)
            }
        };
        if let Some((_, run)) = self.runs.last_mut() {
            run.push(statement);
        }
    }
}

/// Whether branch `n` (from 1) renders: an element of one array, not a
/// local each, since debug info nests a scope per `let` and LLVM overflows
/// its stack on thousands of them.
fn flag(n: usize) -> TokenStream {
    let i = Literal::usize_unsuffixed(n - 1);
    quote!(__b[#i])
}

/// A renderer with one allocation of exact size: it first adds up the
/// lengths the values and taken branches contribute, then pushes the pieces.
fn render_fn(name: Ident, program: &Program, fields: &[&Field]) -> TokenStream {
    let mut flat = FlatRender {
        static_len: vec![0],
        value_len: vec![Vec::new()],
        ..FlatRender::default()
    };
    // The open blocks, innermost last: (parent branch, condition). No
    // recursion: nesting depth is the template's.
    let mut open: Vec<(usize, TokenStream)> = Vec::new();
    let mut current = 0;
    let value_of = |i: usize| {
        let f = fields[i];
        let ident = &f.ident;
        match (f.kind, &f.choice) {
            (VarKind::Optional, _) => (
                quote!(self.#ident.map_or(0, ::core::primitive::str::len)),
                quote!(self.#ident.unwrap_or("")),
            ),
            // A flag is never a value: the struct would type it otherwise.
            (VarKind::Flag, _) => (quote!(0), quote!("")),
            (VarKind::Choice, _) => (
                quote!(self.#ident.as_str().len()),
                quote!(self.#ident.as_str()),
            ),
            (VarKind::OptionalChoice, Some(c)) => {
                let e = &c.ident;
                (
                    quote!(self.#ident.map_or(0, |v| v.as_str().len())),
                    quote!(self.#ident.map_or("", #e::as_str)),
                )
            }
            _ => (quote!(self.#ident.len()), quote!(self.#ident)),
        }
    };
    for op in &program.ops {
        match *op {
            Op::Text { start, end } => flat.text(current, program.text_of(start, end)),
            Op::Var(i) => {
                let (len, value) = value_of(i);
                flat.value_len[current].push(len);
                flat.push(current, quote!(out.push_str(#value);));
            }
            Op::If { cond, equals, .. } => {
                let f = fields[cond];
                let ident = &f.ident;
                let variant = equals
                    .and_then(|i| program.literals.get(i as usize))
                    .and_then(|value| {
                        Some((f.choice.as_ref()?, f.choice.as_ref()?.variant(value)?))
                    });
                // The condition and its negation, each without parentheses
                // (rustc warns of those around a `let`'s value).
                let (cond, negated) = match (f.kind, variant) {
                    (VarKind::Choice, Some((c, v))) => {
                        let e = &c.ident;
                        (quote!(self.#ident == #e::#v), quote!(self.#ident != #e::#v))
                    }
                    (VarKind::OptionalChoice, Some((c, v))) => {
                        let e = &c.ident;
                        let value = quote!(::core::option::Option::Some(#e::#v));
                        (quote!(self.#ident == #value), quote!(self.#ident != #value))
                    }
                    (VarKind::OptionalChoice, None) => {
                        (quote!(self.#ident.is_some()), quote!(self.#ident.is_none()))
                    }
                    (VarKind::Flag, _) => (quote!(self.#ident), quote!(!self.#ident)),
                    _ => {
                        let truthy = quote!(self.#ident.is_some_and(|v| !v.is_empty()));
                        (truthy.clone(), quote!(!#truthy))
                    }
                };
                let then = flat.branch(current, cond);
                open.push((current, negated));
                current = then;
            }
            Op::Else { .. } => {
                if let Some((parent, negated)) = open.last() {
                    let (parent, negated) = (*parent, negated.clone());
                    current = flat.branch(parent, negated);
                }
            }
            Op::EndIf => {
                if let Some((parent, _)) = open.pop() {
                    current = parent;
                }
            }
        }
    }
    flat.flush_text();
    let doc = " Renders this part from the code generated at build time.";
    if flat.runs.is_empty() {
        return quote! {
            #[doc = #doc]
            pub fn #name(&self) -> ::std::string::String {
                ::std::string::String::new()
            }
        };
    }
    let flags = &flat.flags;
    let declare_flags = (!flags.is_empty()).then(|| {
        let n = Literal::usize_unsuffixed(flags.len());
        quote!(let mut __b = [false; #n];)
    });
    let static_len = Literal::usize_unsuffixed(flat.static_len[0]);
    let top_len = &flat.value_len[0];
    // Branch lengths without a branch (a length times 0 or 1): each `if` is
    // blocks for LLVM, which a debug build of a deep template pays for.
    let branch_len: Vec<TokenStream> = (1..flat.static_len.len())
        .flat_map(|n| {
            let flag = flag(n);
            let bytes = (flat.static_len[n] > 0).then(|| {
                let bytes = Literal::usize_unsuffixed(flat.static_len[n]);
                quote!(len += #flag as ::core::primitive::usize * #bytes;)
            });
            let values = flat.value_len[n]
                .iter()
                .map(move |len| quote!(len += #flag as ::core::primitive::usize * #len;));
            bytes.into_iter().chain(values).collect::<Vec<_>>()
        })
        .collect();
    let capacity = if top_len.is_empty() && branch_len.is_empty() {
        quote!(#static_len)
    } else {
        quote!({
            let mut len: ::core::primitive::usize = #static_len;
            #(len += #top_len;)*
            #(#branch_len)*
            len
        })
    };
    let pushes = flat.runs.iter().map(|(branch, run)| {
        if *branch == 0 {
            quote!(#(#run)*)
        } else {
            let flag = flag(*branch);
            quote!(if #flag { #(#run)* })
        }
    });
    quote! {
        #[doc = #doc]
        pub fn #name(&self) -> ::std::string::String {
            #declare_flags
            #(#flags)*
            let mut out = ::std::string::String::with_capacity(#capacity);
            #(#pushes)*
            out
        }
    }
}
