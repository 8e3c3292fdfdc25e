//! A [`Schema`] as the JSON Schema providers take, in OpenAI's strict
//! subset: every object closed (`additionalProperties: false`) with every
//! property required; an optional field is nullable instead of absent.

use super::{Schema, SchemaKind, Tool};
use serde_json::{Map, Value, json};

impl Schema {
    /// The JSON Schema of this shape: what a request sends as a response
    /// format or a tool's `parameters`.
    pub fn json_schema(&self) -> Value {
        let mut schema = match &self.kind {
            SchemaKind::String => typed("string", self.nullable),
            SchemaKind::Integer => typed("integer", self.nullable),
            SchemaKind::Number => typed("number", self.nullable),
            SchemaKind::Boolean => typed("boolean", self.nullable),
            SchemaKind::Enum(values) => {
                let mut schema = typed("string", self.nullable);
                let mut values: Vec<Value> = values.iter().map(|v| json!(v)).collect();
                if self.nullable {
                    values.push(Value::Null);
                }
                schema.insert("enum".into(), Value::Array(values));
                schema
            }
            SchemaKind::Array(item) => {
                let mut schema = typed("array", self.nullable);
                schema.insert("items".into(), item.json_schema());
                schema
            }
            SchemaKind::Object(properties) => {
                let mut object = Map::new();
                object.insert("type".into(), json!("object"));
                object.insert(
                    "properties".into(),
                    Value::Object(
                        properties
                            .iter()
                            .map(|p| (p.name.clone(), p.schema.json_schema()))
                            .collect(),
                    ),
                );
                object.insert(
                    "required".into(),
                    Value::Array(properties.iter().map(|p| json!(p.name)).collect()),
                );
                object.insert("additionalProperties".into(), Value::Bool(false));
                if self.nullable {
                    // Strict mode has no `"type": ["object", "null"]`
                    // with properties; a union is how it says so.
                    let mut union = Map::new();
                    union.insert(
                        "anyOf".into(),
                        json!([Value::Object(object), {"type": "null"}]),
                    );
                    union
                } else {
                    object
                }
            }
        };
        if let Some(description) = &self.description {
            schema.insert("description".into(), json!(description));
        }
        Value::Object(schema)
    }

    /// The OpenAI `response_format` of a response of this shape, named
    /// `name`: `{"type": "json_schema", "json_schema": {"name", "strict":
    /// true, "schema"}}`.
    pub fn response_format(&self, name: &str) -> Value {
        json!({
            "type": "json_schema",
            "json_schema": {
                "name": name,
                "strict": true,
                "schema": self.json_schema(),
            }
        })
    }
}

/// `{"type": name}`, or `{"type": [name, "null"]}`.
fn typed(name: &str, nullable: bool) -> Map<String, Value> {
    let mut schema = Map::new();
    let type_value = if nullable {
        json!([name, "null"])
    } else {
        json!(name)
    };
    schema.insert("type".into(), type_value);
    schema
}

impl Tool {
    /// The tool as a chat request lists it: `{"type": "function",
    /// "function": {"name", "description", "parameters", "strict": true}}`.
    pub fn json(&self) -> Value {
        let mut function = Map::new();
        function.insert("name".into(), json!(self.name));
        if let Some(description) = &self.description {
            function.insert("description".into(), json!(description));
        }
        function.insert("parameters".into(), self.parameters.json_schema());
        function.insert("strict".into(), Value::Bool(true));
        json!({"type": "function", "function": Value::Object(function)})
    }
}
