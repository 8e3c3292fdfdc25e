//! What a prompt declares of its exchange with the model, as the generated
//! code gives it: the JSON a chat request sends (the tools, the response
//! format), written at build time, and the trait of a generated response
//! type, which reads the model's answer.

use promptpack_core::error::Result;
use std::fmt;

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
        // The build script wrote the text with serde_json: it reads back.
        serde_json::from_str(self.0).unwrap_or(serde_json::Value::Null)
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
