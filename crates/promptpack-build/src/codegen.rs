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
/// generated items. Fails, reporting every problem, when an id or a variable
/// cannot become a Rust name or two of them would become the same one.
///
/// When a template nests `{{#if}}` blocks more than 64 deep, the code is
/// written unformatted instead, as [`generate_unformatted`] does: indenting
/// every level would make it quadratic in size, and the parser and formatter
/// recurse once per level.
pub fn generate(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
) -> Result<String> {
    let tokens = generate_tokens(prompts, templates, dev)?;
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
/// none after a joint punctuation mark), without its recursion per group.
fn write_flat(tokens: TokenStream) -> String {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    let mut out = String::new();
    let mut stack = vec![(tokens.into_iter(), None::<char>)];
    let mut space = false;
    while let Some((iter, close)) = stack.last_mut() {
        let Some(token) = iter.next() else {
            if let Some(close) = *close {
                out.push(close);
                space = true;
            }
            stack.pop();
            continue;
        };
        if space {
            out.push(' ');
        }
        space = true;
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => (Some('('), Some(')')),
                    Delimiter::Brace => (Some('{'), Some('}')),
                    Delimiter::Bracket => (Some('['), Some(']')),
                    Delimiter::None => (None, None),
                };
                out.extend(open);
                space = false;
                stack.push((group.stream().into_iter(), close));
            }
            TokenTree::Punct(punct) => {
                out.push(punct.as_char());
                space = punct.spacing() == Spacing::Alone;
            }
            TokenTree::Ident(ident) => out.push_str(&ident.to_string()),
            TokenTree::Literal(literal) => out.push_str(&literal.to_string()),
        }
    }
    out.push('\n');
    out
}

/// The problems [`generate`] would report, without generating anything: ids
/// and variables that cannot become Rust names, or would become the same
/// one. [`check`](crate::check) runs it, so that a check that passes
/// means a build that passes. Give the prompts sorted by id, as
/// the load pipeline gives them: of two
/// colliding ids, the later one is reported.
pub fn check_names(prompts: &[ResolvedPrompt], templates: &[TemplateSource]) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    rust_names(prompts, templates, &mut errors);
    errors
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
pub fn generate_unformatted(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
) -> Result<String> {
    Ok(write_flat(generate_tokens(prompts, templates, dev)?))
}

