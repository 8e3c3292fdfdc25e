//! A rendered prompt as [rig] 0.44's `CompletionRequest`, and its
//! `CompletionResponse` read back into the generated types.
//!
//! rig-core 0.44, not 0.46 (the current release): 0.46 needs rustc 1.97.1,
//! and 0.44 builds with 1.95, which this feature needs (the rest of
//! promptpack builds with 1.91). rig-core comes without its default
//! features: no TLS stack, no derive macros.
//!
//! rig's request holds the whole conversation in `chat_history` (the
//! system message a `Message::System` first) and the model in the model
//! handle or wire it is sent through (`OpenAIConfig::chat(model)`), so
//! `CompletionRequest::from(&prompt)` is the one call. Where rig differs
//! from the other crates:
//!
//! - **Strict tools** are a choice of rig's OpenAI wire, not of a tool
//!   definition: send through `Chat::with_strict_tools()` for the
//!   `"strict": true` the prompt's schemas are written for (rig then also
//!   sanitizes each schema for strict mode). A tool without a description
//!   has `""`, since rig's `ToolDefinition` requires one.
//! - **The response format** is the request's `output_schema`, a
//!   `schemars::Schema`: the prompt's JSON Schema with its name as the
//!   schema's `title`, which rig's OpenAI wire sends as the format's name
//!   (and keeps in the schema). rig's OpenAI wire sends it beside the
//!   tools; for a dialect that does not take both at once, rig holds the
//!   format back until a tool result is in the conversation.
//! - A prompt's **calls** are `ToolCall` parts of an assistant message
//!   (after the text said before them), and each **tool result** a user
//!   message of one `ToolResult` with the wire id of the call it answers
//!   (see [the mapping](super#the-mapping-the-same-for-every-crate)).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use rig_0_44::completion::{CompletionRequest, Message};
//! use promptpack::{Config, Library, SourceFile, TemplateSource};
//!
//! let system = "---\nresponse:\n  city: string, the capital\n---\nAnswer with JSON.";
//! let library = Library::from_sources(
//!     vec![TemplateSource {
//!         id: "capital".into(),
//!         system: SourceFile::new("templates/capital/system.md", system),
//!         user: Some(SourceFile::new("templates/capital/user.md", "The capital of {{country}}?")),
//!         messages: None,
//!     }],
//!     vec![],
//!     &Config::default(),
//! )?;
//! let prompt = library.build_prompt("capital", &serde_json::json!({"country": "France"}))?;
//!
//! let request = CompletionRequest::from(&prompt);
//! assert_eq!(request.system_instructions(), Some("Answer with JSON."));
//! assert_eq!(request.chat_history.last(), Some(&Message::user("The capital of France?")));
//! let schema = request.output_schema.as_ref().map(|schema| schema.as_value().clone());
//! assert_eq!(schema.as_ref().map(|schema| schema["title"].clone()), Some("capital".into()));
//! # Ok(())
//! # }
//! ```
//!
//! [rig]: https://docs.rs/rig-core/0.44

use super::{Call, Turn, alone, convert, read_answer, read_call};
use crate::exchange::{Exchange, Response, ToolCall};
use crate::prompt::{MessageRef, Prompt};
use promptpack_core::error::Result;
use rig_0_44::completion::{CompletionRequest, CompletionResponse, Message, ToolDefinition};
use rig_0_44::message::{AssistantContent, AssistantMessage, CallId, ToolName};
use rig_0_44::schemars::Schema;
use serde_json::Value;

/// Every message of `prompt`, the system message first
/// ([`Prompt::messages`]), as rig's messages.
pub fn messages<Id>(prompt: &Prompt<Id>) -> Vec<Message> {
    convert(prompt, message_of)
}

/// The prompt's tools as rig's tool definitions; empty when it declares
/// none (rig's request holds a list, and sends no `tools` key for an empty
/// one).
pub fn tools(exchange: &Exchange) -> Vec<ToolDefinition> {
    let Some(specs) = exchange.function_specs() else {
        return Vec::new();
    };
    specs
        .into_iter()
        .filter_map(|spec| {
            // A tool's name is never empty (the build refuses one), which
            // is all rig's `ToolName` checks.
            let name = ToolName::new(spec.name).ok()?;
            Some(ToolDefinition::new(
                name,
                spec.description.unwrap_or_default(),
                spec.parameters,
            ))
        })
        .collect()
}

