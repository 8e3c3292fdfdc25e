//! A program as a table of steps: what the code generator writes for builds
//! without optimization, and what `promptpack` renders them with. One
//! translation, so the generated tables and the tests that check them
//! agree by construction.

use crate::program::{Op, Program, VarInfo};

/// One step of a part rendered from a table. Short names: the generated
/// tables are made of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The static text `text[start..end]`.
    T(u32, u32),
    /// The value of variable `i`.
    V(u32),
    /// When variable `i` does not hold, go to step `else_at`. `equals` 0:
    /// holds when truthy; `k`: holds when it is the `k`-th (from 1) of the
    /// values it is compared with ([`VarInfo::choices`]).
    I(u32, u32, u32),
    /// Go to step `end_at` (the end of a taken branch).
    E(u32),
}

/// `program`'s steps: its ops without the no-op `{{/if}}`, jumps
/// renumbered, compared values as their index among the variable's
/// [`VarInfo::choices`] (from 1). `vars` is the prompt's variable table.
pub fn steps(program: &Program, vars: &[VarInfo]) -> Vec<Step> {
    let small = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    // Where each op lands once the `{{/if}}`s are gone: a jump to one goes
    // to the step after it.
    let mut index = Vec::with_capacity(program.ops.len() + 1);
    let mut kept = 0u32;
    for op in &program.ops {
        index.push(kept);
        if *op != Op::EndIf {
            kept += 1;
        }
    }
    index.push(kept);
    let at = |i: usize| index.get(i).copied().unwrap_or(kept);
    program
        .ops
        .iter()
        .filter_map(|op| match *op {
            Op::Text { start, end } => Some(Step::T(small(start), small(end))),
            Op::Var(i) => Some(Step::V(small(i))),
            Op::If {
                cond,
                equals,
                else_at,
                ..
            } => {
                let value = equals.map_or(0, |literal| {
                    let literal = program.literals.get(literal as usize);
                    vars.get(cond)
                        .and_then(|var| {
                            var.choices
                                .iter()
                                .position(|v| Some(v.as_str()) == literal.map(AsRef::as_ref))
                        })
                        // A value the variable is never compared with
                        // (never made by `resolve`) holds for nothing.
                        .map_or(u32::MAX, |k| small(k + 1))
                });
                Some(Step::I(small(cond), value, at(else_at)))
            }
            Op::Else { end_at } => Some(Step::E(at(end_at))),
            Op::EndIf => None,
        })
        .collect()
}
