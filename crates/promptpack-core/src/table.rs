//! A program as a table of steps: what the code generator writes for builds
//! without optimization, and what `promptpack` renders them with. One
//! translation, so the generated tables and the tests that check them
//! agree by construction.

use crate::conversation::{Conversation, Turn};
use crate::message::Role;
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
                let literal = equals.and_then(|literal| program.literals.get(literal as usize));
                let value = compared_value(vars, cond, literal.map(AsRef::as_ref));
                Some(Step::I(small(cond), value, at(else_at)))
            }
            Op::Else { end_at } => Some(Step::E(at(end_at))),
            Op::EndIf => None,
        })
        .collect()
}

fn small(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What a test of variable `cond` compares with, as [`Step::I`] numbers it:
/// 0 for its truth, else `equals`' place among the variable's choices
/// (from 1).
fn compared_value(vars: &[VarInfo], cond: usize, equals: Option<&str>) -> u32 {
    let Some(equals) = equals else {
        return 0;
    };
    vars.get(cond)
        .and_then(|var| var.choices.iter().position(|v| v == equals))
        // A value the variable is never compared with (never made by
        // `resolve`) holds for nothing.
        .map_or(u32::MAX, |k| small(k + 1))
}

/// One step of a conversation rendered from a table: the turns of
/// [`Conversation`] in order, each `{{#if}}` around messages a jump, as
/// [`Step`] is for a part's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStep {
    /// Send message `k` of the table's messages ([`TurnTable::messages`]).
    M(u32),
    /// Send the history: the messages of variable `i`, as given.
    H(u32),
    /// When variable `i` does not hold, go to step `else_at`; `equals` as
    /// [`Step::I`] numbers it.
    I(u32, u32, u32),
    /// Go to step `end_at` (the end of a taken arm).
    E(u32),
}

/// One message of a conversation's table: who speaks it, the tool's name
/// for a tool result, and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableMessage<'c> {
    /// Who speaks it.
    pub role: Role,
    /// For a tool result, the tool's name.
    pub name: Option<&'c str>,
    /// Its text, a program as a part's is.
    pub program: &'c Program,
}

/// A conversation as a table: its steps and the messages they send, in
/// file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnTable<'c> {
    /// The steps, walked from the first.
    pub steps: Vec<TurnStep>,
    /// The messages [`TurnStep::M`] numbers.
    pub messages: Vec<TableMessage<'c>>,
}

/// `conversation`'s table. `vars` is the prompt's variable table.
pub fn turn_steps<'c>(conversation: &'c Conversation, vars: &[VarInfo]) -> TurnTable<'c> {
    let mut table = TurnTable::default();
    push_turns(&conversation.turns, vars, &mut table);
    table
}

fn push_turns<'c>(turns: &'c [Turn], vars: &[VarInfo], table: &mut TurnTable<'c>) {
    for turn in turns {
        match turn {
            Turn::Message {
                role,
                name,
                program,
            } => {
                table.steps.push(TurnStep::M(small(table.messages.len())));
                table.messages.push(TableMessage {
                    role: *role,
                    name: name.as_deref(),
                    program,
                });
            }
            Turn::History(var) => table.steps.push(TurnStep::H(small(*var))),
            Turn::Branch { arms, otherwise } => {
                // Each arm's test jumps past the arm when it fails; each
                // taken arm jumps to the end: both patched once known.
                let mut ends = Vec::with_capacity(arms.len());
                for arm in arms {
                    let test = table.steps.len();
                    let value = compared_value(vars, arm.var, arm.equals.as_deref());
                    table.steps.push(TurnStep::I(small(arm.var), value, 0));
                    push_turns(&arm.turns, vars, table);
                    ends.push(table.steps.len());
                    table.steps.push(TurnStep::E(0));
                    let else_at = small(table.steps.len());
                    table.steps[test] = TurnStep::I(small(arm.var), value, else_at);
                }
                push_turns(otherwise, vars, table);
                let end_at = small(table.steps.len());
                for end in ends {
                    table.steps[end] = TurnStep::E(end_at);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Arm;

    fn message(role: Role) -> Turn {
        Turn::Message {
            role,
            name: None,
            program: Program::default(),
        }
    }

    /// `{{#if a}}` user `{{else if b}}` assistant `{{else}}` history
    /// `{{/if}}`, then a user message.
    #[test]
    fn a_branch_lowers_to_tests_and_jumps() {
        let conversation = Conversation {
            turns: vec![
                Turn::Branch {
                    arms: vec![
                        Arm {
                            var: 0,
                            equals: None,
                            turns: vec![message(Role::User)],
                        },
                        Arm {
                            var: 1,
                            equals: None,
                            turns: vec![message(Role::Assistant)],
                        },
                    ],
                    otherwise: vec![Turn::History(2)],
                },
                message(Role::User),
            ],
        };
        let table = turn_steps(&conversation, &[]);
        use TurnStep::*;
        assert_eq!(
            table.steps,
            [I(0, 0, 3), M(0), E(7), I(1, 0, 6), M(1), E(7), H(2), M(2)]
        );
        let roles: Vec<Role> = table.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::User]);
    }
}
