//! A validated set of prompts, rendered by string id with dynamic values.

use crate::error::{Diagnostic, Error, ErrorCode, Result};
use crate::render::{MissingVars, render_program};
use crate::resolve::{ResolvedPrompt, SnippetSource, TemplateSource, resolve};
use crate::syntax::Delimiters;
use crate::value::ValueRef;
use crate::vars::Vars;
use std::collections::HashMap;

/// A rendered prompt: what to send to the model, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Prompt<Id = String> {
    /// Which prompt this is.
    pub id: Id,
    /// The rendered `system.md`.
    pub system: String,
    /// The rendered `user.md`, when the prompt has one.
    pub user: Option<String>,
    /// Stable content hash of the resolved template (snippets included), for
    /// logging and provenance. The same template gives the same hash in the
    /// generated code, the [`Library`] and the CLI.
    pub hash: u64,
}

/// A validated set of prompts, rendered by id.
///
/// Every template has been parsed and every snippet resolved when a `Library`
/// exists; loading reports every problem at once.
///
/// ```
/// use promptpack::{Library, SourceFile, SnippetSource, TemplateSource};
/// let library = Library::from_sources(
///     vec![TemplateSource {
///         id: "greet".into(),
///         system: SourceFile::new("templates/greet/system.md", "Hi {{name}}.{{#if formal}} Welcome.{{/if}}"),
///         user: None,
///     }],
///     vec![],
///     Default::default(),
/// )?;
/// let prompt = library.build_prompt("greet", &serde_json::json!({"name": "Ada", "formal": true}))?;
/// assert_eq!(prompt.system, "Hi Ada. Welcome.");
/// # Ok::<(), promptpack::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Library {
    prompts: Vec<ResolvedPrompt>,
    by_id: HashMap<String, usize>,
    delimiters: Delimiters,
}

impl Library {
    /// Builds a library from in-memory sources, checking everything.
    pub fn from_sources(
        templates: Vec<TemplateSource>,
        snippets: Vec<SnippetSource>,
        delimiters: Delimiters,
    ) -> Result<Library> {
        let (prompts, errors) = resolve(&templates, &snippets, &delimiters);
        if let Some(error) = Error::from_diagnostics(errors) {
            return Err(error);
        }
        Ok(Library::from_resolved(prompts, delimiters))
    }

    /// A library of prompts that were already resolved without error.
    pub(crate) fn from_resolved(
        mut prompts: Vec<ResolvedPrompt>,
        delimiters: Delimiters,
    ) -> Library {
        prompts.sort_by(|a, b| a.id.cmp(&b.id));
        let by_id = prompts
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.clone(), i))
            .collect();
        Library {
            prompts,
            by_id,
            delimiters,
        }
    }

    /// Every prompt, sorted by id.
    pub fn prompts(&self) -> &[ResolvedPrompt] {
        &self.prompts
    }

    /// The prompt with this id.
    pub fn get(&self, id: &str) -> Option<&ResolvedPrompt> {
        self.by_id.get(id).map(|&i| &self.prompts[i])
    }

    /// The delimiters the templates were parsed with.
    pub fn delimiters(&self) -> &Delimiters {
        &self.delimiters
    }

    /// Renders prompt `id` with any serializable map of values (a
    /// `serde_json::Value` object, a `HashMap`, a struct deriving
    /// `Serialize`). Strict: a value token the render reaches without a value
    /// fails with `missing_var`, naming every missing variable.
    pub fn build_prompt<T: serde::Serialize + ?Sized>(&self, id: &str, vars: &T) -> Result<Prompt> {
        self.render(id, &to_map(vars)?, MissingVars::Error)
    }

    /// Like [`Library::build_prompt`], but a missing value leaves its token
    /// (`{{name}}`) in the output, as the original loader did.
    pub fn build_prompt_lenient<T: serde::Serialize + ?Sized>(
        &self,
        id: &str,
        vars: &T,
    ) -> Result<Prompt> {
        self.render(id, &to_map(vars)?, MissingVars::KeepToken)
    }

    /// Renders prompt `id` with values from any [`Vars`], without converting
    /// them first.
    pub fn render(&self, id: &str, vars: &impl Vars, missing_vars: MissingVars) -> Result<Prompt> {
        let prompt = self.get(id).ok_or_else(|| self.unknown_prompt(id))?;
        let values: Vec<Option<ValueRef<'_>>> =
            prompt.vars.iter().map(|v| vars.get(&v.name)).collect();
        self.render_values(prompt, &values, missing_vars)
    }

    /// Renders a prompt of this library with values numbered as its
    /// [`ResolvedPrompt::vars`].
    pub(crate) fn render_values(
        &self,
        prompt: &ResolvedPrompt,
        values: &[Option<ValueRef<'_>>],
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
        let render = |program| {
            let mut out = String::with_capacity(estimate(program, values));
            let missing = render_program(
                program,
                &prompt.vars,
                values,
                &self.delimiters,
                missing_vars,
                &mut out,
            );
            (out, missing)
        };
        let (system, mut missing) = render(&prompt.system);
        let user = prompt.user.as_ref().map(|user| {
            let (out, more) = render(user);
            for i in more {
                if !missing.contains(&i) {
                    missing.push(i);
                }
            }
            out
        });
        if missing_vars == MissingVars::Error && !missing.is_empty() {
            let names: Vec<&str> = missing
                .iter()
                .map(|&i| prompt.vars[i].name.as_str())
                .collect();
            let diagnostics = missing
                .iter()
                .map(|&i| {
                    let var = &prompt.vars[i];
                    Diagnostic::new(
                        ErrorCode::MissingVar,
                        format!(
                            "prompt `{}` needs `{}`, which was not given",
                            prompt.id, var.name
                        ),
                    )
                    .at(var.first_use.clone())
                    .with_help(format!(
                        "missing for `{}`: {}",
                        prompt.id,
                        names.join(", ")
                    ))
                })
                .collect();
            return Err(Error::from_diagnostics(diagnostics)
                .unwrap_or_else(|| Error::new(ErrorCode::MissingVar, "a variable was not given")));
        }
        Ok(Prompt {
            id: prompt.id.clone(),
            system,
            user,
            hash: prompt.hash,
        })
    }

    fn unknown_prompt(&self, id: &str) -> Error {
        let known: Vec<&str> = self.prompts.iter().map(|p| p.id.as_str()).collect();
        Error::from(
            Diagnostic::new(ErrorCode::UnknownPrompt, format!("no prompt named `{id}`")).with_help(
                if known.is_empty() {
                    "this library has no prompts".to_string()
                } else {
                    format!("the prompts are: {}", known.join(", "))
                },
            ),
        )
    }
}

/// Static text plus the length of the string values, so that a typical
/// render allocates once.
fn estimate(program: &crate::program::Program, values: &[Option<ValueRef<'_>>]) -> usize {
    let values: usize = values
        .iter()
        .map(|v| match v {
            Some(ValueRef::Str(s)) => s.len(),
            Some(ValueRef::Json(serde_json::Value::String(s))) => s.len(),
            _ => 16,
        })
        .sum();
    program.text.len() + values
}

fn to_map<T: serde::Serialize + ?Sized>(
    vars: &T,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    match serde_json::to_value(vars) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(serde_json::Value::Null) => Ok(serde_json::Map::new()),
        Ok(other) => Err(Error::new(
            ErrorCode::InvalidVars,
            format!(
                "variables must be a map of names to values, not {}",
                json_kind(&other)
            ),
        )),
        Err(e) => Err(Error::new(
            ErrorCode::InvalidVars,
            format!("variables could not be serialized: {e}"),
        )),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
