//! Runs a [`Program`] against values: one pass, each value written once and
//! never scanned again, so a value holding `{{x}}` reaches the output as is.

use crate::program::{Op, Program, VarInfo};
use crate::syntax::Delimiters;
use crate::value::ValueRef;

/// What to do when the render reaches a value token with no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    let mut missing = Vec::new();
    let mut at = 0;
    while let Some(op) = program.ops.get(at) {
        at += 1;
        match *op {
            Op::Text { start, end } => out.push_str(program.text_of(start, end)),
            Op::Var(i) => match values.get(i).copied().flatten() {
                Some(value) => value.write_to(out),
                None => {
                    if !missing.contains(&i) {
                        missing.push(i);
                    }
                    if missing_vars == MissingVars::KeepToken {
                        out.push_str(delims.open());
                        out.push_str(&vars[i].name);
                        out.push_str(delims.close());
                    }
                }
            },
            Op::If { cond, else_at, .. } => {
                let truthy = values
                    .get(cond)
                    .copied()
                    .flatten()
                    .is_some_and(|v| v.is_truthy());
                if !truthy {
                    at = else_at;
                }
            }
            Op::Else { end_at } => at = end_at,
            Op::EndIf => {}
        }
    }
    missing
}
