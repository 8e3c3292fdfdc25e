//! The types of a prompt's `response` and `tools`: a serde struct per
//! object and an enum per enum field, the response's `parse` and `FORMAT`
//! (`promptpack::Response`), each tool's args struct with its `parse`, and
//! the enum of tool calls. The JSON a request sends is written here as
//! text, once; the schema tree that reading an answer reports against is
//! built by code that runs only when the answer does not fit.

use crate::exchange_names::{Exchange, RustField, RustType, TypeShape};
use crate::rust_source::{Source, lit};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::schema::{Schema, SchemaKind, Tool};
use serde_json::Value;

/// Every type of `prompt`'s response and tools, with their impls.
pub(super) fn exchange_types(
    out: &mut Source,
    prompt: &ResolvedPrompt,
    exchange: &Exchange,
    runtime: &str,
) {
    for rust_type in &exchange.types {
        match &rust_type.shape {
            TypeShape::Struct(fields) => serde_struct(out, rust_type, fields, runtime),
            TypeShape::Enum(values) => serde_enum(out, rust_type, values, runtime),
        }
    }
    if let (Some(ident), Some(response)) = (&exchange.response, &prompt.front_matter.response) {
        response_impls(out, prompt, ident, response, runtime);
    }
    if let Some(ident) = &exchange.tool_enum {
        let tools = &prompt.front_matter.tools;
        for (tool, names) in tools.iter().zip(&exchange.tools) {
            args_impls(out, prompt, tool, &names.args, runtime);
        }
        tool_enum(out, prompt, ident, exchange, runtime);
    }
}

/// The derives and the serde attribute of a struct: serde named through
/// the runtime, which the user's crate may not depend on.
fn serde_derives(out: &mut Source, std_derives: &str, runtime: &str) {
    out.line(format!(
        "#[derive({std_derives}, {runtime}::__private::serde::Serialize, {runtime}::__private::serde::Deserialize)]"
    ));
}

/// A struct of fields, each renamed to its JSON key when the Rust field is
/// spelled otherwise; a nullable one required all the same.
fn serde_struct(out: &mut Source, rust_type: &RustType, fields: &[RustField], runtime: &str) {
    out.doc(&rust_type.doc);
    // `PartialEq` only: a number is an `f64`.
    serde_derives(out, "Debug, Clone, ::core::cmp::PartialEq", runtime);
    // Not `deny_unknown_fields`: a newer version of the prompt may add an
    // optional field (README, "What a live version may change"), which a
    // program built before it reads past.
    out.line(format!("#[serde(crate = \"{runtime}::__private::serde\")]"));
    out.open(format!("pub struct {} {{", rust_type.ident));
    for field in fields {
        match &field.description {
            Some(description) => out.doc(description),
            None => out.doc(&format!("`{}`.", field.name)),
        }
        if field.nullable {
            out.line("///");
            out.doc("`None` is `null`: the key is there all the same, as the strict schema asks.");
        }
        if field.ident.trim_start_matches("r#") != field.name {
            out.line(format!("#[serde(rename = {})]", lit(&field.name)));
        }
        if field.nullable {
            // serde's derive reads a missing `Option` as `None`: this makes
            // the key required, `null` a value.
            out.line(format!(
                "#[serde(deserialize_with = \"{runtime}::__private::nullable\")]"
            ));
        }
        out.line(format!("pub {}: {},", field.ident, field.ty));
    }
    out.close("}");
    out.line("");
}

/// An enum of JSON strings, each variant renamed to its value.
fn serde_enum(out: &mut Source, rust_type: &RustType, values: &[(String, String)], runtime: &str) {
    out.doc(&rust_type.doc);
    serde_derives(
        out,
        "Debug, Clone, Copy, ::core::cmp::PartialEq, Eq, Hash",
        runtime,
    );
    out.line(format!("#[serde(crate = \"{runtime}::__private::serde\")]"));
    out.open(format!("pub enum {} {{", rust_type.ident));
    for (value, variant) in values {
        out.doc(&format!("`{value:?}`"));
        out.line(format!("#[serde(rename = {})]", lit(value)));
        out.line(format!("{variant},"));
    }
    out.close("}");
    out.line("");
    out.open(format!("impl {} {{", rust_type.ident));
    out.line("/// The value as the JSON writes it.");
    out.open("pub const fn as_str(self) -> &'static str {");
    out.open("match self {");
    for (value, variant) in values {
        out.line(format!("Self::{variant} => {},", lit(value)));
    }
    out.close("}");
    out.close("}");
    out.close("}");
    out.line("");
}

