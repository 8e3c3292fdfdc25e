//! Reading a model's answer and a tool call's arguments into the generated
//! types: the functions the generated `parse`s call, and serde's helper for
//! a nullable field.

use crate::prompt::PromptHash;
use crate::trace::ReadOf;
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
use promptpack_core::schema::{Property, Schema, Tool};
use serde::de::{Deserialize, DeserializeOwned, Deserializer};

/// Reads a response of type `T` to prompt `prompt` (whose content hash is
/// `hash`) from a model's `text` (the JSON found in it: the whole text, a
/// Markdown fence's, or what follows a sentence); `schema` builds the
/// response's schema, only when serde refuses the answer: for an error
/// located in the text, or to read what serde refused and the schema takes
/// (`1.0` for an integer). In a span with the `tracing` feature.
pub fn parse_answer<T: DeserializeOwned>(
    prompt: &str,
    hash: PromptHash,
    text: &str,
    schema: impl FnOnce() -> Schema,
) -> Result<T> {
    crate::trace::read(
        || generated_read(prompt, hash, None),
        || promptpack_core::answer::read_typed(text, schema),
    )
}

/// What a generated `parse` reads, for its span: the prompt's id and hash,
/// its text the embedded one.
fn generated_read<'a>(prompt: &'a str, hash: PromptHash, tool: Option<&'a str>) -> ReadOf<'a> {
    ReadOf {
        prompt,
        hash: Some(hash),
        provenance: None,
        tool,
    }
}

/// Reads the `arguments` of a call of tool `name` of prompt `prompt` (whose
/// content hash is `hash`) into its generated args type `T`; `tool` builds
/// the tool only when serde refuses them, for an error located in the
/// arguments. In a span with the `tracing` feature.
pub fn parse_arguments<T: DeserializeOwned>(
    prompt: &str,
    hash: PromptHash,
    name: &str,
    arguments: &str,
    tool: impl FnOnce() -> Tool,
) -> Result<T> {
    crate::trace::read(
        || generated_read(prompt, hash, Some(name)),
        || read_arguments(arguments, tool),
    )
}

/// [`parse_arguments`] inside its span.
fn read_arguments<T: DeserializeOwned>(arguments: &str, tool: impl FnOnce() -> Tool) -> Result<T> {
    if let Ok(read) = serde_json::from_str(arguments) {
        return Ok(read);
    }
    let tool = tool();
    let value = promptpack_core::answer::read_arguments(arguments, &tool)?;
    // What the schema takes and the type does not: `1.0` for an integer
    // (JSON Schema counts it one), or empty arguments of a tool that
    // takes none, read as `{}`.
    serde_json::from_value(value).map_err(|e| {
        Error::from(
            Diagnostic::new(
                ErrorCode::AnswerMismatch,
                format!(
                    "the arguments of `{}` fit its schema, but not its generated type: {e}",
                    tool.name
                ),
            )
            .with_help("write whole numbers without a fraction (`2`, not `2.0`)"),
        )
    })
}

/// The error of a tool call of prompt `prompt` (whose content hash is
/// `hash`) naming none of its tools: a failed read, in a span of its own
/// with the `tracing` feature.
pub fn unknown_tool(prompt: &str, hash: PromptHash, name: &str, known: &[&str]) -> Error {
    let read = crate::trace::read(
        || generated_read(prompt, hash, Some(name)),
        || Err::<(), Error>(tool_not_found(name, known)),
    );
    match read {
        Err(error) => error,
        Ok(()) => tool_not_found(name, known),
    }
}

/// The error of a call of `name`, none of the tools `known`.
fn tool_not_found(name: &str, known: &[&str]) -> Error {
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
