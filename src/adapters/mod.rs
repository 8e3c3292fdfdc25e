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
//! - **Calls and their results.** A `Call` message (`{{#call name}}` in
//!   `messages.md`, or a history's, [`Message::call`](crate::Message::call))
//!   is a tool call of the assistant: consecutive calls, and an assistant's
//!   text right before them, go as one assistant message with its
//!   `tool_calls`. A `Tool` message is the result of a call: it answers the
//!   call whose id it holds, else the first call of its tool not answered
//!   yet, as chat APIs pair them. A history keeps the ids the model gave;
//!   a prompt's example calls have none and are numbered `example_1`,
//!   `example_2`… in the order sent ([`example_call_id`]). The build checks
//!   an example call's arguments against its tool's parameters, and
//!   `check` lints a result without its call (`unpaired_call`); a result
//!   that still answers no call goes out with its tool's name as the id
//!   ([`few_shot_call_id`]).
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
use std::borrow::Cow;

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

/// The call id a tool result answers when it answers no call of the
/// conversation: the tool's name; `tool` for a message without a name (a
/// history message of role `tool` may lack one) or with an empty one. It
/// is also the id of a lone call or result converted alone (`From` a
/// [`MessageRef`]), which has no conversation to be paired in.
///
/// ```
/// use promptpack::{MessageRef, Role};
/// let result = MessageRef { role: Role::Tool, content: "{}", name: Some("order_status"), id: None };
/// assert_eq!(promptpack::adapters::few_shot_call_id(&result), "order_status");
/// ```
pub fn few_shot_call_id<'a>(message: &MessageRef<'a>) -> &'a str {
    message
        .name
        .filter(|name| !name.is_empty())
        .unwrap_or("tool")
}

/// The id the adapters give the `number`th example call (from 1) of a
/// conversation whose calls carry none: `example_1`, `example_2`…
///
/// ```
/// assert_eq!(promptpack::adapters::example_call_id(2), "example_2");
/// ```
pub fn example_call_id(number: usize) -> String {
    format!("example_{number}")
}

/// A message of a prompt, by role, its calls paired with their results:
/// what every adapter maps from.
pub(crate) enum Turn<'a> {
    /// The system message, or a `{{#system}}` one.
    System(&'a str),
    /// A user message.
    User(&'a str),
    /// An assistant message (a few-shot answer, or the history's).
    Assistant(&'a str),
    /// An assistant message that calls tools: its text, when the calls
    /// follow an assistant's message, and the calls.
    Calls {
        /// The text said before the calls.
        text: Option<&'a str>,
        /// The calls, in order.
        calls: Vec<ToolUse<'a>>,
    },
    /// A tool's result: the id of the call it answers, the tool's name and
    /// the result's text.
    ToolResult {
        id: Cow<'a, str>,
        tool: &'a str,
        content: &'a str,
    },
}

/// One tool call of a [`Turn::Calls`].
pub(crate) struct ToolUse<'a> {
    /// The call's id: the message's, or an example's number.
    pub id: Cow<'a, str>,
    /// The tool called.
    pub name: &'a str,
    /// Its arguments, JSON text.
    pub arguments: &'a str,
}

impl ToolUse<'_> {
    /// The arguments as a JSON value, for the crates that hold them so:
    /// a history's arguments that are not JSON are kept as their text.
    pub(crate) fn arguments_value(&self) -> Value {
        serde_json::from_str(self.arguments)
            .unwrap_or_else(|_| Value::String(self.arguments.to_string()))
    }
}

