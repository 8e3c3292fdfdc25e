//! A rendered prompt as [genai] 0.7's `ChatRequest` and `ChatOptions`, and
//! its `ChatResponse` read back into the generated types.
//!
//! genai keeps the model out of the request (`Client::exec_chat(model,
//! request, options)`) and the response format out of it too, in
//! `ChatOptions`; so `ChatRequest::from(&prompt)` is the one call for the
//! messages and tools, and [`options`] gives the options with the response
//! format. genai turns them into each provider's body itself: for an
//! OpenAI-compatible one, the tools with `"strict": true` (this adapter
//! marks each tool strict) and the response format as a strict
//! `json_schema`. genai names no strictness on a `JsonSpec`: its OpenAI
//! adapter always sends `"strict": true`, which the prompt's schema is
//! written for.
//!
//! The system message (`system.md`) is the request's `system`; the
//! messages after it are its `messages`, a `{{#system}}` one among them a
//! system message. A prompt's calls are the `ToolCall` parts of an
//! assistant message (after the text said before them), and each tool
//! result a tool message of a `ToolResponse` with the id of the call it
//! answers (see [the mapping](super#the-mapping-the-same-for-every-crate)).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use genai_0_7::chat::{ChatRequest, ChatResponseFormat};
//! use promptpack::adapters::genai_0_7 as adapter;
//! use promptpack::{Config, Library, SourceFile, TemplateSource};
//!
//! let system = "---\ntools:\n  lookup:\n    description: Looks a word up\n    parameters:\n      word: string\n---\nHelp with words.";
//! let library = Library::from_sources(
//!     vec![TemplateSource {
//!         id: "words".into(),
//!         system: SourceFile::new("templates/words/system.md", system),
//!         user: Some(SourceFile::new("templates/words/user.md", "What does {{word}} mean?")),
//!         messages: None,
//!     }],
//!     vec![],
//!     &Config::default(),
//! )?;
//! let prompt = library.build_prompt("words", &serde_json::json!({"word": "ferrule"}))?;
//!
//! let request = ChatRequest::from(&prompt);
//! assert_eq!(request.system.as_deref(), Some("Help with words."));
//! assert_eq!(request.messages.len(), 1);
//! let tools = request.tools.as_deref().unwrap_or_default();
//! assert_eq!(tools[0].name.as_str(), "lookup");
//! assert_eq!(tools[0].strict, Some(true));
//! // No `response:` in the prompt: the options ask for no format.
//! assert!(adapter::options(&prompt).response_format.is_none());
//! // client.exec_chat("gpt-4o-mini", request, Some(&adapter::options(&prompt))).await?
//! # Ok(())
//! # }
//! ```
//!
//! [genai]: https://docs.rs/genai/0.7

use super::{Call, Turn, alone, convert, convert_after_system, read_answer, read_call};
use crate::exchange::{Exchange, Response, ToolCall};
use crate::prompt::{MessageRef, Prompt};
use genai_0_7::chat::{
    ChatMessage, ChatOptions, ChatRequest, ChatResponse, ChatResponseFormat, ContentPart, JsonSpec,
    MessageContent, Tool, ToolCall as CallOfTool, ToolResponse,
};
use promptpack_core::error::Result;

/// Every message of `prompt`, the system message first
/// ([`Prompt::messages`]), as genai's messages. [`ChatRequest::from`]
/// puts the first one in the request's `system` instead.
pub fn messages<Id>(prompt: &Prompt<Id>) -> Vec<ChatMessage> {
    convert(prompt, message_of)
}

/// The prompt's tools as genai's tools, each strict; `None` when it
/// declares none.
pub fn tools(exchange: &Exchange) -> Option<Vec<Tool>> {
    let specs = exchange.function_specs()?;
    Some(
        specs
            .into_iter()
            .map(|spec| {
                let tool = Tool::new(spec.name)
                    .with_schema(spec.parameters)
                    .with_strict(true);
                match spec.description {
                    Some(description) => tool.with_description(description),
                    None => tool,
                }
            })
            .collect(),
    )
}

