//! A resolved program written back as template text: every snippet spliced
//! in, front matter and trimming already applied, tokens in canonical form.
//! It is what a catalog version stores, hashes and diffs as "the text it
//! renders": two versions print the same exactly when they render the same
//! for every set of values.

use crate::conversation::{Conversation, Turn};
use crate::program::{Op, Program, VarInfo};
use crate::syntax::Delimiters;

/// `program` as template text with `delimiters`. Static text is copied as
/// it is; `{{name}}`, `{{#if name}}`, `{{#if name == "value"}}`, `{{else}}`
/// and `{{/if}}` are written without spaces. An `{{else if …}}` prints as
/// the `{{else}}` and nested block it compiles to, which renders the same.
pub fn template_text(program: &Program, vars: &[VarInfo], delimiters: &Delimiters) -> String {
    let (open, close) = (delimiters.open(), delimiters.close());
    let name = |index: usize| vars.get(index).map_or("", |v| v.name.as_str());
    let mut text = String::with_capacity(program.text.len() + program.ops.len() * 8);
    for op in &program.ops {
        match *op {
            Op::Text { start, end } => text.push_str(program.text_of(start, end)),
            Op::Var(index) => {
                text.push_str(open);
                text.push_str(name(index));
                text.push_str(close);
            }
            Op::If { cond, equals, .. } => {
                text.push_str(open);
                text.push_str("#if ");
                text.push_str(name(cond));
                if let Some(literal) = equals.and_then(|i| program.literals.get(i as usize)) {
                    text.push_str(" == \"");
                    text.push_str(literal);
                    text.push('"');
                }
                text.push_str(close);
            }
            Op::Else { .. } => {
                text.push_str(open);
                text.push_str("else");
                text.push_str(close);
            }
            Op::EndIf => {
                text.push_str(open);
                text.push_str("/if");
                text.push_str(close);
            }
        }
    }
    text
}

