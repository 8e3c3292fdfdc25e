//! A rendered prompt as the request of an LLM crate, and that crate's
//! response read back into the generated types: one module per crate and
//! major version, each behind the feature of the same name.
//!
//! | module | feature | the prompt becomes | read back from |
//! |---|---|---|---|
//! | [`async_openai_0_43`] | `async-openai-0_43` | `CreateChatCompletionRequest` | `CreateChatCompletionResponse` |
//! | [`genai_0_7`] | `genai-0_7` | `ChatRequest` and `ChatOptions` | `ChatResponse` |
//! | [`rig_0_44`] | `rig-0_44` | `CompletionRequest` | `CompletionResponse` |
//!
//! Every module has the same functions: `messages(&prompt)` (the crate's
//! messages, the system message first), `request(&prompt, …)` (messages,
//! tools and response format in one request), `tool_calls::<T>(&response)`
//! (each tool call read into the generated tool enum, its id kept so that
//! the agent can answer it: a [`Call`]) and `answer::<R>(&response)` (the
//! final answer read into the generated response struct). `From` impls
//! turn a [`MessageRef`] into the crate's message, a `&Prompt` into a
//! `Vec` of them, and a `&Prompt` into the crate's request where that
//! request needs nothing else (genai's and rig's: they take the model
//! elsewhere).
//!
//! ## The mapping, the same for every crate
//!
//! - **Roles.** `System`, `User` and `Assistant` messages are the crate's
//!   messages of that role, their text as it is.
//! - **Tool results.** A prompt's `Tool` message (`{{#tool order_status}}`
//!   in `messages.md`, or a history message of role `tool`) is a tool's
//!   result shown as an example; a prompt names the tool, not a call, so
//!   its **call id is the tool's name** ([`few_shot_call_id`]: `tool` for
//!   a history message without a name). **A limit to know:** OpenAI's API
//!   pairs a `tool` message with an assistant message before it whose
//!   `tool_calls` hold a call of that id, and refuses one without; a
//!   prompt writes the assistant's turn before a tool result as text, and
//!   has no way to write the call's arguments, so the adapters send no
//!   `tool_calls` for it. Servers that check the pairing refuse such a
//!   prompt; the tool results of an agent's own loop (sent with each
//!   module's `tool_result`, after the response's own assistant message)
//!   pair as they should.
//! - **Tools.** Each of the prompt's tools as a function tool: its name,
//!   description and JSON Schema parameters as the build wrote them
//!   ([`Exchange::tools`](crate::Exchange::tools)), strict where the crate
//!   can say so.
//! - **Response format.** The prompt's `response` as a strict JSON Schema
//!   response format named as the build named it
//!   ([`Exchange::response_format`](crate::Exchange::response_format)),
//!   where the crate has a place for one (each module says where).
//! - **The way back.** A tool call is read with the generated enum's
//!   [`ToolCall::parse`]: a tool the prompt lacks, or arguments that do not
//!   fit, fail with `answer_mismatch`. The answer is read with the
//!   generated struct's [`Response::parse`]. A response with nothing to
//!   read (no choice, no text) fails with `answer_not_json`, saying what
//!   was missing.
//!
//! The crates are dependencies renamed with their version
//! (`async-openai-0_43 = { package = "async-openai", … }`), so that the
//! next major version of a crate comes beside this one as a feature of its
//! own, and an application moves when it is ready.
//!
//! [`MessageRef`]: crate::MessageRef

#[cfg(feature = "async-openai-0_43")]
#[cfg_attr(docsrs, doc(cfg(feature = "async-openai-0_43")))]
pub mod async_openai_0_43;
#[cfg(feature = "genai-0_7")]
#[cfg_attr(docsrs, doc(cfg(feature = "genai-0_7")))]
pub mod genai_0_7;
#[cfg(feature = "rig-0_44")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig-0_44")))]
pub mod rig_0_44;

use crate::exchange::{Exchange, Response, ToolCall};
use crate::prompt::MessageRef;
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
use promptpack_core::message::Role;
use serde::Deserialize;
use serde_json::Value;

/// A tool call of a model's response, read into the generated tool enum
/// `T`, with the id the response gave it: the agent answers the call with
/// a tool message of that id.
#[derive(Debug, Clone, PartialEq)]
pub struct Call<T> {
    /// The call's id, as the response gave it (OpenAI's `call_…`).
    pub id: String,
    /// The tool called and its arguments, read into the generated enum.
    pub call: T,
}

