//! Library → Rust source: the `PromptId` enum, one vars struct per prompt and
//! straight-line renderers. A pure function of its input, so its output can
//! be snapshot-tested; the build script writes it to `OUT_DIR`.
//!
//! The code is written in proportion to the templates: what is the same for
//! every prompt lives in `promptpack::__private` (compiled once), what
//! differs per prompt is data where data does (`PromptId`'s methods read one
//! table), and no function grows with the number of prompts, since rustc's
//! type checking of one function grows faster than its size.

use crate::names::{Choice, Field, rust_names};
use crate::renderer::render_fn;
use crate::rust_source::{Source, doc_safe, fence_for, lit, text_lit};
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
use promptpack_core::front_matter::DeclaredVar;
use promptpack_core::program::{Op, Program, VarKind};
use promptpack_core::render::PartName;
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::sources::TemplateSource;
use promptpack_core::table::{Step, steps};
use std::collections::HashMap;
use std::path::Path;

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
    /// The most bytes one part of a prompt may render to
    /// ([`Config::max_render_bytes`](promptpack_load::Config::max_render_bytes)):
    /// the generated renderers and the dev path both refuse more.
    pub max_render_bytes: usize,
}

/// The most Rust code generated for one prompt (its vars struct, its
/// renderers, its choice enums), in bytes as [`generate`] writes
/// it: 2 MiB, some 7,500 nested blocks or 7,000 variables (about the
/// templates 2.5 MiB of the generator's earlier, wordier output held). A
/// debug build of the costliest shape at this size as straight-line code,
/// blocks nested that deep, takes rustc a few gigabytes; past it, minutes
/// and more: such a prompt is `too_large`, for `check` and the build alike.
/// The template as expanded (snippets spliced in) decides: every piece of
/// text and every token is a statement, so a snippet included many times
/// multiplies the code.
pub const MAX_PROMPT_CODE: usize = 2 << 20;

/// The most Rust code generated for every prompt together, in bytes as
/// [`generate`] writes it: 128 MiB. A backstop, not a budget:
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

/// The module the generated items live in, glob re-exported where
/// `include_prompts!` is: one `allow` for all of them, and a scope where
/// only generated names and the prelude are visible, so that short names
/// (`Option`, `str`) are safe.
const MODULE: &str = "promptpack_generated";

/// Where generated code finds the runtime unless the build says otherwise
/// (`Config::with_crate_path`).
#[cfg(feature = "unstable-machinery")]
const DEFAULT_RUNTIME: &str = "::promptpack";

/// The format of the code generated here: what the runtime must read.
/// Raised whenever generated code comes to need of `promptpack` what an
/// earlier runtime lacks; the runtime's `__expect_generated_format!` lists
/// the formats it reads.
const FORMAT: u32 = 1;

/// How the generated parts render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renderers {
    /// Straight-line code per part: one allocation of exact size, then the
    /// pieces pushed, with no loop and no lookup. What optimized builds get.
    StraightLine,
    /// A table per part (its text and steps) that one loop in
    /// `promptpack` renders. Smaller code that rustc compiles much faster:
    /// what builds without optimization get, whose renders come from disk
    /// anyway in dev builds with hot reload.
    Tables,
}

/// Fields up to which a vars struct derives `PartialEq`: the derive
/// compares them in one `&&` chain, an expression nested once per field, on
/// which rustc overflows its stack past a few thousand.
const DERIVE_EQ_FIELDS: usize = 64;

/// Generates the Rust source for `prompts`. `templates` supplies each
/// prompt's files, which the rustdoc of its vars struct shows.
///
/// Fails, reporting every problem, when an id or a variable cannot become a
/// Rust name, two of them would become the same one, or the code would pass
/// [`MAX_PROMPT_CODE`], [`MAX_LARGE_CODE`] or [`MAX_CODE`] (`too_large`).
/// Give the prompts sorted by id, as the load pipeline gives them: of two
/// colliding ids, the later one is reported. [`check`](crate::check) runs
/// it, so that a check that passes means a build that passes.
#[cfg(feature = "unstable-machinery")]
pub fn generate(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
) -> Result<String> {
    generate_with(prompts, templates, dev, Renderers::StraightLine)
}

/// [`generate`] with the parts rendered as `renderers` says.
#[cfg(feature = "unstable-machinery")]
pub fn generate_with(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
    renderers: Renderers,
) -> Result<String> {
    generate_parts(prompts, templates, dev, renderers, DEFAULT_RUNTIME)
        .map(Generated::into_single_file)
}

