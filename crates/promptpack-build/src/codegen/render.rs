//! How a vars struct's parts render, both ways ([`Renderers`](super::Renderers)):
//! as straight-line code (`build`, `__generated` and the renderers of
//! `renderer.rs`), or as tables (`__SYSTEM`, `__USER`, `__slots`)
//! that one loop of the runtime reads.

use super::conversation;
use crate::names::Field;
use crate::renderer::render_fn;
use crate::rust_source::{Source, lit, text_lit};
use promptpack_core::program::{Program, VarInfo, VarKind};
use promptpack_core::render::PartName;
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::table::{Step, steps};

/// The items of the vars struct's impl that render it from tables: a table
/// per part, then `__slots`.
pub(super) fn table_consts(
    out: &mut Source,
    prompt: &ResolvedPrompt,
    fields: &[Field],
    runtime: &str,
) {
    part_table(out, "__SYSTEM", &prompt.system, prompt);
    if let Some(user) = &prompt.user {
        part_table(out, "__USER", user, prompt);
    }
    if let Some(conversation) = &prompt.conversation {
        conversation::table_consts(out, conversation, &prompt.vars, runtime);
    }
    out.line("");
    slots_fn(out, fields);
}

/// The items of the vars struct's impl that render it by straight-line
/// code: `build`, `__generated` and a renderer per part.
pub(super) fn straight_line_fns(
    out: &mut Source,
    prompt: &ResolvedPrompt,
    variant: &str,
    name: &str,
    fields: &[Field],
    runtime: &str,
) {
    let id = &prompt.id;
    let user = if prompt.user.is_some() {
        "Some(v.render_user()?)"
    } else {
        "None"
    };
    let messages = if prompt.conversation.is_some() {
        "v.render_messages()?"
    } else {
        "::std::vec::Vec::new()"
    };
    out.line("");
    out.doc(
        "Renders the prompt: from the files on disk in dev builds with hot\n\
         reload (so edits show without a restart), from the code generated\n\
         at build time otherwise (never reading the disk).",
    );
    out.open("pub fn build(&self) -> __Built {");
    // In the runtime's span of a render when its `tracing` feature is on
    // (a `cfg` here would test the user's crate's features instead).
    out.open(format!("__p::traced_build({}, || {{", lit(id)));
    out.open(format!(
        "if let Some(rendered) = __p::dev_build(cfg!(debug_assertions), &__DEV_SOURCE, PromptId::{variant}, {}, self) {{",
        lit(id)
    ));
    out.line("return rendered;");
    out.close("}");
    out.line("let v = self;");
    out.line(format!(
        "Ok({runtime}::Prompt {{ id: PromptId::{variant}, system: v.render_system()?, user: {user}, messages: {messages}, hash: Self::HASH, provenance: {runtime}::Provenance::Embedded, exchange: {runtime}::Exchange::__embedded(PromptId::{variant}.tools(), PromptId::{variant}.response_format()) }})"
    ));
    out.close("})");
    out.close("}");
    out.line("");
    generated_fn(out, name, variant, fields, prompt, runtime);
    out.line("");
    render_fn(out, id, PartName::System, &prompt.system, fields, runtime);
    if let Some(user) = &prompt.user {
        out.line("");
        render_fn(out, id, PartName::User, user, fields, runtime);
    }
    if let Some(conversation) = &prompt.conversation {
        conversation::straight_line_messages(out, id, conversation, fields, runtime);
    }
}

