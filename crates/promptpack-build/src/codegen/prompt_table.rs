//! The prompt table: each prompt's `PromptInfo` (id, hash, variables,
//! contract, front matter, the JSON of its tools and response), defined
//! with its vars struct, and the tables
//! indexed by `PromptId` that gather them.

use super::Renderers;
use crate::exchange_names::Exchange;
use crate::names::{Choice, Field};
use crate::rust_source::{Source, lit};
use promptpack_core::program::VarKind;
use promptpack_core::resolve::ResolvedPrompt;

/// `__PROMPTS`, and with straight-line renderers `__GENERATED`: each
/// prompt's entry, indexed by `PromptId`.
pub(super) fn tables(out: &mut Source, variants: &[String], renderers: Renderers, runtime: &str) {
    // A table of constants, each defined with its prompt: the references
    // in one constant of a thousand entries cost rustc's borrow checker
    // time that grows faster than their number.
    out.line("/// Each prompt's id, hash, variables and compiled contract, indexed by `PromptId`.");
    out.open("const __PROMPTS: &[__p::PromptInfo] = &[");
    for variant in variants {
        out.line(format!("{variant}Vars::__INFO,"));
    }
    out.close("];");
    out.line("");
    if renderers == Renderers::StraightLine {
        out.line("/// Each prompt's `render_generated`, indexed by `PromptId`.");
        out.open(format!(
            "const __GENERATED: &[fn(&dyn Fn(&str) -> Option<String>) -> {runtime}::Prompt<PromptId>] = &["
        ));
        for variant in variants {
            out.line(format!("{variant}Vars::__generated,"));
        }
        out.close("];");
        out.line("");
    }
}

/// A prompt's entry of the prompt table: `PromptInfo { .. }` on one line.
pub(super) fn prompt_info(
    prompt: &ResolvedPrompt,
    fields: &[Field],
    exchange: &Exchange,
    renderers: Renderers,
    runtime: &str,
) -> String {
    let list = |names: Vec<String>| names.join(", ");
    let variables = list(fields.iter().map(|f| lit(&f.name)).collect());
    let conditions = list(
        fields
            .iter()
            .filter(|f| matches!(f.kind, VarKind::Flag | VarKind::Optional))
            .map(|f| lit(&f.name))
            .collect(),
    );
    let values = |choice: &Choice| list(choice.values.iter().map(|(v, _)| lit(v)).collect());
    let choices = list(
        fields
            .iter()
            .filter_map(|f| {
                let choice = f.choice.as_ref()?;
                Some(format!("({}, &[{}])", lit(&f.name), values(choice)))
            })
            .collect(),
    );
    let kinds: String = fields.iter().map(|f| char::from(f.kind.letter())).collect();
    let parts = match (renderers, prompt.user.is_some()) {
        (Renderers::StraightLine, _) => "",
        (Renderers::Tables, false) => "Self::__SYSTEM",
        (Renderers::Tables, true) => "Self::__SYSTEM, Self::__USER",
    };
    let (turns, messages) = match (renderers, prompt.conversation.is_some()) {
        (Renderers::Tables, true) => ("Self::__TURNS", "Self::__MESSAGES"),
        _ => ("&[]", "&[]"),
    };
    let front_matter = &prompt.front_matter;
    let description = match &front_matter.description {
        Some(d) => format!("Some({})", lit(d)),
        None => "None".to_string(),
    };
    let max_tokens = match front_matter.max_tokens {
        Some(n) => format!("Some({n})"),
        None => "None".to_string(),
    };
    let example = list(
        front_matter
            .example_values(None)
            .unwrap_or_default()
            .iter()
            .filter(|(name, _)| fields.iter().any(|f| f.name == **name))
            .filter_map(|(name, value)| {
                let text = match value {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some(format!("({}, {})", lit(name), lit(&text)))
            })
            .collect(),
    );
    // The JSON is written once, by the types; the table names it.
    let tools = match &exchange.tool_enum {
        Some(ident) => format!("Some({ident}::TOOLS)"),
        None => "None".to_string(),
    };
    let response_format = match &exchange.response {
        Some(ident) => format!("Some(<{ident} as {runtime}::Response>::FORMAT)"),
        None => "None".to_string(),
    };
    format!(
        "__p::PromptInfo {{ id: {}, hash: Self::HASH, variables: &[{variables}], kinds: {}, conditions: &[{conditions}], choices: &[{choices}], parts: &[{parts}], conversation: {}, turns: {turns}, messages: {messages}, description: {description}, metadata: {}, max_tokens: {max_tokens}, example: &[{example}], tools: {tools}, response_format: {response_format} }}",
        lit(&prompt.id),
        lit(&kinds),
        prompt.conversation.is_some(),
        lit(&front_matter.settings_json().to_string())
    )
}