/// [`generate`], with each prompt's code apart, for the build to write a
/// file per prompt, with the promptpack runtime named by `runtime`
/// (`::promptpack` unless a crate re-exports it: `Config::crate_path`,
/// which checks it).
pub fn generate_parts(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    dev: &DevPaths,
    renderers: Renderers,
    runtime: &str,
) -> Result<Generated> {
    let mut errors = Vec::new();
    let (variants, fields) = rust_names(prompts, templates, &mut errors);
    if let Some(error) = Error::from_diagnostics(errors) {
        return Err(error);
    }
    let sources: HashMap<&str, &TemplateSource> =
        templates.iter().map(|t| (t.id.as_str(), t)).collect();
    let shared = shared_items(prompts, &variants, &sources, dev, renderers, runtime);
    let mut total = shared.len();
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
    let mut errors = Vec::new();
    let mut large = 0;
    let mut items = Vec::with_capacity(prompts.len());
    for ((prompt, variant), fields) in prompts.iter().zip(&variants).zip(&fields) {
        // Refused before generating when even a lower bound is too much:
        // the expanded template may be far larger than the limit.
        let least = least_code(prompt);
        if least > MAX_PROMPT_CODE {
            errors.push(too_large(prompt, least, "at least "));
            continue;
        }
        let code = prompt_items(
            prompt,
            variant,
            fields,
            sources.get(prompt.id.as_str()).copied(),
            dev,
            renderers,
            runtime,
        );
        let size = code.len();
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
        items.push(code);
    }
    if let Some(error) = Error::from_diagnostics(errors) {
        return Err(error);
    }
    Ok(Generated {
        head: shared,
        prompts: items,
    })
}

/// The code generated for a set of prompts: the shared items, then each
/// prompt's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    head: String,
    prompts: Vec<String>,
}

impl Generated {
    /// The whole code as one file.
    pub fn into_single_file(self) -> String {
        let mut code = String::with_capacity(self.size());
        code.push_str(&self.head);
        for prompt in &self.prompts {
            code.push_str(prompt);
        }
        code.push_str(TAIL);
        code
    }

    /// The code as a main file that includes one file per prompt, each
    /// named `{folder}/pN.rs` (N from 0, in the order of `PromptId`),
    /// relative to the main file. An edit to one prompt changes its own
    /// file only, so rustc's incremental build finds every other item where
    /// it was (an item whose lines moved is checked again).
    pub fn into_files(self, folder: &str) -> (String, Vec<(String, String)>) {
        let mut main = self.head;
        let mut files = Vec::with_capacity(self.prompts.len());
        for (n, prompt) in self.prompts.into_iter().enumerate() {
            let name = format!("{folder}/p{n}.rs");
            main.push_str(&format!("\tinclude!({});\n", lit(&name)));
            files.push((name, prompt));
        }
        main.push_str(TAIL);
        (main, files)
    }

    /// The size of the code in bytes, as one file.
    fn size(&self) -> usize {
        self.head.len() + self.prompts.iter().map(String::len).sum::<usize>() + TAIL.len()
    }
}

/// What closes the file after the prompts' items: the module, then the
/// runtime's gate.
const TAIL: &str = "}\n}\n";