/// `__generated`: the struct made from values looked up by name, rendered
/// by its straight-line code (`PromptId::render_generated`).
fn generated_fn(
    out: &mut Source,
    name: &str,
    variant: &str,
    fields: &[Field],
    prompt: &ResolvedPrompt,
    runtime: &str,
) {
    out.line("#[doc(hidden)]");
    out.open(format!(
        "pub fn __generated(values: &dyn Fn(&str) -> Option<String>) -> {runtime}::Prompt<PromptId> {{"
    ));
    let (mut texts, mut optionals) = (Vec::new(), Vec::new());
    let mut inits = Vec::with_capacity(fields.len());
    for f in fields {
        let name = lit(&f.name);
        let init = match (f.kind, &f.choice) {
            (VarKind::Flag, _) => format!("__p::flag_value(values, {name})"),
            (VarKind::Optional, _) => {
                optionals.push(name);
                format!("__o[{}].as_deref()", optionals.len() - 1)
            }
            (VarKind::Choice, Some(c)) => {
                let first = c.values.first().map_or("", |(_, v)| v.as_str());
                format!(
                    "__p::choice_value(values, {name}).unwrap_or({}::{first})",
                    c.ident
                )
            }
            (VarKind::OptionalChoice, Some(_)) => format!("__p::choice_value(values, {name})"),
            // No history from values by name: examples and tests give text.
            (VarKind::Messages, _) => "&[]".to_string(),
            _ => {
                texts.push(name);
                format!("&__t[{}]", texts.len() - 1)
            }
        };
        inits.push(format!("{}: {init},", f.ident));
    }
    if !texts.is_empty() {
        out.line(format!(
            "let __t = __p::text_values(values, &[{}]);",
            texts.join(", ")
        ));
    }
    if !optionals.is_empty() {
        out.line(format!(
            "let __o = __p::optional_values(values, &[{}]);",
            optionals.join(", ")
        ));
    }
    if fields.is_empty() {
        // Unused otherwise, and rustc would warn in the user's crate.
        out.line("let _ = values;");
    }
    out.open(format!("let v = {name} {{"));
    for init in &inits {
        out.line(init);
    }
    out.close("};");
    // Values from examples and tests, for tools that treat every prompt
    // alike: rendered whole, without the bound (no length is refused).
    let user = if prompt.user.is_some() {
        "Some(v.__render_user(usize::MAX).unwrap_or_default())"
    } else {
        "None"
    };
    let messages = if prompt.conversation.is_some() {
        "v.__render_messages(usize::MAX).unwrap_or_default()"
    } else {
        "::std::vec::Vec::new()"
    };
    out.line(format!(
        "{runtime}::Prompt {{ id: PromptId::{variant}, system: v.__render_system(usize::MAX).unwrap_or_default(), user: {user}, messages: {messages}, hash: Self::HASH, provenance: {runtime}::Provenance::Embedded, exchange: {runtime}::Exchange::__embedded(PromptId::{variant}.tools(), PromptId::{variant}.response_format()) }}"
    ));
    out.close("}");
}

/// `__slots`: the fields as the table renderer reads them, in the order of
/// the prompt's variables.
fn slots_fn(out: &mut Source, fields: &[Field]) {
    out.open(format!(
        "fn __slots(&self) -> [__p::Slot<'_>; {}] {{",
        fields.len()
    ));
    out.open("[");
    for f in fields {
        let ident = &f.ident;
        out.line(match f.kind {
            VarKind::Flag => format!("__p::f(self.{ident}),"),
            VarKind::Optional => format!("__p::o(self.{ident}),"),
            VarKind::Choice => format!("__p::c(self.{ident}.as_str(), self.{ident} as u32),"),
            VarKind::OptionalChoice => {
                format!("self.{ident}.map_or(__p::NONE, |v| __p::c(v.as_str(), v as u32)),")
            }
            VarKind::Text => format!("__p::s(self.{ident}),"),
            VarKind::Messages => format!("__p::m(self.{ident}),"),
        });
    }
    out.close("]");
    out.close("}");
}

/// A part as a table (`__p::Part`): its text in one literal and its steps
/// ([`steps`]).
fn part_table(out: &mut Source, name: &str, program: &Program, prompt: &ResolvedPrompt) {
    out.line("#[doc(hidden)]");
    out.line(format!(
        "pub const {name}: __p::Part = {};",
        part_literal(program, &prompt.vars)
    ));
}

/// `__p::Part { text, steps }` of `program`, whose variables are numbered
/// in `vars`: its text in one literal and its steps ([`steps`]).
pub(super) fn part_literal(program: &Program, vars: &[VarInfo]) -> String {
    let steps: Vec<String> = steps(program, vars)
        .into_iter()
        .map(|step| match step {
            Step::T(start, end) => format!("T({start},{end})"),
            Step::V(i) => format!("V({i})"),
            Step::I(i, equals, else_at) => format!("I({i},{equals},{else_at})"),
            Step::E(end_at) => format!("E({end_at})"),
        })
        .collect();
    format!(
        "__p::Part {{ text: {}, steps: &[{}] }}",
        text_lit(&program.text),
        steps.join(",")
    )
}
