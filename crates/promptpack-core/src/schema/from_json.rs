//! A [`Schema`] read back from the JSON Schema [`Schema::json_schema`]
//! writes: how a compiled program's contract keeps the shapes its
//! generated types read, in a file any build can parse.

use super::{Property, Schema, SchemaKind, Tool};
use crate::error::Location;
use serde_json::{Map, Value};

impl Schema {
    /// The shape `json` describes, if it is one [`Schema::json_schema`]
    /// writes; `None` for any other JSON Schema. Properties are located at
    /// `origin` (a file with no position: where the schema was read from).
    pub fn from_json_schema(json: &Value, origin: &str) -> Option<Schema> {
        let object = json.as_object()?;
        let description = object
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut schema = if let Some(union) = object.get("anyOf") {
            // `{"anyOf": [shape, {"type": "null"}]}`: a nullable object.
            let [shape, null] = union.as_array()?.as_slice() else {
                return None;
            };
            if null.get("type").and_then(Value::as_str) != Some("null") {
                return None;
            }
            let mut schema = Schema::from_json_schema(shape, origin)?;
            schema.nullable = true;
            schema
        } else {
            let (type_name, nullable) = type_of(object)?;
            let kind = match type_name {
                "string" => match object.get("enum") {
                    Some(values) => SchemaKind::Enum(
                        values
                            .as_array()?
                            .iter()
                            .filter(|v| !v.is_null())
                            .map(|v| v.as_str().map(str::to_string))
                            .collect::<Option<Vec<String>>>()?,
                    ),
                    None => SchemaKind::String,
                },
                "integer" => SchemaKind::Integer,
                "number" => SchemaKind::Number,
                "boolean" => SchemaKind::Boolean,
                "array" => SchemaKind::Array(Box::new(Schema::from_json_schema(
                    object.get("items")?,
                    origin,
                )?)),
                "object" => SchemaKind::Object(properties(object, origin)?),
                _ => return None,
            };
            Schema {
                kind,
                nullable,
                description: None,
            }
        };
        schema.description = description;
        Some(schema)
    }
}

/// `"type": "x"` or `"type": ["x", "null"]`.
fn type_of(object: &Map<String, Value>) -> Option<(&str, bool)> {
    match object.get("type")? {
        Value::String(name) => Some((name, false)),
        Value::Array(names) => match names.as_slice() {
            [Value::String(name), Value::String(null)] if null == "null" => Some((name, true)),
            _ => None,
        },
        _ => None,
    }
}

fn properties(object: &Map<String, Value>, origin: &str) -> Option<Vec<Property>> {
    object
        .get("properties")?
        .as_object()?
        .iter()
        .map(|(name, schema)| {
            Some(Property::new(
                name.clone(),
                Schema::from_json_schema(schema, origin)?,
                Location::file(origin),
            ))
        })
        .collect()
}

impl Tool {
    /// The tool a chat request's entry (as [`Tool::json`] writes it)
    /// describes, located at `origin`; `None` for any other JSON.
    pub fn from_json(json: &Value, origin: &str) -> Option<Tool> {
        let function = json.get("function")?;
        Some(Tool::new(
            function.get("name")?.as_str()?,
            function
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            Schema::from_json_schema(function.get("parameters")?, origin)?,
            Location::file(origin),
        ))
    }
}