/// The file's head: the module, `PromptId`, the prompt table, `build_prompt`
/// and the dev source. Left open: the prompts' items follow, then [`TAIL`].
fn shared_items(
    prompts: &[ResolvedPrompt],
    variants: &[String],
    sources: &HashMap<&str, &TemplateSource>,
    dev: &DevPaths,
    renderers: Renderers,
    runtime: &str,
) -> String {
    let mut out = Source::default();
    out.line(format!(
        "// Generated by promptpack-build from the prompts in {}: edit those, not this file.",
        doc_safe(&dev.root)
    ));
    out.line("");
    // Everything inside the runtime's gate, which gives it back when the
    // runtime reads this format, and otherwise drops it for one error that
    // names both versions. Around the re-export too: rustc then does not
    // report the names the including module no longer finds. Not indented:
    // rustfmt leaves macro input alone.
    out.line(format!(
        "{runtime}::__generated_code! {{ {FORMAT}, \"promptpack-build {}\",",
        env!("CARGO_PKG_VERSION")
    ));
    // Unused when the including module is private and uses none of it.
    out.line("#[allow(unused_imports)]");
    out.line(format!("pub use {MODULE}::*;"));
    out.line("");
    out.line("#[allow(dead_code, clippy::all, clippy::pedantic, clippy::nursery)]");
    out.open(format!("mod {MODULE} {{"));
    out.line(format!("use {runtime}::__private as __p;"));
    if renderers == Renderers::StraightLine {
        out.line(format!("use {runtime}::ValueRef as __V;"));
    }
    if renderers == Renderers::Tables {
        out.line(format!("use {runtime}::__private::Step::*;"));
    }
    out.line(format!(
        "type __Built = Result<{runtime}::Prompt<PromptId>, {runtime}::Error>;"
    ));
    out.line("/// The most bytes one part of a prompt may render to: more is `too_large`.");
    out.line(format!(
        "const __MAX_RENDER_BYTES: usize = {};",
        dev.max_render_bytes
    ));
    out.line("");
    out.line("/// Every prompt of this crate: one variant per folder under `templates/`.");
    out.line(derive_enum());
    out.open("pub enum PromptId {");
    for (prompt, variant) in prompts.iter().zip(variants) {
        let files = match sources.get(prompt.id.as_str()) {
            Some(t) => part_paths(t),
            None => format!("`{}`", prompt.system_path),
        };
        if let Some(description) = &prompt.front_matter.description {
            out.doc(description);
            out.line("///");
        }
        out.doc(&format!("The `{}` prompt ({files}).", prompt.id));
        out.line(format!("{variant},"));
    }
    out.close("}");
    out.line("");
    let count = prompts.len();
    out.open("impl PromptId {");
    out.line("/// Every prompt id, sorted by name.");
    out.open(format!("pub const ALL: [PromptId; {count}] = ["));
    for variant in variants {
        out.line(format!("Self::{variant},"));
    }
    out.close("];");
    let table_fn = |out: &mut Source, doc: &str, signature: &str, field: &str| {
        out.doc(doc);
        out.open(format!("pub const fn {signature} {{"));
        out.line(format!("__PROMPTS[self as usize].{field}"));
        out.close("}");
    };
    table_fn(
        &mut out,
        "The id as written on disk: the template folder's name.",
        "as_str(self) -> &'static str",
        "id",
    );
    table_fn(
        &mut out,
        "Stable content hash of the resolved template (snippets included).",
        "hash(self) -> u64",
        "hash",
    );
    out.doc(
        "The token delimiters the templates were compiled with, as\n`(open, close)`: what a check for surviving tokens looks for.",
    );
    out.line(format!(
        "pub const DELIMITERS: (&'static str, &'static str) = ({}, {});",
        lit(&dev.open),
        lit(&dev.close)
    ));
    table_fn(
        &mut out,
        "The names of every variable the prompt uses, as written in\nits templates, in order of first use.",
        "variables(self) -> &'static [&'static str]",
        "variables",
    );
    table_fn(
        &mut out,
        "The front matter's `description`, when it has one.",
        "description(self) -> Option<&'static str>",
        "description",
    );
    table_fn(
        &mut out,
        "The front matter's `model`, `config` and `metadata`, those set,\nas the text of one JSON object (`{}` when none is): model\nsettings versioned with the prompt.",
        "metadata(self) -> &'static str",
        "metadata",
    );
    table_fn(
        &mut out,
        "The printable values (text and numbers) of the front matter's\nfirst example, by variable name: what snapshot tests render\ninstead of `‹name›` placeholders.",
        "example(self) -> &'static [(&'static str, &'static str)]",
        "example",
    );
    table_fn(
        &mut out,
        "The front matter's `max_tokens`: the prompt's token budget.",
        "max_tokens(self) -> Option<u64>",
        "max_tokens",
    );
    table_fn(
        &mut out,
        "The names of the variables the prompt tests with `#if`.",
        "conditions(self) -> &'static [&'static str]",
        "conditions",
    );
    table_fn(
        &mut out,
        "The variables the prompt compares with values\n(`{{#if role == \"teacher\"}}`), each with every value it is\ncompared with: the variants of its generated enum.",
        "choices(self) -> &'static [(&'static str, &'static [&'static str])]",
        "choices",
    );
    out.doc(
        "Renders through the generated code (never from disk) with\n\
         values looked up by variable name: a value is `\"\"` when\n\
         `values` gives `None`, a condition is true when it gives a\n\
         non-empty string, a compared variable takes the value given\n\
         (its first value when that is none of [`PromptId::choices`]).\n\
         For tests and tools that treat every prompt alike, such as\n\
         snapshot suites.",
    );
    out.open(format!(
        "pub fn render_generated(self, values: &dyn Fn(&str) -> Option<String>) -> {runtime}::Prompt<PromptId> {{"
    ));
    out.line(match renderers {
        Renderers::StraightLine => "__GENERATED[self as usize](values)",
        Renderers::Tables => "__p::render_generated(self, &__PROMPTS[self as usize], values)",
    });
    out.close("}");
    out.close("}");
    out.line("");
    out.open("impl ::core::fmt::Display for PromptId {");
    out.open("fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {");
    out.line("f.write_str(self.as_str())");
    out.close("}");
    out.close("}");
    out.line("");
    out.open("impl ::core::str::FromStr for PromptId {");
    out.line(format!("type Err = {runtime}::Error;"));
    out.line("");
    out.open(format!(
        "fn from_str(s: &str) -> Result<Self, {runtime}::Error> {{"
    ));
    out.line("__p::prompt_index(__PROMPTS, s).map(|i| Self::ALL[i])");
    out.close("}");
    out.close("}");
    out.line("");
    out.line(format!("{runtime}::__impl_serde_for_prompt_id!(PromptId);"));
    out.line(format!("{runtime}::__live_prompts!(PromptId);"));
    out.line("");
    // A table of constants, each defined with its prompt: the references
    // in one constant of a thousand entries cost rustc's borrow checker
    // time that grows faster than their number.
    out.line("/// Each prompt's id, hash, variables and compiled contract, indexed by `PromptId`.");
    out.open("const __PROMPTS: &[__p::PromptInfo] = &[");
    for variant in variants {
        out.line(format!("{variant}Vars::__INFO,"));
    }
    out.close("];");
    out.line("");
    if renderers == Renderers::StraightLine {
        out.line("/// Each prompt's `render_generated`, indexed by `PromptId`.");
        out.open(format!(
            "const __GENERATED: &[fn(&dyn Fn(&str) -> Option<String>) -> {runtime}::Prompt<PromptId>] = &["
        ));
        for variant in variants {
            out.line(format!("{variant}Vars::__generated,"));
        }
        out.close("];");
        out.line("");
    }
    out.doc(
        "Renders a prompt from its typed variables.\n\n\
         Fails with `wrong_vars` when `vars` belongs to another prompt than\n\
         `id`; `vars.build()` renders without that check, since the struct\n\
         already names its prompt. In dev builds with hot reload the\n\
         template is read from disk, so an edited prompt takes effect\n\
         without a restart.",
    );
    out.line("pub fn build_prompt<V>(id: PromptId, vars: V) -> __Built");
    out.line("where");
    out.line(format!("\tV: {runtime}::TypedVars<Id = PromptId>,"));
    out.open("{");
    out.open("if id != V::ID {");
    out.line("return Err(__p::wrong_vars(id.as_str(), V::ID.as_str()));");
    out.close("}");
    out.line("vars.build()");
    out.close("}");
    out.line("");
    out.line("/// Where the prompts are on disk, for the dev path.");
    // A static, not a constant: every `build()` borrows it, and a borrowed
    // constant is a copy per use, which rustc checks again in every one of
    // them whenever any prompt changes.
    out.open("static __DEV_SOURCE: __p::DevSource = __p::DevSource {");
    out.line(format!("root: {},", lit(&dev.root)));
    out.line(format!("templates: {},", lit(&dev.templates)));
    out.line(format!("snippets: {},", lit(&dev.snippets)));
    out.line(format!("open: {},", lit(&dev.open)));
    out.line(format!("close: {},", lit(&dev.close)));
    out.line(format!("standalone_tags: {},", dev.standalone_tags));
    out.line("max_render_bytes: __MAX_RENDER_BYTES,");
    out.line("prompts: __PROMPTS,");
    out.close("};");
    out.into_string()
}