/// `conversation` as the text of a `messages.md` with `delimiters`: each
/// message as its role block, its tags on lines of their own (which go
/// with the tags when read again, so the content is exactly the lines
/// between), its content as [`template_text`] prints a part; each branch
/// around messages as `{{#if}}`/`{{else}}`/`{{/if}}` on lines of their own
/// (an `{{else if}}` as the nested block it compiles to); the history as
/// `{{name}}` on its line, declared `kind: messages` in a front matter
/// block (a history must be declared). Read again, it resolves to the same
/// turns: what a catalog version stores, hashes and diffs as the
/// conversation it sends.
pub fn conversation_text(
    conversation: &Conversation,
    vars: &[VarInfo],
    delimiters: &Delimiters,
) -> String {
    let mut text = String::new();
    let mut histories = Vec::new();
    histories_of(&conversation.turns, &mut histories);
    if !histories.is_empty() {
        text.push_str("---\nvars:\n");
        for index in histories {
            // Quoted: a name such as `null` or `true` is a string key.
            let name = vars.get(index).map_or("", |v| v.name.as_str());
            text.push_str(&format!("  \"{name}\": {{ kind: messages }}\n"));
        }
        text.push_str("---\n");
    }
    write_turns(&conversation.turns, vars, delimiters, &mut text);
    // Every turn ends its line; the file does not end with an empty one.
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

/// The variables placed as a history, in order, each once.
fn histories_of(turns: &[Turn], out: &mut Vec<usize>) {
    for turn in turns {
        match turn {
            Turn::History(index) if !out.contains(index) => out.push(*index),
            Turn::History(_) | Turn::Message { .. } => {}
            Turn::Branch { arms, otherwise } => {
                for arm in arms {
                    histories_of(&arm.turns, out);
                }
                histories_of(otherwise, out);
            }
        }
    }
}

fn write_turns(turns: &[Turn], vars: &[VarInfo], delimiters: &Delimiters, text: &mut String) {
    let (open, close) = (delimiters.open(), delimiters.close());
    let name = |index: usize| vars.get(index).map_or("", |v| v.name.as_str());
    for turn in turns {
        match turn {
            Turn::Message {
                role,
                name: tool,
                program,
            } => {
                text.push_str(open);
                text.push('#');
                text.push_str(role.as_str());
                if let Some(tool) = tool {
                    text.push(' ');
                    text.push_str(tool);
                }
                text.push_str(close);
                text.push('\n');
                text.push_str(&template_text(program, vars, delimiters));
                text.push('\n');
                text.push_str(open);
                text.push('/');
                text.push_str(role.as_str());
                text.push_str(close);
                text.push('\n');
            }
            Turn::History(index) => {
                text.push_str(open);
                text.push_str(name(*index));
                text.push_str(close);
                text.push('\n');
            }
            Turn::Branch { arms, otherwise } => {
                write_branch(arms, otherwise, vars, delimiters, text);
            }
        }
    }
}

fn write_branch(
    arms: &[crate::conversation::Arm],
    otherwise: &[Turn],
    vars: &[VarInfo],
    delimiters: &Delimiters,
    text: &mut String,
) {
    let (open, close) = (delimiters.open(), delimiters.close());
    let Some((arm, rest)) = arms.split_first() else {
        write_turns(otherwise, vars, delimiters, text);
        return;
    };
    text.push_str(open);
    text.push_str("#if ");
    text.push_str(vars.get(arm.var).map_or("", |v| v.name.as_str()));
    if let Some(literal) = &arm.equals {
        text.push_str(" == \"");
        text.push_str(literal);
        text.push('"');
    }
    text.push_str(close);
    text.push('\n');
    write_turns(&arm.turns, vars, delimiters, text);
    if !rest.is_empty() || !otherwise.is_empty() {
        text.push_str(open);
        text.push_str("else");
        text.push_str(close);
        text.push('\n');
        write_branch(rest, otherwise, vars, delimiters, text);
    }
    text.push_str(open);
    text.push_str("/if");
    text.push_str(close);
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::resolve;
    use crate::sources::Sources;

    fn printed(system: &str, snippets: &[(&str, &str)]) -> String {
        let sources = Sources::from_texts(&[("p", system)], snippets);
        let (prompts, errors) = resolve(
            &sources.templates,
            &sources.snippets,
            &Delimiters::default(),
        );
        assert!(errors.is_empty(), "{errors:?}");
        let prompt = &prompts[0];
        template_text(&prompt.system, &prompt.vars, &Delimiters::default())
    }

    #[test]
    fn snippets_are_spliced_and_tokens_canonical() {
        let text = printed(
            "Hi {{name}}.\n{{snippet:rules}}\n{{#if role == \"teacher\"}}T{{else if admin}}A{{else}}S{{/if}}",
            &[("rules", "Be {{#if kind}}kind{{/if}}.")],
        );
        assert_eq!(
            text,
            "Hi {{name}}.\nBe {{#if kind}}kind{{/if}}.\n{{#if role == \"teacher\"}}T{{else}}{{#if admin}}A{{else}}S{{/if}}{{/if}}"
        );
    }

    #[test]
    fn printed_text_resolves_to_the_same_program() {
        let source = "---\ndescription: d\n---\n  A {{x}} {{#if y}}B{{else}}C{{/if}} {{#if z == \"v\"}}D{{/if}}  ";
        let once = printed(source, &[]);
        assert_eq!(printed(&once, &[]), once);
        assert!(
            !once.contains("description"),
            "front matter is not rendered text"
        );
    }

    #[test]
    fn a_printed_response_schema_is_literal_text_that_reads_back_the_same() {
        let source = "---\nresponse:\n  reply: string, what the user reads\n  \
                      refund?(object, when one is due):\n    amount: number\n    \
                      tags(array): [a, b]\n  empty(object):\n    inner(object):\n      \
                      x: integer\n---\nAnswer {{x}} as:\n{{schema:response}}\n{{#if y}}Y{{/if}}";
        let once = printed(source, &[]);
        assert!(
            once.contains("\"reply\": string, // what the user reads"),
            "{once}"
        );
        assert!(!once.contains("schema:"), "{once}");
        // Nested objects close on lines of their own: no `}}` a reader
        // would take for a delimiter.
        assert!(!once.contains("}}}"), "{once}");
        assert_eq!(printed(&once, &[]), once);
    }
}

#[cfg(test)]
mod conversation_tests {
    use super::*;
    use crate::resolve::resolve;
    use crate::source_file::SourceFile;
    use crate::sources::{SnippetSource, Sources, TemplateSource};

    fn printed(messages: &str, snippets: &[(&str, &str)]) -> String {
        let sources = Sources {
            templates: vec![TemplateSource {
                id: "p".into(),
                system: SourceFile::new("templates/p/system.md", "S"),
                user: None,
                messages: Some(SourceFile::new("templates/p/messages.md", messages)),
            }],
            snippets: snippets
                .iter()
                .map(|(name, text)| SnippetSource {
                    name: (*name).into(),
                    file: SourceFile::new(format!("snippets/{name}.md"), *text),
                })
                .collect(),
            ..Sources::default()
        };
        let (prompts, errors) = resolve(
            &sources.templates,
            &sources.snippets,
            &Delimiters::default(),
        );
        assert!(errors.is_empty(), "{errors:?}");
        let conversation = prompts[0].conversation.as_ref().expect("a conversation");
        conversation_text(conversation, &prompts[0].vars, &Delimiters::default())
    }

    const HISTORY: &str = "---\nvars:\n  history: { kind: messages }\n---\n";

    #[test]
    fn a_conversation_prints_in_canonical_form_and_reads_back_the_same() {
        let cases: [(&str, &str); 4] = [
            (
                "{{#user}}\nHi {{name}}\n{{/user}}",
                "{{#user}}\nHi {{name}}\n{{/user}}",
            ),
            (
                "{{#if shots}}{{snippet:shot}}{{/if}}\n\n{{history}}\n{{#user}}\n  Q: {{q}}  \n\n{{/user}}",
                "---\nvars:\n  \"history\": { kind: messages }\n---\n{{#if shots}}\n{{#user}}\n2+2?\n{{/user}}\n{{#tool calc}}\n4\n{{/tool}}\n{{/if}}\n{{history}}\n{{#user}}\n  Q: {{q}}  \n\n{{/user}}",
            ),
            (
                "{{#if a}}\n{{#system}}\nA\n{{/system}}\n{{else if b == \"x\"}}\n{{#assistant}}\n{{/assistant}}\n{{else}}\n{{#user}}\nC\n{{/user}}\n{{/if}}\n{{#user}}\n.\n{{/user}}",
                "{{#if a}}\n{{#system}}\nA\n{{/system}}\n{{else}}\n{{#if b == \"x\"}}\n{{#assistant}}\n\n{{/assistant}}\n{{else}}\n{{#user}}\nC\n{{/user}}\n{{/if}}\n{{/if}}\n{{#user}}\n.\n{{/user}}",
            ),
            (
                "{{#user}}\n{{#if x}}X{{else}}Y{{/if}}\n\n{{/user}}",
                "{{#user}}\n{{#if x}}X{{else}}Y{{/if}}\n\n{{/user}}",
            ),
        ];
        for (source, expected) in cases {
            let with_history = source.contains("{{history}}");
            let source = if with_history {
                format!("{HISTORY}{source}")
            } else {
                source.to_string()
            };
            let shot = [(
                "shot",
                "{{#user}}\n2+2?\n{{/user}}\n{{#tool calc}}\n4\n{{/tool}}",
            )];
            let once = printed(&source, &shot);
            assert_eq!(once, expected, "{source}");
            assert_eq!(printed(&once, &[]), once, "{source} reads back the same");
        }
    }
}
