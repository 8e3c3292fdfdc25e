//! Library → Rust source: the `PromptId` enum, one vars struct per prompt and
//! straight-line renderers. A pure function of its input, so its output can
//! be snapshot-tested; the build script writes it to `OUT_DIR`.
//!
//! The code is written in proportion to the templates: what is the same for
//! every prompt lives in `promptpack::__private` (compiled once), what
//! differs per prompt is data where data does (`PromptId`'s methods read one
//! table), and no function grows with the number of prompts, since rustc's
//! type checking of one function grows faster than its size.
//!
//! One file per item emitted, as prost-build's `code_generator`:
//! `file` assembles the file (the format gate, the module, the shared
//! items), `prompt_id` writes `PromptId`, `prompt_table` the table its
//! methods read, `vars_struct` each prompt's vars struct, `render` how
//! its parts render, `conversation` how a conversation's messages do,
//! `choice_enum` the enum of a compared variable, `exchange_types` the
//! types of a prompt's `response` and `tools`;
//! `limits` bounds the code and reports what passes them.

mod choice_enum;
mod conversation;
mod exchange_types;
mod file;
mod limits;
mod prompt_id;
mod prompt_table;
mod render;
mod vars_struct;

pub use file::Generated;
pub use limits::{MAX_CODE, MAX_LARGE_CODE, MAX_PROMPT_CODE, SMALL_PROMPT_CODE};

use crate::names::rust_names;
use limits::{least_code, too_large, too_large_shared, too_large_total};
use promptpack_core::error::{Error, Result};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::sources::TemplateSource;
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
    /// The most bytes one part of a prompt may render to
    /// ([`Config::max_render_bytes`](promptpack_load::Config::max_render_bytes)):
    /// the generated renderers and the dev path both refuse more.
    pub max_render_bytes: usize,
}

/// Where generated code finds the runtime unless the build says otherwise
/// (`Config::with_crate_path`).
#[cfg(feature = "unstable-machinery")]
const DEFAULT_RUNTIME: &str = "::promptpack";

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
    let names = rust_names(prompts, templates, &mut errors);
    if let Some(error) = Error::from_diagnostics(errors) {
        return Err(error);
    }
    let (variants, fields) = (&names.variants, &names.fields);
    let sources: HashMap<&str, &TemplateSource> =
        templates.iter().map(|t| (t.id.as_str(), t)).collect();
    let emit = Emit {
        dev,
        renderers,
        runtime,
    };
    let shared = file::shared_items(prompts, variants, &sources, emit);
    let mut total = shared.len();
    if total > MAX_CODE {
        return Err(too_large_shared(prompts.len(), total));
    }
    let mut errors = Vec::new();
    let mut large = 0;
    let mut items = Vec::with_capacity(prompts.len());
    let each = prompts
        .iter()
        .zip(variants)
        .zip(fields)
        .zip(&names.exchanges);
    for (((prompt, variant), fields), exchange) in each {
        // Refused before generating when even a lower bound is too much:
        // the expanded template may be far larger than the limit.
        let least = least_code(prompt);
        if least > MAX_PROMPT_CODE {
            errors.push(too_large(prompt, least, "at least "));
            continue;
        }
        let code = vars_struct::prompt_items(
            prompt,
            variant,
            fields,
            exchange,
            sources.get(prompt.id.as_str()).copied(),
            emit,
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

/// How the code is written, the same for every item: where a dev build
/// reads the prompts, how parts render, and the path of the runtime.
#[derive(Clone, Copy)]
pub(super) struct Emit<'a> {
    pub(super) dev: &'a DevPaths,
    pub(super) renderers: Renderers,
    pub(super) runtime: &'a str,
}

/// The derives of `PromptId` and the choice enums. `PartialEq` and
/// `PartialOrd` by full path: a choice enum may be named so.
fn derive_enum() -> &'static str {
    "#[derive(Debug, Clone, Copy, ::core::cmp::PartialEq, Eq, Hash, ::core::cmp::PartialOrd, Ord)]"
}
