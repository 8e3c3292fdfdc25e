//! Runs a [`Program`] against values: one pass, each value written once and
//! never scanned again, so a value holding `{{x}}` reaches the output as is.

use crate::error::{Diagnostic, Error, ErrorCode, Location};
use crate::program::{Op, Program, VarInfo};
use crate::syntax::Delimiters;
use crate::value::ValueRef;

/// The most bytes one part of a prompt (its system or its user text) may
/// render to unless told otherwise: 16 MiB, four times the text of a
/// million-token context. A template that uses a variable many times can
/// turn a value of a few megabytes into gigabytes of output; every render
/// measures its output first and refuses one past the bound (`too_large`)
/// before it allocates.
pub const DEFAULT_MAX_RENDER_BYTES: usize = 16 * 1024 * 1024;

/// The part of a prompt a render writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartName {
    /// `system.md`.
    System,
    /// `user.md`.
    User,
    /// A message of `messages.md`.
    Messages,
}

impl PartName {
    /// `system`, `user` or `messages`: the file's name without `.md`.
    pub fn as_str(self) -> &'static str {
        match self {
            PartName::System => "system",
            PartName::User => "user",
            PartName::Messages => "messages",
        }
    }
}

/// The `too_large` error of a render refused before it allocated: `part`
/// of prompt `prompt` would have been `would_write` bytes, more than
/// `bound`. Located at the part's file (`id/system.md`), relative to the
/// templates folder.
pub fn output_too_large(prompt: &str, part: PartName, would_write: usize, bound: usize) -> Error {
    let part = part.as_str();
    Diagnostic::new(
        ErrorCode::TooLarge,
        format!(
            "prompt `{prompt}` would render {would_write} bytes of {part} text with these values, \
             past the render bound of {bound} bytes; nothing was allocated"
        ),
    )
    .at(Location::file(format!("{prompt}/{part}.md")))
    .with_help(
        "a value used many times multiplies its length: pass smaller values, or raise the bound \
         (max_render_bytes: Config::with_max_render_bytes, `[render] max_bytes` in \
         promptpack.toml, the CLI's and the console's --max-render-bytes)",
    )
    .into()
}

/// What to do when the render reaches a value token with no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MissingVars {
    /// Fail with `missing_var`, naming every missing variable (the default).
    #[default]
    Error,
    /// Leave the token (`{{name}}`) in the output, as the original loader did.
    KeepToken,
}

/// Renders `program`, taking the value of variable `i` from `values[i]`, and
/// appends the result to `out`. Returns the indices of the value tokens
/// reached without a value (missing conditions are simply false). Under
/// [`MissingVars::KeepToken`] those tokens are written back as they were.
pub fn render_program(
    program: &Program,
    vars: &[VarInfo],
    values: &[Option<ValueRef<'_>>],
    delims: &Delimiters,
    missing_vars: MissingVars,
    out: &mut String,
) -> Vec<usize> {
    let mut missing = Missing::default();
    render_ops(program, values, out, |i, out| {
        missing.insert(i);
        if missing_vars == MissingVars::KeepToken {
            write_token(out, delims, &vars[i].name);
        }
    });
    missing.order
}

/// The variables a render found without a value: each once, in order of
/// first use, in time linear in how many there are.
#[derive(Debug, Default)]
pub struct Missing {
    /// In order of first use.
    pub order: Vec<usize>,
    /// `seen[i]`: `i` is in `order`. Grown on demand: most renders miss
    /// nothing and allocate nothing.
    seen: Vec<bool>,
}

impl Missing {
    /// Records variable `i` as missing, once.
    pub fn insert(&mut self, i: usize) {
        if self.seen.len() <= i {
            self.seen.resize(i + 1, false);
        }
        if !std::mem::replace(&mut self.seen[i], true) {
            self.order.push(i);
        }
    }
}

/// Writes the token of a missing value back: `{{name}}`.
pub fn write_token(out: &mut String, delims: &Delimiters, name: &str) {
    out.push_str(delims.open());
    out.push_str(name);
    out.push_str(delims.close());
}

/// The render loop: appends `program` to `out`, calling `on_missing` with
/// the index of each value token reached without a value.
#[inline]
pub fn render_ops(
    program: &Program,
    values: &[Option<ValueRef<'_>>],
    out: &mut String,
    mut on_missing: impl FnMut(usize, &mut String),
) {
    let text = program.text.as_str();
    // What follows the last text op: text ops cover the program's text in
    // order, so the next one usually starts there, and splitting it off
    // checks one char boundary where slicing the whole text checks two.
    let mut rest = text;
    for step in taken_steps(program, values) {
        match step {
            Step::Text { start, end } => {
                let split = if start == text.len() - rest.len() {
                    rest.split_at_checked(end.wrapping_sub(start))
                } else {
                    None
                };
                let piece = match split {
                    Some((piece, after)) => {
                        rest = after;
                        piece
                    }
                    _ => {
                        let piece = &text[start..end];
                        rest = &text[end..];
                        piece
                    }
                };
                out.push_str(piece);
            }
            Step::Var(i) => match values.get(i) {
                // Text, by far the most common value, without a call.
                Some(Some(ValueRef::Str(s))) => out.push_str(s),
                Some(Some(value)) => value.write_to(out),
                _ => on_missing(i, out),
            },
        }
    }
}

/// The length of what [`render_ops`] writes, following the same branches,
/// with `value_len(i)` bytes for each value token of variable `i`. Kept out
/// of line: the usual render does not need it.
#[inline(never)]
pub fn measure_ops(
    program: &Program,
    values: &[Option<ValueRef<'_>>],
    value_len: &dyn Fn(usize) -> usize,
) -> usize {
    taken_steps(program, values).fold(0usize, |len, step| match step {
        Step::Text { start, end } => len.saturating_add(end.saturating_sub(start)),
        Step::Var(i) => len.saturating_add(value_len(i)),
    })
}

/// Whether an `{{#if}}` holds for `value`: its truth, or with `equals`,
/// whether it renders as that text. A missing value holds no test.
#[inline]
pub fn test_holds(value: Option<ValueRef<'_>>, equals: Option<&str>) -> bool {
    match equals {
        None => value.is_some_and(|v| v.is_truthy()),
        Some(literal) => value.is_some_and(|v| v.renders_as(literal)),
    }
}

/// What a render writes: a piece of the program's text, or a value.
#[derive(Clone, Copy)]
enum Step {
    Text { start: usize, end: usize },
    Var(usize),
}

/// The steps of `program` along the branches `values` take: the one place
/// that knows how the jumps of `#if` and `else` are followed.
#[inline]
fn taken_steps<'p>(
    program: &'p Program,
    values: &'p [Option<ValueRef<'_>>],
) -> impl Iterator<Item = Step> + 'p {
    let ops = program.ops.as_slice();
    let mut at = 0;
    std::iter::from_fn(move || {
        while let Some(op) = ops.get(at) {
            at += 1;
            match *op {
                Op::Text { start, end } => return Some(Step::Text { start, end }),
                Op::Var(i) => return Some(Step::Var(i)),
                Op::If {
                    cond,
                    equals,
                    else_at,
                    ..
                } => {
                    let value = values.get(cond).copied().flatten();
                    let holds = match equals {
                        None => test_holds(value, None),
                        Some(i) => program
                            .literals
                            .get(i as usize)
                            .is_some_and(|literal| test_holds(value, Some(literal))),
                    };
                    if !holds {
                        at = else_at;
                    }
                }
                Op::Else { end_at } => at = end_at,
                Op::EndIf => {}
            }
        }
        None
    })
}
