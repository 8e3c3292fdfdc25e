//! The `adapters` section: the bench's conversation (`conversation/`: a system message, two
//! few-shot exchanges, a history of twenty messages, the question; no tools) rendered once,
//! then converted into each LLM crate's request by promptpack's adapter
//! (`promptpack::adapters::*`), against building the same request by hand in that crate from
//! `Prompt::messages()` (the code a user writes without the adapter). Each adapter row's ratio
//! is to its crate's hand-built row of the same run; every row's request is compared with its
//! hand-built one (their `Debug` text) before anything is timed.

use crate::conversation;
use crate::harness::{Contender, Mode, allocations, checked, rows_against_baselines, time_all};
use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent, CreateChatCompletionRequest,
};
use promptpack::adapters::async_openai_0_43;
use promptpack::{Prompt, Role};
use std::hint::black_box;

/// The model every request names.
const MODEL: &str = "gpt-4o-mini";

const OPENAI_BASE: &str = "async-openai 0.43 by hand";
const GENAI_BASE: &str = "genai 0.7 by hand";
const RIG_BASE: &str = "rig-core 0.44 by hand";

/// The rows, in order, each with the row its ratio is to.
const ROWS: [(&str, &str); 6] = [
    (OPENAI_BASE, OPENAI_BASE),
    ("adapters::async_openai_0_43::request", OPENAI_BASE),
    (GENAI_BASE, GENAI_BASE),
    ("ChatRequest::from(&prompt) (genai_0_7)", GENAI_BASE),
    (RIG_BASE, RIG_BASE),
    ("CompletionRequest::from(&prompt) (rig_0_44)", RIG_BASE),
];

/// async-openai's request built by hand: a message of the role's type per message.
fn openai_by_hand(prompt: &Prompt) -> CreateChatCompletionRequest {
    let messages = prompt
        .messages()
        .map(|m| match m.role {
            Role::System => {
                ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage {
                    content: ChatCompletionRequestSystemMessageContent::Text(m.content.to_string()),
                    name: None,
                })
            }
            Role::Assistant => {
                ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                    content: Some(ChatCompletionRequestAssistantMessageContent::Text(
                        m.content.to_string(),
                    )),
                    ..ChatCompletionRequestAssistantMessage::default()
                })
            }
            // The conversation holds no tool result.
            _ => ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
                content: ChatCompletionRequestUserMessageContent::Text(m.content.to_string()),
                name: None,
            }),
        })
        .collect();
    CreateChatCompletionRequest {
        model: MODEL.to_string(),
        messages,
        ..CreateChatCompletionRequest::default()
    }
}

/// genai's request built by hand: the system message in `system`, a constructor per role.
fn genai_by_hand(prompt: &Prompt) -> genai::chat::ChatRequest {
    use genai::chat::{ChatMessage, ChatRequest};
    let mut system = None;
    let mut messages = Vec::with_capacity(prompt.messages.len() + 1);
    for m in prompt.messages() {
        match m.role {
            Role::System => system = Some(m.content.to_string()),
            Role::Assistant => messages.push(ChatMessage::assistant(m.content)),
            _ => messages.push(ChatMessage::user(m.content)),
        }
    }
    ChatRequest {
        system,
        messages,
        ..ChatRequest::default()
    }
}

/// rig's request built by hand: every message but the last as history, the last as the
/// prompt.
fn rig_by_hand(prompt: &Prompt) -> rig_core::completion::CompletionRequest {
    use rig_core::completion::{CompletionRequest, Message};
    let mut history: Vec<Message> = prompt
        .messages()
        .map(|m| match m.role {
            Role::System => Message::system(m.content),
            Role::Assistant => Message::assistant(m.content),
            _ => Message::user(m.content),
        })
        .collect();
    let last = history.pop().unwrap_or_else(|| Message::user(""));
    CompletionRequest::new(last).messages(history)
}

/// What a rig request is counted as while timed (its fields are private to rig).
fn rig_size(_: &rig_core::completion::CompletionRequest) -> usize {
    1
}

