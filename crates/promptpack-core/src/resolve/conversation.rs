//! A conversation's file (`messages.md`) resolved into its turns: each role
//! block's body spliced as a part is, each `{{#if}}` around whole messages
//! a branch, the history placed once. Whatever would cut a message (a tag
//! inside another, an `{{#if}}` that opens on one side of a tag and closes
//! on the other) is refused here, with where.

use super::expand::PromptBuilder;
use super::graph::SnippetGraph;
use super::limits::MAX_TURNS;
use super::snippets::Parse;
use super::vars::Usage;
use crate::answer::check_arguments;
use crate::conversation::{Arm, Turn};
use crate::error::{Diagnostic, ErrorCode};
use crate::message::Role;
use crate::program::{Op, Program};
use crate::schema::Tool;
use crate::source_file::{SourceFile, Span};
use crate::syntax::{Condition, Item, MessageTag, Parsed};

/// The turns of `items`, the parsed conversation `file`; `parse` reads a
/// snippet of whole turns included between its messages; `tools` are the
/// prompt's, which its example calls name.
pub(super) fn resolve_turns(
    file: &SourceFile,
    items: &[Item],
    builder: &mut PromptBuilder,
    graph: &SnippetGraph<'_, '_>,
    parse: Parse<'_>,
    tools: &[Tool],
) -> Result<Vec<Turn>, Box<Diagnostic>> {
    let mut messages = 0;
    let mut walker = Walker {
        file,
        builder,
        graph,
        parse,
        tools,
        history: None,
        messages: &mut messages,
    };
    walker.check_nesting(items)?;
    walker.turns(items)
}

/// A block open while a conversation's items are checked.
enum Open<'i> {
    If,
    Message(&'i MessageTag),
}

/// One file of a conversation being walked (`messages.md`, or a snippet
/// of turns it includes), where its history was placed and how many
/// messages the conversation has so far.
struct Walker<'w, 'a, 'b> {
    file: &'w SourceFile,
    builder: &'w mut PromptBuilder,
    graph: &'w SnippetGraph<'a, 'b>,
    parse: Parse<'w>,
    /// The prompt's tools, which an example call must name.
    tools: &'w [Tool],
    history: Option<Span>,
    messages: &'w mut usize,
}

