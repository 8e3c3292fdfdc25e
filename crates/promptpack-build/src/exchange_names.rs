//! The Rust types of what a prompt declares of its exchange with the model:
//! its `response` (a struct, `<Prompt>Response`, with a struct per object
//! and an enum per enum field, named `<Parent><Field>`) and its `tools`
//! (an args struct each, `<Prompt><Tool>Args`, and the enum of calls,
//! `<Prompt>Tool`). Every name that cannot be one, or would be taken twice
//! within the prompt, is an `invalid_schema` error at its declaration; the
//! names across prompts are checked with the others (`names`).

use heck::ToUpperCamelCase;
use promptpack_core::error::{Diagnostic, ErrorCode, Location};
use promptpack_core::field::field_ident;
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::schema::{Property, Schema, SchemaKind, Tool};
use std::collections::HashMap;

/// The types generated for one prompt's `response` and `tools`.
#[derive(Default)]
pub(crate) struct Exchange {
    /// The response's struct, when the prompt declares a response.
    pub(crate) response: Option<String>,
    /// The enum of tool calls, when the prompt declares tools.
    pub(crate) tool_enum: Option<String>,
    /// Each tool, in the order declared.
    pub(crate) tools: Vec<ToolNames>,
    /// Every struct and enum, each before the types its fields name.
    pub(crate) types: Vec<RustType>,
}

/// The Rust names of one tool.
pub(crate) struct ToolNames {
    /// Its variant of the tool enum.
    pub(crate) variant: String,
    /// Its args struct.
    pub(crate) args: String,
}

/// A generated struct or enum, with what it is for and where it is declared.
pub(crate) struct RustType {
    pub(crate) ident: String,
    /// Its rustdoc.
    pub(crate) doc: String,
    /// What it is, for an error about its name (`the type of field `b`
    /// of `XResponseA``).
    pub(crate) what: String,
    /// The declaration it comes from: a property, a tool, or the prompt's
    /// `system.md` for the response itself.
    pub(crate) at: Location,
    pub(crate) shape: TypeShape,
}

/// What a generated type holds.
pub(crate) enum TypeShape {
    /// A struct of these fields.
    Struct(Vec<RustField>),
    /// An enum: each JSON value with its variant.
    Enum(Vec<(String, String)>),
}

/// A field of a generated struct.
pub(crate) struct RustField {
    /// The key as the JSON writes it.
    pub(crate) name: String,
    /// The Rust field.
    pub(crate) ident: String,
    /// Its Rust type, as written in the struct.
    pub(crate) ty: String,
    /// Whether `null` is a value (the type is an `Option`).
    pub(crate) nullable: bool,
    /// The property's description.
    pub(crate) description: Option<String>,
}

/// The types of `prompt`'s response and tools, its `PromptId` variant
/// being `variant`; every name that cannot be made in `errors`.
pub(crate) fn exchange_of(
    prompt: &ResolvedPrompt,
    variant: &str,
    errors: &mut Vec<Diagnostic>,
) -> Exchange {
    let front_matter = &prompt.front_matter;
    let mut planner = Planner {
        prompt: &prompt.id,
        types: Vec::new(),
        errors,
    };
    let mut exchange = Exchange::default();
    if let Some(response) = &front_matter.response {
        let ident = format!("{variant}Response");
        let doc = format!(
            "The answer of the `{}` prompt, as its front matter's `response` declares it.\n\n\
             Ask the model for it with [`{ident}::FORMAT`] as the request's\n\
             `response_format`, and read its answer with [`{ident}::parse`].",
            prompt.id
        );
        let at = Location::file(prompt.system_path.clone());
        let what = format!("the response of `{}`", prompt.id);
        planner.object(&ident, doc, what, at, properties_of(response));
        exchange.response = Some(ident);
    }
    if !front_matter.tools.is_empty() {
        exchange.tool_enum = Some(format!("{variant}Tool"));
    }
    let mut variants: HashMap<String, String> = HashMap::new();
    for tool in &front_matter.tools {
        let Some(names) = planner.tool(variant, tool, &mut variants) else {
            continue;
        };
        exchange.tools.push(names);
    }
    exchange.types = planner.types;
    exchange
}

/// An object's properties: none for a schema of another kind (the notation
/// makes every response and every tool's parameters an object).
fn properties_of(schema: &Schema) -> &[Property] {
    schema.properties().unwrap_or(&[])
}

/// Walks the schemas, naming each type and field.
struct Planner<'a> {
    prompt: &'a str,
    types: Vec<RustType>,
    errors: &'a mut Vec<Diagnostic>,
}

