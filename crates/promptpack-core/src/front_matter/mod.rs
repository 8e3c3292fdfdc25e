//! Front matter: the YAML block at the top of a template or snippet file
//! (`---` lines around it) that documents a prompt, declares its variables,
//! gives example values, carries model settings and sets a token budget.
//!
//! [`SourceFile`](crate::source_file::SourceFile) finds the block (with
//! pulldown-cmark) and keeps it out of the body; reading (the `load`
//! feature) turns the YAML, field by field, into a [`FrontMatter`], every
//! problem located at its line in the `.md` file.

mod declared;
#[cfg(feature = "load")]
mod notation;
#[cfg(feature = "load")]
mod read;
#[cfg(feature = "load")]
mod yaml;

pub use declared::{apply_contract, unused_snippet_vars};
#[cfg(feature = "load")]
pub use read::{FileRole, Read, read_front_matter};

use crate::error::{Diagnostic, ErrorCode, Location};
use crate::program::VarKind;
use crate::schema::{Schema, Tool};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

/// What a file's front matter says, or a prompt's (its `system.md` and
/// `user.md` together). Empty for a file without front matter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrontMatter {
    /// `description`: one line, the rustdoc of the prompt and its vars struct.
    pub description: Option<String>,
    /// `vars`: the declared variables, in the order written. `Some` (even
    /// empty) makes a contract: every name a template uses must be declared.
    pub vars: Option<Vec<DeclaredVar>>,
    /// `examples`: named sets of values, the first one first.
    pub examples: Vec<Example>,
    /// `model`: free-form model settings, passed to the application as is.
    pub model: Option<Value>,
    /// `config`: free-form, passed through.
    pub config: Option<Value>,
    /// `metadata`: free-form, passed through.
    pub metadata: Option<Value>,
    /// `max_tokens`: the budget of the rendered prompt, in tokens.
    pub max_tokens: Option<u64>,
    /// `tools`: the tools the model may call, in the order declared.
    pub tools: Vec<Tool>,
    /// `response`: the shape of the answer the application reads.
    pub response: Option<Schema>,
    /// The fields set, each where its key is, so that a prompt's two files
    /// can be merged and a field set twice reported.
    keys: Vec<(Field, Location)>,
}

/// A variable declared under `vars`. Serialized as front matter writes it
/// (`name`, and `description`, `kind`, `example` when set), without where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DeclaredVar {
    /// The name, as templates use it.
    pub name: String,
    /// What it is for: the field's rustdoc.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The declared kind; `None` leaves it to how the templates use it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<VarKind>,
    /// A value to render examples and snapshots with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    /// For a `choice` or `optional_choice`, every value it takes, in the
    /// order declared: the variants of its generated enum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// Where the name is declared.
    #[serde(skip)]
    pub at: Location,
    /// Where each of [`DeclaredVar::values`] is written.
    #[serde(skip)]
    values_at: Vec<Location>,
}

impl DeclaredVar {
    /// Where declared value `i` is written; the declaration's name when it
    /// is not known.
    pub fn value_location(&self, i: usize) -> &Location {
        self.values_at.get(i).unwrap_or(&self.at)
    }
}

/// One named set of values under `examples`. Serialized as `name` and
/// `values`, without where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Example {
    /// Its name (`promptpack render ID --example NAME`).
    pub name: String,
    /// Variable name → value, in the order written.
    pub values: Map<String, Value>,
    /// Where the name is written.
    #[serde(skip)]
    pub at: Location,
    /// Where each variable's name is written, in the order written.
    #[serde(skip)]
    keys: Vec<(String, Location)>,
}

impl Example {
    /// Where this example writes variable `name` as a key, if it does
    /// (for an editor renaming the variable).
    pub fn key_location(&self, name: &str) -> Option<&Location> {
        self.keys.iter().find(|(n, _)| n == name).map(|(_, at)| at)
    }
}

/// The fields set, as front matter writes them: `model`, `config`,
/// `metadata`, `description`, `max_tokens`, `vars` (even empty: it makes a
/// contract) and `examples` (when there are any); `tools` and `response` as
/// the JSON a request sends (each tool as a function, the response as its
/// JSON Schema); not where each is written. What a catalog version stores.
impl Serialize for FrontMatter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in [
            ("model", &self.model),
            ("config", &self.config),
            ("metadata", &self.metadata),
        ] {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(description) = &self.description {
            map.serialize_entry("description", description)?;
        }
        if let Some(max_tokens) = self.max_tokens {
            map.serialize_entry("max_tokens", &max_tokens)?;
        }
        if let Some(vars) = &self.vars {
            map.serialize_entry("vars", vars)?;
        }
        if !self.examples.is_empty() {
            map.serialize_entry("examples", &self.examples)?;
        }
        if let Some(tools) = self.tools_json() {
            map.serialize_entry("tools", &tools)?;
        }
        if let Some(response) = &self.response {
            map.serialize_entry("response", &response.json_schema())?;
        }
        map.end()
    }
}

/// The fields front matter may set.
// Only reading front matter (the `load` feature) makes fields; without it
// the type remains for `FrontMatter` and its methods.
#[cfg_attr(not(feature = "load"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Description,
    Vars,
    Examples,
    Model,
    Config,
    Metadata,
    MaxTokens,
    Tools,
    Response,
}

