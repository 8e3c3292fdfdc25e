//! The Rust names of prompts and variables: `PromptId` variants, fields,
//! choice enums and their variants, and every name that cannot be one or
//! would be taken twice.

use crate::exchange_names::{Exchange, exchange_of};
use heck::ToUpperCamelCase;
use promptpack_core::error::{Diagnostic, ErrorCode, Location};
use promptpack_core::program::{VarInfo, VarKind};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::sources::TemplateSource;
use std::collections::HashMap;

/// The Rust names of `prompts`: each one's `PromptId` variant and fields
/// (with their choice enums), every problem in `errors`.
pub(crate) fn rust_names(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    errors: &mut Vec<Diagnostic>,
) -> RustNames {
    let variants = variant_names(prompts, templates, errors);
    let fields: Vec<Vec<Field>> = prompts
        .iter()
        .zip(&variants)
        .map(|(p, v)| fields_of(p, v, errors))
        .collect();
    let exchanges: Vec<Exchange> = prompts
        .iter()
        .zip(&variants)
        .map(|(p, v)| exchange_of(p, v, errors))
        .collect();
    type_collisions(prompts, &variants, &fields, &exchanges, errors);
    RustNames {
        variants,
        fields,
        exchanges,
    }
}

/// The Rust names of a set of prompts, each list in the prompts' order.
pub(crate) struct RustNames {
    /// Each prompt's `PromptId` variant.
    pub(crate) variants: Vec<String>,
    /// Each prompt's vars struct fields.
    pub(crate) fields: Vec<Vec<Field>>,
    /// Each prompt's response and tool types.
    pub(crate) exchanges: Vec<Exchange>,
}

/// What the code generator knows of one variable: its Rust field.
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) ident: String,
    pub(crate) kind: VarKind,
    pub(crate) first_use: Location,
    /// For a variable compared with values: its generated enum.
    pub(crate) choice: Option<Choice>,
}

/// The enum generated for a variable compared with values.
pub(crate) struct Choice {
    pub(crate) ident: String,
    /// Each value with its variant, in order of first use.
    pub(crate) values: Vec<(String, String)>,
}

impl Choice {
    /// The variant of `value`.
    pub(crate) fn variant(&self, value: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(v, _)| v == value)
            .map(|(_, i)| i.as_str())
    }
}

/// The enum of variable `var` of the prompt whose variant is `prompt`:
/// `AgentSystemRole`, with a variant per value (`"high school"` →
/// `HighSchool`). Values that cannot become variants, or would become the
/// same one, are errors at the variable's first use.
fn choice_of(
    prompt: &ResolvedPrompt,
    variant: &str,
    var: &VarInfo,
    errors: &mut Vec<Diagnostic>,
) -> Option<Choice> {
    if var.choices.is_empty() {
        return None;
    }
    let ident = format!("{}{}", variant, var.name.to_upper_camel_case());
    let mut values: Vec<(String, String)> = Vec::new();
    let mut refuse = |message: String, help: &str| {
        errors.push(
            Diagnostic::new(ErrorCode::InvalidChoice, message)
                .at(var.first_use.clone())
                .with_help(help),
        );
    };
    for value in &var.choices {
        let pascal = value.to_upper_camel_case();
        let valid = pascal.starts_with(|c: char| c.is_ascii_alphabetic())
            && pascal.chars().all(|c| c.is_ascii_alphanumeric())
            && pascal != "Self";
        if !valid {
            refuse(
                format!(
                    "value {value:?} of `{}` in prompt `{}` cannot become a variant of `{ident}`",
                    var.name, prompt.id
                ),
                "start compared values with a letter",
            );
            continue;
        }
        // A variant named like an associated constant hides it: `E::ALL`
        // would be the variant.
        if CHOICE_CONSTS.contains(&pascal.as_str()) {
            refuse(
                format!(
                    "value {value:?} of `{}` in prompt `{}` would become `{ident}::{pascal}`, the name of the enum's list of values",
                    var.name, prompt.id
                ),
                "spell the value another way (`all`, not `a-l-l`)",
            );
            continue;
        }
        if let Some((other, _)) = values.iter().find(|(_, i)| *i == pascal.as_str()) {
            refuse(
                format!(
                    "values {other:?} and {value:?} of `{}` in prompt `{}` both become `{ident}::{pascal}`",
                    var.name, prompt.id
                ),
                "compare with one spelling of the value",
            );
            continue;
        }
        values.push((value.clone(), pascal));
    }
    Some(Choice { ident, values })
}

