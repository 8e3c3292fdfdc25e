//! Reading a model's answer against the [`Schema`] a prompt declares: the
//! JSON found in what the model sent (a code fence, prose before and after
//! are tolerated), read with the place of every value, and checked
//! with the semantics of the JSON Schema the provider was sent. What does
//! not fit is an [`Error`] located in the answer's text, rendered with a
//! caret like every diagnostic of the house:
//!
//! ```text
//! error[answer_mismatch]: `$.refund.amount`: expected a number, found a string
//!  --> answer:1:40
//!   |
//! 1 | {"reply": "Done", "refund": {"amount": "12.50", "currency": "EUR"}}
//!   |                                        ^^^^^^^
//! ```
//!
//! [`read_answer`] gives the validated `serde_json::Value` (for `Library` and
//! the HTTP API), [`read_typed`] a generated Rust type (serde first, the
//! schema only when serde refuses, to say where), [`read_arguments`] a tool
//! call's arguments.

mod find;
mod json;
mod validate;

use crate::error::{Diagnostic, Error, ErrorCode};
use crate::schema::{Schema, SchemaKind, Tool};
use crate::source_file::{SourceFile, Span};
use find::Found;
use json::Node;
use serde::de::DeserializeOwned;
use serde_json::{Number, Value};

/// The name an answer's text has in its diagnostics (`--> answer:1:12`).
const ANSWER: &str = "answer";

/// Reads the JSON of a model's answer and checks it against `schema`: the
/// value when the schema takes it, or an error located in `text`
/// (`answer_not_json` when there is no JSON or it is not well formed,
/// `answer_mismatch`, with every problem up to twenty, when the schema does
/// not take it).
///
/// The JSON is the whole text when it starts with `{` (or `[`), else the
/// first Markdown code fence whose content does, else what starts at the
/// first `{`; text after the value is ignored.
///
/// ```
/// use promptpack_core::answer::read_answer;
/// use promptpack_core::schema::{Property, Schema, SchemaKind};
/// use promptpack_core::Location;
///
/// let reply = Property::new("reply", Schema::new(SchemaKind::String), Location::file("t"));
/// let schema = Schema::new(SchemaKind::Object(vec![reply]));
/// let text = "Sure!\n```json\n{\"reply\": \"Hello\"}\n```";
/// assert_eq!(read_answer(text, &schema)?, serde_json::json!({"reply": "Hello"}));
/// let error = read_answer("{\"reply\": 3}", &schema).unwrap_err();
/// assert_eq!(error.to_string(), "answer:1:11: answer_mismatch: `$.reply`: expected a string, found 3");
/// # Ok::<(), promptpack_core::Error>(())
/// ```
pub fn read_answer(text: &str, schema: &Schema) -> Result<Value, Error> {
    let found = find::find(text).ok_or_else(|| no_json(text))?;
    read_found(text, found, schema)
}

/// Reads a model's answer into `T`, a type generated from (or written for)
/// the prompt's response schema, which `schema` builds.
///
/// The fast path is serde alone: the JSON is found as [`read_answer`] finds
/// it and deserialized into `T` straight from the text, and the schema is
/// never built. Only when serde refuses is `schema` called and the answer
/// read and checked with it, for an error located in the text. When the
/// schema takes what serde refused (a whole number written `1.0`, which
/// JSON Schema counts as an integer and serde does not read into an
/// `i64`), `T` is read from the checked value, with such numbers made
/// integers: what the schema accepts, `read_typed` accepts.
///
/// `T` may be more lenient than the schema (serde reads a missing field
/// into an `Option` as `None`, and ignores an undeclared one unless the
/// type denies unknown fields): what serde accepts is not checked against
/// the schema, which would cost the fast path its speed.
pub fn read_typed<T: DeserializeOwned>(
    text: &str,
    schema: impl FnOnce() -> Schema,
) -> Result<T, Error> {
    let Some(found) = find::find(text) else {
        return Err(no_json(text));
    };
    // No `end()`: what follows the value (a closing fence, a remark) is
    // the model's, not JSON.
    let mut deserializer = serde_json::Deserializer::from_str(&text[found.start..]);
    if let Ok(value) = T::deserialize(&mut deserializer) {
        return Ok(value);
    }
    let value = read_refused(text, found, &schema())?;
    T::deserialize(value).map_err(|e| type_refused(text, found, &e.to_string()))
}

