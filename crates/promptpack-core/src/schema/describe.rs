//! A [`Schema`] as a prompt prints it (`{{schema:response}}`): the shape of
//! the JSON in a compact, TypeScript-like form a model reads well, each
//! field's description as a comment. Fewer tokens than the JSON Schema, and
//! taken from the same declaration, so the instructions cannot drift from
//! what the application reads.

use super::{Schema, SchemaKind};
use std::fmt::Write;

impl Schema {
    /// The compact description of this shape:
    ///
    /// ```text
    /// {
    ///   "reply": string, // what the customer reads
    ///   "category": "billing" | "shipping",
    ///   "order": string | null
    /// }
    /// ```
    pub fn describe(&self) -> String {
        let mut out = String::new();
        write_shape(&mut out, self, 0);
        out
    }
}

fn write_shape(out: &mut String, schema: &Schema, depth: usize) {
    write_kind(out, &schema.kind, depth);
    if schema.nullable {
        out.push_str(" | null");
    }
}

fn write_kind(out: &mut String, kind: &SchemaKind, depth: usize) {
    match kind {
        SchemaKind::String => out.push_str("string"),
        SchemaKind::Integer => out.push_str("integer"),
        SchemaKind::Number => out.push_str("number"),
        SchemaKind::Boolean => out.push_str("boolean"),
        SchemaKind::Enum(values) => {
            let quoted: Vec<String> = values.iter().map(|v| json_string(v)).collect();
            out.push_str(&quoted.join(" | "));
        }
        SchemaKind::Array(item) => {
            let grouped =
                item.nullable || matches!(item.kind, SchemaKind::Enum(ref v) if v.len() > 1);
            if grouped {
                out.push('(');
            }
            write_shape(out, item, depth);
            if grouped {
                out.push(')');
            }
            out.push_str("[]");
        }
        SchemaKind::Object(properties) => {
            if properties.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            for (i, property) in properties.iter().enumerate() {
                indent(out, depth + 1);
                out.push_str(&json_string(&property.name));
                out.push_str(": ");
                write_shape(out, &property.schema, depth + 1);
                if i + 1 < properties.len() {
                    out.push(',');
                }
                if let Some(description) = &property.schema.description {
                    let _ = write!(out, " // {description}");
                }
                out.push('\n');
            }
            indent(out, depth);
            out.push('}');
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}
