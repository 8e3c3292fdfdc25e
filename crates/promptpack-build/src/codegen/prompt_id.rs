//! The `PromptId` enum: a variant per prompt, its methods (each reads the
//! prompt table, so none grows with the number of prompts), `Display`,
//! `FromStr`, and the runtime's serde and live impls.

use super::{Emit, Renderers, derive_enum};
use crate::rust_source::{Source, lit};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::sources::TemplateSource;
use std::collections::HashMap;

/// `PromptId` and its impls.
pub(super) fn prompt_id(
    out: &mut Source,
    prompts: &[ResolvedPrompt],
    variants: &[String],
    sources: &HashMap<&str, &TemplateSource>,
    emit: Emit,
) {
    let (dev, renderers, runtime) = (emit.dev, emit.renderers, emit.runtime);
    out.line("/// Every prompt of this crate: one variant per folder under `templates/`.");
    out.line(derive_enum());
    out.open("pub enum PromptId {");
    for (prompt, variant) in prompts.iter().zip(variants) {
        let files = match sources.get(prompt.id.as_str()) {
            Some(t) => part_paths(t),
            None => format!("`{}`", prompt.system_path),
        };
        if let Some(description) = &prompt.front_matter.description {
            out.doc(description);
            out.line("///");
        }
        out.doc(&format!("The `{}` prompt ({files}).", prompt.id));
        out.line(format!("{variant},"));
    }
    out.close("}");
    out.line("");
    let count = prompts.len();
    out.open("impl PromptId {");
    out.line("/// Every prompt id, sorted by name.");
    out.open(format!("pub const ALL: [PromptId; {count}] = ["));
    for variant in variants {
        out.line(format!("Self::{variant},"));
    }
    out.close("];");
    let table_fn = |out: &mut Source, doc: &str, signature: &str, field: &str| {
        out.doc(doc);
        out.open(format!("pub const fn {signature} {{"));
        out.line(format!("__PROMPTS[self as usize].{field}"));
        out.close("}");
    };
    table_fn(
        out,
        "The id as written on disk: the template folder's name.",
        "as_str(self) -> &'static str",
        "id",
    );
    table_fn(
        out,
        "Stable content hash of the resolved template (snippets included).",
        "hash(self) -> __p::PromptHash",
        "hash",
    );
    out.doc(
        "The token delimiters the templates were compiled with, as\n`(open, close)`: what a check for surviving tokens looks for.",
    );
    out.line(format!(
        "pub const DELIMITERS: (&'static str, &'static str) = ({}, {});",
        lit(&dev.open),
        lit(&dev.close)
    ));
    table_fn(
        out,
        "The names of every variable the prompt uses, as written in\nits templates, in order of first use.",
        "variables(self) -> &'static [&'static str]",
        "variables",
    );
    table_fn(
        out,
        "The front matter's `description`, when it has one.",
        "description(self) -> Option<&'static str>",
        "description",
    );
    table_fn(
        out,
        "The front matter's `model`, `config` and `metadata`, those set,\nas the text of one JSON object (`{}` when none is): model\nsettings versioned with the prompt.",
        "metadata(self) -> &'static str",
        "metadata",
    );
    table_fn(
        out,
        "The printable values (text and numbers) of the front matter's\nfirst example, by variable name: what snapshot tests render\ninstead of `‹name›` placeholders.",
        "example(self) -> &'static [(&'static str, &'static str)]",
        "example",
    );
    table_fn(
        out,
        "Whether the prompt is a conversation (`system.md` and\n`messages.md`): its `Prompt` holds `messages`, not `user`.",
        "is_conversation(self) -> bool",
        "conversation",
    );
    table_fn(
        out,
        "The front matter's `max_tokens`: the prompt's token budget.",
        "max_tokens(self) -> Option<u64>",
        "max_tokens",
    );
    table_fn(
        out,
        "The front matter's `tools`, as a chat request's `tools` lists\nthem (a JSON array of strict functions); `None` when the\nprompt declares none. The prompt's `…Tool::parse` reads a\ncall of one of them.",
        &format!("tools(self) -> Option<{runtime}::RequestJson>"),
        "tools",
    );
    table_fn(
        out,
        "The front matter's `response`, as a chat request's\n`response_format` (its strict JSON Schema); `None` when the\nprompt declares none. The prompt's `…Response::parse` reads\nthe answer.",
        &format!("response_format(self) -> Option<{runtime}::RequestJson>"),
        "response_format",
    );
    table_fn(
        out,
        "The names of the variables the prompt tests with `#if`.",
        "conditions(self) -> &'static [&'static str]",
        "conditions",
    );
    table_fn(
        out,
        "The variables the prompt compares with values\n(`{{#if role == \"teacher\"}}`), each with every value it is\ncompared with: the variants of its generated enum.",
        "choices(self) -> &'static [(&'static str, &'static [&'static str])]",
        "choices",
    );
    out.doc(
        "Renders through the generated code (never from disk) with\n\
         values looked up by variable name: a value is `\"\"` when\n\
         `values` gives `None`, a condition is true when it gives a\n\
         non-empty string, a compared variable takes the value given\n\
         (its first value when that is none of [`PromptId::choices`]).\n\
         For tests and tools that treat every prompt alike, such as\n\
         snapshot suites.",
    );
    out.open(format!(
        "pub fn render_generated(self, values: &dyn Fn(&str) -> Option<String>) -> {runtime}::Prompt<PromptId> {{"
    ));
    out.line(match renderers {
        Renderers::StraightLine => "__GENERATED[self as usize](values)",
        Renderers::Tables => "__p::render_generated(self, &__PROMPTS[self as usize], values)",
    });
    out.close("}");
    out.close("}");
    out.line("");
    // Display and FromStr as the choice enums have them, from one macro.
    out.line(format!("{runtime}::__names_enum!(PromptId);"));
    out.line(format!("{runtime}::__impl_serde_for_prompt_id!(PromptId);"));
    out.line(format!("{runtime}::__live_prompts!(PromptId);"));
    out.line("");
}

/// The files of a prompt, for its variant's doc.
fn part_paths(t: &TemplateSource) -> String {
    match &t.user {
        Some(user) => format!("`{}`, `{}`", t.system.path(), user.path()),
        None => format!("`{}`", t.system.path()),
    }
}
