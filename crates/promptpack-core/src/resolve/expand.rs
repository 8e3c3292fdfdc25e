//! Splicing one template part: its items walked, and each snippet (or
//! section) it includes walked in its place on its first splice, copied on
//! every other; variables numbered and blocks turned into jumps on the way.

use super::graph::{SnippetGraph, Target};
use super::limits::{past_limits, too_large, too_large_file};
use super::splice::{Fragment, OpenIf, close_block, push_text, splice_again, start_else};
use super::vars::{Chain, Usage, VarTable, chain_test};
use crate::error::{Diagnostic, ErrorCode};
use crate::program::{Op, Program};
use crate::source_file::{SourceFile, Span};
use crate::syntax::{Item, Parsed};
use std::collections::{BTreeSet, HashMap};

/// Accumulates one prompt's variable table and snippet set while its parts
/// are expanded.
#[derive(Default)]
pub(super) struct PromptBuilder {
    pub(super) vars: VarTable,
    /// Every snippet spliced, by name.
    pub(super) snippets: BTreeSet<String>,
    /// [`Counted::steps`](super::Counted::steps) so far.
    pub(super) steps: u64,
    /// The prompt's id, for what a `{{schema:response}}` without a
    /// response says.
    pub(super) prompt: String,
    /// The text `{{schema:response}}` becomes: the compact description of
    /// the prompt's declared response, when it declares one; `Err` when
    /// that text would hold a token (a description written with the
    /// delimiters), which printed literally would be read back as one.
    pub(super) response: Option<Result<String, ()>>,
}

/// A file being walked while a part is spliced: the items left, and for a
/// snippet's (or section's) first splice, its target and where its
/// [`Fragment`] starts.
struct Walk<'a> {
    file: &'a SourceFile,
    items: &'a [Item],
    first_splice: Option<(Target<'a>, usize, usize)>,
}