/// A prompt's entry of the prompt table: `PromptInfo { .. }` on one line.
fn prompt_info(prompt: &ResolvedPrompt, fields: &[Field], renderers: Renderers) -> String {
    let list = |names: Vec<String>| names.join(", ");
    let variables = list(fields.iter().map(|f| lit(&f.name)).collect());
    let conditions = list(
        fields
            .iter()
            .filter(|f| matches!(f.kind, VarKind::Flag | VarKind::Optional))
            .map(|f| lit(&f.name))
            .collect(),
    );
    let values = |choice: &Choice| list(choice.values.iter().map(|(v, _)| lit(v)).collect());
    let choices = list(
        fields
            .iter()
            .filter_map(|f| {
                let choice = f.choice.as_ref()?;
                Some(format!("({}, &[{}])", lit(&f.name), values(choice)))
            })
            .collect(),
    );
    let kinds: String = fields.iter().map(|f| char::from(f.kind.letter())).collect();
    let parts = match (renderers, prompt.user.is_some()) {
        (Renderers::StraightLine, _) => "",
        (Renderers::Tables, false) => "Self::__SYSTEM",
        (Renderers::Tables, true) => "Self::__SYSTEM, Self::__USER",
    };
    let front_matter = &prompt.front_matter;
    let description = match &front_matter.description {
        Some(d) => format!("Some({})", lit(d)),
        None => "None".to_string(),
    };
    let max_tokens = match front_matter.max_tokens {
        Some(n) => format!("Some({n})"),
        None => "None".to_string(),
    };
    let example = list(
        front_matter
            .example_values(None)
            .unwrap_or_default()
            .iter()
            .filter(|(name, _)| fields.iter().any(|f| f.name == **name))
            .filter_map(|(name, value)| {
                let text = match value {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some(format!("({}, {})", lit(name), lit(&text)))
            })
            .collect(),
    );
    format!(
        "__p::PromptInfo {{ id: {}, hash: Self::HASH, variables: &[{variables}], kinds: {}, conditions: &[{conditions}], choices: &[{choices}], parts: &[{parts}], description: {description}, metadata: {}, max_tokens: {max_tokens}, example: &[{example}] }}",
        lit(&prompt.id),
        lit(&kinds),
        lit(&front_matter.settings_json().to_string())
    )
}

fn part_paths(t: &TemplateSource) -> String {
    match &t.user {
        Some(user) => format!("`{}`, `{}`", t.system.path(), user.path()),
        None => format!("`{}`", t.system.path()),
    }
}

/// The derives of `PromptId` and the choice enums. `PartialEq` and
/// `PartialOrd` by full path: a choice enum may be named so.
fn derive_enum() -> &'static str {
    "#[derive(Debug, Clone, Copy, ::core::cmp::PartialEq, Eq, Hash, ::core::cmp::PartialOrd, Ord)]"
}

