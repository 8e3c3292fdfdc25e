//! Everything generated for one prompt: its choice enums, its response and
//! tool types, its vars struct
//! with its docs (the prompt's files, each field's first use and what front
//! matter says of it), and the struct's impls.

use super::choice_enum::choice_enum;
use super::exchange_types::exchange_types;
use super::prompt_table::prompt_info;
use super::render::{straight_line_fns, table_consts};
use super::{Emit, Renderers};
use crate::exchange_names::Exchange;
use crate::names::Field;
use crate::rust_source::{Source, fence_for, lit};
use promptpack_core::front_matter::DeclaredVar;
use promptpack_core::program::VarKind;
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::sources::TemplateSource;
use std::path::Path;

/// Fields up to which a vars struct derives `PartialEq`: the derive
/// compares them in one `&&` chain, an expression nested once per field, on
/// which rustc overflows its stack past a few thousand.
const DERIVE_EQ_FIELDS: usize = 64;

/// Everything generated for one prompt: its choice enums, its vars struct
/// and the struct's impls, at the module's depth.
pub(super) fn prompt_items(
    prompt: &ResolvedPrompt,
    variant: &str,
    fields: &[Field],
    exchange: &Exchange,
    source: Option<&TemplateSource>,
    emit: Emit,
) -> String {
    let (dev, renderers, runtime) = (emit.dev, emit.renderers, emit.runtime);
    let mut out = Source::at_depth(1);
    out.line("");
    for field in fields {
        if let Some(choice) = &field.choice {
            choice_enum(&mut out, prompt, field, choice, runtime);
        }
    }
    // Rendering needs none of them: the same in every build.
    exchange_types(&mut out, prompt, exchange, runtime);
    let name = format!("{variant}Vars");
    let id = &prompt.id;
    let borrows = fields.iter().any(|f| {
        matches!(
            f.kind,
            VarKind::Text | VarKind::Optional | VarKind::Messages
        )
    });
    let (generics, anon) = if borrows { ("<'a>", "<'_>") } else { ("", "") };

    if let Some(description) = &prompt.front_matter.description {
        out.doc(description);
        out.line("///");
    }
    out.doc(&format!("Variables of the `{id}` prompt."));
    if let Some(t) = source {
        let folder = format!("{}/{}", dev.templates, t.id);
        out.line("///");
        part_doc(
            &mut out,
            t.system.path(),
            &format!("{folder}/system.md"),
            t.system.text(),
        );
        if let Some(user) = &t.user {
            out.line("///");
            part_doc(
                &mut out,
                user.path(),
                &format!("{folder}/user.md"),
                user.text(),
            );
        }
        if let Some(messages) = &t.messages {
            out.line("///");
            part_doc(
                &mut out,
                messages.path(),
                &format!("{folder}/messages.md"),
                messages.text(),
            );
        }
    }
    if fields.len() <= DERIVE_EQ_FIELDS {
        out.line("#[derive(Debug, Clone, Copy, ::core::cmp::PartialEq, Eq, Hash)]");
    } else {
        out.line("#[derive(Debug, Clone, Copy, Eq, Hash)]");
    }
    out.open(format!("pub struct {name}{generics} {{"));
    for f in fields {
        let choice = f.choice.as_ref().map(|c| c.ident.as_str());
        let (ty, usage) = match (f.kind, choice) {
            (VarKind::Flag, _) => ("bool".to_string(), "a condition"),
            (VarKind::Optional, _) => (
                "Option<&'a str>".to_string(),
                "a value and a condition (true when `Some` and not empty; `None` renders as nothing)",
            ),
            (VarKind::Choice, Some(e)) => (e.to_string(), "a choice"),
            (VarKind::OptionalChoice, Some(e)) => (
                format!("Option<{e}>"),
                "a choice and a condition (true when `Some`)",
            ),
            (VarKind::Messages, _) => (
                format!("&'a [{runtime}::Message]"),
                "the history, its messages sent as given where it stands",
            ),
            _ => ("&'a str".to_string(), ""),
        };
        // A text field says no more than its type does.
        let usage = if usage.is_empty() {
            String::new()
        } else {
            format!(": {usage}")
        };
        if let Some(declared) = prompt.front_matter.declared(&f.name) {
            field_doc(&mut out, declared);
        }
        out.doc(&format!(
            "`{}`{usage}, first at `{}`.",
            f.name,
            first_use(f, source)
        ));
        out.line(format!("pub {}: {ty},", f.ident));
    }
    out.close("}");
    out.line("");
    if fields.len() > DERIVE_EQ_FIELDS {
        out.open(format!("impl ::core::cmp::PartialEq for {name}{anon} {{"));
        out.open("fn eq(&self, other: &Self) -> bool {");
        for f in fields {
            out.line(format!(
                "if self.{0} != other.{0} {{ return false; }}",
                f.ident
            ));
        }
        out.line("true");
        out.close("}");
        out.close("}");
        out.line("");
    }

    out.open(format!("impl{generics} {name}{generics} {{"));
    out.line("/// Stable content hash of the resolved template (snippets included).");
    out.line(format!(
        "pub const HASH: __p::PromptHash = __p::PromptHash::new({});",
        prompt.hash
    ));
    out.line("");
    out.line("#[doc(hidden)]");
    out.line(format!(
        "pub const __INFO: __p::PromptInfo = {};",
        prompt_info(prompt, fields, exchange, renderers, runtime)
    ));
    if renderers == Renderers::Tables {
        table_consts(&mut out, prompt, fields, runtime);
        out.close("}");
        out.line("");
        let user = if prompt.user.is_some() {
            ", user 1"
        } else {
            ""
        };
        let messages = if prompt.conversation.is_some() {
            ", messages turns"
        } else {
            ""
        };
        out.line(format!(
            "{runtime}::__table_impls!({name}{generics}, {variant}{user}{messages});"
        ));
        return out.into_string();
    }
    straight_line_fns(&mut out, prompt, variant, &name, fields, runtime);
    out.close("}");
    out.line("");
    trait_impls(&mut out, &name, anon, variant, fields, runtime);
    out.into_string()
}

