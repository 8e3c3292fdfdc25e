//! # promptpack
//!
//! Markdown prompt templates for LLM agents, compiled into typed Rust.
//!
//! Prompts live in files: `templates/<id>/system.md`, an optional
//! `templates/<id>/user.md`, and reusable `snippets/<name>.md`. They use a
//! small language: `{{name}}` for a value, `{{snippet:name}}` to include a
//! snippet, `{{#if name}}…{{else}}…{{/if}}` for optional parts, and
//! `{{#if role == "teacher"}}…{{else if role == "student"}}…{{/if}}` for a
//! choice. The [README] is the language reference, and says what the build
//! script, the command line, the catalog and live prompts do.
//!
//! Two ways to render them:
//!
//! - **Typed** (recommended): a build script calls
//!   `promptpack_build::compile_or_exit()` (the `promptpack-build` crate,
//!   under `[build-dependencies]`), which checks every template and
//!   generates a `PromptId` enum and one vars struct per prompt;
//!   [`include_prompts!`] brings them in. A misspelled id, a missing
//!   variable or a missing snippet fails the build with the template's file,
//!   line and column.
//! - **Dynamic** (feature `library`): [`Library::load`] reads a prompt
//!   folder at run time and renders by string id with any
//!   `serde::Serialize` values.
//!
//! ## Quick start
//!
//! ```toml
//! # Cargo.toml (promptpack is not on crates.io yet: paths to a checkout)
//! [dependencies]
//! promptpack = { path = "../promptpack", features = ["hot-reload"] }
//!
//! [build-dependencies]
//! promptpack-build = { path = "../promptpack/crates/promptpack-build" }
//! ```
//!
//! ```no_run
//! // build.rs
//! # #[allow(clippy::needless_doctest_main)]
//! fn main() {
//!     promptpack_build::compile_or_exit();
//! }
//! ```
//!
//! ```markdown
//! <!-- templates/agent-system/system.md -->
//! # Role
//! You are {{agentName}}, an assistant working with {{userName}}.
//! {{#if hasTools}}You can call tools. Available right now:
//! {{toolList}}{{/if}}
//! …
//! ```
//!
//! Then, anywhere in the crate, the generated API: one field per variable
//! (`{{x}}` is a `&str`, a pure `{{#if x}}` a `bool`, both an
//! `Option<&str>`), so a missing or misspelled variable does not compile.
//! This runs on this crate's own sample prompts:
//!
#![cfg_attr(feature = "samples", doc = "```")]
#![cfg_attr(not(feature = "samples"), doc = "```ignore")]
//! promptpack::include_prompts!();   // PromptId, AgentSystemVars, build_prompt, …
//!
//! fn main() -> Result<(), promptpack::Error> {
//!     let prompt = build_prompt(PromptId::AgentSystem, AgentSystemVars {
//!         agent_name: "Ada",
//!         user_name: "Grace",
//!         has_tools: true,
//!         tool_list: "- search(query): looks a document up",
//!         memory: None,
//!         state_context: "A new session.",
//!     })?;
//!     assert!(prompt.system.starts_with("# Role\nYou are Ada, an assistant working with Grace."));
//!     // send(prompt.system, prompt.user) to the model; log prompt.id and
//!     // prompt.hash (or prompt.provenance) beside the answer.
//!     Ok(())
//! }
//! ```
//!
//! Release builds render from the generated code (one allocation of exact
//! size, no file I/O); debug builds with `hot-reload` re-read the files
//! through a watcher, so an edited prompt takes effect without a restart.
//!
//! ## Features
//!
//! None is on by default: the typed path needs none of them.
//!
//! | feature | what it adds |
//! |---|---|
//! | `library` | the dynamic API: [`Library`], [`Config`], [`SourceFile`], [`TemplateSource`], [`SnippetSource`]. It parses templates at run time, so it brings the YAML and Markdown parsers |
//! | `hot-reload` | debug builds render from disk, kept current by a file watcher; [`WatchedLibrary`] and `Library::watch` (turns on `library`) |
//! | `serde` | `Serialize` and `Deserialize` for generated `PromptId`s |
//! | `testing` | [`testing`]: the survivor check and [`snapshot_prompts!`], insta snapshots of every prompt (turns on `library`) |
//! | `live` | [`live`]: the generated typed prompts served from a label of a SQLite catalog, each version checked against the build's contract (turns on `library`) |
//! | `live-postgres` | `live` with PostgreSQL catalogs too, followed through `LISTEN`/`NOTIFY` |
//! | `live-relay` | `live` following a relay (`promptpack relay`, `http://…`) instead of the catalog: the label's snapshot and its stream of changes, over plain HTTP (hyper on a current-thread tokio runtime) |
//! | `tracing` | [`trace`]: a `tracing` span for every render and every read of an answer or a tool call, with the OpenTelemetry GenAI attributes (`gen_ai.prompt.name`) and promptpack's (hash, source, catalog version, label, arm, pins) |
//! | `unstable-machinery` | `promptpack::machinery`: the language's internals, for tools, benches and fuzzers; no semver guarantee |
//! | `house` | `promptpack::house`: the seam promptpack's own crates (CLI, console, language server) build on, which pin this exact version; not for other crates |
//! | `async-openai-0_43` | [`adapters::async_openai_0_43`]: a rendered prompt as async-openai 0.43's chat request, its response read back into the generated types (async-openai's types only, no HTTP client) |
//! | `genai-0_7` | [`adapters::genai_0_7`]: the same for genai 0.7 (`ChatRequest`, `ChatOptions`, `ChatResponse`) |
//! | `rig-0_44` | [`adapters::rig_0_44`]: the same for rig-core 0.44 (`CompletionRequest`, `CompletionResponse`); needs rustc 1.95 |
//! | `samples` | compiles this repository's own sample prompts in its build script, for its tests and examples; a crate depending on promptpack leaves it off |
//!
//! [README]: https://example.invalid/promptpack#readme
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