/// A check that a request's `Debug` text equals the hand-built one's.
fn same_as<T: std::fmt::Debug>(expected: &T) -> impl FnOnce(&T) -> Result<(), String> + use<T> {
    let expected = format!("{expected:?}");
    move |got: &T| {
        let got = format!("{got:?}");
        if got == expected {
            Ok(())
        } else {
            let at = got
                .bytes()
                .zip(expected.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(expected.len()));
            Err(format!(
                "differs from the hand-built request at byte {at}: {:?}",
                &got[at..got.len().min(at + 80)]
            ))
        }
    }
}

/// The section's contenders: every row fails alike when the conversation cannot be rendered.
pub fn contenders() -> Vec<Contender<'static>> {
    let prompt: &'static Prompt = match conversation::rendered_prompt() {
        Ok(prompt) => Box::leak(Box::new(prompt)),
        Err(e) => {
            return ROWS
                .iter()
                .map(|&(name, _)| Contender::failed(name, "", e.clone()))
                .collect();
        }
    };
    vec![
        checked(
            ROWS[0].0,
            "`CreateChatCompletionRequest`: a role's message struct per message, text copied",
            same_as(&openai_by_hand(prompt)),
            |r: &CreateChatCompletionRequest| r.messages.len(),
            move || Ok(openai_by_hand(black_box(prompt))),
        ),
        checked(
            ROWS[1].0,
            "the same request: messages, no tools and no response format to read",
            same_as(&openai_by_hand(prompt)),
            |r: &CreateChatCompletionRequest| r.messages.len(),
            move || Ok(async_openai_0_43::request(black_box(prompt), MODEL)),
        ),
        checked(
            ROWS[2].0,
            "`ChatRequest`: the system message in `system`, `ChatMessage::user`/`assistant`",
            same_as(&genai_by_hand(prompt)),
            |r: &genai::chat::ChatRequest| r.messages.len(),
            move || Ok(genai_by_hand(black_box(prompt))),
        ),
        checked(
            ROWS[3].0,
            "the same request",
            same_as(&genai_by_hand(prompt)),
            |r: &genai::chat::ChatRequest| r.messages.len(),
            move || Ok(genai::chat::ChatRequest::from(black_box(prompt))),
        ),
        checked(
            ROWS[4].0,
            "`CompletionRequest::new(last).messages(history)`, `Message::system`/`user`/`assistant`",
            same_as(&rig_by_hand(prompt)),
            rig_size,
            move || Ok(rig_by_hand(black_box(prompt))),
        ),
        checked(
            ROWS[5].0,
            "the same request (no tools, no output schema)",
            same_as(&rig_by_hand(prompt)),
            rig_size,
            move || Ok(rig_core::completion::CompletionRequest::from(black_box(prompt))),
        ),
    ]
}

/// The section: every row timed together, each ratio to its crate's hand-built row.
pub fn section(mode: &Mode) -> String {
    let mut list = contenders();
    let allocs: Vec<Option<f64>> = list.iter_mut().map(|c| allocations(c, 1_000)).collect();
    time_all(&mut list, mode);
    let bases: Vec<&str> = ROWS.iter().map(|&(_, base)| base).collect();
    format!(
        "## Adapters: the benchmark conversation as each LLM crate's request\n\n\
         The conversation of the `conversation` section ({} messages: the system message, two \
         few-shot exchanges, twenty messages of history, the question) rendered once; each row \
         converts it to the crate's request. Ratios are to building the same request by hand in \
         that crate in the same run. {} rounds, interleaved; batches of about {:?}. Every row's \
         request was compared with the hand-built one first. Allocations: allocator calls per \
         conversion, counted over 1,000.\n\n\
         | contender | median ns/request | × by hand | min ns/request | allocs/request | notes |\n\
         |---|---:|---:|---:|---:|---|\n{}",
        prompt_len(),
        mode.rounds,
        mode.batch_target,
        rows_against_baselines(&mut list, &allocs, &bases)
    )
}

/// How many messages the conversation sends, for the section's text.
fn prompt_len() -> usize {
    conversation::rendered_prompt().map_or(0, |p| p.messages().count())
}
