//! How a conversation's messages render, both ways
//! ([`Renderers`](super::Renderers)): as straight-line code
//! (`render_messages`, a renderer per message, the branches as `if`s), or
//! as tables (`__TURNS`, `__MESSAGES`) that one loop of the runtime walks.

use super::render::part_literal;
use crate::names::Field;
use crate::renderer::{condition_of, measured_fn};
use crate::rust_source::{Source, lit};
use promptpack_core::conversation::{Conversation, Turn};
use promptpack_core::message::Role;
use promptpack_core::program::VarInfo;
use promptpack_core::table::{TurnStep, turn_steps};

/// `{runtime}::Role::X` for `role`: its derived `Debug` is the variant's
/// name, so a role added to the enum needs nothing here.
fn role_path(role: Role, runtime: &str) -> String {
    format!("{runtime}::Role::{role:?}")
}

/// `Some("name")` or `None`, for a message's tool name.
fn name_lit(name: Option<&str>) -> String {
    name.map_or_else(|| "None".to_string(), |name| format!("Some({})", lit(name)))
}

/// The most messages of the file any path sends: what the vector holds
/// besides the history.
fn most_messages(turns: &[Turn]) -> usize {
    turns
        .iter()
        .map(|turn| match turn {
            Turn::Message { .. } => 1,
            Turn::History(_) => 0,
            Turn::Branch { arms, otherwise } => arms
                .iter()
                .map(|arm| most_messages(&arm.turns))
                .chain(std::iter::once(most_messages(otherwise)))
                .max()
                .unwrap_or(0),
        })
        .sum()
}

/// The variables placed as a history, each once.
fn histories(turns: &[Turn], out: &mut Vec<usize>) {
    for turn in turns {
        match turn {
            Turn::Message { .. } => {}
            Turn::History(var) => {
                if !out.contains(var) {
                    out.push(*var);
                }
            }
            Turn::Branch { arms, otherwise } => {
                for arm in arms {
                    histories(&arm.turns, out);
                }
                histories(otherwise, out);
            }
        }
    }
}

/// `render_messages`, `__render_messages` and a measured renderer per
/// message (`__render_m0`, …), in a vars struct's impl.
pub(super) fn straight_line_messages(
    out: &mut Source,
    id: &str,
    conversation: &Conversation,
    fields: &[Field],
    runtime: &str,
) {
    out.line("");
    out.doc(
        "Renders the conversation's messages after the system part from the\n\
         code generated at build time: each message of `messages.md` whose\n\
         branch is taken, and the history as given.\n\n\
         Fails with `too_large`, before it allocates, when a message would\n\
         be longer than the render bound set at build time\n\
         (`Config::max_render_bytes`, 16 MiB unless set).",
    );
    out.open(format!(
        "pub fn render_messages(&self) -> Result<::std::vec::Vec<{runtime}::Message>, {runtime}::Error> {{"
    ));
    out.line(format!(
        "self.__render_messages(__MAX_RENDER_BYTES).map_err(|l| __p::too_large({}, __p::PartName::Messages, l, __MAX_RENDER_BYTES))",
        lit(id)
    ));
    out.close("}");
    out.line("");
    out.line("/// The messages, or the length of the first one longer than `bound`.");
    out.open(format!(
        "fn __render_messages(&self, bound: usize) -> Result<::std::vec::Vec<{runtime}::Message>, usize> {{"
    ));
    let mut capacity = most_messages(&conversation.turns).to_string();
    let mut placed = Vec::new();
    histories(&conversation.turns, &mut placed);
    for var in placed {
        if let Some(field) = fields.get(var) {
            capacity.push_str(&format!(" + self.{}.len()", field.ident));
        }
    }
    if conversation.turns.is_empty() {
        out.line("let _ = bound;");
    }
    let binding = if conversation.turns.is_empty() {
        "m"
    } else {
        "mut m"
    };
    out.line(format!(
        "let {binding} = ::std::vec::Vec::with_capacity({capacity});"
    ));
    let mut renderers = Vec::new();
    turns_code(out, &conversation.turns, fields, runtime, &mut renderers);
    out.line("Ok(m)");
    out.close("}");
    for (k, program) in renderers.into_iter().enumerate() {
        out.line("");
        measured_fn(out, &format!("__render_m{k}"), program, fields);
    }
}

/// The statements that send `turns`, in order; each message's program
/// joins `renderers`, numbered in file order.
fn turns_code<'c>(
    out: &mut Source,
    turns: &'c [Turn],
    fields: &[Field],
    runtime: &str,
    renderers: &mut Vec<&'c promptpack_core::program::Program>,
) {
    for turn in turns {
        match turn {
            Turn::Message {
                role,
                name,
                program,
            } => {
                out.line(format!(
                    "m.push(__p::message({}, {}, self.__render_m{}(bound)?));",
                    role_path(*role, runtime),
                    name_lit(name.as_deref()),
                    renderers.len()
                ));
                renderers.push(program);
            }
            Turn::History(var) => {
                if let Some(field) = fields.get(*var) {
                    out.line(format!(
                        "__p::history(&mut m, self.{}, bound)?;",
                        field.ident
                    ));
                }
            }
            Turn::Branch { arms, otherwise } => {
                // Fields are the prompt's variables, so every arm's is
                // there; `false` keeps the chain whole if one were not.
                for (n, arm) in arms.iter().enumerate() {
                    let cond = fields.get(arm.var).map_or_else(
                        || "false".to_string(),
                        |field| condition_of(field, arm.equals.as_deref()).0,
                    );
                    if n == 0 {
                        out.open(format!("if {cond} {{"));
                    } else {
                        out.close_open(format!("}} else if {cond} {{"));
                    }
                    turns_code(out, &arm.turns, fields, runtime, renderers);
                }
                if arms.is_empty() {
                    turns_code(out, otherwise, fields, runtime, renderers);
                    continue;
                }
                if !otherwise.is_empty() {
                    out.close_open("} else {");
                    turns_code(out, otherwise, fields, runtime, renderers);
                }
                out.close("}");
            }
        }
    }
}

/// `__TURNS` and `__MESSAGES`: the conversation as the runtime's
/// `render_turns` walks it.
pub(super) fn table_consts(
    out: &mut Source,
    conversation: &Conversation,
    vars: &[VarInfo],
    runtime: &str,
) {
    let table = turn_steps(conversation, vars);
    let steps_code: Vec<String> = table
        .steps
        .iter()
        .map(|step| match *step {
            TurnStep::M(k) => format!("__p::TurnStep::M({k})"),
            TurnStep::H(i) => format!("__p::TurnStep::H({i})"),
            TurnStep::I(i, equals, else_at) => format!("__p::TurnStep::I({i},{equals},{else_at})"),
            TurnStep::E(end_at) => format!("__p::TurnStep::E({end_at})"),
        })
        .collect();
    out.line("#[doc(hidden)]");
    out.line(format!(
        "pub const __TURNS: &'static [__p::TurnStep] = &[{}];",
        steps_code.join(",")
    ));
    out.line("#[doc(hidden)]");
    out.open("pub const __MESSAGES: &'static [__p::MessagePart] = &[");
    for message in &table.messages {
        out.line(format!(
            "__p::MessagePart {{ role: {}, name: {}, part: {} }},",
            role_path(message.role, runtime),
            name_lit(message.name),
            part_literal(message.program, vars)
        ));
    }
    out.close("];");
}