/// The generated code as tokens, unformatted.
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
    let structs = prompts
        .iter()
        .zip(&variants)
        .zip(&fields)
        .map(|((prompt, variant), fields)| {
            vars_struct(
                prompt,
                variant,
                fields,
                sources.get(prompt.id.as_str()).copied(),
            )
        });
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
            let valid = promptpack_core::syntax::is_snippet_name(&p.id)
                && !pascal.is_empty()
                && !pascal.starts_with(|c: char| c.is_ascii_digit())
                && pascal != "Self";
            if !valid {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidId,
                        format!("prompt id `{}` cannot become a Rust name", p.id),
                    )
                    .at(Location::file(folder(&p.id)))
                    .with_help(if pascal == "Self" {
                        "`Self` is a Rust keyword: rename the template folder".to_string()
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
        let locals = fs.iter().map(|f| {
            let ident = &f.ident;
            let name = &f.name;
            match (f.kind, &f.choice) {
                (VarKind::Flag, _) => quote!(let #ident = __values(#name).is_some_and(|v| !v.is_empty());),
                (VarKind::Optional, _) => quote!(let #ident = __values(#name);),
                (VarKind::Choice, Some(c)) => {
                    let e = &c.ident;
                    quote!(let #ident = __values(#name).and_then(|v| v.parse::<#e>().ok()).unwrap_or(#e::ALL[0]);)
                }
                (VarKind::OptionalChoice, Some(c)) => {
                    let e = &c.ident;
                    quote!(let #ident = __values(#name).and_then(|v| v.parse::<#e>().ok());)
                }
                _ => quote!(let #ident = __values(#name).unwrap_or_default();),
            }
        });
        let inits = fs.iter().map(|f| {
            let ident = &f.ident;
            match f.kind {
                VarKind::Optional => quote!(#ident: #ident.as_deref()),
                VarKind::Flag | VarKind::Choice | VarKind::OptionalChoice => quote!(#ident),
                _ => quote!(#ident: &#ident),
            }
        });
        let name = format_ident!("{}Vars", variant);
        let user = if prompt.user.is_some() {
            quote!(::core::option::Option::Some(__vars.render_user()))
        } else {
            quote!(::core::option::Option::None)
        };
        quote! {
            PromptId::#variant => {
                #(#locals)*
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
    quote! {
        /// Every prompt of this crate: one variant per folder under `templates/`.
        #allows
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum PromptId {
            #(#[doc = #docs] #variants,)*
        }

        #allows
        impl PromptId {
            /// Every prompt id, sorted by name.
            pub const ALL: [PromptId; #count] = [#(PromptId::#variants),*];

            /// The id as written on disk: the template folder's name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    #(PromptId::#variants => #ids,)*
                }
            }

            /// Stable content hash of the resolved template (snippets included).
            pub const fn hash(self) -> u64 {
                match self {
                    #(PromptId::#variants => #hashes,)*
                }
            }

            /// The token delimiters the templates were compiled with, as
            /// `(open, close)`: what a check for surviving tokens looks for.
            pub const DELIMITERS: (&'static str, &'static str) = (#open, #close);

            /// The names of every variable the prompt uses, as written in
            /// its templates, in order of first use.
            pub const fn variables(self) -> &'static [&'static str] {
                match self {
                    #(PromptId::#variants => #variables,)*
                }
            }

            /// The names of the variables the prompt tests with `#if`.
            pub const fn conditions(self) -> &'static [&'static str] {
                match self {
                    #(PromptId::#variants => #conditions,)*
                }
            }

            /// The variables the prompt compares with values
            /// (`{{#if role == "teacher"}}`), each with every value it is
            /// compared with: the variants of its generated enum.
            pub const fn choices(self) -> &'static [(&'static str, &'static [&'static str])] {
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
            pub fn render_generated(self, values: &dyn Fn(&str) -> ::core::option::Option<::std::string::String>) -> ::promptpack::Prompt<PromptId> {
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

            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
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
            (VarKind::Flag, _) => quote!(bool),
            (VarKind::Optional, _) => quote!(::core::option::Option<&'a str>),
            (VarKind::Choice, Some(e)) => quote!(#e),
            (VarKind::OptionalChoice, Some(e)) => quote!(::core::option::Option<#e>),
            _ => quote!(&'a str),
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

    let allows = lint_allows();
    quote! {
        #(#enums)*

        #allows
        #(#[doc = #struct_docs])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct #name #generics {
            #(#field_defs)*
        }

        #allows
        impl #generics #name #generics {
            /// Stable content hash of the resolved template (snippets included).
            pub const HASH: u64 = #hash;

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
            fn get(&self, name: &str) -> ::core::option::Option<::promptpack::ValueRef<'_>> {
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
    quote! {
        #[doc = #doc]
        #allows
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum #ident {
            #(#[doc = #docs] #variants,)*
        }

        #allows
        impl #ident {
            /// Every value, in the order the templates first use them.
            pub const ALL: [#ident; #count] = [#(#ident::#variants),*];

            /// The value as the templates write it.
            pub const fn as_str(self) -> &'static str {
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

            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
                match s {
                    #(#values => ::core::result::Result::Ok(#ident::#variants),)*
                    _ => ::core::result::Result::Err(::promptpack::__private::unknown_choice(#name, s, &[#(#values),*])),
                }
            }
        }
    }
}

/// The lints generated code answers to none of, as generated code
/// conventionally does (prost's output too): clippy's groups, on each
/// generated item, so that the user's own code keeps every lint it asks for.
fn lint_allows() -> TokenStream {
    quote!(#[allow(clippy::all, clippy::pedantic, clippy::nursery)])
}

/// Code of one block level: static bytes known now, plus statements.
#[derive(Default)]
struct Block {
    static_len: usize,
    len: Vec<TokenStream>,
    push: Vec<TokenStream>,
}

impl Block {
    fn len_tokens(&self) -> Vec<TokenStream> {
        let mut out = Vec::new();
        if self.static_len > 0 {
            let n = Literal::usize_unsuffixed(self.static_len);
            out.push(quote!(len += #n;));
        }
        out.extend(self.len.iter().cloned());
        out
    }
}

struct OpenIf {
    cond: TokenStream,
    then: Block,
    otherwise: Option<Block>,
}

/// A renderer with one allocation of exact size: it first adds up the
/// lengths the values and taken branches contribute, then pushes the pieces.
fn render_fn(name: Ident, program: &Program, fields: &[&Field]) -> TokenStream {
    let mut root = Block::default();
    // Explicit stack rather than recursion: nesting depth is the template's.
    let mut open: Vec<OpenIf> = Vec::new();
    let value_of = |i: usize| {
        let f = fields[i];
        let ident = &f.ident;
        match (f.kind, &f.choice) {
            (VarKind::Optional, _) => (
                quote!(self.#ident.map_or(0, str::len)),
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
        let current = match open.last_mut() {
            Some(OpenIf {
                otherwise: Some(block),
                ..
            }) => block,
            Some(OpenIf { then, .. }) => then,
            None => &mut root,
        };
        match *op {
            Op::Text { start, end } => {
                let text = program.text_of(start, end);
                current.static_len += text.len();
                let mut chars = text.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => current.push.push(quote!(out.push(#c);)),
                    _ => {
                        let lit = Literal::string(text);
                        current.push.push(quote!(out.push_str(#lit);));
                    }
                }
            }
            Op::Var(i) => {
                let (len, value) = value_of(i);
                current.len.push(quote!(len += #len;));
                current.push.push(quote!(out.push_str(#value);));
            }
            Op::If { cond, equals, .. } => {
                let f = fields[cond];
                let ident = &f.ident;
                let variant = equals
                    .and_then(|i| program.literals.get(i as usize))
                    .and_then(|value| {
                        Some((f.choice.as_ref()?, f.choice.as_ref()?.variant(value)?))
                    });
                let cond = match (f.kind, variant) {
                    (VarKind::Choice, Some((c, v))) => {
                        let e = &c.ident;
                        quote!(self.#ident == #e::#v)
                    }
                    (VarKind::OptionalChoice, Some((c, v))) => {
                        let e = &c.ident;
                        quote!(self.#ident == ::core::option::Option::Some(#e::#v))
                    }
                    (VarKind::OptionalChoice, None) => quote!(self.#ident.is_some()),
                    (VarKind::Flag, _) => quote!(self.#ident),
                    _ => quote!(self.#ident.is_some_and(|v| !v.is_empty())),
                };
                open.push(OpenIf {
                    cond,
                    then: Block::default(),
                    otherwise: None,
                });
            }
            Op::Else { .. } => {
                if let Some(top) = open.last_mut() {
                    top.otherwise = Some(Block::default());
                }
            }
            Op::EndIf => {
                let Some(OpenIf {
                    cond,
                    then,
                    otherwise,
                }) = open.pop()
                else {
                    continue;
                };
                let parent = match open.last_mut() {
                    Some(OpenIf {
                        otherwise: Some(block),
                        ..
                    }) => block,
                    Some(OpenIf { then, .. }) => then,
                    None => &mut root,
                };
                let then_len = then.len_tokens();
                let then_push = &then.push;
                match otherwise {
                    Some(other) => {
                        let other_len = other.len_tokens();
                        let other_push = &other.push;
                        parent
                            .len
                            .push(quote!(if #cond { #(#then_len)* } else { #(#other_len)* }));
                        parent
                            .push
                            .push(quote!(if #cond { #(#then_push)* } else { #(#other_push)* }));
                    }
                    None => {
                        if !then_len.is_empty() {
                            parent.len.push(quote!(if #cond { #(#then_len)* }));
                        }
                        if !then_push.is_empty() {
                            parent.push.push(quote!(if #cond { #(#then_push)* }));
                        }
                    }
                }
            }
        }
    }
    let static_len = Literal::usize_unsuffixed(root.static_len);
    let len = &root.len;
    let push = &root.push;
    let doc = " Renders this part from the code generated at build time.";
    if push.is_empty() {
        quote! {
            #[doc = #doc]
            pub fn #name(&self) -> ::std::string::String {
                ::std::string::String::new()
            }
        }
    } else if len.is_empty() {
        quote! {
            #[doc = #doc]
            pub fn #name(&self) -> ::std::string::String {
                let mut out = ::std::string::String::with_capacity(#static_len);
                #(#push)*
                out
            }
        }
    } else {
        quote! {
            #[doc = #doc]
            pub fn #name(&self) -> ::std::string::String {
                let mut len: usize = #static_len;
                #(#len)*
                let mut out = ::std::string::String::with_capacity(len);
                #(#push)*
                out
            }
        }
    }
}
