//! A conversation compiled: the turns `messages.md` sends, in order. Its
//! structure is known at build time: each message's role is written in its
//! tag, each `{{#if}}` around messages is a branch between lists of turns,
//! and the history is one placeholder whose messages are given as they are.

use crate::message::Role;
use crate::program::Program;
use crate::render::test_holds;
use crate::value::ValueRef;

/// The turns of a conversation, in the order they are sent after the
/// system message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conversation {
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

/// One step of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// A message: who speaks it and its text, a program as a part's is
    /// (variables, snippets and `{{#if}}`s inside it render as they do
    /// anywhere).
    Message {
        /// Who speaks it.
        role: Role,
        /// For a tool result, the tool's name.
        name: Option<String>,
        /// Its text.
        program: Program,
    },
    /// The history: the messages of the variable numbered so in the
    /// prompt's variable table, sent as given.
    History(usize),
    /// `{{#if}}` (with its `{{else if}}`s and `{{else}}`) around whole
    /// messages: the turns of the first arm whose test holds, else
    /// `otherwise`.
    Branch {
        /// The tested arms, in order.
        arms: Vec<Arm>,
        /// The `{{else}}`'s turns (none without one).
        otherwise: Vec<Turn>,
    },
}

/// One tested arm of a [`Turn::Branch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arm {
    /// The variable tested, numbered in the prompt's variable table.
    pub var: usize,
    /// `None`: the variable's truth; `Some(value)`: whether it is `value`.
    pub equals: Option<String>,
    /// The turns when the test holds.
    pub turns: Vec<Turn>,
}

/// What a conversation sends, along the branches some values take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent<'c> {
    /// A message of `messages.md`, to render.
    Message {
        /// Who speaks it.
        role: Role,
        /// For a tool result, the tool's name.
        name: Option<&'c str>,
        /// Its text.
        program: &'c Program,
    },
    /// The history: the messages of the variable so numbered.
    History(usize),
}

impl Conversation {
    /// What the conversation sends for `values` (indexed as the prompt's
    /// variables), in order: the branches' tests as `{{#if}}` tests them.
    pub fn sent<'c>(&'c self, values: &[Option<ValueRef<'_>>]) -> Vec<Sent<'c>> {
        let mut sent = Vec::new();
        walk_sent(&self.turns, values, &mut sent);
        sent
    }

    /// Every message's program, on every path, in file order.
    pub fn programs(&self) -> Vec<&Program> {
        let mut programs = Vec::new();
        collect_programs(&self.turns, &mut programs);
        programs
    }
}

fn walk_sent<'c>(turns: &'c [Turn], values: &[Option<ValueRef<'_>>], sent: &mut Vec<Sent<'c>>) {
    for turn in turns {
        match turn {
            Turn::Message {
                role,
                name,
                program,
            } => sent.push(Sent::Message {
                role: *role,
                name: name.as_deref(),
                program,
            }),
            Turn::History(var) => sent.push(Sent::History(*var)),
            Turn::Branch { arms, otherwise } => {
                let taken = arms.iter().find(|arm| {
                    let value = values.get(arm.var).copied().flatten();
                    test_holds(value, arm.equals.as_deref())
                });
                walk_sent(
                    taken.map_or(otherwise.as_slice(), |arm| &arm.turns),
                    values,
                    sent,
                );
            }
        }
    }
}

fn collect_programs<'a>(turns: &'a [Turn], out: &mut Vec<&'a Program>) {
    for turn in turns {
        match turn {
            Turn::Message { program, .. } => out.push(program),
            Turn::History(_) => {}
            Turn::Branch { arms, otherwise } => {
                for arm in arms {
                    collect_programs(&arm.turns, out);
                }
                collect_programs(otherwise, out);
            }
        }
    }
}
