//! The enum of a compared variable: a variant per value, `ALL`, `as_str`,
//! `Display` and `FromStr` (the runtime's `__names_enum!`).

use super::derive_enum;
use crate::names::{Choice, Field};
use crate::rust_source::{Source, lit};
use promptpack_core::program::VarKind;
use promptpack_core::resolve::ResolvedPrompt;

/// The enum of a compared variable, with `ALL`, `as_str`, `Display` and
/// `FromStr`.
pub(super) fn choice_enum(
    out: &mut Source,
    prompt: &ResolvedPrompt,
    field: &Field,
    choice: &Choice,
    runtime: &str,
) {
    let ident = &choice.ident;
    let var = prompt.vars.iter().find(|v| v.name == field.name);
    // A declared choice kind comes with its values (the prompt's front
    // matter or a snippet's), which are then the enum's.
    let declared =
        var.is_some_and(|v| matches!(v.declared, Some(VarKind::Choice | VarKind::OptionalChoice)));
    if declared {
        out.doc(&format!(
            "The values `{}` takes in the `{}` prompt, as its front matter declares them.",
            field.name, prompt.id
        ));
    } else {
        out.doc(&format!(
            "The values `{}` is compared with in the `{}` prompt.",
            field.name, prompt.id
        ));
    }
    out.line(derive_enum());
    out.open(format!("pub enum {ident} {{"));
    for (value, variant) in &choice.values {
        // Which branch each value renders, so that a hover on a variant
        // says what choosing it does (and that a declared value no branch
        // compares falls to the `{{else}}`).
        match var.and_then(|v| v.renders(value)) {
            Some(renders) => out.doc(&format!("`{value:?}`: renders {renders}.")),
            None => out.doc(&format!("`{value:?}`")),
        }
        out.line(format!("{variant},"));
    }
    out.close("}");
    out.line("");
    out.open(format!("impl {ident} {{"));
    if declared {
        out.line("/// Every value, in the order the front matter declares them.");
    } else {
        out.line("/// Every value, in the order the templates first use them.");
    }
    let all: Vec<String> = choice
        .values
        .iter()
        .map(|(_, v)| format!("Self::{v}"))
        .collect();
    out.line(format!(
        "pub const ALL: [{ident}; {}] = [{}];",
        all.len(),
        all.join(", ")
    ));
    out.line("");
    out.line("/// The value as the templates write it.");
    out.open("pub const fn as_str(self) -> &'static str {");
    out.open("match self {");
    for (value, variant) in &choice.values {
        out.line(format!("Self::{variant} => {},", lit(value)));
    }
    out.close("}");
    out.close("}");
    out.close("}");
    out.line("");
    // Display and FromStr as `PromptId` has them, from one macro.
    out.line(format!(
        "{runtime}::__names_enum!({ident}, {});",
        lit(&field.name)
    ));
    out.line("");
}