/// The call id of a prompt's tool result (a `Tool` message): the tool's
/// name, since a prompt names the tool and not a call; `tool` for a message
/// without a name (a history message of role `tool` may lack one) or with
/// an empty one.
///
/// ```
/// use promptpack::{MessageRef, Role};
/// let result = MessageRef { role: Role::Tool, content: "{}", name: Some("order_status") };
/// assert_eq!(promptpack::adapters::few_shot_call_id(&result), "order_status");
/// ```
pub fn few_shot_call_id<'a>(message: &MessageRef<'a>) -> &'a str {
    message
        .name
        .filter(|name| !name.is_empty())
        .unwrap_or("tool")
}

/// A message of a prompt, by role: what every adapter maps from.
pub(crate) enum Turn<'a> {
    /// The system message, or a `{{#system}}` one.
    System(&'a str),
    /// A user message.
    User(&'a str),
    /// An assistant message (a few-shot answer, or the history's).
    Assistant(&'a str),
    /// A tool's result: the tool's name, which is also the id of the call
    /// it answers ([`few_shot_call_id`]), and the result's text.
    ToolResult { tool: &'a str, content: &'a str },
}

impl<'a> Turn<'a> {
    /// The turn of `message`, by its role.
    #[inline]
    pub(crate) fn of(message: MessageRef<'a>) -> Turn<'a> {
        match message.role {
            Role::System => Turn::System(message.content),
            Role::User => Turn::User(message.content),
            Role::Assistant => Turn::Assistant(message.content),
            Role::Tool => Turn::ToolResult {
                tool: few_shot_call_id(&message),
                content: message.content,
            },
            // `Role` may gain a role in a later release; until the adapters
            // map it, its text reaches the model as a user's.
            _ => Turn::User(message.content),
        }
    }
}

/// A tool of the prompt, as `Exchange::tools` writes it: what every
/// adapter's tool definition is made of.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct FunctionSpec {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model to decide when to call it.
    #[serde(default)]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, keys in the order written.
    pub parameters: Value,
}

/// One element of the `tools` array.
#[derive(Deserialize)]
struct ToolJson {
    function: FunctionSpec,
}

/// The prompt's response format, as `Exchange::response_format` writes it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResponseSpec {
    /// The format's name (the prompt's, made an identifier by the build).
    pub name: String,
    /// The strict JSON Schema of the answer, keys in the order written.
    pub schema: Value,
}

/// The `json_schema` object of the response format.
#[derive(Deserialize)]
struct ResponseFormatJson {
    json_schema: ResponseSpec,
}

impl Exchange {
    /// The prompt's tools, read once from their JSON; `None` when it
    /// declares none. The JSON is this crate's own writing (generated code
    /// or a load), always of this shape, so a text that did not read would
    /// be a bug here: it reads as no tools rather than a panic.
    pub(crate) fn function_specs(&self) -> Option<Vec<FunctionSpec>> {
        let tools: Vec<ToolJson> = serde_json::from_str(self.tools()?).ok()?;
        Some(tools.into_iter().map(|tool| tool.function).collect())
    }

    /// The prompt's response format, read from its JSON; `None` when it
    /// declares no response (or, as for the tools, a text that did not
    /// read).
    pub(crate) fn response_spec(&self) -> Option<ResponseSpec> {
        let format: ResponseFormatJson = serde_json::from_str(self.response_format()?).ok()?;
        Some(format.json_schema)
    }
}

/// Reads the call `id` of tool `name` with `arguments` (JSON text) into
/// the generated enum `T`.
pub(crate) fn read_call<T: ToolCall>(id: &str, name: &str, arguments: &str) -> Result<Call<T>> {
    Ok(Call {
        id: id.to_string(),
        call: T::parse(name, arguments)?,
    })
}

/// Reads the model's answer `text` into the generated response `R`, or
/// fails naming what `crate_name`'s response lacked (`missing`) when there
/// is no text.
pub(crate) fn read_answer<R: Response>(text: Option<&str>, missing: &str) -> Result<R> {
    match text {
        Some(text) => R::parse(text),
        None => Err(nothing_to_read(missing)),
    }
}

/// The error of a response with nothing to read as an answer: `missing`
/// says what it lacked, as the crate's types name it.
pub(crate) fn nothing_to_read(missing: &str) -> Error {
    Error::from(
        Diagnostic::new(
            ErrorCode::AnswerNotJson,
            format!("the model's response has no answer to read: {missing}"),
        )
        .at(Location::file("answer"))
        .with_help(
            "a response that calls tools has no answer yet: read its tool calls, \
             send their results, and read the answer of the next response",
        ),
    )
}
