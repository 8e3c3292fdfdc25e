//! Front matter: the YAML block at the top of a template or snippet file
//! (`---` lines around it) that documents a prompt, declares its variables,
//! gives example values, carries model settings and sets a token budget.
//!
//! [`SourceFile`] finds the block (with pulldown-cmark) and keeps it out of
//! the body; this module reads the YAML, field by field, into a
//! [`FrontMatter`], every problem located at its line in the `.md` file.

mod declared;
mod yaml;

pub use declared::{apply_contract, unused_snippet_vars};

use crate::error::{Diagnostic, ErrorCode, Location};
use crate::program::VarKind;
use crate::similar::nearest;
use crate::source_file::SourceFile;
use crate::syntax::is_var_name;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};
use yaml::{Node, Yaml, parse_yaml};

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
    pub kind: Option<DeclaredKind>,
    /// A value to render examples and snapshots with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    /// Where the name is declared.
    #[serde(skip)]
    pub at: Location,
}

/// A kind a variable may be declared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeclaredKind {
    /// `text`: `&str`, printed with `{{x}}`.
    Text,
    /// `flag`: `bool`, tested with `{{#if x}}`.
    Flag,
    /// `optional`: `Option<&str>`, printed, tested, or both.
    Optional,
}

impl DeclaredKind {
    /// The kind's name in front matter.
    pub fn as_str(self) -> &'static str {
        match self {
            DeclaredKind::Text => "text",
            DeclaredKind::Flag => "flag",
            DeclaredKind::Optional => "optional",
        }
    }

    /// The kind of the generated field.
    pub fn var_kind(self) -> VarKind {
        match self {
            DeclaredKind::Text => VarKind::Text,
            DeclaredKind::Flag => VarKind::Flag,
            DeclaredKind::Optional => VarKind::Optional,
        }
    }

    const ALL: [DeclaredKind; 3] = [
        DeclaredKind::Text,
        DeclaredKind::Flag,
        DeclaredKind::Optional,
    ];
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
}

/// The fields set, as front matter writes them: `model`, `config`,
/// `metadata`, `description`, `max_tokens`, `vars` (even empty: it makes a
/// contract) and `examples` (when there are any); not where each is
/// written. What a catalog version stores.
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
        map.end()
    }
}

/// The fields front matter may set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Description,
    Vars,
    Examples,
    Model,
    Config,
    Metadata,
    MaxTokens,
}

impl Field {
    const ALL: [Field; 7] = [
        Field::Description,
        Field::Vars,
        Field::Examples,
        Field::Model,
        Field::Config,
        Field::Metadata,
        Field::MaxTokens,
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
        }
    }

    /// A snippet is part of prompts, not one: only these mean something there.
    fn in_snippets(self) -> bool {
        matches!(self, Field::Description | Field::Vars)
    }
}

/// What kind of file front matter is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    /// `system.md` or `user.md` of a template folder.
    Template,
    /// A snippet.
    Snippet,
}

/// A file's front matter and what was wrong with it.
#[derive(Debug, Clone, Default)]
pub struct Read {
    /// The fields that could be read (the rest are left unset).
    pub front_matter: FrontMatter,
    /// Errors: YAML syntax, fields of the wrong shape.
    pub errors: Vec<Diagnostic>,
    /// Warnings: unknown keys, fields with no effect where they are.
    pub warnings: Vec<Diagnostic>,
}

