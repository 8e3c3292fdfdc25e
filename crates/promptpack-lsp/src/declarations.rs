//! Hover on what front matter declares of the exchange with the model: a
//! tool's name, a field of the response or of a tool's arguments. Says
//! what the model is sent for it (the JSON Schema the build emits), so the
//! compact notation never hides what it means.

use crate::position::location_range;
use lsp_types::Position;
use promptpack_core::error::Location;
use promptpack_core::front_matter::FrontMatter;
use promptpack_core::schema::{Property, Schema};

/// The hover's Markdown for the declaration at `here` in file `path`, if
/// the cursor is on a tool's name or a field's key.
pub(crate) fn hover(front_matter: &FrontMatter, path: &str, here: Position) -> Option<String> {
    let on = |at: &Location| {
        let r = location_range(at);
        at.path() == path
            && r.start.line == here.line
            && r.start.character <= here.character
            && here.character <= r.end.character
    };
    for tool in &front_matter.tools {
        if on(&tool.at) {
            let description = tool
                .description
                .as_deref()
                .unwrap_or("*no description: the model sees only the name and arguments*");
            return Some(format!(
                "**tool `{}`**: {description}\n\nThe request lists it as:\n```json\n{}\n```",
                tool.name,
                pretty(&tool.json())
            ));
        }
        if let Some(text) = field_hover(&tool.parameters, &format!("{} argument", tool.name), &on) {
            return Some(text);
        }
    }
    let response = front_matter.response.as_ref()?;
    field_hover(response, "response field", &on)
}

/// The hover of the field of `schema` (at any depth) whose key `on` holds.
fn field_hover(schema: &Schema, what: &str, on: &dyn Fn(&Location) -> bool) -> Option<String> {
    let mut path = Vec::new();
    let property = find(schema, on, &mut path)?;
    let optional = if property.schema.nullable {
        ", optional (the model writes `null` when it has none)"
    } else {
        ""
    };
    let description = property
        .schema
        .description
        .as_deref()
        .map(|d| format!("\n\n{d}"))
        .unwrap_or_default();
    Some(format!(
        "**{what} `{}`**: {}{optional}{description}\n\nThe model is sent:\n```json\n{}\n```",
        path.join("."),
        property.schema.wanted(),
        pretty(&property.schema.json_schema())
    ))
}

/// The property whose key `on` holds, its path from `schema` in `path`.
fn find<'s>(
    schema: &'s Schema,
    on: &dyn Fn(&Location) -> bool,
    path: &mut Vec<&'s str>,
) -> Option<&'s Property> {
    let properties: &[Property] = match &schema.kind {
        promptpack_core::schema::SchemaKind::Array(item) => return find(item, on, path),
        _ => schema.properties()?,
    };
    for property in properties {
        path.push(&property.name);
        if on(&property.at) {
            return Some(property);
        }
        if let Some(found) = find(&property.schema, on, path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
