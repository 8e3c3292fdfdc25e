//! A rendered prompt as [async-openai] 0.43's chat request, and its chat
//! response read back into the generated types.
//!
//! async-openai's request is OpenAI's wire format in Rust types, so the
//! request serializes (with async-openai's own serde) to the JSON the
//! prompt's `Exchange` holds: the tools with `"strict": true`, the response
//! format as `{"type": "json_schema", …}`. The feature brings async-openai's
//! types only (`chat-completion-types`): an application that sends through
//! async-openai's `Client` turns on its `chat-completion` feature itself.
//!
//! A prompt's calls (`{{#call name}}`, or a history's) go as the
//! assistant message's `tool_calls`, and each tool result as a `tool`
//! message with the `tool_call_id` of the call it answers (see
//! [the mapping](super#the-mapping-the-same-for-every-crate)).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use async_openai_0_43 as async_openai;
//! use async_openai::types::chat::CreateChatCompletionResponse;
//! use promptpack::adapters::async_openai_0_43 as adapter;
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
//! let request = adapter::request(&prompt, "gpt-4o-mini");
//! let body = serde_json::to_value(&request)?;
//! assert_eq!(body["messages"][1], serde_json::json!({"role": "user", "content": "The capital of France?"}));
//! assert_eq!(body["response_format"]["json_schema"]["strict"], true);
//!
//! // The model's answer, read into the prompt's response type: the build
//! // script generates `CapitalResponse` for a typed prompt (this example,
//! // on a `Library`, stands one in).
//! # #[derive(Debug, serde::Deserialize)]
//! # struct CapitalResponse { city: String }
//! # impl promptpack::Response for CapitalResponse {
//! #     const FORMAT: promptpack::RequestJson = promptpack::RequestJson::__new("{}");
//! #     fn parse(text: &str) -> promptpack::Result<Self> {
//! #         serde_json::from_str(text).map_err(|e| promptpack::Error::new(promptpack::ErrorCode::AnswerMismatch, e.to_string()))
//! #     }
//! # }
//! let response: CreateChatCompletionResponse = serde_json::from_value(serde_json::json!({
//!     "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
//!     "choices": [{"index": 0, "finish_reason": "stop",
//!                  "message": {"role": "assistant", "content": "{\"city\": \"Paris\"}"}}]
//! }))?;
//! let answer: CapitalResponse = adapter::answer(&response)?;
//! assert_eq!(answer.city, "Paris");
//! # Ok(())
//! # }
//! ```
//!
//! [async-openai]: https://docs.rs/async-openai/0.43

use super::{Call, ToolUse, Turn, alone, convert, nothing_to_read, read_answer, read_call};
use crate::exchange::{Exchange, Response, ToolCall};
use crate::prompt::{MessageRef, Prompt};
use async_openai_0_43::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls,
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent, ChatCompletionResponseMessage, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionResponse, FunctionCall,
    FunctionObject, ResponseFormat, ResponseFormatJsonSchema,
};
use promptpack_core::error::Result;

/// Every message of `prompt`, the system message first
/// ([`Prompt::messages`]), as async-openai's request messages.
pub fn messages<Id>(prompt: &Prompt<Id>) -> Vec<ChatCompletionRequestMessage> {
    convert(prompt, message_of)
}

/// The prompt's tools as async-openai's function tools, each strict;
/// `None` when it declares none (a request then sends no `tools` key:
/// APIs refuse an empty list).
pub fn tools(exchange: &Exchange) -> Option<Vec<ChatCompletionTools>> {
    let specs = exchange.function_specs()?;
    Some(
        specs
            .into_iter()
            .map(|spec| {
                ChatCompletionTools::Function(ChatCompletionTool {
                    function: FunctionObject {
                        name: spec.name,
                        description: spec.description,
                        parameters: Some(spec.parameters),
                        strict: Some(true),
                    },
                })
            })
            .collect(),
    )
}

/// The prompt's response format, a strict JSON Schema; `None` when it
/// declares no response.
pub fn response_format(exchange: &Exchange) -> Option<ResponseFormat> {
    let spec = exchange.response_spec()?;
    Some(ResponseFormat::JsonSchema {
        json_schema: ResponseFormatJsonSchema {
            description: None,
            name: spec.name,
            schema: spec.schema,
            strict: Some(true),
        },
    })
}

/// The chat request of `prompt` for `model`: its messages, tools and
/// response format, every other field async-openai's default (unset).
pub fn request<Id>(prompt: &Prompt<Id>, model: impl Into<String>) -> CreateChatCompletionRequest {
    CreateChatCompletionRequest {
        messages: messages(prompt),
        model: model.into(),
        tools: tools(&prompt.exchange),
        response_format: response_format(&prompt.exchange),
        ..CreateChatCompletionRequest::default()
    }
}

/// The tool calls of the response's first choice, each read into the
/// generated enum `T` with its id; empty when the model called none. A
/// response without a choice fails with `answer_not_json`; a custom
/// (non-function) tool call or a call `T` does not read fails with
/// `answer_mismatch`.
pub fn tool_calls<T: ToolCall>(response: &CreateChatCompletionResponse) -> Result<Vec<Call<T>>> {
    let message = first_message(response)?;
    message_tool_calls(message)
}

