//! Tracing spans of renders and answer reads (feature `tracing`): one span
//! for each render and each read of a model's answer or tool call, on every
//! path (the generated code of both shapes, the dev hot reload, a
//! [`Library`](crate::Library), a live handle, a catalog version), named
//! with the attributes of the OpenTelemetry GenAI conventions where they
//! define one.
//!
//! The conventions' registry defines [`PROMPT_NAME`]
//! (`gen_ai.prompt.name`), [`TOOL_NAME`] (`gen_ai.tool.name`) and
//! [`ERROR_TYPE`] (`error.type`), and no attribute for a prompt's version,
//! so the rest are under `promptpack.`: the content hash as `promptpack
//! list` shows it, where the text came from, and for a catalog version its
//! number, SHA-256, label, split arm and pinned snippet revisions. The
//! attributes Langfuse links a generation to a prompt version with are
//! opt-in ([`set_langfuse_attributes`]).
//!
//! Without the feature nothing here exists but what the generated code
//! calls, and that passes straight through: no span, no check, no field.
//!
//! ```
//! # #[cfg(feature = "tracing")] {
//! // Langfuse's prompt-version links on catalog renders, from now on.
//! promptpack::trace::set_langfuse_attributes(true);
//! assert!(promptpack::trace::langfuse_attributes());
//! # promptpack::trace::set_langfuse_attributes(false);
//! # }
//! ```

use crate::prompt::{Prompt, PromptHash};
use crate::provenance::Provenance;
use promptpack_core::error::Result;

/// The target of every span here, for a subscriber's filter
/// (`promptpack=info`).
#[cfg(feature = "tracing")]
pub const TARGET: &str = "promptpack";

/// The name of the span of a render: a prompt made from values, whichever
/// way.
#[cfg(feature = "tracing")]
pub const RENDER_SPAN: &str = "promptpack.render";

/// The name of the span of a read of a model's answer (`Response::parse`,
/// `Library::parse_response`) or of a tool call's arguments
/// (`ToolCall::parse`, `Library::parse_tool_call`).
#[cfg(feature = "tracing")]
pub const PARSE_SPAN: &str = "promptpack.parse";

/// `gen_ai.prompt.name` (OpenTelemetry GenAI): the prompt's id, on every
/// span.
#[cfg(feature = "tracing")]
pub const PROMPT_NAME: &str = "gen_ai.prompt.name";

/// `promptpack.prompt.hash`: the content hash of the resolved template, 16
/// hex digits as `promptpack list` shows it ([`PromptHash`]'s `Display`).
#[cfg(feature = "tracing")]
pub const PROMPT_HASH: &str = "promptpack.prompt.hash";

/// `promptpack.source`: where the text came from, `embedded` (generated
/// code), `loaded` (a `Library`, the dev hot reload) or `catalog` (a
/// catalog version), as [`Provenance`] says.
#[cfg(feature = "tracing")]
pub const SOURCE: &str = "promptpack.source";

/// `promptpack.catalog.version`: a catalog version's number (an integer).
#[cfg(feature = "tracing")]
pub const CATALOG_VERSION: &str = "promptpack.catalog.version";

/// `promptpack.catalog.sha256`: the SHA-256 of a catalog version's
/// resolved text, lowercase hex, as the catalog shows it.
#[cfg(feature = "tracing")]
pub const CATALOG_SHA256: &str = "promptpack.catalog.sha256";

/// `promptpack.catalog.label`: the label that chose the version, when one
/// did (a live handle's).
#[cfg(feature = "tracing")]
pub const CATALOG_LABEL: &str = "promptpack.catalog.label";

/// `promptpack.catalog.arm`: the arm of a split label that served the
/// render, as [`Provenance`] displays it: `10/100`, its weight of the
/// weights' total.
#[cfg(feature = "tracing")]
pub const CATALOG_ARM: &str = "promptpack.catalog.arm";

/// `promptpack.catalog.pins`: the snippet revisions the version renders
/// with, `name@revision` by name, comma-separated (`footer@3,tone@1`);
/// absent when it pins none.
#[cfg(feature = "tracing")]
pub const CATALOG_PINS: &str = "promptpack.catalog.pins";

