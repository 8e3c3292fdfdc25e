//! The limits of the code generated, and the `too_large` diagnostics of a
//! prompt, or of all prompts together, that would pass them: rustc's time
//! and memory grow with the code faster than the templates do.

use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location};
use promptpack_core::program::Op;
use promptpack_core::resolve::ResolvedPrompt;

/// The most Rust code generated for one prompt (its vars struct, its
/// renderers, its choice enums), in bytes as [`generate`](super::generate) writes
/// it: 2 MiB, some 7,500 nested blocks or 7,000 variables (about the
/// templates 2.5 MiB of the generator's earlier, wordier output held). A
/// debug build of the costliest shape at this size as straight-line code,
/// blocks nested that deep, takes rustc a few gigabytes; past it, minutes
/// and more: such a prompt is `too_large`, for `check` and the build alike.
/// The template as expanded (snippets spliced in) decides: every piece of
/// text and every token is a statement, so a snippet included many times
/// multiplies the code. The catalog's limit on a version's files is the
/// same number (`promptpack_core::resolve::MAX_PROMPT_BYTES`).
pub const MAX_PROMPT_CODE: usize = promptpack_core::resolve::MAX_PROMPT_BYTES;

/// The most Rust code generated for every prompt together, in bytes as
/// [`generate`](super::generate) writes it: 128 MiB. A backstop, not a budget:
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
pub(super) fn least_code(prompt: &ResolvedPrompt) -> usize {
    let messages = prompt
        .conversation
        .as_ref()
        .map(|conversation| conversation.programs())
        .unwrap_or_default();
    std::iter::once(&prompt.system)
        .chain(&prompt.user)
        .chain(messages)
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

pub(super) fn too_large(prompt: &ResolvedPrompt, size: usize, bound: &str) -> Diagnostic {
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

pub(super) fn too_large_total(prompt: &ResolvedPrompt, total: usize, large: usize) -> Diagnostic {
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

/// The shared items alone (`PromptId` and the tables indexed by it) past
/// [`MAX_CODE`]: no prompt is to blame.
pub(super) fn too_large_shared(prompts: usize, size: usize) -> Error {
    Error::new(
        ErrorCode::TooLarge,
        format!(
            "the `PromptId` enum of {prompts} prompts alone would generate {} of Rust, past the limit of {} for all prompts together",
            human(size),
            human(MAX_CODE)
        ),
    )
}
