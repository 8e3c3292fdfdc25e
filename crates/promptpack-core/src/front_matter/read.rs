//! Reading front matter: the YAML of a file's block, field by field, into a
//! [`FrontMatter`], every problem located at its line in the `.md` file.

use super::yaml::{Node, Yaml, parse_yaml};
use super::{DeclaredVar, Example, Field, FrontMatter};
use crate::error::{Diagnostic, ErrorCode, Location};
use crate::program::VarKind;
use crate::similar::nearest;
use crate::source_file::SourceFile;
use crate::syntax::{is_literal_char, is_var_name};
use serde_json::{Map, Value};

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

pub(super) struct Reader<'f> {
    pub(super) file: &'f SourceFile,
    pub(super) errors: Vec<Diagnostic>,
    pub(super) warnings: Vec<Diagnostic>,
}

impl Reader<'_> {
    pub(super) fn location(&self, node: &Node) -> Location {
        self.file.location(node.span)
    }

    fn error(&mut self, node: &Node, message: impl Into<String>) {
        let at = self.location(node);
        self.errors
            .push(Diagnostic::new(ErrorCode::InvalidFrontMatter, message).at(at));
    }

    pub(super) fn unknown_key(&mut self, key: &Node, name: &str, known: &[&str], of_what: &str) {
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
                Field::Tools => front_matter.tools = self.tools(value),
                Field::Response => front_matter.response = self.response(value),
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
            values: None,
            at: self.location(key),
            values_at: Vec::new(),
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
                         (`description`, `kind`, `values`, `example`), found {found}",
                        var.name
                    ),
                );
                return var;
            }
        };
        let mut example = None;
        let mut values_key = None;
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
                "values" => {
                    values_key = Some(key);
                    if let Some((values, at)) = self.values(&var.name, value) {
                        var.values = Some(values);
                        var.values_at = at;
                    }
                }
                "example" => example = Some(value),
                _ => {
                    let of_what = format!("the declaration of `{}`", var.name);
                    let known = ["description", "kind", "values", "example"];
                    self.unknown_key(key, &field, &known, &of_what);
                }
            }
        }
        // `values` and a choice kind go together: the values are the enum's
        // variants, and a choice without them would be inferred after all.
        match (var.kind, values_key) {
            (Some(kind), None) if kind.is_choice() => {
                let at = var.at.clone();
                self.errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidFrontMatter,
                        format!(
                            "`{}` is declared `{}` without its `values`",
                            var.name,
                            kind.as_str()
                        ),
                    )
                    .at(at)
                    .with_help(format!(
                        "list every value it takes: `{}: {{kind: {}, values: [a, b]}}`",
                        var.name,
                        kind.as_str()
                    )),
                );
            }
            (kind, Some(key)) if !kind.is_some_and(VarKind::is_choice) => {
                let at = self.location(key);
                let declared = kind.map_or("no kind".to_string(), |k| format!("`{}`", k.as_str()));
                self.errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidFrontMatter,
                        format!(
                            "`values` declares the values of a choice, and `{}` has {declared}",
                            var.name
                        ),
                    )
                    .at(at)
                    .with_help(
                        "add `kind: choice` (or `optional_choice`, for a choice that may be absent)",
                    ),
                );
                var.values = None;
                var.values_at.clear();
            }
            _ => {}
        }
        if let Some(example) = example {
            var.example = self.example_value(&var.name, var.kind, example);
        }
        var
    }

    /// A choice's `values`: a non-empty list of distinct values a template
    /// can compare with (letters, digits, spaces, `_`, `-`, `.`), each with
    /// where it is written.
    fn values(&mut self, var: &str, value: &Node) -> Option<(Vec<String>, Vec<Location>)> {
        let Yaml::Seq(items) = &value.value else {
            let found = value.value.kind_name();
            self.error(
                value,
                format!("the `values` of `{var}` are a list (`[teacher, student]`), found {found}"),
            );
            return None;
        };
        if items.is_empty() {
            self.error(value, format!("`{var}` is declared with no `values`"));
            return None;
        }
        let mut values: Vec<String> = Vec::new();
        let mut at = Vec::new();
        let mut ok = true;
        for item in items {
            let text = match &item.value {
                Yaml::String(text) => text.clone(),
                Yaml::Number(n) => n.to_string(),
                other => {
                    let found = other.kind_name();
                    self.error(item, format!("a value of `{var}` is text, found {found}"));
                    ok = false;
                    continue;
                }
            };
            if text.is_empty() || !text.chars().all(is_literal_char) {
                self.error(
                    item,
                    format!(
                        "{text:?} cannot be compared with: a value of `{var}` holds letters, digits, spaces, `_`, `-` and `.`"
                    ),
                );
                ok = false;
                continue;
            }
            if values.contains(&text) {
                self.error(item, format!("value {text:?} of `{var}` is listed twice"));
                ok = false;
                continue;
            }
            values.push(text);
            at.push(self.location(item));
        }
        ok.then_some((values, at))
    }

    fn kind(&mut self, value: &Node) -> Option<VarKind> {
        let names: Vec<&str> = VarKind::ALL.iter().map(|k| k.as_str()).collect();
        if let Yaml::String(name) = &value.value
            && let Some(kind) = VarKind::ALL.into_iter().find(|k| k.as_str() == name)
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
                "`text` is `&str`, `flag` is `bool`, `optional` is `Option<&str>`, \
                 `choice` an enum of its `values`, `optional_choice` an `Option` of one; \
                 a variable compared with values needs no kind (it becomes an enum of them)",
            ),
        );
        None
    }

    /// An example value as JSON, when it fits the variable's kind: a
    /// `flag` takes a boolean, `text` a string or number, `optional` those
    /// or null.
    fn example_value(&mut self, var: &str, kind: Option<VarKind>, value: &Node) -> Option<Value> {
        let fits = if kind == Some(VarKind::Messages) {
            matches!(value.value, Yaml::Seq(_))
        } else {
            !matches!(
                (&value.value, kind),
                (Yaml::Seq(_) | Yaml::Map(_), _)
                    | (Yaml::Bool(_), Some(VarKind::Text))
                    | (
                        Yaml::Bool(_),
                        Some(VarKind::Choice | VarKind::OptionalChoice)
                    )
                    | (
                        Yaml::Null,
                        Some(VarKind::Text | VarKind::Flag | VarKind::Choice)
                    )
                    | (Yaml::String(_) | Yaml::Number(_), Some(VarKind::Flag))
            )
        };
        if fits {
            return Some(value.value.to_json());
        }
        let expected = match kind {
            Some(VarKind::Text) => "a string",
            Some(VarKind::Flag) => "true or false",
            Some(VarKind::Optional) => "a string or null",
            Some(VarKind::Choice) => "one of its values",
            Some(VarKind::OptionalChoice) => "one of its values or null",
            Some(VarKind::Messages) => "a list of messages",
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
                keys: Vec::new(),
            };
            for (var, value) in values {
                let var_name = var.value.key_text();
                example.keys.push((var_name.clone(), self.location(var)));
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