impl Planner<'_> {
    fn refuse(&mut self, at: &Location, message: String, help: &str) {
        self.errors.push(
            Diagnostic::new(ErrorCode::InvalidSchema, message)
                .at(at.clone())
                .with_help(help),
        );
    }

    /// The names of `tool`, its args struct planned; `None` when its name
    /// makes no variant, or the variant of another tool.
    fn tool(
        &mut self,
        variant: &str,
        tool: &Tool,
        variants: &mut HashMap<String, String>,
    ) -> Option<ToolNames> {
        let camel = tool.name.to_upper_camel_case();
        if !is_type_name(&camel) {
            self.refuse(
                &tool.at,
                format!(
                    "tool `{}` of prompt `{}` cannot become a Rust name",
                    tool.name, self.prompt
                ),
                "start the tool's name with a letter",
            );
            return None;
        }
        if let Some(other) = variants.get(&camel) {
            self.refuse(
                &tool.at,
                format!(
                    "tools `{other}` and `{}` of prompt `{}` both become `{variant}Tool::{camel}`",
                    tool.name, self.prompt
                ),
                "rename one of the tools",
            );
            return None;
        }
        variants.insert(camel.clone(), tool.name.clone());
        let args = format!("{variant}{camel}Args");
        let mut doc = format!(
            "The arguments of tool `{}` of the `{}` prompt: read them from a\n\
             call with [`{args}::parse`].",
            tool.name, self.prompt
        );
        if let Some(description) = &tool.description {
            doc = format!("{description}\n\n{doc}");
        }
        let what = format!("the arguments of tool `{}` of `{}`", tool.name, self.prompt);
        self.object(
            &args,
            doc,
            what,
            tool.at.clone(),
            properties_of(&tool.parameters),
        );
        Some(ToolNames {
            variant: camel,
            args,
        })
    }

    /// Plans the struct `ident` of `properties`, then the types its fields
    /// name.
    fn object(
        &mut self,
        ident: &str,
        doc: String,
        what: String,
        at: Location,
        properties: &[Property],
    ) {
        let index = self.types.len();
        self.types.push(RustType {
            ident: ident.to_string(),
            doc,
            what,
            at,
            shape: TypeShape::Struct(Vec::new()),
        });
        let mut fields: Vec<RustField> = Vec::new();
        for property in properties {
            let Some(field) = field_ident(&property.name) else {
                self.refuse(
                    &property.at,
                    format!(
                        "field `{}` of `{ident}` cannot become a Rust field",
                        property.name
                    ),
                    "put a letter before the first digit",
                );
                continue;
            };
            if let Some(other) = fields.iter().find(|f| f.ident == field) {
                let message = format!(
                    "fields `{}` and `{}` of `{ident}` both become the Rust field `{field}`",
                    other.name, property.name
                );
                self.refuse(&property.at, message, "rename one of the fields");
                continue;
            }
            let nested = format!("{ident}{}", property.name.to_upper_camel_case());
            let Some(ty) = self.field_type(&property.schema, &nested, ident, property) else {
                continue;
            };
            fields.push(RustField {
                name: property.name.clone(),
                ident: field,
                ty,
                nullable: property.schema.nullable,
                description: property.schema.description.clone(),
            });
        }
        self.types[index].shape = TypeShape::Struct(fields);
    }

    /// The Rust type of `schema`, the type of field `property` of struct
    /// `parent`, any struct or enum it needs planned as `nested`.
    fn field_type(
        &mut self,
        schema: &Schema,
        nested: &str,
        parent: &str,
        property: &Property,
    ) -> Option<String> {
        let base = match &schema.kind {
            SchemaKind::String => "String".to_string(),
            SchemaKind::Integer => "i64".to_string(),
            SchemaKind::Number => "f64".to_string(),
            SchemaKind::Boolean => "bool".to_string(),
            SchemaKind::Enum(values) => {
                let doc = format!(
                    "The values of the `{}` field of [`{parent}`].",
                    property.name
                );
                let what = format!("the enum of field `{}` of `{parent}`", property.name);
                self.enumeration(nested, doc, what, property, values)?;
                nested.to_string()
            }
            SchemaKind::Array(item) => {
                format!("Vec<{}>", self.field_type(item, nested, parent, property)?)
            }
            SchemaKind::Object(properties) => {
                // A list's item says so: `lines: Vec<XResponseLines>`.
                let of = if matches!(property.schema.kind, SchemaKind::Array(_)) {
                    "An item of the"
                } else {
                    "The"
                };
                let mut doc = format!("{of} `{}` field of [`{parent}`].", property.name);
                if let Some(description) = &property.schema.description {
                    doc = format!("{description}\n\n{doc}");
                }
                let what = format!("the type of field `{}` of `{parent}`", property.name);
                self.object(nested, doc, what, property.at.clone(), properties);
                nested.to_string()
            }
            _ => {
                let message = format!(
                    "field `{}` of `{parent}` has a kind of schema this promptpack-build cannot generate",
                    property.name
                );
                self.refuse(
                    &property.at,
                    message,
                    "use promptpack-build of promptpack's version",
                );
                return None;
            }
        };
        Some(if schema.nullable {
            format!("Option<{base}>")
        } else {
            base
        })
    }

    /// Plans the enum `ident` of `values`; `None` when a value makes no
    /// variant, or the variant of another value.
    fn enumeration(
        &mut self,
        ident: &str,
        doc: String,
        what: String,
        property: &Property,
        values: &[String],
    ) -> Option<()> {
        let mut variants: Vec<(String, String)> = Vec::new();
        for value in values {
            let camel = value.to_upper_camel_case();
            if !is_type_name(&camel) {
                self.refuse(
                    &property.at,
                    format!(
                        "value {value:?} of field `{}` cannot become a variant of `{ident}`",
                        property.name
                    ),
                    "start the value with a letter",
                );
                return None;
            }
            if let Some((other, _)) = variants.iter().find(|(_, v)| *v == camel) {
                self.refuse(
                    &property.at,
                    format!(
                        "values {other:?} and {value:?} of field `{}` both become `{ident}::{camel}`",
                        property.name
                    ),
                    "spell one of the values another way",
                );
                return None;
            }
            variants.push((value.clone(), camel));
        }
        self.types.push(RustType {
            ident: ident.to_string(),
            doc,
            what,
            at: property.at.clone(),
            shape: TypeShape::Enum(variants),
        });
        Some(())
    }
}

/// Whether `camel` (a name in UpperCamelCase) is a Rust type or variant
/// name: a letter first, then letters and digits, and not `Self`.
fn is_type_name(camel: &str) -> bool {
    camel.starts_with(|c: char| c.is_ascii_alphabetic())
        && camel.chars().all(|c| c.is_ascii_alphanumeric())
        && camel != "Self"
}
