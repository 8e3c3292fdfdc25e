//! One template resolved: its parts' front matter read and merged, their
//! includes checked against the snippet graph, the parts spliced, the
//! prompt hashed and held to its declared contract.

use super::ResolvedPrompt;
use super::conversation::resolve_turns;
use super::expand::PromptBuilder;
use super::graph::{SnippetGraph, snippet_refs};
use super::snippets::Parse;
use crate::conversation::{Conversation, Turn};
use crate::error::{Diagnostic, ErrorCode};
use crate::front_matter::{DeclaredVar, FileRole, FrontMatter, apply_contract, read_front_matter};
use crate::program::VarKind;
use crate::program::{StableHasher, hash_program};
use crate::sources::TemplateSource;
use crate::syntax::holds_token;

/// How a template's files are parsed: its parts, and a conversation's
/// `messages.md`, whose role tags are tokens.
#[derive(Clone, Copy)]
pub(super) struct Parsers<'p> {
    pub(super) part: Parse<'p>,
    pub(super) conversation: Parse<'p>,
}

/// Template `t` resolved, when it resolved (every problem is in `errors`),
/// and the steps its splicing took.
pub(super) fn resolve_template(
    t: &TemplateSource,
    graph: &mut SnippetGraph<'_, '_>,
    parsers: Parsers<'_>,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> (Option<ResolvedPrompt>, u64) {
    let mut builder = PromptBuilder::default();
    let mut ok = true;
    let mut parts = Vec::new();
    let mut front_matter = FrontMatter::default();
    let mut conversation = None;
    if let (Some(messages), Some(user)) = (&t.messages, &t.user) {
        errors.push(
            Diagnostic::new(
                ErrorCode::InvalidMessage,
                format!(
                    "{} and {} both hold the prompt's turns",
                    user.path(),
                    messages.path()
                ),
            )
            .at(crate::error::Location::file(user.path()))
            .with_help("a conversation's user messages are `{{#user}}` blocks of messages.md: move user.md's text into one"),
        );
        return (None, 0);
    }
    let parse = parsers.part;
    // Every file's front matter is read before any part is spliced: a
    // `{{schema:response}}` in system.md prints a response user.md may
    // declare.
    let mut read_files = Vec::new();
    for file in std::iter::once(&t.system)
        .chain(t.user.as_ref())
        .chain(t.messages.as_ref())
    {
        let is_conversation = t.messages.as_ref().is_some_and(|m| std::ptr::eq(m, file));
        let read = read_front_matter(file, FileRole::Template);
        ok &= read.errors.is_empty();
        errors.extend(read.errors);
        warnings.extend(read.warnings);
        front_matter.merge(read.front_matter, errors);
        let parse = if is_conversation {
            parsers.conversation
        } else {
            parse
        };
        let parsed = match parse(file) {
            Ok(p) => p,
            Err(e) => {
                errors.extend(e);
                ok = false;
                continue;
            }
        };
        for include in snippet_refs(&parsed) {
            // A problem of what it includes is reported once, however
            // many includes reach it.
            if !graph.usable(file, include, parsers.part, errors) {
                ok = false;
            }
        }
        read_files.push((file, parsed, is_conversation));
    }
    builder.prompt = t.id.clone();
    builder.response = front_matter.response.as_ref().map(|r| {
        let described = r.describe();
        // A description or enum value that holds a token would print one:
        // text a catalog prints back into a template and reads again.
        if holds_token(&described, graph.delims()) {
            Err(())
        } else {
            Ok(described)
        }
    });
    for (file, parsed, is_conversation) in &read_files {
        if !ok {
            break;
        }
        if *is_conversation {
            match resolve_turns(
                file,
                &parsed.items,
                &mut builder,
                graph,
                parsers.conversation,
                &front_matter.tools,
            ) {
                Ok(turns) => conversation = Some(Conversation { turns }),
                Err(e) => {
                    errors.push(*e);
                    ok = false;
                }
            }
        } else {
            match builder.expand(file, parsed, graph) {
                Ok(program) => parts.push(program),
                Err(e) => {
                    errors.push(*e);
                    ok = false;
                }
            }
        }
    }
    let steps = builder.steps;
    if !ok {
        return (None, steps);
    }
    let mut parts = parts.into_iter();
    let (Some(system), user) = (parts.next(), parts.next()) else {
        return (None, steps);
    };
    let mut hasher = StableHasher::default();
    hash_program(&mut hasher, &system, builder.vars.list());
    if let Some(user) = &user {
        hasher.write(b"\0user\0");
        hash_program(&mut hasher, user, builder.vars.list());
    }
    if let Some(conversation) = &conversation {
        hasher.write(b"\0messages\0");
        hash_turns(&mut hasher, &conversation.turns, builder.vars.list());
    }
    let mut vars = builder.vars.into_list();
    // Resolved prompts are kept for as long as a library lives: give
    // back the room the buffers grew into (up to half their memory).
    vars.shrink_to_fit();
    let snippet_vars: Vec<&DeclaredVar> = builder
        .snippets
        .iter()
        .filter_map(|name| graph.snippet(name))
        .flat_map(|s| s.front_matter.vars.iter().flatten())
        .collect();
    let errors_before = errors.len();
    let mut found = Vec::new();
    apply_contract(&mut vars, &front_matter, &snippet_vars, errors, &mut found);
    // A snippet's declared choice is checked in every prompt that
    // includes it: its warning, at the snippet, is told once.
    for warning in found {
        if !(warning.code == ErrorCode::UnhandledChoice && warnings.contains(&warning)) {
            warnings.push(warning);
        }
    }
    history_checks(&vars, errors);
    if errors.len() > errors_before {
        return (None, steps);
    }
    // What the request sends beside the text is part of what a hash names
    // (a log line's hash says which tools and answer shape were asked
    // for); written only when declared, so that every other prompt hashes
    // as it always did.
    if !front_matter.tools.is_empty() {
        hasher.write(b"\0tools\0");
        for tool in &front_matter.tools {
            hasher.write(tool.json().to_string().as_bytes());
        }
    }
    if let Some(response) = &front_matter.response {
        hasher.write(b"\0response\0");
        hasher.write(response.json_schema().to_string().as_bytes());
    }
    let prompt = ResolvedPrompt {
        id: t.id.clone(),
        system,
        user,
        system_path: t.system.path().to_string(),
        user_path: t.user.as_ref().map(|u| u.path().to_string()),
        conversation,
        messages_path: t.messages.as_ref().map(|m| m.path().to_string()),
        vars,
        snippets: builder.snippets,
        hash: hasher.finish(),
        front_matter,
    };
    (Some(prompt), steps)
}

