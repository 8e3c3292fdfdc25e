//! Writing spliced items into a part's program: text joined to the text
//! before it, blocks whose jumps are filled in as they close, and a
//! snippet's first splice copied when it is spliced again.

use crate::program::{Op, Program};
use std::ops::Range;

/// An open block while a part is compiled: its `If` op, and whether an
/// `{{else if}}` opened it (so that the `{{/if}}` of the block it continues
/// closes it too).
pub(super) struct OpenIf {
    pub(super) at: usize,
    pub(super) from_else_if: bool,
}

/// What a snippet's first splice into a part added: its ops and the text
/// it appended. Splicing it again copies these, which costs what it adds:
/// walking its items again would cost them however little they add, and a
/// snippet that includes another twice, included twice, and so on, walks
/// 2^depth times for an output of nothing.
#[derive(Clone)]
pub(super) struct Fragment {
    pub(super) ops: Range<usize>,
    pub(super) text: Range<usize>,
}

/// Appends what a snippet's first splice added, as splicing it again would:
/// the same ops (jumps set anew), the same text, the first piece of it
/// joining the text before as [`push_text`] joins any.
pub(super) fn splice_again(program: &mut Program, fragment: &Fragment) {
    // The program's text grows as it is read: copy the fragment's first.
    let base = fragment.text.start;
    let text = program.text[fragment.text.clone()].to_string();
    let piece = |start: usize, end: usize| {
        let end = end.clamp(base, fragment.text.end) - base;
        &text[(start.max(base) - base).min(end)..end]
    };
    // Text the first splice joined to the op before it comes before its ops.
    let first_op_text = program.ops[fragment.ops.clone()]
        .iter()
        .find_map(|op| match op {
            Op::Text { start, .. } => Some(*start),
            _ => None,
        })
        .unwrap_or(fragment.text.end);
    push_text(program, piece(base, first_op_text));
    // The fragment's blocks open and close within it (a file's blocks are
    // balanced): they are numbered anew as they are copied.
    let mut open: Vec<usize> = Vec::new();
    for at in fragment.ops.clone() {
        match program.ops[at].clone() {
            Op::Text { start, end } => push_text(program, piece(start, end)),
            Op::Var(index) => program.ops.push(Op::Var(index)),
            Op::If { cond, equals, .. } => {
                open.push(program.ops.len());
                program.ops.push(Op::If {
                    cond,
                    equals,
                    else_at: 0,
                    end_at: 0,
                });
            }
            Op::Else { .. } => {
                let here = program.ops.len();
                if let Some(&open) = open.last()
                    && let Op::If { else_at, .. } = &mut program.ops[open]
                {
                    *else_at = here + 1;
                }
                program.ops.push(Op::Else { end_at: 0 });
            }
            Op::EndIf => {
                if let Some(open) = open.pop() {
                    let here = program.ops.len();
                    close_block(&mut program.ops, open, here);
                }
                program.ops.push(Op::EndIf);
            }
        }
    }
}

/// Ends the then-branch of the innermost open block with an `Else`.
pub(super) fn start_else(ops: &mut Vec<Op>, open_ifs: &[OpenIf]) {
    let here = ops.len();
    if let Some(open) = open_ifs.last()
        && let Op::If { else_at, .. } = &mut ops[open.at]
    {
        *else_at = here + 1;
    }
    ops.push(Op::Else { end_at: 0 });
}

/// Fills in the jump targets of the block opened at `open` and ending at `end`.
pub(super) fn close_block(ops: &mut [Op], open: usize, end: usize) {
    let Op::If {
        else_at, end_at, ..
    } = &mut ops[open]
    else {
        return;
    };
    *end_at = end;
    if *else_at == 0 {
        *else_at = end;
        return;
    }
    let else_op = *else_at - 1;
    if let Op::Else { end_at } = &mut ops[else_op] {
        *end_at = end;
    }
}

/// Appends `text` to the program, joined to the text op before it when
/// there is one: adjacent pieces are one op, however they were spliced.
pub(super) fn push_text(program: &mut Program, text: &str) {
    if text.is_empty() {
        return;
    }
    let start = program.text.len();
    program.text.push_str(text);
    let end = program.text.len();
    match program.ops.last_mut() {
        Some(Op::Text { end: last_end, .. }) if *last_end == start => *last_end = end,
        _ => program.ops.push(Op::Text { start, end }),
    }
}
