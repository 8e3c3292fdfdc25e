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
use crate::prompt::{MessageRef, Prompt};
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
/// what every adapter maps from. It borrows everything (the calls of a
/// group from the walk that grouped them), so that mapping a conversation
/// without calls costs what mapping its messages by hand does.
#[derive(Clone, Copy)]
pub(crate) enum Turn<'t> {
    /// The system message, or a `{{#system}}` one.
    System(&'t str),
    /// A user message.
    User(&'t str),
    /// An assistant message (a few-shot answer, or the history's).
    Assistant(&'t str),
    /// An assistant message that calls tools: its text, when the calls
    /// follow an assistant's message, and the calls.
    Calls {
        /// The text said before the calls.
        text: Option<&'t str>,
        /// The calls, in order.
        calls: &'t [ToolUse<'t>],
    },
    /// A tool's result: the id of the call it answers, the tool's name and
    /// the result's text.
    ToolResult {
        id: &'t str,
        tool: &'t str,
        content: &'t str,
    },
}

/// One tool call of a [`Turn::Calls`]: its id owned when the pairing
/// walk numbered it (an example's), borrowed from its message otherwise.
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

/// `to` of the turn of `message` alone, by its role: a call or a result
/// with no id of its own takes its tool's name ([`few_shot_call_id`]).
#[inline]
pub(crate) fn alone<'a, T>(message: MessageRef<'a>, to: impl FnOnce(Turn<'_>) -> T) -> T {
    // Where a lone call's one `ToolUse` lives while `to` reads it.
    let call;
    let turn = match message.role {
        Role::System => Turn::System(message.content),
        Role::User => Turn::User(message.content),
        Role::Assistant => Turn::Assistant(message.content),
        Role::Tool => Turn::ToolResult {
            id: message.id.unwrap_or_else(|| few_shot_call_id(&message)),
            tool: few_shot_call_id(&message),
            content: message.content,
        },
        Role::Call => {
            call = ToolUse {
                id: Cow::Borrowed(message.id.unwrap_or_else(|| few_shot_call_id(&message))),
                name: few_shot_call_id(&message),
                arguments: message.content,
            };
            Turn::Calls {
                text: None,
                calls: std::slice::from_ref(&call),
            }
        }
        // `Role` may gain a role in a later release; until the adapters
        // map it, its text reaches the model as a user's.
        _ => Turn::User(message.content),
    };
    // One call of `to`, so that it is inlined once.
    to(turn)
}

/// The turn of `message` of a conversation without calls or tool results
/// ([`has_calls`] is false): a system, user or assistant message. (Any
/// other role would be a user's, as [`alone`] maps a role it does not know.)
#[inline]
fn spoken(message: MessageRef<'_>) -> Turn<'_> {
    match message.role {
        Role::System => Turn::System(message.content),
        Role::Assistant => Turn::Assistant(message.content),
        _ => Turn::User(message.content),
    }
}

/// The messages of a conversation, grouped: a message as it is, or calls
/// grouped into the assistant's message, or a result with its call's id.
enum Grouped<'a> {
    /// A message with nothing to group or pair.
    One(MessageRef<'a>),
    /// The assistant's text (if said right before) and the calls after it.
    Calls {
        text: Option<&'a str>,
        calls: Vec<ToolUse<'a>>,
    },
    /// A tool's result and the id of the call it answers.
    Result {
        id: Cow<'a, str>,
        tool: &'a str,
        content: &'a str,
    },
}

/// The walk that groups a conversation's calls and pairs each result with
/// its call, in order.
struct Pairing<'a, I: Iterator<Item = MessageRef<'a>>> {
    messages: std::iter::Peekable<I>,
    /// The calls sent and not answered yet: their tool and id.
    waiting: Vec<(&'a str, Cow<'a, str>)>,
    /// The example calls numbered so far.
    examples: usize,
}

impl<'a, I: Iterator<Item = MessageRef<'a>>> Pairing<'a, I> {
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

    /// The next group, in order.
    fn next_group(&mut self) -> Option<Grouped<'a>> {
        let message = self.messages.next()?;
        Some(match message.role {
            Role::Assistant if self.messages.peek().is_some_and(|m| m.role == Role::Call) => {
                let mut calls = Vec::new();
                self.following_calls(&mut calls);
                Grouped::Calls {
                    text: Some(message.content),
                    calls,
                }
            }
            Role::Call => {
                let mut calls = Vec::new();
                self.call(message, &mut calls);
                self.following_calls(&mut calls);
                Grouped::Calls { text: None, calls }
            }
            Role::Tool => Grouped::Result {
                id: self.answered(&message),
                tool: few_shot_call_id(&message),
                content: message.content,
            },
            _ => Grouped::One(message),
        })
    }
}

/// Each message of `prompt` ([`Prompt::messages`]) made a crate's message
/// by `to`: calls grouped into the assistant's message, each result given
/// the id of the call it answers.
#[inline]
pub(crate) fn convert<Id, T>(prompt: &Prompt<Id>, to: impl FnMut(Turn<'_>) -> T) -> Vec<T> {
    convert_messages(prompt.messages(), has_calls(&prompt.messages), to)
}

/// [`convert`] of the messages after the system message
/// ([`Prompt::after_system`]), for a crate that takes the system message
/// apart.
#[inline]
pub(crate) fn convert_after_system<Id, T>(
    prompt: &Prompt<Id>,
    to: impl FnMut(Turn<'_>) -> T,
) -> Vec<T> {
    convert_messages(prompt.after_system(), has_calls(&prompt.messages), to)
}

/// [`convert`] of `messages`; `pairs`: whether they hold a call or a tool
/// result. A conversation with neither is mapped message by message, with
/// nothing to walk (the pairing walk on every message took the benchmark
/// conversation to 1.9x the hand-built request), and `collect` keeps the
/// iterator's known length.
#[inline]
fn convert_messages<'a, T>(
    messages: impl Iterator<Item = MessageRef<'a>>,
    pairs: bool,
    mut to: impl FnMut(Turn<'_>) -> T,
) -> Vec<T> {
    if pairs {
        paired(messages, to)
    } else {
        messages.map(|message| to(spoken(message))).collect()
    }
}

/// [`convert`] of a conversation with calls or results: the pairing walk,
/// apart so that the loop of a conversation without them stays small.
#[inline(never)]
fn paired<'a, T>(
    messages: impl Iterator<Item = MessageRef<'a>>,
    mut to: impl FnMut(Turn<'_>) -> T,
) -> Vec<T> {
    let mut converted = Vec::with_capacity(messages.size_hint().0);
    let mut pairing = Pairing {
        messages: messages.peekable(),
        waiting: Vec::new(),
        examples: 0,
    };
    while let Some(group) = pairing.next_group() {
        converted.push(match &group {
            Grouped::One(message) => alone(*message, &mut to),
            Grouped::Calls { text, calls } => to(Turn::Calls { text: *text, calls }),
            Grouped::Result { id, tool, content } => to(Turn::ToolResult { id, tool, content }),
        });
    }
    converted
}

/// Whether `messages` (a prompt's, after its system message) hold a call
/// or a tool result, which [`convert`] groups and pairs.
#[inline]
fn has_calls(messages: &[crate::Message]) -> bool {
    messages
        .iter()
        .any(|message| matches!(message.role, Role::Call | Role::Tool))
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