#[cfg_attr(not(feature = "load"), allow(dead_code))]
impl Field {
    const ALL: [Field; 9] = [
        Field::Description,
        Field::Vars,
        Field::Examples,
        Field::Model,
        Field::Config,
        Field::Metadata,
        Field::MaxTokens,
        Field::Tools,
        Field::Response,
    ];

    fn key(self) -> &'static str {
        match self {
            Field::Description => "description",
            Field::Vars => "vars",
            Field::Examples => "examples",
            Field::Model => "model",
            Field::Config => "config",
            Field::Metadata => "metadata",
            Field::MaxTokens => "max_tokens",
            Field::Tools => "tools",
            Field::Response => "response",
        }
    }

    /// A snippet is part of prompts, not one: only these mean something there.
    fn in_snippets(self) -> bool {
        matches!(self, Field::Description | Field::Vars)
    }
}

impl FrontMatter {
    /// Merges the front matter of a prompt's `user.md` into its
    /// `system.md`'s: a field may be set in one of them, and a variable
    /// declared in one; a second is an error at the second.
    pub fn merge(&mut self, other: FrontMatter, errors: &mut Vec<Diagnostic>) {
        for (field, at) in &other.keys {
            if let Some((_, first)) = self.keys.iter().find(|(f, _)| f == field) {
                if *field == Field::Vars {
                    continue;
                }
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidFrontMatter,
                        format!(
                            "`{}` is set in {} already; a prompt's field is set in one of its files",
                            field.key(),
                            first.path()
                        ),
                    )
                    .at(at.clone()),
                );
            }
        }
        let FrontMatter {
            description,
            vars,
            examples,
            model,
            config,
            metadata,
            max_tokens,
            tools,
            response,
            keys,
        } = other;
        if let Some(vars) = vars {
            let mine = self.vars.get_or_insert_with(Vec::new);
            for var in vars {
                if let Some(first) = mine.iter().find(|v| v.name == var.name) {
                    errors.push(
                        Diagnostic::new(
                            ErrorCode::InvalidFrontMatter,
                            format!(
                                "variable `{}` is declared twice: in {} and here",
                                var.name,
                                first.at.path()
                            ),
                        )
                        .at(var.at.clone()),
                    );
                } else {
                    mine.push(var);
                }
            }
        }
        self.description = self.description.take().or(description);
        if self.examples.is_empty() {
            self.examples = examples;
        }
        self.model = self.model.take().or(model);
        self.config = self.config.take().or(config);
        self.metadata = self.metadata.take().or(metadata);
        self.max_tokens = self.max_tokens.or(max_tokens);
        if self.tools.is_empty() {
            self.tools = tools;
        }
        self.response = self.response.take().or(response);
        self.keys.extend(keys);
    }

    /// Where field `key` (`max_tokens`, `description`…) is set, if it is.
    pub fn location_of(&self, key: &str) -> Option<&Location> {
        self.keys
            .iter()
            .find(|(field, _)| field.key() == key)
            .map(|(_, at)| at)
    }

    /// The declaration of `name`, if any.
    pub fn declared(&self, name: &str) -> Option<&DeclaredVar> {
        self.vars.as_ref()?.iter().find(|v| v.name == name)
    }

    /// The tools as a chat request lists them: a JSON array of
    /// `{"type": "function", "function": {name, description, parameters,
    /// "strict": true}}`; `None` when it declares none (a request then sends
    /// no `tools`: APIs refuse an empty list).
    pub fn tools_json(&self) -> Option<Value> {
        (!self.tools.is_empty()).then(|| Value::Array(self.tools.iter().map(Tool::json).collect()))
    }

    /// `model`, `config` and `metadata`, those set, as one JSON object: what
    /// `PromptId::metadata()` and `Library::metadata` give an application.
    pub fn settings_json(&self) -> Value {
        let mut object = Map::new();
        for (key, value) in [
            ("model", &self.model),
            ("config", &self.config),
            ("metadata", &self.metadata),
        ] {
            if let Some(value) = value {
                object.insert(key.to_string(), value.clone());
            }
        }
        Value::Object(object)
    }

    /// The values to render an example with: the example set `name` (the
    /// first one when `None`) over each declared variable's own `example`.
    /// `None` when the prompt has no example set of that name (and, for
    /// `None`, no examples at all).
    pub fn example_values(&self, name: Option<&str>) -> Option<Map<String, Value>> {
        let mut values = Map::new();
        for var in self.vars.iter().flatten() {
            if let Some(example) = &var.example {
                values.insert(var.name.clone(), example.clone());
            }
        }
        let set = match name {
            Some(name) => Some(self.examples.iter().find(|e| e.name == name)?),
            None => self.examples.first(),
        };
        if set.is_none() && values.is_empty() {
            return None;
        }
        for (key, value) in set.map(|s| &s.values).into_iter().flatten() {
            values.insert(key.clone(), value.clone());
        }
        Some(values)
    }
}

#[cfg(all(test, feature = "load"))]
mod tests;
