//! A resolved program written back as template text: every snippet spliced
//! in, front matter and trimming already applied, tokens in canonical form.
//! It is what a catalog version stores, hashes and diffs as "the text it
//! renders": two versions print the same exactly when they render the same
//! for every set of values.

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
}