#[cfg(any(
    feature = "async-openai-0_43",
    feature = "genai-0_7",
    feature = "rig-0_44"
))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(
        feature = "async-openai-0_43",
        feature = "genai-0_7",
        feature = "rig-0_44"
    )))
)]
pub mod adapters;
mod answer;
mod exchange;
#[cfg(feature = "library")]
mod library;
#[cfg(feature = "live")]
#[cfg_attr(docsrs, doc(cfg(feature = "live")))]
pub mod live;
#[cfg(feature = "library")]
mod name_index;
mod private;
mod prompt;
mod provenance;
#[cfg(feature = "hot-reload")]
mod reload;
#[cfg(feature = "library")]
mod serde_vars;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub mod trace;
// Without the feature, only the pass-throughs that renders call.
#[cfg(not(feature = "tracing"))]
mod trace;
mod typed;

#[cfg(feature = "library")]
#[cfg_attr(docsrs, doc(cfg(feature = "library")))]
pub use library::Library;
pub use prompt::{MessageRef, Prompt, PromptHash};
pub use promptpack_core::diagnostics::{Severity, Style, render_diagnostic, render_error};
pub use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
pub use promptpack_core::front_matter::{DeclaredVar, Example, FrontMatter};
pub use promptpack_core::message::{Message, Role};
pub use promptpack_core::program::VarKind;
/// The kind front matter declares a variable with (`kind: choice`): the
/// [`VarKind`] of its generated field, one type, since the two named the
/// same five kinds.
pub type DeclaredKind = VarKind;
pub use exchange::{Exchange, RequestJson, Response, ToolCall};
pub use promptpack_core::render::{DEFAULT_MAX_RENDER_BYTES, MissingVars};
/// What front matter declares of the exchange with the model (`tools`,
/// `response`), as [`FrontMatter`] holds it.
pub use promptpack_core::schema::{Property, Schema, SchemaKind, Tool};
#[cfg(feature = "library")]
#[cfg_attr(docsrs, doc(cfg(feature = "library")))]
pub use promptpack_core::source_file::SourceFile;
#[cfg(feature = "library")]
#[cfg_attr(docsrs, doc(cfg(feature = "library")))]
pub use promptpack_core::sources::{SnippetSource, TemplateSource};
pub use promptpack_core::syntax::Delimiters;
pub use promptpack_core::value::ValueRef;
pub use promptpack_core::vars::{AsValueRef, VarNames, Vars};
#[cfg(feature = "library")]
#[cfg_attr(docsrs, doc(cfg(feature = "library")))]
pub use promptpack_load::{CONFIG_FILE, Config};
pub use provenance::{CatalogVersion, Provenance};
#[cfg(feature = "hot-reload")]
#[cfg_attr(docsrs, doc(cfg(feature = "hot-reload")))]
pub use reload::{NO_RELOAD_ENV, ReloadEvent, WatchOptions, WatchedLibrary};
pub use typed::TypedVars;