/// `parse` and `FORMAT` of the response struct, inherent (no trait to
/// import) and as `Response`.
fn response_impls(
    out: &mut Source,
    prompt: &ResolvedPrompt,
    ident: &str,
    response: &Schema,
    runtime: &str,
) {
    out.open(format!("impl {ident} {{"));
    out.doc(&format!(
        "The `response_format` of a chat request asking for this answer: the\n\
         strict JSON Schema of the `{}` prompt's `response`, named `{}`.",
        prompt.id,
        format_name(&prompt.id)
    ));
    out.line(format!(
        "pub const FORMAT: {runtime}::RequestJson = <Self as {runtime}::Response>::FORMAT;"
    ));
    out.line("");
    out.doc(
        "Reads the answer from the model's text: every key of the schema\n\
         present (a nullable one as `null`), no other. Fails with\n\
         `answer_not_json` or `answer_mismatch`.",
    );
    out.open(format!(
        "pub fn parse(text: &str) -> Result<Self, {runtime}::Error> {{"
    ));
    out.line(format!("<Self as {runtime}::Response>::parse(text)"));
    out.close("}");
    out.close("}");
    out.line("");
    let format = response.response_format(&format_name(&prompt.id));
    out.open(format!("impl {runtime}::Response for {ident} {{"));
    out.line(format!(
        "const FORMAT: {runtime}::RequestJson = {runtime}::RequestJson::__new({});",
        json_lit(&format)
    ));
    out.line("");
    out.open(format!(
        "fn parse(text: &str) -> Result<Self, {runtime}::Error> {{"
    ));
    out.open(format!(
        "__p::parse_answer({}, {}, text, || {{",
        lit(&prompt.id),
        hash_expr(prompt)
    ));
    schema_expr(out, response, "");
    out.close("})");
    out.close("}");
    out.close("}");
    out.line("");
}

/// `NAME` and `parse` of a tool's args struct.
fn args_impls(out: &mut Source, prompt: &ResolvedPrompt, tool: &Tool, args: &str, runtime: &str) {
    out.open(format!("impl {args} {{"));
    out.line("/// The tool's name, as the model calls it.");
    out.line(format!(
        "pub const NAME: &'static str = {};",
        lit(&tool.name)
    ));
    out.line("");
    out.doc(&format!(
        "Reads the arguments of a call of `{}`, the JSON text of the call's\n\
         `arguments`: every key present (a nullable one as `null`), no\n\
         other. Fails with `answer_not_json` or `answer_mismatch`.",
        tool.name
    ));
    out.open(format!(
        "pub fn parse(arguments: &str) -> Result<Self, {runtime}::Error> {{"
    ));
    out.open(format!(
        "__p::parse_arguments({}, {}, Self::NAME, arguments, || {{",
        lit(&prompt.id),
        hash_expr(prompt)
    ));
    let description = match &tool.description {
        Some(d) => format!("Some({})", lit(d)),
        None => "None".to_string(),
    };
    out.open(format!("__p::tool({}, {description},", lit(&tool.name)));
    schema_expr(out, &tool.parameters, ",");
    out.close(format!("{})", lit(tool.at.path())));
    out.close("})");
    out.close("}");
    out.close("}");
    out.line("");
}