/// `promptpack.read`: what a [`PARSE_SPAN`] read, `response` (an answer)
/// or `tool_call` (a tool call's arguments).
#[cfg(feature = "tracing")]
pub const READ: &str = "promptpack.read";

/// `gen_ai.tool.name` (OpenTelemetry GenAI): the tool a read tool call
/// names.
#[cfg(feature = "tracing")]
pub const TOOL_NAME: &str = "gen_ai.tool.name";

/// `error.type` (OpenTelemetry): a failed render's or read's error code,
/// as [`ErrorCode::as_str`](crate::ErrorCode::as_str) names it
/// (`missing_var`, `answer_mismatch`, …).
#[cfg(feature = "tracing")]
pub const ERROR_TYPE: &str = "error.type";

/// `langfuse.observation.prompt.name`: the prompt's id, recorded for a
/// catalog version only while [`langfuse_attributes`] is on, so that
/// Langfuse links the observation to a prompt.
#[cfg(feature = "tracing")]
pub const LANGFUSE_PROMPT_NAME: &str = "langfuse.observation.prompt.name";

/// `langfuse.observation.prompt.version`: the catalog version's number (an
/// integer), recorded beside [`LANGFUSE_PROMPT_NAME`].
#[cfg(feature = "tracing")]
pub const LANGFUSE_PROMPT_VERSION: &str = "langfuse.observation.prompt.version";

/// Whether spans record the Langfuse attributes: off until
/// [`set_langfuse_attributes`].
#[cfg(feature = "tracing")]
static LANGFUSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records [`LANGFUSE_PROMPT_NAME`] and [`LANGFUSE_PROMPT_VERSION`] on the
/// spans of catalog versions from now on (`true`), or no longer (`false`),
/// process-wide. Off by default: the names are Langfuse's, not
/// OpenTelemetry's, and only a Langfuse backend reads them. The fields
/// are declared on every span either way; only their values wait for this.
#[cfg(feature = "tracing")]
pub fn set_langfuse_attributes(on: bool) {
    LANGFUSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether spans record the Langfuse attributes
/// ([`set_langfuse_attributes`]).
#[cfg(feature = "tracing")]
pub fn langfuse_attributes() -> bool {
    LANGFUSE.load(std::sync::atomic::Ordering::Relaxed)
}

/// What a read is of, for its span.
#[derive(Debug, Clone, Copy)]
// Read only by the spans, which the feature compiles.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct ReadOf<'a> {
    /// The prompt's id.
    pub(crate) prompt: &'a str,
    /// Its content hash, when the reader knows it.
    pub(crate) hash: Option<PromptHash>,
    /// Where its text came from, when the reader knows it.
    pub(crate) provenance: Option<&'a Provenance>,
    /// The tool called, for a tool call; `None` for an answer.
    pub(crate) tool: Option<&'a str>,
}

/// Runs `render`, the render of prompt `name`, in a [`RENDER_SPAN`] that
/// records the prompt it made (its hash and provenance) or its error's
/// code. Without the feature, `render()` and nothing else.
#[inline(always)]
pub(crate) fn render<Id>(
    name: &str,
    render: impl FnOnce() -> Result<Prompt<Id>>,
) -> Result<Prompt<Id>> {
    #[cfg(feature = "tracing")]
    {
        let span = on::render_span(name);
        let result = span.in_scope(render);
        if !span.is_disabled() {
            match &result {
                Ok(prompt) => on::record_origin(&span, prompt.hash, &prompt.provenance),
                Err(error) => on::record_error(&span, error),
            }
        }
        result
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = name;
        render()
    }
}

/// Runs `read`, a read of an answer or a tool call's arguments, in a
/// [`PARSE_SPAN`] that records what `of` says and the error's code. Without
/// the feature, `read()` and nothing else: `of` is not even asked (a
/// `Library` looks the prompt's hash up for it).
#[inline(always)]
pub(crate) fn read<'a, T>(
    of: impl FnOnce() -> ReadOf<'a>,
    read: impl FnOnce() -> Result<T>,
) -> Result<T> {
    #[cfg(feature = "tracing")]
    {
        let span = on::read_span(&of());
        let result = span.in_scope(read);
        if let Err(error) = &result
            && !span.is_disabled()
        {
            on::record_error(&span, error);
        }
        result
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = of;
        read()
    }
}

