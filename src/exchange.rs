//! What a prompt declares of its exchange with the model, as the generated
//! code gives it: the JSON a chat request sends (the tools, the response
//! format), written at build time, and the trait of a generated response
//! type, which reads the model's answer.

use promptpack_core::error::Result;
use std::fmt;
#[cfg(feature = "library")]
use std::sync::Arc;

/// JSON text written by the build script, for a chat request: the tools a
/// prompt declares (`PromptId::tools`, an array of
/// `{"type": "function", "function": {…}}`) or its response format
/// (`PromptId::response_format`, `{"type": "json_schema", "json_schema":
/// {…, "strict": true}}`). Embedded in the binary, so asking for it costs
/// nothing; [`RequestJson::to_value`] gives it as a `serde_json::Value` to
/// put in a request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestJson(&'static str);

impl RequestJson {
    /// The JSON as generated code writes it. Not public API: the text must
    /// be JSON, which the build script's writes are.
    #[doc(hidden)]
    pub const fn __new(text: &'static str) -> RequestJson {
        RequestJson(text)
    }

    /// The JSON text, compact.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// The JSON as a value, its keys in the order written, to put in a
    /// request body (`json!({"tools": id.tools()?.to_value(), …})`).
    pub fn to_value(self) -> serde_json::Value {
        json_value(self.0)
    }
}

impl fmt::Display for RequestJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A generated response type: the answer a prompt's front matter declares
/// (`response:`), one struct field per property.
///
/// The generated type has `parse` and `FORMAT` of its own too, so that
/// naming the type is enough; the trait is for code generic over the
/// answer it reads.
pub trait Response: Sized {
    /// The `response_format` of a chat request asking for this answer:
    /// OpenAI's strict JSON Schema of the type.
    const FORMAT: RequestJson;

    /// Reads the answer from a model's text: its JSON, every key of the
    /// schema present (a nullable one as `null`), no other key. Fails
    /// with `answer_not_json` when the text holds no JSON value, and with
    /// `answer_mismatch` when the JSON does not fit the type.
    fn parse(text: &str) -> Result<Self>;
}

/// A generated tool-call enum: the tools a prompt's front matter declares
/// (`tools:`), a variant per tool holding its arguments read into a struct.
///
/// The generated enum has `parse`, `name` and `TOOLS` of its own too; the
/// trait is for code generic over the calls it reads, such as the adapters
/// of the LLM crates.
pub trait ToolCall: Sized {
    /// The tools as a chat request lists them: a JSON array of
    /// `{"type": "function", "function": {…, "strict": true}}`.
    const TOOLS: RequestJson;

    /// Reads a tool call: `name` is the tool the model called, `arguments`
    /// the JSON text of its arguments. A name that is none of the tools
    /// fails with `answer_mismatch`, as do arguments that do not fit.
    fn parse(name: &str, arguments: &str) -> Result<Self>;

    /// The name of the tool called.
    fn name(&self) -> &'static str;
}

/// What a rendered prompt sends besides its messages: the tools and the
/// response format its front matter declares, as the JSON of a chat
/// request (OpenAI's wire format, which the adapters of the LLM crates
/// read into their own types). [`Prompt::exchange`](crate::Prompt::exchange)
/// holds it, whichever way the prompt was rendered: from generated code it
/// is text compiled into the binary, from a `Library` or a catalog version
/// text made once when the prompt was loaded, so a render never writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Exchange {
    tools: Option<JsonText>,
    response_format: Option<JsonText>,
}

/// JSON text, compiled in or made at load time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum JsonText {
    Embedded(&'static str),
    /// Made by a `Library`, which only the `library` feature has.
    #[cfg(feature = "library")]
    Loaded(Arc<str>),
}

impl JsonText {
    fn as_str(&self) -> &str {
        match self {
            JsonText::Embedded(text) => text,
            #[cfg(feature = "library")]
            JsonText::Loaded(text) => text,
        }
    }
}

impl Exchange {
    /// No tools and no response format: a prompt that declares neither.
    pub const NONE: Exchange = Exchange {
        tools: None,
        response_format: None,
    };

    /// What generated code declares. Not public API.
    #[doc(hidden)]
    pub const fn __embedded(
        tools: Option<RequestJson>,
        response_format: Option<RequestJson>,
    ) -> Exchange {
        Exchange {
            tools: match tools {
                Some(json) => Some(JsonText::Embedded(json.as_str())),
                None => None,
            },
            response_format: match response_format {
                Some(json) => Some(JsonText::Embedded(json.as_str())),
                None => None,
            },
        }
    }

    /// The tools and response format of JSON values made at load time (a
    /// `tools` array, a `response_format` object): `None` for what the
    /// prompt does not declare.
    #[cfg(feature = "library")]
    pub(crate) fn loaded(
        tools: Option<&serde_json::Value>,
        response_format: Option<&serde_json::Value>,
    ) -> Exchange {
        let text = |value: &serde_json::Value| JsonText::Loaded(Arc::from(value.to_string()));
        Exchange {
            tools: tools.map(text),
            response_format: response_format.map(text),
        }
    }

    /// The tools as a chat request's `tools` lists them, a JSON array of
    /// `{"type": "function", "function": {name, description, parameters,
    /// "strict": true}}`; `None` when the prompt declares none (a request
    /// then sends no `tools` key: APIs refuse an empty list).
    pub fn tools(&self) -> Option<&str> {
        self.tools.as_ref().map(JsonText::as_str)
    }

    /// The response format of a chat request, `{"type": "json_schema",
    /// "json_schema": {"name", "strict": true, "schema"}}`; `None` when the
    /// prompt declares no `response`.
    pub fn response_format(&self) -> Option<&str> {
        self.response_format.as_ref().map(JsonText::as_str)
    }

    /// [`Exchange::tools`] as a JSON value, to put in a request body.
    pub fn tools_value(&self) -> Option<serde_json::Value> {
        self.tools().map(json_value)
    }

    /// [`Exchange::response_format`] as a JSON value, to put in a request
    /// body.
    pub fn response_format_value(&self) -> Option<serde_json::Value> {
        self.response_format().map(json_value)
    }

    /// Whether the prompt declares neither tools nor a response.
    pub fn is_empty(&self) -> bool {
        self.tools.is_none() && self.response_format.is_none()
    }
}

/// The value of JSON text this crate wrote (generated code, or a load):
/// always JSON, so `Null` never comes back in practice.
fn json_value(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}