/// The prompt's response format as genai's `JsonSpec`; `None` when it
/// declares no response.
pub fn response_format(exchange: &Exchange) -> Option<ChatResponseFormat> {
    let spec = exchange.response_spec()?;
    Some(ChatResponseFormat::JsonSpec(JsonSpec::new(
        spec.name,
        spec.schema,
    )))
}

/// The request of `prompt`: its system message, the messages after it and
/// its tools. The same as [`ChatRequest::from`].
pub fn request<Id>(prompt: &Prompt<Id>) -> ChatRequest {
    ChatRequest {
        // `messages()` starts with the system message: sent apart.
        system: Some(prompt.system.clone()),
        messages: convert_after_system(prompt, message_of),
        tools: tools(&prompt.exchange),
        ..ChatRequest::default()
    }
}

/// The options of `prompt`'s request: its response format, when it
/// declares a response; every other option unset (the client's own apply).
pub fn options<Id>(prompt: &Prompt<Id>) -> ChatOptions {
    ChatOptions {
        response_format: response_format(&prompt.exchange),
        ..ChatOptions::default()
    }
}

/// The tool calls of the response, each read into the generated enum `T`
/// with its call id; empty when the model called none. A call `T` does
/// not read fails with `answer_mismatch`.
pub fn tool_calls<T: ToolCall>(response: &ChatResponse) -> Result<Vec<Call<T>>> {
    response
        .tool_calls()
        .into_iter()
        .map(|call| {
            // genai holds the arguments parsed; `T` reads JSON text.
            let arguments = call.fn_arguments.to_string();
            read_call(&call.call_id, &call.fn_name, &arguments)
        })
        .collect()
}

/// The response's answer (its first text), read into the generated
/// response `R`. A response without text (tool calls only) fails with
/// `answer_not_json`.
pub fn answer<R: Response>(response: &ChatResponse) -> Result<R> {
    read_answer(response.first_text(), "the response's content has no text")
}

/// The tool message answering the call `call` with `content` (the tool's
/// result, as the model reads it).
pub fn tool_result<T: ToolCall>(call: &Call<T>, content: impl Into<String>) -> ChatMessage {
    ChatMessage::from(ToolResponse::new(call.id.clone(), content).with_fn_name(call.call.name()))
}

impl From<MessageRef<'_>> for ChatMessage {
    /// The message alone: a call or a tool result without an id takes its
    /// tool's name as one ([`few_shot_call_id`](super::few_shot_call_id)).
    #[inline]
    fn from(message: MessageRef<'_>) -> ChatMessage {
        alone(message, message_of)
    }
}

// Inlined into the caller's loop: the message is built in place instead of
// returned through a call (without it, async-openai's request took 1.27x the
// hand-built one in the bench).
#[inline]
fn message_of(turn: Turn<'_>) -> ChatMessage {
    match turn {
        Turn::System(text) => ChatMessage::system(text),
        Turn::User(text) => ChatMessage::user(text),
        Turn::Assistant(text) => ChatMessage::assistant(text),
        Turn::Calls { text, calls } => {
            let calls = calls.iter().map(|call| {
                ContentPart::ToolCall(CallOfTool {
                    fn_arguments: call.arguments_value(),
                    call_id: call.id.to_string(),
                    fn_name: call.name.to_string(),
                    thought_signatures: None,
                })
            });
            let parts: Vec<ContentPart> = text
                .map(|text| ContentPart::Text(text.to_string()))
                .into_iter()
                .chain(calls)
                .collect();
            ChatMessage::assistant(MessageContent::from_parts(parts))
        }
        Turn::ToolResult { id, tool, content } => {
            ChatMessage::from(ToolResponse::new(id, content).with_fn_name(tool))
        }
    }
}

impl<Id> From<&Prompt<Id>> for ChatRequest {
    fn from(prompt: &Prompt<Id>) -> ChatRequest {
        request(prompt)
    }
}

impl<Id> From<&Prompt<Id>> for Vec<ChatMessage> {
    fn from(prompt: &Prompt<Id>) -> Vec<ChatMessage> {
        messages(prompt)
    }
}