/// The spans themselves, compiled only with the feature.
#[cfg(feature = "tracing")]
mod on {
    use super::{LANGFUSE_PROMPT_NAME, LANGFUSE_PROMPT_VERSION, ReadOf, langfuse_attributes};
    use crate::prompt::PromptHash;
    use crate::provenance::Provenance;
    use promptpack_core::error::Error;
    use tracing::field::{Empty, display};
    use tracing::{Span, info_span};

    // The field names are written out in the macros (tracing takes them as
    // tokens); `tests/spans.rs` of promptpack-tracetest holds every span's
    // fields to the public constants.

    /// A render's span, its other fields empty until it ends.
    pub(super) fn render_span(name: &str) -> Span {
        info_span!(
            target: "promptpack",
            "promptpack.render",
            gen_ai.prompt.name = name,
            promptpack.prompt.hash = Empty,
            promptpack.source = Empty,
            promptpack.catalog.version = Empty,
            promptpack.catalog.sha256 = Empty,
            promptpack.catalog.label = Empty,
            promptpack.catalog.arm = Empty,
            promptpack.catalog.pins = Empty,
            langfuse.observation.prompt.name = Empty,
            langfuse.observation.prompt.version = Empty,
            error.type = Empty,
        )
    }

    /// A read's span, with what the reader knows of the prompt.
    pub(super) fn read_span(of: &ReadOf<'_>) -> Span {
        let span = info_span!(
            target: "promptpack",
            "promptpack.parse",
            gen_ai.prompt.name = of.prompt,
            promptpack.read = if of.tool.is_some() { "tool_call" } else { "response" },
            gen_ai.tool.name = of.tool,
            promptpack.prompt.hash = Empty,
            promptpack.source = Empty,
            promptpack.catalog.version = Empty,
            promptpack.catalog.sha256 = Empty,
            promptpack.catalog.label = Empty,
            promptpack.catalog.arm = Empty,
            promptpack.catalog.pins = Empty,
            langfuse.observation.prompt.name = Empty,
            langfuse.observation.prompt.version = Empty,
            error.type = Empty,
        );
        if !span.is_disabled() {
            if let Some(hash) = of.hash {
                span.record(super::PROMPT_HASH, display(hash));
            }
            if let Some(provenance) = of.provenance {
                record_provenance(&span, provenance);
            }
        }
        span
    }

    /// The prompt's hash and where its text came from.
    pub(super) fn record_origin(span: &Span, hash: PromptHash, provenance: &Provenance) {
        span.record(super::PROMPT_HASH, display(hash));
        record_provenance(span, provenance);
    }

    /// Where a text came from: its source, and a catalog version's fields.
    fn record_provenance(span: &Span, provenance: &Provenance) {
        let version = match provenance {
            Provenance::Embedded => return record_source(span, "embedded"),
            Provenance::Loaded => return record_source(span, "loaded"),
            Provenance::Catalog(version) => version,
        };
        record_source(span, "catalog");
        span.record(super::CATALOG_VERSION, i64::from(version.version));
        span.record(super::CATALOG_SHA256, &*version.content_hash);
        if let Some(label) = &version.label {
            span.record(super::CATALOG_LABEL, &**label);
        }
        if let Some((weight, total)) = version.arm {
            span.record(
                super::CATALOG_ARM,
                display(format_args!("{weight}/{total}")),
            );
        }
        if !version.pins.is_empty() {
            span.record(super::CATALOG_PINS, display(version.pins_text()));
        }
        if langfuse_attributes() {
            span.record(LANGFUSE_PROMPT_NAME, &*version.prompt);
            span.record(LANGFUSE_PROMPT_VERSION, i64::from(version.version));
        }
    }

    fn record_source(span: &Span, source: &'static str) {
        span.record(super::SOURCE, source);
    }

    /// A failure: its code, as `error.type`.
    pub(super) fn record_error(span: &Span, error: &Error) {
        span.record(super::ERROR_TYPE, error.code().as_str());
    }
}
