//! The lints of a conversation's file (`messages.md`): a message with
//! nothing in it, a conversation that ends with the assistant's turn, an
//! example call and tool result that do not pair, and (for `near_miss`) a
//! role tag misspelled.

use super::lint;
use crate::error::{Diagnostic, ErrorCode};
use crate::message::Role;
use crate::similar::nearest_in;
use crate::source_file::SourceFile;
use crate::syntax::{Delimiters, Item, MessageTag, parse_conversation};

/// Whether `file` is a conversation's file, where role tags are tokens.
pub(super) fn is_conversation_file(file: &SourceFile) -> bool {
    file.path() == "messages.md" || file.path().ends_with("/messages.md")
}

/// Whether role tags in `file` may be tokens: in a conversation's file,
/// and in a snippet, which may hold whole turns for one.
pub(super) fn may_hold_role_tags(file: &SourceFile) -> bool {
    is_conversation_file(file)
        || file.path().starts_with("snippets/")
        || file.path().contains("/snippets/")
}

/// The role tag `inner` (a block's inside, `#asistant`, `/usr`) was likely
/// meant to be, when it is one edit or two from one.
pub(super) fn role_typo(inner: &str) -> Option<String> {
    let (sign, rest) = inner.split_at_checked(1)?;
    if !matches!(sign, "#" | "/") {
        return None;
    }
    let (head, tail) = rest
        .split_once(' ')
        .map_or((rest, None), |(h, t)| (h, Some(t)));
    let roles: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
    let role = *nearest_in(head, &roles, 2).first()?;
    Some(match tail {
        Some(tail) => format!("{sign}{role} {tail}"),
        None => format!("{sign}{role}"),
    })
}

/// `empty_message` for each role block with only whitespace in it,
/// `ends_with_assistant` when the last thing the file sends is an
/// assistant's message, and `unpaired_call` for a call or a tool result
/// without its other half. A file that does not parse has its errors, not
/// these.
pub(super) fn conversation_lints(
    file: &SourceFile,
    delims: &Delimiters,
    lints: &mut Vec<Diagnostic>,
) {
    let Ok(parsed) = parse_conversation(file, delims) else {
        return;
    };
    let items = &parsed.items;
    // The last message or history at the top level, in file order.
    let mut last_turn: Option<(Role, usize)> = None;
    let mut depth = 0usize;
    let mut calls = CallPairs::default();
    for (at, item) in items.iter().enumerate() {
        match item {
            Item::OpenMessage(tag) => {
                calls.message(file, tag, lints);
                let body = items[at + 1..]
                    .iter()
                    .take_while(|i| !matches!(i, Item::CloseMessage(..)));
                let mut empty = true;
                for inside in body {
                    if !matches!(inside, Item::Text(span) if file.slice(*span).trim().is_empty()) {
                        empty = false;
                        break;
                    }
                }
                if empty {
                    lints.push(
                        lint(
                            ErrorCode::EmptyMessage,
                            format!("this `{}` message has nothing in it", tag.role),
                            file.location(tag.span),
                        )
                        .with_help("write the message, or remove its role block"),
                    );
                }
                last_turn = Some((tag.role, at));
                depth += 1;
            }
            Item::CloseMessage(..) => depth = depth.saturating_sub(1),
            Item::Var(_) if depth == 0 => {
                calls.unanswered(file, lints);
                last_turn = None;
            }
            Item::ElseIf(_) | Item::Else(_) | Item::EndIf(_) if depth == 0 => {
                calls.unanswered(file, lints);
            }
            _ => {}
        }
    }
    calls.unanswered(file, lints);
    if let Some((Role::Assistant, at)) = last_turn
        && let Some(Item::OpenMessage(tag)) = items.get(at)
    {
        lints.push(
            lint(
                ErrorCode::EndsWithAssistant,
                "the conversation ends with the assistant's turn: the model would be asked to continue its own message",
                file.location(tag.span),
            )
            .with_help("end with the user's message (or the history), or remove this one"),
        );
    }
}

/// The example calls of a conversation not answered yet, in file order:
/// each tool result answers the first call of its tool before it, as the
/// adapters pair them. Calls are answered before anything else is said
/// (a message of another role, the history, the end of an `{{#if}}`'s
/// arm or of the file).
#[derive(Default)]
struct CallPairs<'t> {
    open: Vec<&'t MessageTag>,
}

impl<'t> CallPairs<'t> {
    /// Takes the message `tag` opens: a call waits for its result, a
    /// result answers its call (or is linted), anything else ends the
    /// wait.
    fn message(&mut self, file: &SourceFile, tag: &'t MessageTag, lints: &mut Vec<Diagnostic>) {
        match tag.role {
            Role::Call => self.open.push(tag),
            Role::Tool => {
                let answered = self.open.iter().position(|call| call.name == tag.name);
                match answered {
                    Some(at) => {
                        self.open.remove(at);
                    }
                    None => lints.push(
                        lint(
                            ErrorCode::UnpairedCall,
                            format!(
                                "this result of `{}` answers no call: chat APIs refuse a tool result without the assistant's call before it",
                                tag.name.as_deref().unwrap_or_default()
                            ),
                            file.location(tag.span),
                        )
                        .with_help(format!(
                            "write the call before it: `{{{{#call {}}}}}` with the arguments as JSON, then `{{{{/call}}}}`",
                            tag.name.as_deref().unwrap_or_default()
                        )),
                    ),
                }
            }
            _ => self.unanswered(file, lints),
        }
    }

    /// Lints every call still waiting: nothing answered it.
    fn unanswered(&mut self, file: &SourceFile, lints: &mut Vec<Diagnostic>) {
        for call in self.open.drain(..) {
            lints.push(
                lint(
                    ErrorCode::UnpairedCall,
                    format!(
                        "this call of `{}` has no result after it: chat APIs refuse a call that no tool result answers",
                        call.name.as_deref().unwrap_or_default()
                    ),
                    file.location(call.span),
                )
                .with_help(format!(
                    "write its result right after it: `{{{{#tool {}}}}}`…`{{{{/tool}}}}`",
                    call.name.as_deref().unwrap_or_default()
                )),
            );
        }
    }
}