/// Where a variable is first used, for its field's doc: the file name alone
/// when it is one of the prompt's own parts.
fn first_use(field: &Field, source: Option<&TemplateSource>) -> String {
    let loc = &field.first_use;
    let own = source.and_then(|t| {
        [Some(&t.system), t.user.as_ref()]
            .into_iter()
            .flatten()
            .find(|part| part.path() == loc.path())
    });
    let path = match own {
        Some(part) => Path::new(part.path()).file_name().map_or_else(
            || loc.path().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        None => loc.path().to_string(),
    };
    format!("{path}:{}:{}", loc.line(), loc.column())
}

/// What front matter says of a field: its description, its example.
fn field_doc(out: &mut Source, declared: &DeclaredVar) {
    if let Some(description) = &declared.description {
        out.doc(description);
        out.line("///");
    }
    if let Some(example) = &declared.example {
        let shown = match example {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let fence = fence_for(&shown);
        if shown.contains('\n') || shown.contains('`') {
            out.doc(&format!("Example:\n\n{fence}text\n{shown}\n{fence}"));
        } else {
            out.doc(&format!("Example: `{shown}`."));
        }
        out.line("///");
    }
}

/// The struct doc's view of one part: its path, then the file itself,
/// fenced, through `include_str!` (the template is not copied into the
/// generated code).
fn part_doc(out: &mut Source, shown: &str, on_disk: &str, body: &str) {
    let fence = fence_for(body);
    out.doc(&format!("`{shown}`:\n\n{fence}text"));
    out.line(format!("#[doc = include_str!({})]", lit(on_disk)));
    out.doc(&fence);
}

/// Everything generated for one prompt: its choice enums, its vars struct
/// and the struct's impls, at the module's depth.
fn prompt_items(
    prompt: &ResolvedPrompt,
    variant: &str,
    fields: &[Field],
    source: Option<&TemplateSource>,
    dev: &DevPaths,
    renderers: Renderers,
    runtime: &str,
) -> String {
    let mut out = Source::at_depth(1);
    out.line("");
    for field in fields {
        if let Some(choice) = &field.choice {
            choice_enum(&mut out, prompt, field, choice, runtime);
        }
    }
    let name = format!("{variant}Vars");
    let id = &prompt.id;
    let borrows = fields
        .iter()
        .any(|f| matches!(f.kind, VarKind::Text | VarKind::Optional));
    let (generics, anon) = if borrows { ("<'a>", "<'_>") } else { ("", "") };

    if let Some(description) = &prompt.front_matter.description {
        out.doc(description);
        out.line("///");
    }
    out.doc(&format!("Variables of the `{id}` prompt."));
    if let Some(t) = source {
        let folder = format!("{}/{}", dev.templates, t.id);
        out.line("///");
        part_doc(
            &mut out,
            t.system.path(),
            &format!("{folder}/system.md"),
            t.system.text(),
        );
        if let Some(user) = &t.user {
            out.line("///");
            part_doc(
                &mut out,
                user.path(),
                &format!("{folder}/user.md"),
                user.text(),
            );
        }
    }
    if fields.len() <= DERIVE_EQ_FIELDS {
        out.line("#[derive(Debug, Clone, Copy, ::core::cmp::PartialEq, Eq, Hash)]");
    } else {
        out.line("#[derive(Debug, Clone, Copy, Eq, Hash)]");
    }
    out.open(format!("pub struct {name}{generics} {{"));
    for f in fields {
        let choice = f.choice.as_ref().map(|c| c.ident.as_str());
        let (ty, usage) = match (f.kind, choice) {
            (VarKind::Flag, _) => ("bool".to_string(), "a condition"),
            (VarKind::Optional, _) => (
                "Option<&'a str>".to_string(),
                "a value and a condition (true when `Some` and not empty; `None` renders as nothing)",
            ),
            (VarKind::Choice, Some(e)) => (e.to_string(), "a choice"),
            (VarKind::OptionalChoice, Some(e)) => (
                format!("Option<{e}>"),
                "a choice and a condition (true when `Some`)",
            ),
            _ => ("&'a str".to_string(), ""),
        };
        // A text field says no more than its type does.
        let usage = if usage.is_empty() {
            String::new()
        } else {
            format!(": {usage}")
        };
        if let Some(declared) = prompt.front_matter.declared(&f.name) {
            field_doc(&mut out, declared);
        }
        out.doc(&format!(
            "`{}`{usage}, first at `{}`.",
            f.name,
            first_use(f, source)
        ));
        out.line(format!("pub {}: {ty},", f.ident));
    }
    out.close("}");
    out.line("");
    if fields.len() > DERIVE_EQ_FIELDS {
        out.open(format!("impl ::core::cmp::PartialEq for {name}{anon} {{"));
        out.open("fn eq(&self, other: &Self) -> bool {");
        for f in fields {
            out.line(format!(
                "if self.{0} != other.{0} {{ return false; }}",
                f.ident
            ));
        }
        out.line("true");
        out.close("}");
        out.close("}");
        out.line("");
    }

    let user = if prompt.user.is_some() {
        "Some(v.render_user()?)"
    } else {
        "None"
    };
    out.open(format!("impl{generics} {name}{generics} {{"));
    out.line("/// Stable content hash of the resolved template (snippets included).");
    out.line(format!("pub const HASH: u64 = {};", prompt.hash));
    out.line("");
    out.line("#[doc(hidden)]");
    out.line(format!(
        "pub const __INFO: __p::PromptInfo = {};",
        prompt_info(prompt, fields, renderers)
    ));
    if renderers == Renderers::Tables {
        part_table(&mut out, "__SYSTEM", &prompt.system, prompt);
        if let Some(user) = &prompt.user {
            part_table(&mut out, "__USER", user, prompt);
        }
        out.line("");
        slots_fn(&mut out, fields);
        out.close("}");
        out.line("");
        let user = if prompt.user.is_some() {
            ", user 1"
        } else {
            ""
        };
        out.line(format!(
            "{runtime}::__table_impls!({name}{generics}, {variant}{user});"
        ));
        return out.into_string();
    }
    out.line("");
    out.doc(
        "Renders the prompt: from the files on disk in dev builds with hot\n\
         reload (so edits show without a restart), from the code generated\n\
         at build time otherwise (never reading the disk).",
    );
    out.open("pub fn build(&self) -> __Built {");
    out.open(format!(
        "if let Some(rendered) = __p::dev_build(cfg!(debug_assertions), &__DEV_SOURCE, PromptId::{variant}, {}, self) {{",
        lit(id)
    ));
    out.line("return rendered;");
    out.close("}");
    out.line("let v = self;");
    out.line(format!(
        "Ok({runtime}::Prompt {{ id: PromptId::{variant}, system: v.render_system()?, user: {user}, hash: Self::HASH, provenance: {runtime}::Provenance::Embedded }})"
    ));
    out.close("}");
    out.line("");
    generated_fn(
        &mut out,
        &name,
        variant,
        fields,
        prompt.user.is_some(),
        runtime,
    );
    out.line("");
    render_fn(
        &mut out,
        id,
        PartName::System,
        &prompt.system,
        fields,
        runtime,
    );
    if let Some(user) = &prompt.user {
        out.line("");
        render_fn(&mut out, id, PartName::User, user, fields, runtime);
    }
    out.close("}");
    out.line("");

    out.open(format!("impl {runtime}::Vars for {name}{anon} {{"));
    out.open("fn get(&self, name: &str) -> Option<__V<'_>> {");
    if fields.is_empty() {
        out.line("let _ = name;");
        out.line("None");
    } else {
        out.open("Some(match name {");
        for f in fields {
            let ident = &f.ident;
            let value = match (f.kind, &f.choice) {
                (VarKind::Flag, _) => format!("__V::Bool(self.{ident})"),
                (VarKind::Optional, _) => format!("__V::Str(self.{ident}.unwrap_or(\"\"))"),
                (VarKind::Choice, _) => format!("__V::Str(self.{ident}.as_str())"),
                (VarKind::OptionalChoice, Some(c)) => {
                    format!("__V::Str(self.{ident}.map_or(\"\", {}::as_str))", c.ident)
                }
                _ => format!("__V::Str(self.{ident})"),
            };
            out.line(format!("{} => {value},", lit(&f.name)));
        }
        out.line("_ => return None,");
        out.close("})");
    }
    out.close("}");
    out.close("}");
    out.line("");
    out.open(format!("impl {runtime}::TypedVars for {name}{anon} {{"));
    out.line("type Id = PromptId;");
    out.line(format!("const ID: PromptId = PromptId::{variant};"));
    out.line("");
    out.open("fn build(&self) -> __Built {");
    out.line(format!("{name}::build(self)"));
    out.close("}");
    out.close("}");
    out.into_string()
}

/// `__generated`: the struct made from values looked up by name, rendered
/// by its straight-line code (`PromptId::render_generated`).
fn generated_fn(
    out: &mut Source,
    name: &str,
    variant: &str,
    fields: &[Field],
    has_user: bool,
    runtime: &str,
) {
    out.line("#[doc(hidden)]");
    out.open(format!(
        "pub fn __generated(values: &dyn Fn(&str) -> Option<String>) -> {runtime}::Prompt<PromptId> {{"
    ));
    let (mut texts, mut optionals) = (Vec::new(), Vec::new());
    let mut inits = Vec::with_capacity(fields.len());
    for f in fields {
        let name = lit(&f.name);
        let init = match (f.kind, &f.choice) {
            (VarKind::Flag, _) => format!("__p::flag_value(values, {name})"),
            (VarKind::Optional, _) => {
                optionals.push(name);
                format!("__o[{}].as_deref()", optionals.len() - 1)
            }
            (VarKind::Choice, Some(c)) => {
                let first = c.values.first().map_or("", |(_, v)| v.as_str());
                format!(
                    "__p::choice_value(values, {name}).unwrap_or({}::{first})",
                    c.ident
                )
            }
            (VarKind::OptionalChoice, Some(_)) => format!("__p::choice_value(values, {name})"),
            _ => {
                texts.push(name);
                format!("&__t[{}]", texts.len() - 1)
            }
        };
        inits.push(format!("{}: {init},", f.ident));
    }
    if !texts.is_empty() {
        out.line(format!(
            "let __t = __p::text_values(values, &[{}]);",
            texts.join(", ")
        ));
    }
    if !optionals.is_empty() {
        out.line(format!(
            "let __o = __p::optional_values(values, &[{}]);",
            optionals.join(", ")
        ));
    }
    if fields.is_empty() {
        // Unused otherwise, and rustc would warn in the user's crate.
        out.line("let _ = values;");
    }
    out.open(format!("let v = {name} {{"));
    for init in &inits {
        out.line(init);
    }
    out.close("};");
    // Values from examples and tests, for tools that treat every prompt
    // alike: rendered whole, without the bound (no length is refused).
    let user = if has_user {
        "Some(v.__render_user(usize::MAX).unwrap_or_default())"
    } else {
        "None"
    };
    out.line(format!(
        "{runtime}::Prompt {{ id: PromptId::{variant}, system: v.__render_system(usize::MAX).unwrap_or_default(), user: {user}, hash: Self::HASH, provenance: {runtime}::Provenance::Embedded }}"
    ));
    out.close("}");
}

/// `__slots`: the fields as the table renderer reads them, in the order of
/// the prompt's variables.
fn slots_fn(out: &mut Source, fields: &[Field]) {
    out.open(format!(
        "fn __slots(&self) -> [__p::Slot<'_>; {}] {{",
        fields.len()
    ));
    out.open("[");
    for f in fields {
        let ident = &f.ident;
        out.line(match f.kind {
            VarKind::Flag => format!("__p::f(self.{ident}),"),
            VarKind::Optional => format!("__p::o(self.{ident}),"),
            VarKind::Choice => format!("__p::c(self.{ident}.as_str(), self.{ident} as u32),"),
            VarKind::OptionalChoice => {
                format!("self.{ident}.map_or(__p::NONE, |v| __p::c(v.as_str(), v as u32)),")
            }
            VarKind::Text => format!("__p::s(self.{ident}),"),
        });
    }
    out.close("]");
    out.close("}");
}

/// A part as a table (`__p::Part`): its text in one literal and its steps
/// ([`steps`]).
fn part_table(out: &mut Source, name: &str, program: &Program, prompt: &ResolvedPrompt) {
    let steps: Vec<String> = steps(program, &prompt.vars)
        .into_iter()
        .map(|step| match step {
            Step::T(start, end) => format!("T({start},{end})"),
            Step::V(i) => format!("V({i})"),
            Step::I(i, equals, else_at) => format!("I({i},{equals},{else_at})"),
            Step::E(end_at) => format!("E({end_at})"),
        })
        .collect();
    out.line("#[doc(hidden)]");
    out.line(format!(
        "pub const {name}: __p::Part = __p::Part {{ text: {}, steps: &[{}] }};",
        text_lit(&program.text),
        steps.join(",")
    ));
}

/// The enum of a compared variable, with `ALL`, `as_str`, `Display` and
/// `FromStr`.
fn choice_enum(
    out: &mut Source,
    prompt: &ResolvedPrompt,
    field: &Field,
    choice: &Choice,
    runtime: &str,
) {
    let ident = &choice.ident;
    let var = prompt.vars.iter().find(|v| v.name == field.name);
    // A declared choice kind comes with its values (the prompt's front
    // matter or a snippet's), which are then the enum's.
    let declared =
        var.is_some_and(|v| matches!(v.declared, Some(VarKind::Choice | VarKind::OptionalChoice)));
    if declared {
        out.doc(&format!(
            "The values `{}` takes in the `{}` prompt, as its front matter declares them.",
            field.name, prompt.id
        ));
    } else {
        out.doc(&format!(
            "The values `{}` is compared with in the `{}` prompt.",
            field.name, prompt.id
        ));
    }
    out.line(derive_enum());
    out.open(format!("pub enum {ident} {{"));
    for (value, variant) in &choice.values {
        // Which branch each value renders, so that a hover on a variant
        // says what choosing it does (and that a declared value no branch
        // compares falls to the `{{else}}`).
        match var.and_then(|v| v.renders(value)) {
            Some(renders) => out.doc(&format!("`{value:?}`: renders {renders}.")),
            None => out.doc(&format!("`{value:?}`")),
        }
        out.line(format!("{variant},"));
    }
    out.close("}");
    out.line("");
    out.open(format!("impl {ident} {{"));
    if declared {
        out.line("/// Every value, in the order the front matter declares them.");
    } else {
        out.line("/// Every value, in the order the templates first use them.");
    }
    let all: Vec<String> = choice
        .values
        .iter()
        .map(|(_, v)| format!("Self::{v}"))
        .collect();
    out.line(format!(
        "pub const ALL: [{ident}; {}] = [{}];",
        all.len(),
        all.join(", ")
    ));
    out.line("");
    out.line("/// The value as the templates write it.");
    out.open("pub const fn as_str(self) -> &'static str {");
    out.open("match self {");
    for (value, variant) in &choice.values {
        out.line(format!("Self::{variant} => {},", lit(value)));
    }
    out.close("}");
    out.close("}");
    out.close("}");
    out.line("");
    out.open(format!("impl ::core::fmt::Display for {ident} {{"));
    out.open("fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {");
    out.line("f.write_str(self.as_str())");
    out.close("}");
    out.close("}");
    out.line("");
    out.open(format!("impl ::core::str::FromStr for {ident} {{"));
    out.line(format!("type Err = {runtime}::Error;"));
    out.line("");
    out.open(format!(
        "fn from_str(s: &str) -> Result<Self, {runtime}::Error> {{"
    ));
    out.open("match s {");
    for (value, variant) in &choice.values {
        out.line(format!("{} => Ok(Self::{variant}),", lit(value)));
    }
    let values: Vec<String> = choice.values.iter().map(|(v, _)| lit(v)).collect();
    out.line(format!(
        "_ => Err(__p::unknown_choice({}, s, &[{}])),",
        lit(&field.name),
        values.join(", ")
    ));
    out.close("}");
    out.close("}");
    out.close("}");
    out.line("");
}
