//! Reading `response` and `tools`: the compact schema notation of front
//! matter into [`Schema`]s, every mistake located at its line.
//!
//! The notation (README, "Tools and responses"):
//!
//! ```yaml
//! response:
//!   reply: string, what the customer reads          # a type, then a description
//!   order?: string, the order number if any         # `?`: nullable
//!   category: [billing, shipping, other]            # an enum
//!   steps: string[], what to do, in order           # a list
//!   refund?(object, when one is due):               # an object, described
//!     amount: number
//! ```

use super::read::Reader;
use super::yaml::{Node, Yaml};
use crate::error::{Diagnostic, ErrorCode};
use crate::schema::{MAX_DEPTH, Property, Schema, SchemaKind, Tool};
use crate::similar::nearest;
use crate::source_file::Span;
use crate::syntax::is_var_name;

/// The words of the scalar types.
const SCALARS: [&str; 4] = ["string", "integer", "number", "boolean"];

/// The kinds a key may name in parentheses: `name(array, …)`.
const KINDS: [&str; 3] = ["array", "object", "enum"];

/// A property key as written: `name`, `name?`, `name(array, description)`.
struct Key<'k> {
    name: &'k str,
    nullable: bool,
    kind: Option<&'k str>,
    description: Option<&'k str>,
}