/// The enum of the prompt's tool calls: a variant per tool holding its
/// arguments, `parse` by name, `name`, `NAMES` and `TOOLS`.
fn tool_enum(
    out: &mut Source,
    prompt: &ResolvedPrompt,
    ident: &str,
    exchange: &Exchange,
    runtime: &str,
) {
    let tools = &prompt.front_matter.tools;
    out.doc(&format!(
        "A call of one of the tools of the `{}` prompt, its arguments read:\n\
         [`{ident}::parse`] takes the name and the arguments of a model's\n\
         tool call. [`{ident}::TOOLS`] lists the tools for the request.",
        prompt.id
    ));
    out.line("#[derive(Debug, Clone, ::core::cmp::PartialEq)]");
    out.open(format!("pub enum {ident} {{"));
    for (tool, names) in tools.iter().zip(&exchange.tools) {
        match &tool.description {
            Some(description) => out.doc(&format!("`{}`: {description}", tool.name)),
            None => out.doc(&format!("`{}`.", tool.name)),
        }
        out.line(format!("{}({}),", names.variant, names.args));
    }
    out.close("}");
    out.line("");
    out.open(format!("impl {ident} {{"));
    out.line("/// Every tool's name, in the order the front matter declares them.");
    let names: Vec<String> = exchange
        .tools
        .iter()
        .map(|n| format!("{}::NAME", n.args))
        .collect();
    out.line(format!(
        "pub const NAMES: [&'static str; {}] = [{}];",
        names.len(),
        names.join(", ")
    ));
    out.line("");
    out.doc(
        "The tools as a chat request lists them: a JSON array of\n\
         `{\"type\": \"function\", \"function\": {…, \"strict\": true}}`.",
    );
    // The enum is written only for a prompt that declares tools.
    let json = prompt.front_matter.tools_json().unwrap_or_default();
    out.line(format!(
        "pub const TOOLS: {runtime}::RequestJson = {runtime}::RequestJson::__new({});",
        json_lit(&json)
    ));
    out.line("");
    out.doc(
        "Reads a tool call: `name` is the tool the model called, `arguments`\n\
         the JSON text of its arguments. A name that is none of the tools\n\
         fails with `answer_mismatch`, as do arguments that do not fit.",
    );
    out.open(format!(
        "pub fn parse(name: &str, arguments: &str) -> Result<Self, {runtime}::Error> {{"
    ));
    out.open("match name {");
    for (tool, names) in tools.iter().zip(&exchange.tools) {
        out.line(format!(
            "{} => {}::parse(arguments).map(Self::{}),",
            lit(&tool.name),
            names.args,
            names.variant
        ));
    }
    out.line(format!(
        "_ => Err(__p::unknown_tool({}, {}, name, &Self::NAMES)),",
        lit(&prompt.id),
        hash_expr(prompt)
    ));
    out.close("}");
    out.close("}");
    out.line("");
    out.line("/// The name of the tool called.");
    out.open("pub const fn name(&self) -> &'static str {");
    out.open("match self {");
    for names in &exchange.tools {
        out.line(format!(
            "Self::{}(_) => {}::NAME,",
            names.variant, names.args
        ));
    }
    out.close("}");
    out.close("}");
    out.close("}");
    out.line("");
    out.open(format!("impl {runtime}::ToolCall for {ident} {{"));
    out.line(format!(
        "const TOOLS: {runtime}::RequestJson = {ident}::TOOLS;"
    ));
    out.line("");
    out.open(format!(
        "fn parse(name: &str, arguments: &str) -> Result<Self, {runtime}::Error> {{"
    ));
    out.line(format!("{ident}::parse(name, arguments)"));
    out.close("}");
    out.line("");
    out.open("fn name(&self) -> &'static str {");
    out.line(format!("{ident}::name(self)"));
    out.close("}");
    out.close("}");
    out.line("");
}

/// The prompt's content hash as an expression, for the spans of the reads
/// of its answers (the vars struct's `HASH` is not in scope here).
fn hash_expr(prompt: &ResolvedPrompt) -> String {
    format!("__p::PromptHash::new({})", prompt.hash)
}

/// Code that builds `schema` again, as an expression over the lines it
/// takes at the current depth, `tail` (a `,`, or nothing) after it.
fn schema_expr(out: &mut Source, schema: &Schema, tail: &str) {
    let mut modifiers = String::new();
    if schema.nullable {
        modifiers.push_str(".nullable()");
    }
    if let Some(description) = &schema.description {
        modifiers.push_str(&format!(".with_description({})", lit(description)));
    }
    modifiers.push_str(tail);
    let scalar = |name: &str| format!("__p::Schema::new(__p::SchemaKind::{name}){modifiers}");
    match &schema.kind {
        SchemaKind::String => out.line(scalar("String")),
        SchemaKind::Integer => out.line(scalar("Integer")),
        SchemaKind::Number => out.line(scalar("Number")),
        SchemaKind::Boolean => out.line(scalar("Boolean")),
        SchemaKind::Enum(values) => {
            let values: Vec<String> = values
                .iter()
                .map(|v| format!("{}.into()", lit(v)))
                .collect();
            out.line(format!(
                "__p::Schema::new(__p::SchemaKind::Enum(vec![{}])){modifiers}",
                values.join(", ")
            ));
        }
        SchemaKind::Array(item) => {
            out.open("__p::Schema::new(__p::SchemaKind::Array(Box::new(");
            schema_expr(out, item, "");
            out.close(format!("))){modifiers}"));
        }
        SchemaKind::Object(properties) if properties.is_empty() => {
            out.line(format!(
                "__p::Schema::new(__p::SchemaKind::Object(Vec::new())){modifiers}"
            ));
        }
        SchemaKind::Object(properties) => {
            out.open("__p::Schema::new(__p::SchemaKind::Object(vec![");
            for property in properties {
                out.open(format!("__p::property({},", lit(&property.name)));
                schema_expr(out, &property.schema, ",");
                out.close(format!("{}),", lit(property.at.path())));
            }
            out.close(format!("])){modifiers}"));
        }
        // `exchange_names` refuses a kind it does not know: never written.
        _ => out.line(format!(
            "::core::compile_error!(\"a kind of schema promptpack-build does not know\"){modifiers}"
        )),
    }
}

/// The name a response format gives its schema: the prompt id, in what
/// OpenAI takes (`[A-Za-z0-9_-]`, 64 at most).
fn format_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// `json`, compact, as a Rust string literal.
fn json_lit(json: &Value) -> String {
    lit(&json.to_string())
}
