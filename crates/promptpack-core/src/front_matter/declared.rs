//! A prompt's declared variables against what its templates do with them:
//! names nobody declared, uses a declared kind forbids, declarations no
//! template reaches, a choice compared with a value it does not declare or
//! declaring one no branch compares, examples out of step with the
//! variables.

use super::{DeclaredVar, FrontMatter};
use crate::error::{Diagnostic, ErrorCode, Location};
use crate::program::{VarInfo, VarKind};
use crate::similar::nearest;
use crate::syntax::{Item, Parsed};
use serde_json::Value;

/// Checks `vars` (a resolved prompt's) against its `front_matter` and the
/// declarations of the snippets it includes (`snippet_vars`), and gives
/// each declared variable its declared kind. A prompt whose front matter
/// declares `vars` (more than a conversation's history) has a contract: a
/// name neither it nor an included snippet declares is `undeclared_var`.
pub fn apply_contract(
    vars: &mut [VarInfo],
    front_matter: &FrontMatter,
    snippet_vars: &[&DeclaredVar],
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) {
    let declared_names: Vec<&str> = front_matter
        .vars
        .iter()
        .flatten()
        .chain(snippet_vars.iter().copied())
        .map(|v| v.name.as_str())
        .collect();
    // Variables whose declaration a use contradicts: their kind is in
    // question, so an example is not judged by either side of it.
    let mut in_conflict: Vec<String> = Vec::new();
    // Declaring a conversation's history alone (`kind: messages`, which
    // must be declared) makes no contract of the other variables.
    let has_contract = front_matter
        .vars
        .as_ref()
        .is_some_and(|declared| declared.iter().any(|d| d.kind != Some(VarKind::Messages)));
    for var in vars.iter_mut() {
        let declaration = front_matter
            .declared(&var.name)
            .or_else(|| snippet_vars.iter().copied().find(|d| d.name == var.name));
        match declaration {
            None if has_contract => {
                errors.push(undeclared(var, &declared_names));
            }
            None => {}
            Some(declaration) => {
                if let Some(kind) = declaration.kind {
                    match contradiction(var, kind) {
                        Some(mismatch) => {
                            errors.push(mismatch);
                            in_conflict.push(var.name.clone());
                        }
                        None => {
                            var.declared = Some(kind);
                            if let Some(values) = &declaration.values {
                                declare_choice(var, declaration, values, errors, warnings);
                            }
                        }
                    }
                }
            }
        }
    }
    for declaration in front_matter.vars.iter().flatten() {
        if !vars.iter().any(|v| v.name == declaration.name) {
            warnings.push(unused(declaration, "no template of this prompt uses it"));
        }
    }
    check_examples(vars, front_matter, &in_conflict, errors);
}

/// Declarations of a snippet's front matter that the snippet's own tokens
/// never use.
pub fn unused_snippet_vars(front_matter: &FrontMatter, parsed: &Parsed) -> Vec<Diagnostic> {
    let used = |name: &str| {
        parsed.items.iter().any(|item| match item {
            Item::Var(n) => n.name == name,
            Item::If(c) | Item::ElseIf(c) => c.name.name == name,
            _ => false,
        })
    };
    front_matter
        .vars
        .iter()
        .flatten()
        .filter(|d| !used(&d.name))
        .map(|d| unused(d, "this snippet does not use it"))
        .collect()
}

/// Gives `var` its declared `values` as the generated enum's, in the order
/// declared: a comparison with any other value is `invalid_choice` at the
/// comparison, and a declared value no branch compares is
/// `unhandled_choice` at the value, naming where it goes instead.
fn declare_choice(
    var: &mut VarInfo,
    declaration: &DeclaredVar,
    values: &[String],
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) {
    let listed = values
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    for block in &var.blocks {
        for (value, tag, at) in &block.branches {
            if values.contains(value) {
                continue;
            }
            let near = nearest(value, values.iter().map(String::as_str), 1);
            let help = match near.first() {
                Some(near) => format!(
                    "did you mean {near:?}? The declared values of `{}` are {listed}",
                    var.name
                ),
                None => format!(
                    "the declared values of `{}` are {listed}; add {value:?} to its `values` ({}:{}) or compare with one of them",
                    var.name,
                    declaration.at.path(),
                    declaration.at.line()
                ),
            };
            errors.push(
                Diagnostic::new(
                    ErrorCode::InvalidChoice,
                    format!(
                        "`{tag}` compares `{}` with {value:?}, which is not one of its declared values",
                        var.name
                    ),
                )
                .at(at.clone())
                .with_help(help),
            );
        }
    }
    for (i, value) in values.iter().enumerate() {
        if var.compared.contains(value) {
            continue;
        }
        // A choice only printed has no branches to fall through.
        let Some(renders) = var.renders(value) else {
            continue;
        };
        warnings.push(
            Diagnostic::new(
                ErrorCode::UnhandledChoice,
                format!(
                    "value {value:?} of `{}` is declared, but no branch compares with it: it renders {renders}",
                    var.name
                ),
            )
            .at(declaration.value_location(i).clone())
            .with_help(format!(
                "add a branch for it (`else if {} == {value:?}`), or remove it from `values` if `{}` never takes it",
                var.name, var.name
            )),
        );
    }
    var.choices = values.to_vec();
}

fn unused(declaration: &DeclaredVar, why: &str) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::UnusedVar,
        format!("variable `{}` is declared but {why}", declaration.name),
    )
    .at(declaration.at.clone())
    .with_help("remove the declaration, or use the variable")
}