/// Two generated types with one name: a choice enum against `PromptId`, a
/// vars struct or another choice enum (`agent` + `systemRole` and
/// `agent-system` + `role` both make `AgentSystemRole`); a response or
/// tool type against any of those or another (`support` + `chatResponse`
/// and `support-chat`'s response both make `SupportChatResponse`).
fn type_collisions(
    prompts: &[ResolvedPrompt],
    variants: &[String],
    fields: &[Vec<Field>],
    exchanges: &[Exchange],
    errors: &mut Vec<Diagnostic>,
) {
    let mut taken: HashMap<String, String> = HashMap::new();
    taken.insert("PromptId".to_string(), "the prompt id enum".to_string());
    for (prompt, variant) in prompts.iter().zip(variants) {
        taken.insert(
            format!("{variant}Vars"),
            format!("the vars struct of `{}`", prompt.id),
        );
    }
    for (prompt, fs) in prompts.iter().zip(fields) {
        for field in fs {
            let Some(choice) = &field.choice else {
                continue;
            };
            let name = choice.ident.to_string();
            let what = format!("the values of `{}` in `{}`", field.name, prompt.id);
            if let Some(other) = taken.get(&name) {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidChoice,
                        format!("{what} would be the enum `{name}`, the name of {other}"),
                    )
                    .at(field.first_use.clone())
                    .with_help("rename the variable"),
                );
            } else {
                taken.insert(name, what);
            }
        }
    }
    for (prompt, exchange) in prompts.iter().zip(exchanges) {
        let tool_enum = exchange.tool_enum.iter().map(|ident| {
            let at = Location::file(prompt.system_path.clone());
            (ident, at, format!("the tool calls of `{}`", prompt.id))
        });
        let types = exchange
            .types
            .iter()
            .map(|t| (&t.ident, t.at.clone(), t.what.clone()));
        for (name, at, what) in tool_enum.chain(types) {
            if let Some(other) = taken.get(name.as_str()) {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidSchema,
                        format!("{what} would be `{name}`, the name of {other}"),
                    )
                    .at(at)
                    .with_help("rename the field or the tool"),
                );
            } else {
                taken.insert(name.clone(), what);
            }
        }
    }
}

/// The associated constants of `PromptId`, which no variant may be named.
const PROMPT_ID_CONSTS: &[&str] = &["ALL", "DELIMITERS"];

/// The associated constants of a choice enum, which no variant may be named.
const CHOICE_CONSTS: &[&str] = &["ALL"];

/// The Rust field for a template variable, as the runtime's diagnostics
/// name it too.
pub(crate) use promptpack_core::field::field_ident;

fn fields_of(prompt: &ResolvedPrompt, variant: &str, errors: &mut Vec<Diagnostic>) -> Vec<Field> {
    let mut fields: Vec<Field> = Vec::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    for var in &prompt.vars {
        let Some(ident) = field_ident(&var.name) else {
            errors.push(
                Diagnostic::new(
                    ErrorCode::InvalidVarName,
                    format!(
                        "variable `{}` of prompt `{}` cannot become a Rust field",
                        var.name, prompt.id
                    ),
                )
                .at(var.first_use.clone())
                .with_help("put a letter before the first digit (`_` alone does not count)"),
            );
            continue;
        };
        let key = ident.to_string();
        if let Some(&other) = taken.get(&key) {
            let other: &Field = &fields[other];
            errors.push(var_collision(prompt, var, other, &key));
            continue;
        }
        let kind = var.kind();
        let choice = choice_of(prompt, variant, var, errors);
        taken.insert(key, fields.len());
        fields.push(Field {
            name: var.name.clone(),
            ident,
            kind,
            first_use: var.first_use.clone(),
            choice,
        });
    }
    fields
}

fn var_collision(prompt: &ResolvedPrompt, var: &VarInfo, other: &Field, field: &str) -> Diagnostic {
    let o = &other.first_use;
    Diagnostic::new(
        ErrorCode::VarCollision,
        format!(
            "variables `{}` and `{}` of prompt `{}` both become the field `{field}`",
            other.name, var.name, prompt.id
        ),
    )
    .at(var.first_use.clone())
    .with_help(format!(
        "`{}` is used at {}:{}:{}; rename one of them",
        other.name,
        o.path(),
        o.line(),
        o.column()
    ))
}

fn variant_names(
    prompts: &[ResolvedPrompt],
    templates: &[TemplateSource],
    errors: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    let folder = |id: &str| {
        templates.iter().find(|t| t.id == id).map_or_else(
            || format!("templates/{id}"),
            |t| parent_folder(t.system.path()),
        )
    };
    prompts
        .iter()
        .map(|p| {
            let pascal = p.id.to_upper_camel_case();
            // `Self` is a keyword that cannot even be a raw identifier.
            // A variant named like an associated constant hides it:
            // `PromptId::ALL` would be the variant.
            let valid = promptpack_core::syntax::is_snippet_name(&p.id)
                && !pascal.is_empty()
                && !pascal.starts_with(|c: char| c.is_ascii_digit())
                && pascal != "Self"
                && !PROMPT_ID_CONSTS.contains(&pascal.as_str());
            if !valid {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidId,
                        format!("prompt id `{}` cannot become a Rust name", p.id),
                    )
                    .at(Location::file(folder(&p.id)))
                    .with_help(if pascal == "Self" {
                        "`Self` is a Rust keyword: rename the template folder".to_string()
                    } else if PROMPT_ID_CONSTS.contains(&pascal.as_str()) {
                        format!("`PromptId::{pascal}` is a constant of the generated enum: rename the template folder")
                    } else {
                        "start template folder names with a letter".to_string()
                    }),
                );
            } else if let Some(other) = seen.get(&pascal) {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::IdCollision,
                        format!(
                            "prompt ids `{other}` and `{}` both become `PromptId::{pascal}`",
                            p.id
                        ),
                    )
                    .at(Location::file(folder(&p.id)))
                    .with_help(format!(
                        "rename {} or {}",
                        folder(other),
                        folder(&p.id)
                    )),
                );
            } else {
                seen.insert(pascal.clone(), &p.id);
            }
            if valid {
                pascal.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_")
            } else {
                // Never emitted: the error above fails the generation.
                String::new()
            }
        })
        .collect()
}

fn parent_folder(path: &str) -> String {
    path.rsplit_once('/')
        .map_or(path, |(dir, _)| dir)
        .to_string()
}