impl<'a> Turn<'a> {
    /// The turn of `message` alone, by its role: a call or a result with no
    /// id of its own takes its tool's name ([`few_shot_call_id`]).
    #[inline]
    pub(crate) fn of(message: MessageRef<'a>) -> Turn<'a> {
        match message.role {
            Role::System => Turn::System(message.content),
            Role::User => Turn::User(message.content),
            Role::Assistant => Turn::Assistant(message.content),
            Role::Tool => Turn::ToolResult {
                id: Cow::Borrowed(message.id.unwrap_or_else(|| few_shot_call_id(&message))),
                tool: few_shot_call_id(&message),
                content: message.content,
            },
            Role::Call => Turn::Calls {
                text: None,
                calls: vec![ToolUse {
                    id: Cow::Borrowed(message.id.unwrap_or_else(|| few_shot_call_id(&message))),
                    name: few_shot_call_id(&message),
                    arguments: message.content,
                }],
            },
            // `Role` may gain a role in a later release; until the adapters
            // map it, its text reaches the model as a user's.
            _ => Turn::User(message.content),
        }
    }
}

/// The turns of a conversation's `messages`, in order: calls grouped
/// into the assistant's message, each result paired with its call.
pub(crate) fn turns<'a, I>(messages: I) -> Turns<'a, I::IntoIter>
where
    I: IntoIterator<Item = MessageRef<'a>>,
{
    Turns {
        messages: messages.into_iter().peekable(),
        waiting: Vec::new(),
        examples: 0,
    }
}

/// The iterator [`turns`] returns.
pub(crate) struct Turns<'a, I: Iterator<Item = MessageRef<'a>>> {
    messages: std::iter::Peekable<I>,
    /// The calls sent and not answered yet: their tool and id.
    waiting: Vec<(&'a str, Cow<'a, str>)>,
    /// The example calls numbered so far.
    examples: usize,
}

impl<'a, I: Iterator<Item = MessageRef<'a>>> Turns<'a, I> {
    /// `call` among `calls`, with its id (an example's number when it has
    /// none), waiting for its result.
    fn call(&mut self, call: MessageRef<'a>, calls: &mut Vec<ToolUse<'a>>) {
        let id = match call.id {
            Some(id) => Cow::Borrowed(id),
            None => {
                self.examples += 1;
                Cow::Owned(example_call_id(self.examples))
            }
        };
        let name = few_shot_call_id(&call);
        self.waiting.push((name, id.clone()));
        calls.push(ToolUse {
            id,
            name,
            arguments: call.content,
        });
    }

    /// The calls that follow, taken while the next message is one.
    fn following_calls(&mut self, calls: &mut Vec<ToolUse<'a>>) {
        while let Some(call) = self.messages.next_if(|m| m.role == Role::Call) {
            self.call(call, calls);
        }
    }

    /// The id of the call `result` answers: its own, else the first call
    /// of its tool waiting, else its tool's name.
    fn answered(&mut self, result: &MessageRef<'a>) -> Cow<'a, str> {
        let tool = few_shot_call_id(result);
        let at = match result.id {
            Some(id) => self.waiting.iter().position(|(_, waiting)| waiting == id),
            None => self.waiting.iter().position(|(name, _)| *name == tool),
        };
        let paired = at.map(|at| self.waiting.remove(at).1);
        match (result.id, paired) {
            (Some(id), _) => Cow::Borrowed(id),
            (None, Some(id)) => id,
            (None, None) => Cow::Borrowed(tool),
        }
    }
}

impl<'a, I: Iterator<Item = MessageRef<'a>>> Iterator for Turns<'a, I> {
    type Item = Turn<'a>;

    #[inline]
    fn next(&mut self) -> Option<Turn<'a>> {
        let message = self.messages.next()?;
        Some(match message.role {
            Role::Assistant if self.messages.peek().is_some_and(|m| m.role == Role::Call) => {
                let mut calls = Vec::new();
                self.following_calls(&mut calls);
                Turn::Calls {
                    text: Some(message.content),
                    calls,
                }
            }
            Role::Call => {
                let mut calls = Vec::new();
                self.call(message, &mut calls);
                self.following_calls(&mut calls);
                Turn::Calls { text: None, calls }
            }
            Role::Tool => Turn::ToolResult {
                id: self.answered(&message),
                tool: few_shot_call_id(&message),
                content: message.content,
            },
            _ => Turn::of(message),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Calls group: one turn at least while a message is left.
        let (_, upper) = self.messages.size_hint();
        (usize::from(upper != Some(0)), upper)
    }
}

/// Each turn of `messages` ([`turns`]) made a crate's message by `to`,
/// in a list with room for every message (calls that group leave some).
#[inline]
pub(crate) fn convert<'a, T>(
    messages: impl Iterator<Item = MessageRef<'a>>,
    to: impl FnMut(Turn<'a>) -> T,
) -> Vec<T> {
    let mut converted = Vec::with_capacity(messages.size_hint().0);
    converted.extend(turns(messages).map(to));
    converted
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