/// Reads a tool call's `arguments` (the JSON text a provider sends) against
/// the tool's parameters: the value, or an error located in `arguments` as
/// [`read_answer`]'s are. The arguments are machine-written JSON: no
/// wrapping is tolerated, nor anything after the value but whitespace. Empty
/// arguments are read as `{}` for a tool that takes none, as some
/// providers send them.
pub fn read_arguments(arguments: &str, tool: &Tool) -> Result<Value, Error> {
    check_arguments(arguments, tool).map_err(|(code, problems)| {
        error(
            &format!("{}.arguments", tool.name),
            arguments,
            code,
            problems,
        )
    })
}

/// [`read_arguments`] before its problems are located: the value, or the
/// code and the problems, their spans in `arguments` (a build locates an
/// example call's in its file).
pub(crate) fn check_arguments(
    arguments: &str,
    tool: &Tool,
) -> Result<Value, (ErrorCode, Vec<Problem>)> {
    let start = arguments.len() - arguments.trim_start_matches(is_json_whitespace).len();
    if start == arguments.len() {
        if tool.parameters.properties().is_some_and(<[_]>::is_empty) {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        let problem = Problem::new(Span { start: 0, end: 0 }, "the arguments are empty")
            .with_help(arguments_help(tool));
        return Err((ErrorCode::AnswerNotJson, vec![problem]));
    }
    let parsed = json::parse(arguments, start, arguments.len())
        .map_err(|p| (ErrorCode::AnswerNotJson, vec![p]))?;
    let rest = &arguments[parsed.next..];
    if let Some(c) = rest.trim_start_matches(is_json_whitespace).chars().next() {
        let at = arguments.len() - rest.trim_start_matches(is_json_whitespace).len();
        let problem = Problem::new(
            Span {
                start: at,
                end: at + c.len_utf8(),
            },
            "expected the end of the arguments after the JSON value",
        );
        return Err((ErrorCode::AnswerNotJson, vec![problem]));
    }
    let problems = validate::validate(&parsed.node, &tool.parameters);
    if !problems.is_empty() {
        return Err((ErrorCode::AnswerMismatch, problems));
    }
    Ok(parsed.node.into_value())
}

/// What a tool's arguments are, for the help of empty ones.
#[cold]
fn arguments_help(tool: &Tool) -> String {
    let fields: Vec<String> = tool
        .parameters
        .properties()
        .unwrap_or_default()
        .iter()
        .map(|p| format!("`{}`", p.name))
        .collect();
    format!(
        "`{}` takes its arguments as a JSON object with the fields {}",
        tool.name,
        fields.join(", ")
    )
}

/// JSON's whitespace.
fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// [`read_answer`] once the JSON is found.
fn read_found(text: &str, found: Found, schema: &Schema) -> Result<Value, Error> {
    let node = parse(text, found)?;
    let problems = validate::validate(&node, schema);
    if !problems.is_empty() {
        return Err(error(ANSWER, text, ErrorCode::AnswerMismatch, problems));
    }
    Ok(node.into_value())
}

fn parse(text: &str, found: Found) -> Result<Node, Error> {
    json::parse(text, found.start, found.end)
        .map(|parsed| parsed.node)
        .map_err(|p| error(ANSWER, text, ErrorCode::AnswerNotJson, vec![p]))
}

/// [`read_typed`]'s slow path, apart so that it is compiled once, not once
/// per type: the answer checked against the schema (the located error when
/// it does not fit), and the value with its whole numbers made integers
/// where the schema wants an integer.
#[cold]
fn read_refused(text: &str, found: Found, schema: &Schema) -> Result<Value, Error> {
    let mut value = read_found(text, found, schema)?;
    integers(&mut value, schema);
    Ok(value)
}

/// Makes every number with no fractional part an integer where `schema`
/// wants an integer (`1.0` → `1`), so that serde reads it into an `i64`
/// as JSON Schema counted it one.
fn integers(value: &mut Value, schema: &Schema) {
    match (&schema.kind, value) {
        (SchemaKind::Integer, Value::Number(n)) => {
            if let Some(int) = as_integer(n) {
                *n = int;
            }
        }
        (SchemaKind::Array(item), Value::Array(items)) => {
            for value in items {
                integers(value, item);
            }
        }
        (SchemaKind::Object(properties), Value::Object(map)) => {
            for property in properties {
                if let Some(value) = map.get_mut(&property.name) {
                    integers(value, &property.schema);
                }
            }
        }
        _ => {}
    }
}

/// A float with no fractional part as an `i64` or `u64`, when it is one
/// and fits; `None` for an integer already, or one too large for either.
fn as_integer(n: &Number) -> Option<Number> {
    if n.is_i64() || n.is_u64() {
        return None;
    }
    let f = n.as_f64()?;
    if f.fract() != 0.0 {
        return None;
    }
    // `as` saturates: the bounds keep a value that does not fit a float.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        Some(Number::from(f as i64))
    } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
        Some(Number::from(f as u64))
    } else {
        None
    }
}