/// `Vars` (each field by its variable's name) and `TypedVars` of a vars
/// struct rendered by straight-line code; `__table_impls!` writes them for
/// one rendered from tables.
fn trait_impls(
    out: &mut Source,
    name: &str,
    anon: &str,
    variant: &str,
    fields: &[Field],
    runtime: &str,
) {
    out.open(format!("impl {runtime}::Vars for {name}{anon} {{"));
    out.open("fn get(&self, name: &str) -> Option<__V<'_>> {");
    if fields.is_empty() {
        out.line("let _ = name;");
        out.line("None");
    } else {
        out.open("Some(match name {");
        for f in fields {
            let ident = &f.ident;
            let value = match (f.kind, &f.choice) {
                (VarKind::Flag, _) => format!("__V::Bool(self.{ident})"),
                (VarKind::Messages, _) => format!("__V::Messages(self.{ident})"),
                (VarKind::Optional, _) => format!("__V::Str(self.{ident}.unwrap_or(\"\"))"),
                (VarKind::Choice, _) => format!("__V::Str(self.{ident}.as_str())"),
                (VarKind::OptionalChoice, Some(c)) => {
                    format!("__V::Str(self.{ident}.map_or(\"\", {}::as_str))", c.ident)
                }
                _ => format!("__V::Str(self.{ident})"),
            };
            out.line(format!("{} => {value},", lit(&f.name)));
        }
        out.line("_ => return None,");
        out.close("})");
    }
    out.close("}");
    out.close("}");
    out.line("");
    out.open(format!("impl {runtime}::TypedVars for {name}{anon} {{"));
    out.line("type Id = PromptId;");
    out.line(format!("const ID: PromptId = PromptId::{variant};"));
    out.line("");
    out.open("fn build(&self) -> __Built {");
    out.line(format!("{name}::build(self)"));
    out.close("}");
    out.close("}");
}

/// Where a variable is first used, for its field's doc: the file name alone
/// when it is one of the prompt's own parts.
fn first_use(field: &Field, source: Option<&TemplateSource>) -> String {
    let loc = &field.first_use;
    let own = source.and_then(|t| {
        [Some(&t.system), t.user.as_ref(), t.messages.as_ref()]
            .into_iter()
            .flatten()
            .find(|part| part.path() == loc.path())
    });
    let path = match own {
        Some(part) => Path::new(part.path()).file_name().map_or_else(
            || loc.path().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        None => loc.path().to_string(),
    };
    format!("{path}:{}:{}", loc.line(), loc.column())
}

/// What front matter says of a field: its description, its example.
fn field_doc(out: &mut Source, declared: &DeclaredVar) {
    if let Some(description) = &declared.description {
        out.doc(description);
        out.line("///");
    }
    if let Some(example) = &declared.example {
        let shown = match example {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let fence = fence_for(&shown);
        if shown.contains('\n') || shown.contains('`') {
            out.doc(&format!("Example:\n\n{fence}text\n{shown}\n{fence}"));
        } else {
            out.doc(&format!("Example: `{shown}`."));
        }
        out.line("///");
    }
}

/// The struct doc's view of one part: its path, then the file itself,
/// fenced, through `include_str!` (the template is not copied into the
/// generated code).
fn part_doc(out: &mut Source, shown: &str, on_disk: &str, body: &str) {
    let fence = fence_for(body);
    out.doc(&format!("`{shown}`:\n\n{fence}text"));
    out.line(format!("#[doc = include_str!({})]", lit(on_disk)));
    out.doc(&fence);
}