/// The language's internals: syntax, programs, resolve, render, the lints
/// and the load pipeline, for tools, benches and fuzzers.
///
/// **Unstable**: behind the `unstable-machinery` feature, and any release
/// may change it. Applications need none of it.
#[cfg(feature = "unstable-machinery")]
#[cfg_attr(docsrs, doc(cfg(feature = "unstable-machinery")))]
pub mod machinery {
    pub use promptpack_core as core;
    pub use promptpack_load as load;
}

/// The seam promptpack's own crates (the CLI, the console, the language
/// server) build on: a [`Library`] of prompts compiled elsewhere (by
/// `promptpack_build`'s check, or a catalog version judged by
/// `promptpack_catalog`), and the compiled prompts a library holds.
///
/// **Internal**: behind the `house` feature, for crates that pin this exact
/// version of promptpack; no semver guarantee. Other tools use
/// `unstable-machinery`.
#[cfg(feature = "house")]
#[doc(hidden)]
pub mod house {
    use crate::Library;
    use promptpack_core::Delimiters;
    use promptpack_core::resolve::ResolvedPrompt;

    /// A library of prompts that compiled without error, with the
    /// delimiters they were parsed with: no reading, no parsing.
    pub fn library_of(prompts: Vec<ResolvedPrompt>, delimiters: Delimiters) -> Library {
        Library::from_resolved(prompts, delimiters)
    }

    /// A library of one catalog version's prompts (judged by
    /// `promptpack_catalog`), whose renders and reads say they come from
    /// `version`: their [`Provenance`](crate::Provenance) and their spans.
    pub fn catalog_library(
        prompts: Vec<ResolvedPrompt>,
        delimiters: Delimiters,
        version: crate::CatalogVersion,
    ) -> Library {
        Library::from_resolved(prompts, delimiters)
            .with_provenance(crate::Provenance::Catalog(version))
    }

    /// Every prompt of `library` as the pipeline resolved it, sorted by id.
    pub fn prompts(library: &Library) -> &[ResolvedPrompt] {
        library.resolved_prompts()
    }

    /// Prompt `id` of `library` as the pipeline resolved it.
    pub fn resolved<'a>(library: &'a Library, id: &str) -> Option<&'a ResolvedPrompt> {
        library.get(id)
    }
}

/// Brings the code generated by `promptpack_build::compile()` into the current module:
/// the `PromptId` enum, one vars struct per prompt and `build_prompt`.
#[macro_export]
macro_rules! include_prompts {
    () => {
        include!(concat!(env!("OUT_DIR"), "/promptpack_prompts.rs"));
    };
}

/// Items used by generated code. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::private::*;

    /// The version of this runtime, as [`__generated_code!`] names it.
    ///
    /// [`__generated_code!`]: crate::__generated_code
    pub const VERSION: &str = crate::__runtime_version!();

    /// Whether two strings are equal, in a constant.
    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    const _: () = assert!(
        same(VERSION, env!("CARGO_PKG_VERSION")),
        "`__runtime_version!` in src/lib.rs must give the crate's version: update it with the version"
    );
}

/// The runtime's version as a literal, which a `macro_rules` can put in a
/// message (`env!` would give the version of the crate that expands it).
/// Kept equal to `CARGO_PKG_VERSION` by a check in `__private`.
#[doc(hidden)]
#[macro_export]
macro_rules! __runtime_version {
    () => {
        "0.1.0"
    };
}

/// Wraps the items of generated code: `{ format, "promptpack-build X.Y.Z",
/// items… }`. Gives the items back for a format of generated code that
/// this runtime reads, and otherwise drops them for one error that names
/// both versions: code that no longer fits the runtime is not compiled, so
/// it does not also fail in every place where it no longer fits. Generated
/// code of every version calls it so: it keeps this name and shape in
/// every release.
#[doc(hidden)]
#[macro_export]
macro_rules! __generated_code {
    // Format 4: a prompt's `tools` and `response` as types (serde through
    // `__private`, `nullable`, `parse_answer`, `Response`), their JSON in
    // the prompt table (`PromptInfo::tools`, `response_format`); `build`
    // through `traced_build`, the reads given the prompt's id and hash. Format 3
    // had no such fields in the table, format 2 built `Prompt`s without
    // messages, and format 1 with a `u64` hash: this runtime reads none.
    (4, $built_by:literal, $($items:tt)*) => {
        $($items)*
    };
    ($format:literal, $built_by:literal, $($items:tt)*) => {
        ::core::compile_error!(::core::concat!(
            $built_by,
            " generated this code in format ",
            $format,
            ", and the promptpack runtime ",
            $crate::__runtime_version!(),
            " reads format 4: use promptpack and promptpack-build of the same version \
             (`cargo tree -i promptpack` shows the promptpack in use)"
        ));
    };
}