/// The tool calls of one response message, read into `T` as
/// [`tool_calls`] reads them.
pub fn message_tool_calls<T: ToolCall>(
    message: &ChatCompletionResponseMessage,
) -> Result<Vec<Call<T>>> {
    let Some(calls) = &message.tool_calls else {
        return Ok(Vec::new());
    };
    calls
        .iter()
        .map(|call| match call {
            ChatCompletionMessageToolCalls::Function(call) => {
                read_call(&call.id, &call.function.name, &call.function.arguments)
            }
            // A prompt declares function tools only: a custom tool's call
            // names a tool the prompt lacks.
            ChatCompletionMessageToolCalls::Custom(call) => {
                read_call(&call.id, &call.custom_tool.name, &call.custom_tool.input)
            }
        })
        .collect()
}

/// The answer of the response's first choice, read into the generated
/// response `R`. A response without a choice, or whose message has no
/// content (a refusal, or tool calls only), fails with `answer_not_json`
/// saying which.
pub fn answer<R: Response>(response: &CreateChatCompletionResponse) -> Result<R> {
    let message = first_message(response)?;
    message_answer(message)
}

/// The answer of one response message, read into `R` as [`answer`] reads
/// it.
pub fn message_answer<R: Response>(message: &ChatCompletionResponseMessage) -> Result<R> {
    if let (None, Some(refusal)) = (&message.content, &message.refusal) {
        return Err(nothing_to_read(&format!(
            "the message has no `content`, the model refused: {refusal}"
        )));
    }
    read_answer(
        message.content.as_deref(),
        "the message of `choices[0]` has no `content`",
    )
}

/// The message of the response's first choice.
fn first_message(
    response: &CreateChatCompletionResponse,
) -> Result<&ChatCompletionResponseMessage> {
    response
        .choices
        .first()
        .map(|choice| &choice.message)
        .ok_or_else(|| nothing_to_read("the response has no `choices`"))
}

/// A response's message as the request message that sends it back (its
/// content and tool calls), for the next request of an agent's loop.
pub fn assistant_message(message: &ChatCompletionResponseMessage) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
        content: message
            .content
            .clone()
            .map(ChatCompletionRequestAssistantMessageContent::Text),
        tool_calls: message.tool_calls.clone(),
        ..ChatCompletionRequestAssistantMessage::default()
    })
}

/// The tool message answering the call `call` with `content` (the tool's
/// result, as the model reads it).
pub fn tool_result<T>(call: &Call<T>, content: impl Into<String>) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
        content: ChatCompletionRequestToolMessageContent::Text(content.into()),
        tool_call_id: call.id.clone(),
    })
}

impl From<MessageRef<'_>> for ChatCompletionRequestMessage {
    /// The message alone: a call or a tool result without an id takes its
    /// tool's name as one ([`few_shot_call_id`](super::few_shot_call_id)).
    #[inline]
    fn from(message: MessageRef<'_>) -> ChatCompletionRequestMessage {
        alone(message, message_of)
    }
}

// Inlined into the caller's loop: the message is built in place instead of
// returned through a call (without it, async-openai's request took 1.27x the
// hand-built one in the bench).
#[inline]
fn message_of(turn: Turn<'_>) -> ChatCompletionRequestMessage {
    match turn {
        Turn::System(text) => {
            ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage {
                content: ChatCompletionRequestSystemMessageContent::Text(text.to_string()),
                name: None,
            })
        }
        Turn::User(text) => ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
            content: ChatCompletionRequestUserMessageContent::Text(text.to_string()),
            name: None,
        }),
        Turn::Assistant(text) => {
            ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                content: Some(ChatCompletionRequestAssistantMessageContent::Text(
                    text.to_string(),
                )),
                ..ChatCompletionRequestAssistantMessage::default()
            })
        }
        Turn::Calls { text, calls } => calls_message(text, calls),
        Turn::ToolResult { id, content, .. } => {
            ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
                content: ChatCompletionRequestToolMessageContent::Text(content.to_string()),
                tool_call_id: id.to_string(),
            })
        }
    }
}

/// The assistant's message of `calls` (and the `text` said before them):
/// apart from [`message_of`], which a conversation without calls runs for
/// every message, so that its body stays small enough to inline.
#[inline(never)]
fn calls_message(text: Option<&str>, calls: &[ToolUse<'_>]) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
        content: text
            .map(|text| ChatCompletionRequestAssistantMessageContent::Text(text.to_string())),
        tool_calls: Some(
            calls
                .iter()
                .map(|call| {
                    ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                        id: call.id.to_string(),
                        function: FunctionCall {
                            name: call.name.to_string(),
                            arguments: call.arguments.to_string(),
                        },
                    })
                })
                .collect(),
        ),
        ..ChatCompletionRequestAssistantMessage::default()
    })
}

impl<Id> From<&Prompt<Id>> for Vec<ChatCompletionRequestMessage> {
    fn from(prompt: &Prompt<Id>) -> Vec<ChatCompletionRequestMessage> {
        messages(prompt)
    }
}