/// Reads `file`'s front matter; a file without one reads as empty.
pub fn read_front_matter(file: &SourceFile, role: FileRole) -> Read {
    let mut read = Read::default();
    let Some(span) = file.front_matter() else {
        return read;
    };
    let root = match parse_yaml(file, span) {
        Ok(root) => root,
        Err(error) => {
            read.errors.push(error);
            return read;
        }
    };
    let mut reader = Reader {
        file,
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let front_matter = match &root.value {
        Yaml::Null => FrontMatter::default(),
        Yaml::Map(pairs) => reader.fields(pairs, role),
        other => {
            reader.error(
                &root,
                format!(
                    "front matter is {}; it must be a map of fields such as `description:`",
                    other.kind_name()
                ),
            );
            FrontMatter::default()
        }
    };
    read.front_matter = front_matter;
    read.errors = reader.errors;
    read.warnings = reader.warnings;
    read
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

struct Reader<'f> {
    file: &'f SourceFile,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn location(&self, node: &Node) -> Location {
        self.file.location(node.span)
    }

    fn error(&mut self, node: &Node, message: impl Into<String>) {
        let at = self.location(node);
        self.errors
            .push(Diagnostic::new(ErrorCode::InvalidFrontMatter, message).at(at));
    }

    fn unknown_key(&mut self, key: &Node, name: &str, known: &[&str], of_what: &str) {
        let near = nearest(name, known.iter().copied(), 1);
        let help = match near.first() {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("known keys: {}", list(known)),
        };
        let at = self.location(key);
        self.warnings.push(
            Diagnostic::new(
                ErrorCode::UnknownKey,
                format!("unknown key `{name}` in {of_what}"),
            )
            .at(at)
            .with_help(help),
        );
    }

    fn fields(&mut self, pairs: &[(Node, Node)], role: FileRole) -> FrontMatter {
        let mut front_matter = FrontMatter::default();
        let keys: Vec<&str> = Field::ALL.iter().map(|f| f.key()).collect();
        for (key, value) in pairs {
            let name = key.value.key_text();
            let Some(field) = Field::ALL.into_iter().find(|f| f.key() == name) else {
                self.unknown_key(key, &name, &keys, "front matter");
                continue;
            };
            if role == FileRole::Snippet && !field.in_snippets() {
                let at = self.location(key);
                self.warnings.push(
                    Diagnostic::new(
                        ErrorCode::UnknownKey,
                        format!("`{name}` has no effect in a snippet"),
                    )
                    .at(at)
                    .with_help(
                        "a snippet's front matter may set `description` and `vars`; \
                         set the rest in the front matter of the templates that include it",
                    ),
                );
                continue;
            }
            front_matter.keys.push((field, self.location(key)));
            match field {
                Field::Description => front_matter.description = self.description(value),
                Field::Vars => front_matter.vars = Some(self.vars(value)),
                Field::Examples => front_matter.examples = self.examples(value),
                Field::Model => front_matter.model = Some(value.value.to_json()),
                Field::Config => front_matter.config = Some(value.value.to_json()),
                Field::Metadata => front_matter.metadata = Some(value.value.to_json()),
                Field::MaxTokens => front_matter.max_tokens = self.max_tokens(value),
            }
        }
        front_matter
    }

    fn description(&mut self, value: &Node) -> Option<String> {
        match &value.value {
            Yaml::String(text) => {
                let text = text.trim();
                if text.contains('\n') {
                    self.error(
                        value,
                        "a description is one line (it becomes a one-line rustdoc summary)",
                    );
                    return None;
                }
                Some(text.to_string())
            }
            other => {
                let found = other.kind_name();
                self.error(value, format!("a description is a string, found {found}"));
                None
            }
        }
    }

    fn max_tokens(&mut self, value: &Node) -> Option<u64> {
        match &value.value {
            Yaml::Number(n) if n.as_u64().is_some_and(|n| n > 0) => n.as_u64(),
            other => {
                let found = match other {
                    Yaml::Number(n) => n.to_string(),
                    other => other.kind_name().to_string(),
                };
                self.error(
                    value,
                    format!("`max_tokens` is a whole number above 0, found {found}"),
                );
                None
            }
        }
    }

    /// The pairs of a field that holds a map (none when it is empty, as
    /// `vars:` alone is); anything else is an error saying what it must be.
    fn map_field<'n>(&mut self, value: &'n Node, what_it_is: &str) -> &'n [(Node, Node)] {
        match &value.value {
            Yaml::Map(pairs) => pairs,
            Yaml::Null => &[],
            other => {
                let found = other.kind_name();
                self.error(value, format!("{what_it_is}, found {found}"));
                &[]
            }
        }
    }

    fn vars(&mut self, value: &Node) -> Vec<DeclaredVar> {
        let pairs = self.map_field(value, "`vars` is a map of variable names");
        let mut vars = Vec::new();
        for (key, declaration) in pairs {
            let name = key.value.key_text();
            if !is_var_name(&name) {
                self.error(
                    key,
                    format!("`{name}` is not a variable name (letters, digits and `_`)"),
                );
                continue;
            }
            vars.push(self.declaration(name, key, declaration));
        }
        vars
    }

    fn declaration(&mut self, name: String, key: &Node, value: &Node) -> DeclaredVar {
        let mut var = DeclaredVar {
            name,
            description: None,
            kind: None,
            example: None,
            at: self.location(key),
        };
        let pairs = match &value.value {
            Yaml::Null => return var,
            Yaml::String(text) => {
                var.description = Some(text.trim().to_string());
                return var;
            }
            Yaml::Map(pairs) => pairs,
            other => {
                let found = other.kind_name();
                self.error(
                    value,
                    format!(
                        "variable `{}` is declared with a description or a map \
                         (`description`, `kind`, `example`), found {found}",
                        var.name
                    ),
                );
                return var;
            }
        };
        let mut example = None;
        for (key, value) in pairs {
            let field = key.value.key_text();
            match field.as_str() {
                "description" => match &value.value {
                    Yaml::String(text) => var.description = Some(text.trim().to_string()),
                    other => {
                        let found = other.kind_name();
                        self.error(value, format!("a description is a string, found {found}"));
                    }
                },
                "kind" => var.kind = self.kind(value),
                "example" => example = Some(value),
                _ => {
                    let of_what = format!("the declaration of `{}`", var.name);
                    self.unknown_key(key, &field, &["description", "kind", "example"], &of_what);
                }
            }
        }
        if let Some(example) = example {
            var.example = self.example_value(&var.name, var.kind, example);
        }
        var
    }

    fn kind(&mut self, value: &Node) -> Option<DeclaredKind> {
        let names: Vec<&str> = DeclaredKind::ALL.iter().map(|k| k.as_str()).collect();
        if let Yaml::String(name) = &value.value
            && let Some(kind) = DeclaredKind::ALL.into_iter().find(|k| k.as_str() == name)
        {
            return Some(kind);
        }
        let found = match &value.value {
            Yaml::String(name) => format!("`{name}`"),
            other => other.kind_name().to_string(),
        };
        let at = self.location(value);
        self.errors.push(
            Diagnostic::new(
                ErrorCode::InvalidFrontMatter,
                format!(
                    "a variable's kind is one of {}, found {found}",
                    list(&names)
                ),
            )
            .at(at)
            .with_help(
                "`text` is `&str`, `flag` is `bool`, `optional` is `Option<&str>`; \
                 a variable compared with values needs no kind (it becomes an enum)",
            ),
        );
        None
    }

    /// An example value as JSON, when it fits the variable's kind: a
    /// `flag` takes a boolean, `text` a string or number, `optional` those
    /// or null.
    fn example_value(
        &mut self,
        var: &str,
        kind: Option<DeclaredKind>,
        value: &Node,
    ) -> Option<Value> {
        let fits = !matches!(
            (&value.value, kind),
            (Yaml::Seq(_) | Yaml::Map(_), _)
                | (Yaml::Bool(_), Some(DeclaredKind::Text))
                | (Yaml::Null, Some(DeclaredKind::Text | DeclaredKind::Flag))
                | (Yaml::String(_) | Yaml::Number(_), Some(DeclaredKind::Flag))
        );
        if fits {
            return Some(value.value.to_json());
        }
        let expected = match kind {
            Some(DeclaredKind::Text) => "a string",
            Some(DeclaredKind::Flag) => "true or false",
            Some(DeclaredKind::Optional) => "a string or null",
            None => "a string, number, boolean or null",
        };
        let kind = kind.map_or(String::new(), |k| format!(" ({})", k.as_str()));
        let found = value.value.kind_name();
        self.error(
            value,
            format!("the example of `{var}`{kind} is {expected}, found {found}"),
        );
        None
    }

    fn examples(&mut self, value: &Node) -> Vec<Example> {
        let pairs = self.map_field(
            value,
            "`examples` is a map of named sets of values (`basic: {name: Ada}`)",
        );
        let mut examples = Vec::new();
        for (key, set) in pairs {
            let name = key.value.key_text();
            let Yaml::Map(values) = &set.value else {
                let found = set.value.kind_name();
                self.error(
                    set,
                    format!("example `{name}` is a map of variable names to values, found {found}"),
                );
                continue;
            };
            let mut example = Example {
                name,
                values: Map::new(),
                at: self.location(key),
            };
            for (var, value) in values {
                let var_name = var.value.key_text();
                if let Some(json) = self.example_value(&var_name, None, value) {
                    example.values.insert(var_name, json);
                }
            }
            examples.push(example);
        }
        examples
    }
}

fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
