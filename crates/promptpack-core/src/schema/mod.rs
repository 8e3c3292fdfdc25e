//! What a prompt declares of its exchange with the model: the tools the
//! model may call and the shape of the answer the application reads.
//!
//! Front matter writes them in a compact notation (`reply: string, what the
//! customer reads`; the `load` feature reads it, `front_matter`); here they
//! are a [`Schema`] tree that knows no notation. From it come the JSON Schema
//! each provider is sent ([`Schema::json_schema`], OpenAI's strict subset by
//! construction: closed objects, every property required, an optional field
//! nullable), the compact description a prompt prints with
//! `{{schema:response}}` ([`Schema::describe`]) and the reading of a model's
//! answer (`answer`).

pub mod compat;
mod describe;
mod from_json;
mod json_schema;

use crate::error::Location;

/// The shape of a value: a response, a tool's parameters, or a field of
/// either.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Schema {
    /// What the value is.
    pub kind: SchemaKind,
    /// Whether `null` is a value too: a field declared optional (`name?`).
    /// Optional fields stay required in the JSON Schema (strict mode asks
    /// every property to be), so the model writes `null` for them.
    pub nullable: bool,
    /// What it is for: the field's rustdoc, and the `description` the model
    /// sees.
    pub description: Option<String>,
}

/// What a [`Schema`] holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaKind {
    /// A JSON string.
    String,
    /// A whole number (`i64` in Rust).
    Integer,
    /// Any JSON number (`f64` in Rust).
    Number,
    /// `true` or `false`.
    Boolean,
    /// One of these strings, in the order declared: a generated enum's
    /// variants.
    Enum(Vec<String>),
    /// A list of values of one shape.
    Array(Box<Schema>),
    /// A closed object: these properties, each required, in the order
    /// declared, and no others.
    Object(Vec<Property>),
}

/// A property of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Property {
    /// Its name, as the JSON writes it.
    pub name: String,
    /// Its shape.
    pub schema: Schema,
    /// Where front matter declares it (for an editor's hover, and for
    /// diagnostics about it).
    pub at: Location,
}

/// A tool the model may call: a function with a name, what it does and the
/// arguments it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tool {
    /// Its name, as the model calls it (`[A-Za-z0-9_-]`, 64 at most).
    pub name: String,
    /// What it does, for the model: when to call it.
    pub description: Option<String>,
    /// Its arguments: always an object (a tool without arguments takes an
    /// empty one).
    pub parameters: Schema,
    /// Where front matter declares it.
    pub at: Location,
}

/// The most nesting of objects and arrays a schema may have: OpenAI's
/// strict mode takes ten levels.
pub const MAX_DEPTH: usize = 10;

impl Schema {
    /// A schema of `kind`, not nullable, without a description.
    pub fn new(kind: SchemaKind) -> Schema {
        Schema {
            kind,
            nullable: false,
            description: None,
        }
    }

    /// This schema with `null` a value too.
    pub fn nullable(mut self) -> Schema {
        self.nullable = true;
        self
    }

    /// This schema with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Schema {
        self.description = Some(description.into());
        self
    }

    /// The properties, for an object.
    pub fn properties(&self) -> Option<&[Property]> {
        match &self.kind {
            SchemaKind::Object(properties) => Some(properties),
            _ => None,
        }
    }

    /// What the value is, in a few words (`a string`, `one of "a", "b"`,
    /// `a list of numbers`, `an object`), with `or null` when it is
    /// nullable: what an error about an answer says was wanted.
    pub fn wanted(&self) -> String {
        let base = self.kind.wanted();
        if self.nullable {
            format!("{base} or null")
        } else {
            base
        }
    }
}

impl SchemaKind {
    pub(crate) fn wanted(&self) -> String {
        match self {
            SchemaKind::String => "a string".into(),
            SchemaKind::Integer => "a whole number".into(),
            SchemaKind::Number => "a number".into(),
            SchemaKind::Boolean => "true or false".into(),
            SchemaKind::Enum(values) => {
                let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
                format!("one of {}", quoted.join(", "))
            }
            SchemaKind::Array(item) => format!("a list of {}", item.kind.plural()),
            SchemaKind::Object(_) => "an object".into(),
        }
    }

    fn plural(&self) -> String {
        match self {
            SchemaKind::String => "strings".into(),
            SchemaKind::Integer => "whole numbers".into(),
            SchemaKind::Number => "numbers".into(),
            SchemaKind::Boolean => "booleans".into(),
            SchemaKind::Enum(_) => "strings".into(),
            SchemaKind::Array(_) => "lists".into(),
            SchemaKind::Object(_) => "objects".into(),
        }
    }
}

impl Property {
    /// A property `name` of shape `schema`, declared at `at`.
    pub fn new(name: impl Into<String>, schema: Schema, at: Location) -> Property {
        Property {
            name: name.into(),
            schema,
            at,
        }
    }
}

impl Tool {
    /// A tool `name` taking `parameters` (an object schema), declared at `at`.
    pub fn new(
        name: impl Into<String>,
        description: Option<String>,
        parameters: Schema,
        at: Location,
    ) -> Tool {
        Tool {
            name: name.into(),
            description,
            parameters,
            at,
        }
    }
}

#[cfg(test)]
mod tests;