/// The error when the schema takes an answer that the Rust type does not:
/// the type and the schema disagree, which regenerating the type fixes.
#[cold]
fn type_refused(text: &str, found: Found, serde: &str) -> Error {
    let problem = Problem::new(
        Span {
            start: found.start,
            end: found.start + 1,
        },
        format!(
            "the answer fits the response schema but not the Rust type it is read into: {serde}"
        ),
    )
    .with_help(
        "the type and the schema disagree: generate the type from the prompt's response again",
    );
    error(ANSWER, text, ErrorCode::AnswerMismatch, vec![problem])
}

/// The error of an answer with no JSON in it, at its first character.
#[cold]
fn no_json(text: &str) -> Error {
    let (message, help) = if text.trim().is_empty() {
        (
            "the answer is empty",
            "the model sent no text: a refusal, a content filter or a limit of tokens reached before the answer",
        )
    } else {
        (
            "the answer holds no JSON: no `{` in it",
            "the model answered in prose: ask for JSON with the response format (the schema as `response_format`), or ask again",
        )
    };
    let problem = Problem::new(Span { start: 0, end: 0 }, message).with_help(help);
    error(ANSWER, text, ErrorCode::AnswerNotJson, vec![problem])
}

/// One error of `problems`, located in `text` named `path` (one copy of the
/// text, shared by every location).
#[cold]
fn error(path: &str, text: &str, code: ErrorCode, problems: Vec<Problem>) -> Error {
    let file = SourceFile::plain(path, text);
    let diagnostics = problems
        .into_iter()
        .map(|p| {
            let diagnostic = Diagnostic::new(code, p.message).at(file.location(p.span));
            match p.help {
                Some(help) => diagnostic.with_help(help),
                None => diagnostic,
            }
        })
        .collect();
    Error::from_diagnostics(diagnostics)
        .unwrap_or_else(|| Error::new(code, "the answer was refused"))
}

/// A problem found in an answer, before it is located: the reading and the
/// check work with byte offsets, and the text is copied into a
/// [`SourceFile`] only when there is an error to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The bytes it is about, in the whole text.
    pub span: Span,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl Problem {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Problem {
        Problem {
            span,
            message: message.into(),
            help: None,
        }
    }

    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Problem {
        self.help = Some(help.into());
        self
    }
}

#[cfg(test)]
mod tests;