impl Reader<'_> {
    fn schema_error(&mut self, node: &Node, message: impl Into<String>) {
        let at = self.location(node);
        self.errors
            .push(Diagnostic::new(ErrorCode::InvalidSchema, message).at(at));
    }

    fn schema_error_with_help(
        &mut self,
        node: &Node,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        let at = self.location(node);
        self.errors.push(
            Diagnostic::new(ErrorCode::InvalidSchema, message)
                .at(at)
                .with_help(help),
        );
    }

    /// The part of a scalar `node` that writes `word`, when the file holds
    /// it as written (a plain scalar); else the whole node.
    fn narrowed(&self, node: &Node, word: &str) -> Node {
        let written = self.file.text().get(node.span.start..node.span.end);
        match written.and_then(|text| text.find(word)) {
            Some(offset) if !word.is_empty() => {
                let start = node.span.start + offset;
                Node {
                    value: Yaml::String(word.to_string()),
                    span: Span {
                        start,
                        end: start + word.len(),
                    },
                }
            }
            _ => node.clone(),
        }
    }

    /// `response:`: a map of the answer's fields.
    pub(super) fn response(&mut self, value: &Node) -> Option<Schema> {
        match &value.value {
            Yaml::Map(pairs) if !pairs.is_empty() => Some(self.object(pairs, 1)),
            Yaml::Map(_) | Yaml::Null => {
                self.schema_error_with_help(
                    value,
                    "`response` declares no field",
                    "give the answer's fields, one a line: `reply: string, what the customer reads`",
                );
                None
            }
            other => {
                let found = other.kind_name();
                self.schema_error_with_help(
                    value,
                    format!("`response` is a map of the answer's fields, found {found}"),
                    "write one field a line: `reply: string, what the customer reads`",
                );
                None
            }
        }
    }

    /// `tools:`: a map of tool names to a description, or to a map of
    /// `description` and `parameters`.
    pub(super) fn tools(&mut self, value: &Node) -> Vec<Tool> {
        let pairs = match &value.value {
            Yaml::Map(pairs) => pairs.as_slice(),
            Yaml::Null => &[],
            other => {
                let found = other.kind_name();
                self.schema_error(
                    value,
                    format!("`tools` is a map of tool names, found {found}"),
                );
                &[]
            }
        };
        let mut tools = Vec::new();
        for (key, declaration) in pairs {
            let name = key.value.key_text();
            if !is_tool_name(&name) {
                self.schema_error(
                    key,
                    format!(
                        "`{name}` is not a tool name (letters, digits, `_` and `-`, 64 at most)"
                    ),
                );
                continue;
            }
            if let Some(tool) = self.tool(name, key, declaration) {
                tools.push(tool);
            }
        }
        tools
    }

    fn tool(&mut self, name: String, key: &Node, value: &Node) -> Option<Tool> {
        let at = self.location(key);
        let mut description = None;
        let pairs = match &value.value {
            Yaml::Null => &[],
            Yaml::String(text) => {
                description = Some(text.trim().to_string());
                &[]
            }
            Yaml::Map(pairs) => pairs.as_slice(),
            other => {
                let found = other.kind_name();
                self.schema_error(
                    value,
                    format!(
                        "tool `{name}` is declared with a description or a map \
                         (`description`, `parameters`), found {found}"
                    ),
                );
                return None;
            }
        };
        let mut parameters = Schema::new(SchemaKind::Object(Vec::new()));
        for (key, value) in pairs {
            let field = key.value.key_text();
            match field.as_str() {
                "description" => match &value.value {
                    Yaml::String(text) => description = Some(text.trim().to_string()),
                    other => {
                        let found = other.kind_name();
                        self.schema_error(
                            value,
                            format!("a description is a string, found {found}"),
                        );
                    }
                },
                "parameters" => match &value.value {
                    Yaml::Map(pairs) => parameters = self.object(pairs, 1),
                    Yaml::Null => {}
                    other => {
                        let found = other.kind_name();
                        self.schema_error_with_help(
                            value,
                            format!("`parameters` is a map of the tool's arguments, found {found}"),
                            "write one argument a line: `order: string, the order number`",
                        );
                    }
                },
                other => self.unknown_key(
                    key,
                    other,
                    &["description", "parameters"],
                    &format!("tool `{name}`"),
                ),
            }
        }
        if description.as_deref().is_none_or(str::is_empty) {
            self.warnings.push(
                Diagnostic::new(
                    ErrorCode::UndescribedTool,
                    format!("tool `{name}` has no description"),
                )
                .at(at.clone())
                .with_help(
                    "the model reads the description to decide when to call the tool: \
                     `description: Looks an order up by its number`",
                ),
            );
        }
        Some(Tool::new(name, description, parameters, at))
    }

    /// The fields of an object, `depth` levels deep.
    fn object(&mut self, pairs: &[(Node, Node)], depth: usize) -> Schema {
        let mut properties: Vec<Property> = Vec::new();
        for (key_node, value) in pairs {
            let text = key_node.value.key_text();
            let Some(key) = self.property_key(key_node, &text) else {
                continue;
            };
            if properties.iter().any(|p| p.name == key.name) {
                self.schema_error(key_node, format!("field `{}` is declared twice", key.name));
                continue;
            }
            let Some(mut schema) = self.property_schema(key_node, &key, value, depth) else {
                continue;
            };
            if key.nullable {
                schema.nullable = true;
            }
            if let Some(description) = key.description {
                schema.description = Some(description.to_string());
            }
            let at = self.location(key_node);
            properties.push(Property::new(key.name, schema, at));
        }
        Schema::new(SchemaKind::Object(properties))
    }

    fn property_key<'k>(&mut self, node: &Node, text: &'k str) -> Option<Key<'k>> {
        let (head, parens) = match text.split_once('(') {
            Some((head, rest)) => match rest.strip_suffix(')') {
                Some(inside) => (head.trim_end(), Some(inside)),
                None => {
                    self.schema_error_with_help(
                        node,
                        format!("`{text}`: the `(` is never closed"),
                        "write `name(array, a description)`",
                    );
                    return None;
                }
            },
            None => (text, None),
        };
        let (name, nullable) = match head.strip_suffix('?') {
            Some(name) => (name, true),
            None => (head, false),
        };
        if !is_var_name(name) || name.starts_with(|c: char| c.is_ascii_digit()) {
            self.schema_error_with_help(
                node,
                format!(
                    "`{name}` is not a field name (letters, digits and `_`, not first a digit)"
                ),
                "a field becomes a Rust field of the generated type; `name?` makes it optional",
            );
            return None;
        }
        let (kind, description) = match parens {
            None => (None, None),
            Some(inside) => match inside.split_once(',') {
                Some((kind, description)) => (Some(kind.trim()), Some(description.trim())),
                None => (Some(inside.trim()), None),
            },
        };
        if let Some(kind) = kind
            && !KINDS.contains(&kind)
        {
            let help = match nearest(kind, KINDS, 1).first() {
                Some(near) => format!("did you mean `{near}`?"),
                None => "the kinds written in parentheses are `array`, `object` and `enum`; \
                         a scalar's type is its value: `name: string, a description`"
                    .to_string(),
            };
            self.schema_error_with_help(node, format!("`{kind}` is not a kind of field"), help);
            return None;
        }
        Some(Key {
            name,
            nullable,
            kind,
            description: description.filter(|d| !d.is_empty()),
        })
    }

    /// The shape of a property whose key is `key` and value `value`.
    fn property_schema(
        &mut self,
        key_node: &Node,
        key: &Key<'_>,
        value: &Node,
        depth: usize,
    ) -> Option<Schema> {
        if depth > MAX_DEPTH {
            self.schema_error(
                key_node,
                format!(
                    "field `{}` nests past {MAX_DEPTH} levels, the most a strict schema takes",
                    key.name
                ),
            );
            return None;
        }
        match key.kind {
            Some("array") => {
                let item = self.value_schema(key, value, depth + 1)?;
                Some(Schema::new(SchemaKind::Array(Box::new(item))))
            }
            Some("object") if !matches!(value.value, Yaml::Map(_)) => {
                let found = value.value.kind_name();
                self.schema_error(
                    value,
                    format!(
                        "`{}(object)` is a map of its fields, found {found}",
                        key.name
                    ),
                );
                None
            }
            Some("enum") if !matches!(value.value, Yaml::Seq(_)) => {
                let found = value.value.kind_name();
                self.schema_error(
                    value,
                    format!(
                        "`{}(enum)` is a list of its values, found {found}",
                        key.name
                    ),
                );
                None
            }
            _ => self.value_schema(key, value, depth),
        }
    }

    /// The shape a property's value writes: a type (`string[], …`), a map
    /// of fields or a list of enum values.
    fn value_schema(&mut self, key: &Key<'_>, value: &Node, depth: usize) -> Option<Schema> {
        match &value.value {
            Yaml::String(text) => self.type_expression(key.name, value, text),
            Yaml::Map(pairs) if !pairs.is_empty() => {
                if depth > MAX_DEPTH {
                    self.schema_error(
                        value,
                        format!(
                            "`{}` nests past {MAX_DEPTH} levels, the most a strict schema takes",
                            key.name
                        ),
                    );
                    return None;
                }
                Some(self.object(pairs, depth + 1))
            }
            Yaml::Seq(items) => self.enum_values(key.name, value, items),
            Yaml::Null | Yaml::Map(_) => {
                self.schema_error_with_help(
                    value,
                    format!("field `{}` has no type", key.name),
                    "give it one: `string`, `integer`, `number`, `boolean`, a list of \
                     values for an enum, or a map of fields for an object",
                );
                None
            }
            other => {
                let found = other.kind_name();
                self.schema_error_with_help(
                    value,
                    format!("field `{}`'s type is {found}", key.name),
                    "write `string`, `integer`, `number` or `boolean`, with `[]` for a list",
                );
                None
            }
        }
    }

    /// `string[], a description`.
    fn type_expression(&mut self, field: &str, node: &Node, text: &str) -> Option<Schema> {
        let (type_text, description) = match text.split_once(',') {
            Some((type_text, description)) => (type_text.trim(), Some(description.trim())),
            None => (text.trim(), None),
        };
        let mut base = type_text;
        let mut lists = 0;
        while let Some(inner) = base.strip_suffix("[]") {
            base = inner.trim_end();
            lists += 1;
        }
        let kind = match base {
            "string" => SchemaKind::String,
            "integer" => SchemaKind::Integer,
            "number" => SchemaKind::Number,
            "boolean" => SchemaKind::Boolean,
            other => {
                let help = match other {
                    "object" | "map" => {
                        "an object is written as a map of its fields, one a line below the key"
                            .to_string()
                    }
                    "array" | "list" => {
                        "a list is its item's type with `[]`: `string[]`".to_string()
                    }
                    "enum" => "an enum is a list of its values: `[low, high]`".to_string(),
                    _ => match nearest(other, SCALARS, 1).first() {
                        Some(near) => format!("did you mean `{near}`?"),
                        None => "the types are `string`, `integer`, `number` and `boolean`, \
                                 with `[]` for a list"
                            .to_string(),
                    },
                };
                let word = self.narrowed(node, other);
                self.schema_error_with_help(
                    &word,
                    format!("`{other}` is not a type (field `{field}`)"),
                    help,
                );
                return None;
            }
        };
        let mut schema = Schema::new(kind);
        for _ in 0..lists {
            schema = Schema::new(SchemaKind::Array(Box::new(schema)));
        }
        if let Some(description) = description.filter(|d| !d.is_empty()) {
            schema.description = Some(description.to_string());
        }
        Some(schema)
    }

    fn enum_values(&mut self, field: &str, node: &Node, items: &[Node]) -> Option<Schema> {
        if items.is_empty() {
            self.schema_error(node, format!("enum `{field}` has no values"));
            return None;
        }
        let mut values: Vec<String> = Vec::new();
        for item in items {
            let value = match &item.value {
                Yaml::String(text) => text.clone(),
                other => {
                    let found = other.kind_name();
                    self.schema_error_with_help(
                        item,
                        format!("an enum's values are strings, found {found}"),
                        "quote it: `\"1\"`",
                    );
                    return None;
                }
            };
            if value.is_empty() {
                self.schema_error(item, format!("enum `{field}` has an empty value"));
                return None;
            }
            if values.contains(&value) {
                self.schema_error(item, format!("enum `{field}` lists `{value}` twice"));
                return None;
            }
            values.push(value);
        }
        Some(Schema::new(SchemaKind::Enum(values)))
    }
}

/// `[A-Za-z0-9_-]{1,64}`: what OpenAI takes as a function's name.
fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}