fn undeclared(var: &VarInfo, declared: &[&str]) -> Diagnostic {
    let help = match nearest(&var.name, declared.iter().copied(), 1).first() {
        Some(near) => format!(
            "did you mean `{near}`? Or declare `{}` under `vars:`",
            var.name
        ),
        None => format!(
            "declare `{}` under `vars:` in the prompt's front matter; this prompt declares its variables, so every name it uses must be there",
            var.name
        ),
    };
    Diagnostic::new(
        ErrorCode::UndeclaredVar,
        format!("`{}` is not declared in the front matter", var.name),
    )
    .at(var.first_use.clone())
    .with_help(help)
}

/// The first use of `var` that its declared `kind` forbids.
fn contradiction(var: &VarInfo, kind: VarKind) -> Option<Diagnostic> {
    let name = &var.name;
    let (what, at, help): (&str, &Location, String) = match kind {
        VarKind::Choice => (
            "tested with `#if`",
            var.uses.condition.as_ref()?,
            format!(
                "declare it `optional_choice` (an `Option` of its enum) to test `{name}` for truth too"
            ),
        ),
        VarKind::OptionalChoice => return None,
        _ if var.uses.compared.is_some() => (
            "compared with a value",
            var.uses.compared.as_ref()?,
            "a variable compared with values becomes an enum: declare it `kind: choice` with its `values`, or without `kind`"
                .to_string(),
        ),
        VarKind::Text => (
            "tested with `#if`",
            var.uses.condition.as_ref()?,
            format!("declare it `optional` (`Option<&str>`) to print and test `{name}`"),
        ),
        VarKind::Flag => (
            "printed",
            var.uses.value.as_ref()?,
            format!("declare it `optional` (`Option<&str>`) to print and test `{name}`"),
        ),
        // `Optional`, and kinds this check does not know of, take any use.
        _ => return None,
    };
    Some(
        Diagnostic::new(
            ErrorCode::KindMismatch,
            format!(
                "`{name}` is declared `{}` ({}) but {what} here",
                kind.as_str(),
                kind.rust_type()
            ),
        )
        .at(at.clone())
        .with_help(help),
    )
}

/// Every example value names a variable the prompt uses and fits its kind,
/// so that examples stay in step with the templates. A variable
/// `in_conflict` (its declared kind contradicted by a use, already
/// `kind_mismatch`) has no kind to fit: checking its example against the
/// kind its uses imply would contradict the declaration, and against the
/// declared one would pass an example the templates cannot take.
fn check_examples(
    vars: &[VarInfo],
    front_matter: &FrontMatter,
    in_conflict: &[String],
    errors: &mut Vec<Diagnostic>,
) {
    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    let declared_examples = front_matter
        .vars
        .iter()
        .flatten()
        .filter_map(|d| Some((d.name.as_str(), d.example.as_ref()?, &d.at)));
    let set_examples = front_matter.examples.iter().flat_map(|example| {
        example
            .values
            .iter()
            .map(move |(name, value)| (name.as_str(), value, &example.at))
    });
    for (name, value, at) in declared_examples.chain(set_examples) {
        let Some(var) = vars.iter().find(|v| v.name == name) else {
            // A declaration nothing uses is already `unused_var`.
            if front_matter.declared(name).is_none() {
                let help = match nearest(name, names.iter().copied(), 1).first() {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => "remove it from the example".to_string(),
                };
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidFrontMatter,
                        format!("the example sets `{name}`, which no template of this prompt uses"),
                    )
                    .at(at.clone())
                    .with_help(help),
                );
            }
            continue;
        };
        if in_conflict.contains(&var.name) {
            continue;
        }
        if let Some(expected) = misfit(var, value) {
            errors.push(
                Diagnostic::new(
                    ErrorCode::InvalidFrontMatter,
                    format!(
                        "the example value of `{name}` is {}, but `{name}` ({}) takes {expected}",
                        describe(value),
                        var.kind().rust_type()
                    ),
                )
                .at(at.clone()),
            );
        }
    }
}

/// What `var` takes, when `value` is not it.
fn misfit(var: &VarInfo, value: &Value) -> Option<String> {
    let choice = |value: &Value| match value {
        Value::String(s) => var.choices.contains(s),
        _ => false,
    };
    let fits = match var.kind() {
        VarKind::Text => matches!(value, Value::String(_) | Value::Number(_)),
        VarKind::Flag => matches!(value, Value::Bool(_)),
        VarKind::Optional => matches!(value, Value::String(_) | Value::Number(_) | Value::Null),
        VarKind::Choice => choice(value),
        VarKind::OptionalChoice => value.is_null() || choice(value),
        VarKind::Messages => value.is_array(),
    };
    if fits {
        return None;
    }
    Some(match var.kind() {
        VarKind::Text => "a string".to_string(),
        VarKind::Flag => "true or false".to_string(),
        VarKind::Optional => "a string or null".to_string(),
        VarKind::Messages => "an array of {\"role\", \"content\"} messages".to_string(),
        VarKind::Choice | VarKind::OptionalChoice => {
            let values: Vec<String> = var.choices.iter().map(|c| format!("\"{c}\"")).collect();
            let null = if var.kind() == VarKind::OptionalChoice {
                " or null"
            } else {
                ""
            };
            format!("one of {}{null}", values.join(", "))
        }
    })
}

fn describe(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{}\"", s.chars().take(40).collect::<String>()),
        Value::Null => "null".to_string(),
        other => other.to_string().chars().take(40).collect(),
    }
}