impl Walker<'_, '_, '_> {
    /// Refuses role blocks and `{{#if}}`s that cut each other: each closes
    /// inside what it opened in, and no message opens inside another.
    fn check_nesting(&self, items: &[Item]) -> Result<(), Box<Diagnostic>> {
        let mut open: Vec<Open<'_>> = Vec::new();
        for item in items {
            match item {
                Item::If(_) => open.push(Open::If),
                Item::ElseIf(condition) => {
                    if let Some(Open::Message(tag)) = open.last() {
                        return Err(self.crossing(condition.name.span, tag));
                    }
                }
                Item::Else(span) => {
                    if let Some(Open::Message(tag)) = open.last() {
                        return Err(self.crossing(*span, tag));
                    }
                }
                Item::EndIf(span) => match open.pop() {
                    Some(Open::Message(tag)) => return Err(self.crossing(*span, tag)),
                    Some(Open::If) | None => {}
                },
                Item::OpenMessage(tag) => {
                    if let Some(outer) = open.iter().rev().find_map(|o| match o {
                        Open::Message(outer) => Some(*outer),
                        Open::If => None,
                    }) {
                        return Err(self.invalid(
                            tag.span,
                            format!(
                                "{} opens a message inside the `{}` message opened at {}",
                                self.file.slice(tag.span),
                                outer.role,
                                self.place(outer.span)
                            ),
                            format!("close the `{}` message first", outer.role),
                        ));
                    }
                    open.push(Open::Message(tag));
                }
                Item::CloseMessage(role, span) => match open.pop() {
                    Some(Open::Message(tag)) if tag.role == *role => {}
                    Some(Open::Message(tag)) => {
                        return Err(self.invalid(
                            *span,
                            format!(
                                "{} closes the `{}` message opened at {}",
                                self.file.slice(*span),
                                tag.role,
                                self.place(tag.span)
                            ),
                            format!("close it with its own role's tag, `/{}`", tag.role),
                        ));
                    }
                    Some(Open::If) => {
                        return Err(self.invalid(
                            *span,
                            format!(
                                "{} ends the message while an `{{{{#if}}}}` opened inside it is still open",
                                self.file.slice(*span)
                            ),
                            "close the block inside the message, before its closing tag",
                        ));
                    }
                    None => {
                        return Err(self.invalid(
                            *span,
                            format!("{} closes no open `{role}` message", self.file.slice(*span)),
                            "open the message first with its role tag",
                        ));
                    }
                },
                Item::Text(_) | Item::Var(_) | Item::Snippet(_) | Item::Schema(_) => {}
            }
        }
        match open.into_iter().find_map(|o| match o {
            Open::Message(tag) => Some(tag),
            Open::If => None,
        }) {
            Some(tag) => Err(Box::new(
                Diagnostic::new(
                    ErrorCode::UnclosedBlock,
                    format!("{} is never closed", self.file.slice(tag.span)),
                )
                .at(self.file.location(tag.span))
                .with_help(format!(
                    "add `/{}` in its tag form after the message",
                    tag.role
                )),
            )),
            None => Ok(()),
        }
    }

    fn turns(&mut self, items: &[Item]) -> Result<Vec<Turn>, Box<Diagnostic>> {
        let mut turns = Vec::new();
        let mut at = 0;
        while let Some(item) = items.get(at) {
            match item {
                Item::Text(span) => {
                    self.whitespace(*span)?;
                    at += 1;
                }
                Item::OpenMessage(tag) => {
                    let end = self.message_end(items, at)?;
                    let body = Parsed {
                        items: items[at + 1..end].to_vec(),
                    };
                    *self.messages += 1;
                    if *self.messages > MAX_TURNS {
                        return Err(self.invalid(
                            tag.span,
                            format!("the conversation passes {MAX_TURNS} messages here"),
                            "snippets of turns that include each other multiply: include fewer",
                        ));
                    }
                    let program = self.builder.expand(self.file, &body, self.graph)?;
                    if tag.role == Role::Call {
                        self.check_call(tag, &body.items, &program)?;
                    }
                    turns.push(Turn::Message {
                        role: tag.role,
                        name: tag.name.clone(),
                        program,
                    });
                    at = end + 1;
                }
                Item::Var(name) => {
                    if let Some(first) = self.history {
                        return Err(self.invalid(
                            name.span,
                            format!(
                                "{} places the history a second time (first at {})",
                                self.file.slice(name.span),
                                self.place(first)
                            ),
                            "a conversation has one history: keep one placeholder",
                        ));
                    }
                    self.history = Some(name.span);
                    let var = self.builder.vars.var(self.file, name, Usage::History);
                    turns.push(Turn::History(var));
                    at += 1;
                }
                Item::If(condition) => {
                    let (branch, next) = self.branch(items, at, condition)?;
                    turns.push(branch);
                    at = next;
                }
                Item::Snippet(include) => {
                    turns.extend(self.snippet_turns(include)?);
                    at += 1;
                }
                Item::Schema(span) => {
                    return Err(Box::new(
                        Diagnostic::new(
                            ErrorCode::TextOutsideMessage,
                            format!(
                                "{} stands between messages: the response it prints would belong to no message",
                                self.file.slice(*span)
                            ),
                        )
                        .at(self.file.location(*span))
                        .with_help("put it inside the role block of the message that asks for the answer, `{{#user}}…{{/user}}`"),
                    ));
                }
                Item::CloseMessage(role, span) => {
                    return Err(self.invalid(
                        *span,
                        format!("{} closes no open `{role}` message", self.file.slice(*span)),
                        "open the message first with its role tag",
                    ));
                }
                Item::ElseIf(condition) => return Err(self.stray(condition.name.span)),
                Item::Else(span) | Item::EndIf(span) => return Err(self.stray(*span)),
            }
        }
        Ok(turns)
    }

    /// The turns of the snippet `include` names, between messages: a
    /// snippet of whole turns, read as a conversation is. A snippet of text
    /// there is refused as text outside a message, at the include.
    fn snippet_turns(
        &mut self,
        include: &crate::syntax::Include,
    ) -> Result<Vec<Turn>, Box<Diagnostic>> {
        let span = include.name.span;
        let whole_snippet = self.graph.find(include).filter(|t| t.section.is_none());
        let Some(target) = whole_snippet else {
            return Err(self.invalid(
                span,
                format!(
                    "{} includes a section between messages, where only whole turns go",
                    self.file.slice(span)
                ),
                "include the whole snippet of turns, or the section inside a role block",
            ));
        };
        let (file, _) = self.graph.node(target);
        let parsed = (self.parse)(file).map_err(|errors| match errors.into_iter().next() {
            Some(first) => Box::new(first),
            None => self.stray(span),
        })?;
        if !parsed
            .items
            .iter()
            .any(|item| matches!(item, Item::OpenMessage(_)))
        {
            return Err(Box::new(
                Diagnostic::new(
                    ErrorCode::TextOutsideMessage,
                    format!(
                        "{} stands between messages, but snippet `{}` holds no role block: its text would belong to no message",
                        self.file.slice(span),
                        include.name.name
                    ),
                )
                .at(self.file.location(span))
                .with_help("include a snippet of text inside a role block, `{{#user}}…{{/user}}`"),
            ));
        }
        self.builder.snippets.insert(include.name.name.clone());
        let mut inner = Walker {
            file,
            builder: &mut *self.builder,
            graph: self.graph,
            parse: self.parse,
            tools: self.tools,
            history: self.history,
            messages: &mut *self.messages,
        };
        inner.check_nesting(&parsed.items)?;
        let turns = inner.turns(&parsed.items)?;
        self.history = inner.history;
        Ok(turns)
    }

    /// Where the message opened at `start` closes: its closing tag (the
    /// nesting was checked, so the first one).
    fn message_end(&self, items: &[Item], start: usize) -> Result<usize, Box<Diagnostic>> {
        items
            .iter()
            .enumerate()
            .skip(start + 1)
            .find_map(|(at, item)| matches!(item, Item::CloseMessage(..)).then_some(at))
            .ok_or_else(|| self.stray(item_span(&items[start])))
    }

    /// The branch `{{#if}}` at `start` opens, whose arms hold whole
    /// messages, and the index after its `{{/if}}`.
    fn branch(
        &mut self,
        items: &[Item],
        start: usize,
        first: &Condition,
    ) -> Result<(Turn, usize), Box<Diagnostic>> {
        // Each tested arm's condition and where its items start; then where
        // the `{{else}}`'s start, if there is one.
        let mut tests: Vec<(&Condition, usize, usize)> = Vec::new();
        let mut current = (Some(first), start + 1);
        let mut depth = 0usize;
        for (at, item) in items.iter().enumerate().skip(start + 1) {
            match item {
                Item::If(_) => depth += 1,
                Item::EndIf(_) if depth > 0 => depth -= 1,
                Item::ElseIf(condition) if depth == 0 => {
                    if let (Some(test), from) = current {
                        tests.push((test, from, at));
                    }
                    current = (Some(condition), at + 1);
                }
                Item::Else(_) if depth == 0 => {
                    if let (Some(test), from) = current {
                        tests.push((test, from, at));
                    }
                    current = (None, at + 1);
                }
                Item::EndIf(_) => {
                    let otherwise = match current {
                        (Some(test), from) => {
                            tests.push((test, from, at));
                            Vec::new()
                        }
                        (None, from) => self.turns(&items[from..at])?,
                    };
                    let mut arms = Vec::with_capacity(tests.len());
                    for (condition, from, to) in tests {
                        let usage = match &condition.equals {
                            Some(value) => Usage::Equals(value),
                            None => Usage::Condition,
                        };
                        let var = self.builder.vars.var(self.file, &condition.name, usage);
                        arms.push(Arm {
                            var,
                            equals: condition.equals.clone(),
                            turns: self.turns(&items[from..to])?,
                        });
                    }
                    return Ok((Turn::Branch { arms, otherwise }, at + 1));
                }
                _ => {}
            }
        }
        // The parser balances every `{{#if}}`: no conversation gets here.
        Err(self.stray(first.name.span))
    }

    /// Refuses an example call (`{{#call name}}`) of a tool the prompt does
    /// not declare, or whose arguments (`program`, its body `items`
    /// rendered) are not literal JSON that fits the tool's parameters:
    /// what a build can check, it checks, at the place in the file.
    fn check_call(
        &self,
        tag: &MessageTag,
        items: &[Item],
        program: &Program,
    ) -> Result<(), Box<Diagnostic>> {
        let name = tag.name.as_deref().unwrap_or_default();
        let Some(tool) = self.tools.iter().find(|tool| tool.name == name) else {
            let declared: Vec<String> = self
                .tools
                .iter()
                .map(|tool| format!("`{}`", tool.name))
                .collect();
            let help = if declared.is_empty() {
                "declare the tool under `tools:` in the prompt's front matter".to_string()
            } else {
                format!("the prompt declares {}", declared.join(", "))
            };
            return Err(self.invalid_call(
                tag.span,
                format!(
                    "{} calls tool `{name}`, which the prompt does not declare",
                    self.file.slice(tag.span)
                ),
                help,
            ));
        };
        if !program.ops.iter().all(|op| matches!(op, Op::Text { .. })) {
            let at = items
                .iter()
                .find(|item| !matches!(item, Item::Text(_)))
                .map_or(tag.span, item_span);
            return Err(self.invalid_call(
                at,
                format!(
                    "the arguments of the example call of `{name}` hold {}: they are literal JSON, checked against the tool's parameters when the prompt is built",
                    self.file.slice(at)
                ),
                "write the arguments out as JSON",
            ));
        }
        let arguments = program.text.as_str();
        let Err((_, problems)) = check_arguments(arguments, tool) else {
            return Ok(());
        };
        // Where the arguments stand in the file: the body's text holds
        // them, unless a snippet brought them.
        let body = match (items.first(), items.last()) {
            (Some(Item::Text(first)), Some(Item::Text(last))) => Some(Span {
                start: first.start,
                end: last.end,
            }),
            _ => None,
        };
        let offset = body.and_then(|body| {
            self.file
                .slice(body)
                .find(arguments)
                .map(|found| body.start + found)
        });
        let first = problems.into_iter().next();
        let (span, message, help) = match (first, offset) {
            (Some(problem), Some(offset)) => (
                Span {
                    start: offset + problem.span.start,
                    end: offset + problem.span.end,
                },
                problem.message,
                problem.help,
            ),
            (Some(problem), None) => (tag.span, problem.message, problem.help),
            (None, _) => (tag.span, "the arguments do not fit".to_string(), None),
        };
        Err(self.invalid_call(
            span,
            format!("the example call of `{name}`: {message}"),
            help.unwrap_or_else(|| {
                format!(
                    "write arguments that `{name}`'s parameters take, as a model would send them"
                )
            }),
        ))
    }

    fn invalid_call(
        &self,
        span: Span,
        message: String,
        help: impl Into<String>,
    ) -> Box<Diagnostic> {
        self.refused(ErrorCode::InvalidCall, span, message, help)
    }

    /// Refuses text between messages that is not whitespace.
    fn whitespace(&self, span: Span) -> Result<(), Box<Diagnostic>> {
        let text = self.file.slice(span);
        let Some(offset) = text.find(|c: char| !c.is_whitespace()) else {
            return Ok(());
        };
        let start = span.start + offset;
        let line_end = text[offset..].find('\n').map_or(span.end, |n| start + n);
        let shown: String = self
            .file
            .slice(Span {
                start,
                end: line_end,
            })
            .chars()
            .take(40)
            .collect();
        Err(Box::new(
            Diagnostic::new(
                ErrorCode::TextOutsideMessage,
                format!("text between messages belongs to no message: {shown:?}"),
            )
            .at(self.file.location(Span {
                start,
                end: line_end,
            }))
            .with_help(
                "put it inside a role block (`{{#user}}`, `{{#assistant}}`), or in system.md",
            ),
        ))
    }

    /// `line L, column C` of `span`, for a message that points at a second
    /// place.
    fn place(&self, span: Span) -> String {
        let location = self.file.location(span);
        format!("line {}, column {}", location.line(), location.column())
    }

    fn crossing(&self, span: Span, tag: &MessageTag) -> Box<Diagnostic> {
        self.invalid(
            span,
            format!(
                "{} belongs to an `{{{{#if}}}}` opened outside the `{}` message opened at {}",
                self.file.slice(span),
                tag.role,
                self.place(tag.span)
            ),
            "an `{{#if}}` holds whole messages, or lies inside one: close it on the side it opened",
        )
    }

    fn stray(&self, span: Span) -> Box<Diagnostic> {
        self.invalid(
            span,
            format!("{} has no block to belong to here", self.file.slice(span)),
            "open the block with `{{#if …}}` before it",
        )
    }

    fn invalid(&self, span: Span, message: String, help: impl Into<String>) -> Box<Diagnostic> {
        self.refused(ErrorCode::InvalidMessage, span, message, help)
    }

    /// A `code` error at `span` of this file.
    fn refused(
        &self,
        code: ErrorCode,
        span: Span,
        message: String,
        help: impl Into<String>,
    ) -> Box<Diagnostic> {
        Box::new(
            Diagnostic::new(code, message)
                .at(self.file.location(span))
                .with_help(help),
        )
    }
}

/// Where an item stands in its file.
fn item_span(item: &Item) -> Span {
    match item {
        Item::Text(span)
        | Item::Else(span)
        | Item::EndIf(span)
        | Item::CloseMessage(_, span)
        | Item::Schema(span) => *span,
        Item::Var(name) => name.span,
        Item::Snippet(include) => include.name.span,
        Item::If(condition) | Item::ElseIf(condition) => condition.name.span,
        Item::OpenMessage(tag) => tag.span,
    }
}
