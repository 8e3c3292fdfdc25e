//! How far one template part may expand, snippets spliced in, and the
//! `too_large` refusal past it: snippets that include others more than once
//! multiply, and a short chain could otherwise expand past any memory.

use crate::error::{Diagnostic, ErrorCode, Location};
use crate::source_file::{SourceFile, Span};

/// The most static text one template part may expand to, snippets spliced
/// in: far beyond any real prompt, well below exhausting memory.
pub const MAX_EXPANDED_TEXT: usize = 256 << 20;

/// The most tokens and text pieces one template part may expand to.
pub const MAX_EXPANDED_OPS: usize = 4 << 20;

/// The most bytes of one prompt that a build compiles into code and a
/// catalog keeps: 2 MiB. The build's limit on the Rust code one prompt
/// generates (`promptpack_build::codegen::MAX_PROMPT_CODE`) and the
/// catalog's on one file of a version and on a part's expanded text
/// (`promptpack_catalog::MAX_FILE_BYTES`) are this one number, since that
/// much text generates at least that much code: what the catalog keeps,
/// `promptpack check` accepts.
pub const MAX_PROMPT_BYTES: usize = 2 << 20;

/// `too_large` at the include (or the `{{schema:response}}`) that takes a
/// part past the limits: the token is what the author can change.
pub(super) fn too_large(file: &SourceFile, include: Span) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::TooLarge,
        format!(
            "{} expands the template past {} MiB of text or {} tokens",
            file.slice(include),
            MAX_EXPANDED_TEXT >> 20,
            MAX_EXPANDED_OPS
        ),
    )
    .at(file.location(include))
    .with_help("a snippet included several times, by snippets that are themselves included several times, multiplies")
}

/// `too_large` of a part that ends past the limits without an include to
/// blame (the last splice stayed within them, what followed did not).
pub(super) fn too_large_file(file: &SourceFile) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::TooLarge,
        format!(
            "{} expands past {} MiB of text or {} tokens",
            file.path(),
            MAX_EXPANDED_TEXT >> 20,
            MAX_EXPANDED_OPS
        ),
    )
    .at(Location::file(file.path()))
}

/// Whether a part of `text` bytes of static text and `ops` ops is past the
/// limits.
pub(super) fn past_limits(text: usize, ops: usize) -> bool {
    text > MAX_EXPANDED_TEXT || ops > MAX_EXPANDED_OPS
}

/// The most messages one conversation may have, its snippets of turns
/// spliced: snippets of turns that include each other twice multiply.
pub const MAX_TURNS: usize = 4096;