impl PromptBuilder {
    /// Splices snippets into one part and compiles it. The snippet graph must
    /// have been checked: every include exists, parses and has no cycle.
    pub(super) fn expand(
        &mut self,
        file: &SourceFile,
        parsed: &Parsed,
        snippets: &SnippetGraph<'_, '_>,
    ) -> Result<Program, Box<Diagnostic>> {
        let mut program = Program::default();
        let mut open_ifs: Vec<OpenIf> = Vec::new();
        // The `{{#if}}` chains open, for what each compared value renders.
        // A snippet spliced again is copied, not walked: its blocks were
        // recorded at its first splice.
        let mut chains: Vec<Chain> = Vec::new();
        // The snippets spliced into this part so far: what a splice added
        // depends on the program it went into, so each part has its own.
        let mut fragments: HashMap<Target<'_>, Fragment> = HashMap::new();
        let mut stack = vec![Walk {
            file,
            items: &parsed.items,
            first_splice: None,
        }];
        while let Some(walk) = stack.last_mut() {
            let Some((item, rest)) = walk.items.split_first() else {
                if let Some((target, ops, text)) = walk.first_splice {
                    let fragment = Fragment {
                        ops: ops..program.ops.len(),
                        text: text..program.text.len(),
                    };
                    fragments.insert(target, fragment);
                }
                stack.pop();
                continue;
            };
            walk.items = rest;
            self.steps += 1;
            let file = walk.file;
            match item {
                Item::Text(span) => push_text(&mut program, file.slice(*span)),
                Item::Var(name) => {
                    let index = self.vars.var(file, name, Usage::Value);
                    program.ops.push(Op::Var(index));
                }
                Item::If(condition) => {
                    let op = self.vars.test(file, condition, &mut program);
                    chains.push(Chain {
                        at: file.location(condition.name.span),
                        tests: vec![chain_test(file, condition, &op)],
                        else_tag: None,
                    });
                    open_ifs.push(OpenIf {
                        at: program.ops.len(),
                        from_else_if: false,
                    });
                    program.ops.push(op);
                }
                Item::ElseIf(condition) => {
                    // `{{else}}{{#if …}}`, closed by the same `{{/if}}`.
                    start_else(&mut program.ops, &open_ifs);
                    let op = self.vars.test(file, condition, &mut program);
                    if let Some(chain) = chains.last_mut() {
                        chain.tests.push(chain_test(file, condition, &op));
                    }
                    open_ifs.push(OpenIf {
                        at: program.ops.len(),
                        from_else_if: true,
                    });
                    program.ops.push(op);
                }
                Item::Else(span) => {
                    if let Some(chain) = chains.last_mut() {
                        let tag = file.slice(*span).to_string();
                        chain.else_tag = Some((tag, file.location(*span)));
                    }
                    start_else(&mut program.ops, &open_ifs);
                }
                Item::EndIf(_) => {
                    if let Some(chain) = chains.pop() {
                        self.vars.record_chain(chain);
                    }
                    while let Some(open) = open_ifs.pop() {
                        let here = program.ops.len();
                        close_block(&mut program.ops, open.at, here);
                        program.ops.push(Op::EndIf);
                        if !open.from_else_if {
                            break;
                        }
                    }
                }
                // A conversation hands the resolver each message's body
                // alone, and parts have no role tags: none reaches here.
                Item::OpenMessage(_) | Item::CloseMessage(..) => {}
                Item::Schema(span) => {
                    let described = match &self.response {
                        Some(Ok(described)) => described,
                        Some(Err(())) => {
                            return Err(Box::new(response_holds_token(file, *span, &self.prompt)));
                        }
                        None => return Err(Box::new(no_response(file, *span, &self.prompt))),
                    };
                    let adds_text = program.text.len().saturating_add(described.len());
                    if past_limits(adds_text, program.ops.len()) {
                        return Err(Box::new(too_large(file, *span)));
                    }
                    push_text(&mut program, described);
                }
                Item::Snippet(include) => {
                    let name = &include.name;
                    // Snippets that include others more than once multiply:
                    // a short chain can expand past any memory. Stop there.
                    if past_limits(program.text.len(), program.ops.len()) {
                        return Err(Box::new(too_large(file, name.span)));
                    }
                    let Some(target) = snippets.find(include) else {
                        continue;
                    };
                    if snippets.holds_turns(target.name) {
                        return Err(Box::new(
                            Diagnostic::new(
                                crate::error::ErrorCode::InvalidMessage,
                                format!(
                                    "{} includes snippet `{}`, which holds whole turns (role blocks), into a text",
                                    file.slice(name.span),
                                    name.name
                                ),
                            )
                            .at(file.location(name.span))
                            .with_help(
                                "include a snippet of turns between the messages of messages.md, or make it a snippet of text",
                            ),
                        ));
                    }
                    if let Some(fragment) = fragments.get(&target) {
                        let adds_text = program.text.len().saturating_add(fragment.text.len());
                        let adds_ops = program.ops.len().saturating_add(fragment.ops.len());
                        if past_limits(adds_text, adds_ops) {
                            return Err(Box::new(too_large(file, name.span)));
                        }
                        self.steps += fragment.ops.len() as u64;
                        splice_again(&mut program, fragment);
                    } else {
                        self.snippets.insert(name.name.clone());
                        if let (file, Some(parsed)) = snippets.node(target) {
                            stack.push(Walk {
                                file,
                                items: &parsed.items,
                                first_splice: Some((target, program.ops.len(), program.text.len())),
                            });
                        }
                    }
                }
            }
        }
        if past_limits(program.text.len(), program.ops.len()) {
            return Err(Box::new(too_large_file(file)));
        }
        program.text.shrink_to_fit();
        program.ops.shrink_to_fit();
        program.literals.shrink_to_fit();
        Ok(program)
    }
}

/// `invalid_schema` at a `{{schema:response}}` of a prompt that declares no
/// response: there is nothing to print. The prompt is named, since in a
/// snippet the token prints the response of each prompt that includes it.
fn no_response(file: &SourceFile, span: Span, prompt: &str) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::InvalidSchema,
        format!(
            "{} prints the response of prompt `{prompt}`, but it declares none",
            file.slice(span)
        ),
    )
    .at(file.location(span))
    .with_help(
        "declare the answer's shape in the prompt's front matter, one field a line under `response:` \
         (`response:`, then `  reply: string, what the user reads`), or remove the token",
    )
}

/// `invalid_schema` at a `{{schema:response}}` whose response's description
/// would hold a token: printed literally into the prompt, it would be read
/// as one wherever the prompt's text is read again.
fn response_holds_token(file: &SourceFile, span: Span, prompt: &str) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::InvalidSchema,
        format!(
            "{} would print a token: a description or enum value in the response of prompt `{prompt}` holds one",
            file.slice(span)
        ),
    )
    .at(file.location(span))
    .with_help(
        "the response is printed as literal text: write its descriptions and values without the template's delimiters",
    )
}