/// Hashes a conversation's structure and texts, each turn tagged so that
/// no two structures hash alike by accident of their texts.
fn hash_turns(hasher: &mut StableHasher, turns: &[Turn], vars: &[crate::program::VarInfo]) {
    for turn in turns {
        match turn {
            Turn::Message {
                role,
                name,
                program,
            } => {
                hasher.write(b"\0message\0");
                hasher.write(role.as_str().as_bytes());
                if let Some(name) = name {
                    hasher.write(b"\0name\0");
                    hasher.write(name.as_bytes());
                }
                hash_program(hasher, program, vars);
            }
            Turn::History(var) => {
                hasher.write(b"\0history\0");
                hasher.write(vars.get(*var).map_or("", |v| v.name.as_str()).as_bytes());
            }
            Turn::Branch { arms, otherwise } => {
                hasher.write(b"\0branch\0");
                for arm in arms {
                    hasher.write(b"\0arm\0");
                    hasher.write(vars.get(arm.var).map_or("", |v| v.name.as_str()).as_bytes());
                    if let Some(value) = &arm.equals {
                        hasher.write(b"\0equals\0");
                        hasher.write(value.as_bytes());
                    }
                    hash_turns(hasher, &arm.turns, vars);
                }
                hasher.write(b"\0else\0");
                hash_turns(hasher, otherwise, vars);
                hasher.write(b"\0end\0");
            }
        }
    }
}

/// A history is declared `kind: messages` and used as nothing else: a
/// `{{name}}` between messages is never text by accident, and a history's
/// messages never land inside a message.
fn history_checks(vars: &[crate::program::VarInfo], errors: &mut Vec<Diagnostic>) {
    for var in vars {
        let declared_messages = var.declared == Some(VarKind::Messages);
        if let Some(history) = &var.uses.history
            && !declared_messages
        {
            errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidMessage,
                        format!(
                            "`{}` stands between messages, where the history goes, but is not declared a history",
                            var.name
                        ),
                    )
                    .at(history.clone())
                    .with_help(format!(
                        "declare it in front matter: `vars: {{ {}: {{ kind: messages }} }}`, or put it inside a role block",
                        var.name
                    )),
                );
        }
        if declared_messages || var.uses.history.is_some() {
            let inside = [&var.uses.value, &var.uses.condition, &var.uses.compared]
                .into_iter()
                .flatten()
                .next();
            if let Some(at) = inside {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidMessage,
                        format!(
                            "`{}` is a history (messages), used here as text or a condition",
                            var.name
                        ),
                    )
                    .at(at.clone())
                    .with_help("a history is placed between messages, alone: `{{history}}` on a line of its own"),
                );
            }
        }
    }
}
