//! What a version declares of its exchange with the model, as the pages
//! show it: the tools the model may call (a name, what it does, its
//! arguments as `name: type`) and the shape of the answer the application
//! reads (its compact description, what `{{schema:response}}` prints, and
//! its fields one a row). The same texts are what the diff compares.
//!
//! Everything here is text from the catalog (names, descriptions, enum
//! values): the templates escape it like every other value.

use super::prose::Prose;
use promptpack_core::front_matter::FrontMatter;
use promptpack_core::schema::{Schema, SchemaKind, Tool};

/// A tool as a row of the table.
pub(crate) struct ToolRow {
    pub(crate) name: String,
    pub(crate) description: Prose,
    /// Each argument as `name: type` (`name?: type` when optional).
    pub(crate) arguments: Vec<String>,
}

/// A field of the response as a row of the table: nested fields by their
/// path (`refund.amount`, `lines[].sku`).
pub(crate) struct FieldRow {
    pub(crate) name: String,
    pub(crate) kind: String,
    pub(crate) optional: bool,
    pub(crate) description: Prose,
}

/// The response: what the prompt prints of it, and its fields.
pub(crate) struct ResponseView {
    pub(crate) described: String,
    pub(crate) fields: Vec<FieldRow>,
}

/// A version's tools and response, as its page shows them.
pub(crate) struct Exchange {
    pub(crate) tools: Vec<ToolRow>,
    pub(crate) response: Option<ResponseView>,
}

impl Exchange {
    /// What `front_matter` declares (nothing for none).
    pub(crate) fn of(front_matter: Option<&FrontMatter>) -> Exchange {
        let Some(front_matter) = front_matter else {
            return Exchange {
                tools: Vec::new(),
                response: None,
            };
        };
        Exchange {
            tools: front_matter.tools.iter().map(tool_row).collect(),
            response: front_matter.response.as_ref().map(|schema| ResponseView {
                described: schema.describe(),
                fields: fields(schema),
            }),
        }
    }

    /// Whether the version declares neither tools nor a response.
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.response.is_none()
    }
}

fn tool_row(tool: &Tool) -> ToolRow {
    ToolRow {
        name: tool.name.clone(),
        description: Prose::of(tool.description.as_deref().unwrap_or_default()),
        arguments: tool
            .parameters
            .properties()
            .unwrap_or_default()
            .iter()
            .map(|p| argument(&p.name, &p.schema))
            .collect(),
    }
}

/// `name: type`, or `name?: type` for an argument that may be null.
fn argument(name: &str, schema: &Schema) -> String {
    let mark = if schema.nullable { "?" } else { "" };
    format!("{name}{mark}: {}", type_text(&schema.kind))
}

/// A shape on one line: `string`, `"a" | "b"`, `string[]`, `{ a: string,
/// b?: number }`.
pub(crate) fn type_text(kind: &SchemaKind) -> String {
    match kind {
        SchemaKind::String => "string".to_string(),
        SchemaKind::Integer => "integer".to_string(),
        SchemaKind::Number => "number".to_string(),
        SchemaKind::Boolean => "boolean".to_string(),
        SchemaKind::Enum(values) => values
            .iter()
            .map(|v| serde_json::Value::String(v.clone()).to_string())
            .collect::<Vec<_>>()
            .join(" | "),
        SchemaKind::Array(item) => {
            let inner = type_text(&item.kind);
            let grouped = item.nullable || matches!(&item.kind, SchemaKind::Enum(v) if v.len() > 1);
            match (grouped, item.nullable) {
                (_, true) => format!("({inner} | null)[]"),
                (true, false) => format!("({inner})[]"),
                (false, false) => format!("{inner}[]"),
            }
        }
        SchemaKind::Object(properties) if properties.is_empty() => "{}".to_string(),
        SchemaKind::Object(properties) => {
            let inner: Vec<String> = properties
                .iter()
                .map(|p| argument(&p.name, &p.schema))
                .collect();
            format!("{{ {} }}", inner.join(", "))
        }
        // A kind this console does not know yet: its JSON Schema's type.
        other => Schema::new(other.clone())
            .json_schema()
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("value")
            .to_string(),
    }
}

/// The fields of a response, nested ones by their path; a response that
/// is not an object is one row, `(answer)`.
fn fields(schema: &Schema) -> Vec<FieldRow> {
    let mut rows = Vec::new();
    match &schema.kind {
        SchemaKind::Object(_) => walk("", schema, &mut rows),
        kind => rows.push(FieldRow {
            name: "(answer)".to_string(),
            kind: type_text(kind),
            optional: schema.nullable,
            description: Prose::of(schema.description.as_deref().unwrap_or_default()),
        }),
    }
    rows
}