/// The prompt's response format as rig's `output_schema`: its JSON Schema
/// with the format's name as `title`, which rig sends as the name. `None`
/// when the prompt declares no response.
pub fn output_schema(exchange: &Exchange) -> Option<Schema> {
    let spec = exchange.response_spec()?;
    let Value::Object(schema) = spec.schema else {
        return None;
    };
    // The title first, so that the schema reads with its name on top.
    let mut titled = serde_json::Map::with_capacity(schema.len() + 1);
    titled.insert("title".to_string(), Value::String(spec.name));
    titled.extend(schema);
    Schema::try_from(Value::Object(titled)).ok()
}

/// The request of `prompt`: its messages (the system message first), its
/// tools and its response format as `output_schema`. The same as
/// [`CompletionRequest::from`]; the model is the wire's.
pub fn request<Id>(prompt: &Prompt<Id>) -> CompletionRequest {
    let mut history = messages(prompt);
    // `messages()` always yields the system message: there is a last one.
    let last = history.pop().unwrap_or_else(|| Message::system(""));
    let mut request = CompletionRequest::new(last).messages(history);
    // Set in place rather than through the builder's `tools` and
    // `output_schema`, which move the whole request through each call (and
    // check `additional_params`, empty in a new request): 1.14x the
    // hand-built request in the bench before, for a prompt with neither.
    request.tools = tools(&prompt.exchange);
    request.output_schema = output_schema(&prompt.exchange);
    request
}

/// The tool calls of the response, each read into the generated enum `T`
/// with its call id (as the provider spelled it); empty when the model
/// called none. A call `T` does not read fails with `answer_mismatch`.
pub fn tool_calls<T: ToolCall>(response: &CompletionResponse) -> Result<Vec<Call<T>>> {
    response
        .tool_calls()
        .map(|call| {
            // rig keeps arguments that were not an object as their text,
            // which `T` then refuses where they break.
            let arguments = match &call.function.invalid_arguments {
                Some(text) => text.clone(),
                None => call.function.arguments_value().to_string(),
            };
            read_call(&call.id.wire(), &call.function.name, &arguments)
        })
        .collect()
}

/// The response's answer (its text), read into the generated response
/// `R`. A response without text (tool calls only) fails with
/// `answer_not_json`.
pub fn answer<R: Response>(response: &CompletionResponse) -> Result<R> {
    let text = response.text();
    read_answer(
        Some(text.as_str()).filter(|text| !text.is_empty()),
        "the response's `choice` has no text",
    )
}

/// The message answering the call `call` with `content` (the tool's
/// result, as the model reads it): a user message of one tool result.
pub fn tool_result<T: ToolCall>(call: &Call<T>, content: impl Into<String>) -> Message {
    let name = ToolName::new(call.call.name()).unwrap_or_else(|_| fallback_name());
    Message::tool_result(CallId::from_wire(call.id.clone()), name, content)
}

/// The name of a tool result whose tool has none: never in practice, as
/// [`few_shot_call_id`](super::few_shot_call_id) and the build give one.
fn fallback_name() -> ToolName {
    ToolName::new("tool").unwrap_or_else(|_| unreachable!("`tool` is not empty"))
}

impl From<MessageRef<'_>> for Message {
    /// The message alone: a call or a tool result without an id takes its
    /// tool's name as one ([`few_shot_call_id`](super::few_shot_call_id)).
    #[inline]
    fn from(message: MessageRef<'_>) -> Message {
        alone(message, message_of)
    }
}

// Inlined into the caller's loop: the message is built in place instead of
// returned through a call (without it, async-openai's request took 1.27x the
// hand-built one in the bench).
#[inline]
fn message_of(turn: Turn<'_>) -> Message {
    match turn {
        Turn::System(text) => Message::system(text),
        Turn::User(text) => Message::user(text),
        Turn::Assistant(text) => Message::assistant(text),
        Turn::Calls { text, calls } => {
            let calls = calls.iter().map(|call| {
                let name = ToolName::new(call.name).unwrap_or_else(|_| fallback_name());
                let arguments = call.arguments_value();
                AssistantContent::tool_call(call.id.to_string(), name, arguments)
            });
            let content: Vec<AssistantContent> = text
                .map(AssistantContent::text)
                .into_iter()
                .chain(calls)
                .collect();
            Message::Assistant(AssistantMessage::new(content))
        }
        Turn::ToolResult { id, tool, content } => {
            let name = ToolName::new(tool).unwrap_or_else(|_| fallback_name());
            Message::tool_result(CallId::from_wire(id), name, content)
        }
    }
}

impl<Id> From<&Prompt<Id>> for CompletionRequest {
    fn from(prompt: &Prompt<Id>) -> CompletionRequest {
        request(prompt)
    }
}

impl<Id> From<&Prompt<Id>> for Vec<Message> {
    fn from(prompt: &Prompt<Id>) -> Vec<Message> {
        messages(prompt)
    }
}
