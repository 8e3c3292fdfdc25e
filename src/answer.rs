//! Reading a model's answer and a tool call's arguments into the generated
//! types: the functions the generated `parse`s call, and serde's helper for
//! a nullable field.

use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
use promptpack_core::schema::{Property, Schema, Tool};
use serde::de::{Deserialize, DeserializeOwned, Deserializer};

/// Reads a response of type `T` from a model's `text`; `schema` builds the
/// response's schema, for the error's help only (no work on success).
// MERGE: read_typed — `promptpack_core::answer::read_typed(text, schema)`,
// which finds the JSON in the text (fenced, after prose) and locates each
// mismatch, replaces the body below.
pub fn parse_answer<T: DeserializeOwned>(text: &str, schema: impl FnOnce() -> Schema) -> Result<T> {
    serde_json::from_str(text).map_err(|e| not_read("the answer", &e, || schema().describe()))
}

/// Reads the `arguments` of a call of a tool into its generated args type
/// `T`; `tool` builds the tool, for the error's help only.
// MERGE: read_typed — `promptpack_core::answer::read_arguments(arguments,
// &tool())` then `serde_json::from_value`, or this on the error path only.
pub fn parse_arguments<T: DeserializeOwned>(
    arguments: &str,
    tool: impl FnOnce() -> Tool,
) -> Result<T> {
    serde_json::from_str(arguments).map_err(|e| {
        let tool = tool();
        let what = format!("the arguments of `{}`", tool.name);
        not_read(&what, &e, || tool.parameters.describe())
    })
}

/// The error of a text serde_json did not read as `T`: `answer_not_json`
/// when it is no JSON, `answer_mismatch` when the JSON has another shape,
/// the shape wanted as its help.
fn not_read(what: &str, error: &serde_json::Error, shape: impl FnOnce() -> String) -> Error {
    let code = match error.classify() {
        serde_json::error::Category::Data => ErrorCode::AnswerMismatch,
        _ => ErrorCode::AnswerNotJson,
    };
    let message = match code {
        ErrorCode::AnswerMismatch => format!("{what} does not fit its schema: {error}"),
        _ => format!("{what} is not JSON: {error}"),
    };
    Error::from(Diagnostic::new(code, message).with_help(format!("the shape wanted:\n{}", shape())))
}

/// The error of a tool call naming none of the prompt's tools.
pub fn unknown_tool(name: &str, known: &[&str]) -> Error {
    let tools = known.join(", ");
    let help = match promptpack_core::similar::nearest(name, known.iter().copied(), 1).first() {
        Some(near) => format!("did you mean `{near}`? The tools are: {tools}"),
        None => format!("the tools are: {tools}"),
    };
    Error::from(
        Diagnostic::new(
            ErrorCode::AnswerMismatch,
            format!("the model called `{name}`, which is not a tool of the prompt"),
        )
        .with_help(help),
    )
}

/// serde's `deserialize_with` of a nullable field: `null` reads as `None`,
/// and the key is required, as the strict schema says (serde's derive
/// defaults a missing `Option` to `None` otherwise).
pub fn nullable<'de, D, T>(deserializer: D) -> std::result::Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// A property of a generated schema, declared in the file at `path`.
pub fn property(name: &str, schema: Schema, path: &str) -> Property {
    Property::new(name, schema, Location::file(path))
}

/// A tool of a generated schema, declared in the file at `path`.
pub fn tool(name: &str, description: Option<&str>, parameters: Schema, path: &str) -> Tool {
    Tool::new(
        name,
        description.map(str::to_string),
        parameters,
        Location::file(path),
    )
}