/// The properties of object `schema` under `prefix`, each followed by its
/// own (an object's, or the objects of a list's).
fn walk(prefix: &str, schema: &Schema, rows: &mut Vec<FieldRow>) {
    for property in schema.properties().unwrap_or_default() {
        let name = format!("{prefix}{}", property.name);
        let inner = &property.schema;
        let (nested, path) = match &inner.kind {
            SchemaKind::Object(properties) if !properties.is_empty() => {
                (Some(inner), format!("{name}."))
            }
            SchemaKind::Array(item) if matches!(&item.kind, SchemaKind::Object(p) if !p.is_empty()) => {
                (Some(&**item), format!("{name}[]."))
            }
            _ => (None, String::new()),
        };
        rows.push(FieldRow {
            kind: match &inner.kind {
                SchemaKind::Object(properties) if !properties.is_empty() => "object".to_string(),
                SchemaKind::Array(item) if nested.is_some() && !item.nullable => {
                    "object[]".to_string()
                }
                SchemaKind::Array(_) if nested.is_some() => "(object | null)[]".to_string(),
                kind => type_text(kind),
            },
            optional: inner.nullable,
            description: Prose::of(inner.description.as_deref().unwrap_or_default()),
            name,
        });
        if let Some(nested) = nested {
            walk(&path, nested, rows);
        }
    }
}

/// The tools as a text to compare: one tool a block, its description and
/// each argument with its own.
pub(crate) fn tools_text(front_matter: Option<&FrontMatter>) -> String {
    let mut out = String::new();
    for tool in front_matter.map(|f| &f.tools[..]).unwrap_or_default() {
        out.push_str(&tool.name);
        if let Some(description) = &tool.description {
            out.push_str(": ");
            out.push_str(description);
        }
        out.push('\n');
        for property in tool.parameters.properties().unwrap_or_default() {
            out.push_str("  ");
            out.push_str(&argument(&property.name, &property.schema));
            if let Some(description) = &property.schema.description {
                out.push_str(" // ");
                out.push_str(description);
            }
            out.push('\n');
        }
    }
    out
}

/// The response as a text to compare: its compact description (empty for
/// none).
pub(crate) fn response_text(front_matter: Option<&FrontMatter>) -> String {
    front_matter
        .and_then(|f| f.response.as_ref())
        .map(|r| format!("{}\n", r.describe()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptpack_core::error::Location;
    use promptpack_core::schema::Property;

    fn at() -> Location {
        Location::file("templates/t/system.md")
    }

    #[test]
    fn shapes_are_written_on_one_line() {
        let string = || Schema::new(SchemaKind::String);
        let levels = SchemaKind::Enum(vec!["a".into(), "b".into()]);
        assert_eq!(type_text(&levels), r#""a" | "b""#);
        assert_eq!(
            type_text(&SchemaKind::Array(Box::new(Schema::new(levels.clone())))),
            r#"("a" | "b")[]"#
        );
        assert_eq!(
            type_text(&SchemaKind::Array(Box::new(string().nullable()))),
            "(string | null)[]"
        );
        let object = SchemaKind::Object(vec![
            Property::new("a", string(), at()),
            Property::new("b", Schema::new(SchemaKind::Number).nullable(), at()),
        ]);
        assert_eq!(type_text(&object), "{ a: string, b?: number }");
    }

    #[test]
    fn nested_fields_are_rows_by_their_path() {
        let line = Schema::new(SchemaKind::Object(vec![Property::new(
            "sku",
            Schema::new(SchemaKind::String).with_description("the <b>article</b>"),
            at(),
        )]));
        let response = Schema::new(SchemaKind::Object(vec![
            Property::new("summary", Schema::new(SchemaKind::String), at()),
            Property::new(
                "lines",
                Schema::new(SchemaKind::Array(Box::new(line))).nullable(),
                at(),
            ),
        ]));
        let rows = fields(&response);
        let shown: Vec<(String, String, bool)> = rows
            .iter()
            .map(|r| (r.name.clone(), r.kind.clone(), r.optional))
            .collect();
        assert_eq!(
            shown,
            [
                ("summary".to_string(), "string".to_string(), false),
                ("lines".to_string(), "object[]".to_string(), true),
                ("lines[].sku".to_string(), "string".to_string(), false),
            ]
        );
    }
}
