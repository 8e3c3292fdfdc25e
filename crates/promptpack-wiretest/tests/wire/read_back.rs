//! Responses the adapters refuse, each with its code and a message naming
//! what was wrong; and the role mapping of a tool result without a name.

use promptpack::adapters::{Call, async_openai_0_43, few_shot_call_id};
use promptpack::{ErrorCode, MessageRef, Role};
use promptpack_wiretest::prompts::{OrdersResponse, OrdersTool};
use serde_json::{Value, json};

/// async-openai's response of this JSON.
fn openai_response(choices: Value) -> async_openai::types::chat::CreateChatCompletionResponse {
    serde_json::from_value(json!({
        "id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": choices,
    }))
    .unwrap_or_else(|e| panic!("async-openai reads the response: {e}"))
}

/// A response of one choice holding `message`.
fn one_choice(message: Value) -> async_openai::types::chat::CreateChatCompletionResponse {
    openai_response(json!([{"index": 0, "finish_reason": "stop", "message": message}]))
}

/// A response calling `name` with `arguments`.
fn calling(name: &str, arguments: &str) -> async_openai::types::chat::CreateChatCompletionResponse {
    one_choice(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
    ]}))
}

/// The code and message of what reading `response`'s calls gave.
fn calls_error(
    response: &async_openai::types::chat::CreateChatCompletionResponse,
) -> (ErrorCode, String) {
    match async_openai_0_43::tool_calls::<OrdersTool>(response) {
        Ok(calls) => panic!("read {calls:?}"),
        Err(e) => (e.code(), e.to_string()),
    }
}

/// The code and message of what reading `response`'s answer gave.
fn answer_error(
    response: &async_openai::types::chat::CreateChatCompletionResponse,
) -> (ErrorCode, String) {
    match async_openai_0_43::answer::<OrdersResponse>(response) {
        Ok(answer) => panic!("read {answer:?}"),
        Err(e) => (e.code(), e.to_string()),
    }
}

#[test]
fn refusals_name_what_is_wrong() {
    struct Case {
        what: &'static str,
        got: (ErrorCode, String),
        code: ErrorCode,
        says: &'static str,
    }
    let no_choices = openai_response(json!([]));
    let cases = [
        Case {
            what: "an answer without choices",
            got: answer_error(&no_choices),
            code: ErrorCode::AnswerNotJson,
            says: "no `choices`",
        },
        Case {
            what: "tool calls without choices",
            got: calls_error(&no_choices),
            code: ErrorCode::AnswerNotJson,
            says: "no `choices`",
        },
        Case {
            what: "a message without content",
            got: answer_error(&one_choice(json!({"role": "assistant"}))),
            code: ErrorCode::AnswerNotJson,
            says: "has no `content`",
        },
        Case {
            what: "a refusal",
            got: answer_error(&one_choice(
                json!({"role": "assistant", "refusal": "I cannot help with that."}),
            )),
            code: ErrorCode::AnswerNotJson,
            says: "the model refused: I cannot help with that.",
        },
        Case {
            what: "an answer that is not JSON",
            got: answer_error(&one_choice(
                json!({"role": "assistant", "content": "On its way!"}),
            )),
            code: ErrorCode::AnswerNotJson,
            says: "",
        },
        Case {
            what: "an answer of another shape",
            got: answer_error(&one_choice(
                json!({"role": "assistant", "content": "{\"reply\": \"hi\", \"status\": \"lost\", \"eta\": null}"}),
            )),
            code: ErrorCode::AnswerMismatch,
            says: "",
        },
        Case {
            what: "a tool the prompt lacks",
            got: calls_error(&calling("order_stats", r#"{"order": "1"}"#)),
            code: ErrorCode::AnswerMismatch,
            says: "`order_stats`, which is not a tool of the prompt",
        },
        Case {
            what: "arguments that do not fit",
            got: calls_error(&calling(
                "escalate",
                r#"{"reason": "x", "priority": "soon", "note": null}"#,
            )),
            code: ErrorCode::AnswerMismatch,
            says: "",
        },
    ];
    let mut failures = Vec::new();
    for case in cases {
        let (code, message) = &case.got;
        if *code != case.code || !message.contains(case.says) {
            failures.push(format!(
                "{}: got {code} `{message}`, want {} saying `{}`",
                case.what, case.code, case.says
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_tool_result_without_a_name_answers_the_call_tool() {
    let named = MessageRef {
        role: Role::Tool,
        content: "{}",
        name: Some("order_status"),
    };
    let nameless = MessageRef {
        role: Role::Tool,
        content: "{}",
        name: None,
    };
    let empty = MessageRef {
        role: Role::Tool,
        content: "{}",
        name: Some(""),
    };
    assert_eq!(
        [
            few_shot_call_id(&named),
            few_shot_call_id(&nameless),
            few_shot_call_id(&empty)
        ],
        ["order_status", "tool", "tool"]
    );
    let message = async_openai::types::chat::ChatCompletionRequestMessage::from(nameless);
    let json = serde_json::to_value(&message).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        json,
        json!({"role": "tool", "content": "{}", "tool_call_id": "tool"})
    );
}

#[test]
fn a_call_keeps_its_id() {
    let response = calling("order_status", r#"{"order": "77"}"#);
    let calls: Vec<Call<OrdersTool>> =
        async_openai_0_43::tool_calls(&response).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_1");
    assert!(matches!(&calls[0].call, OrdersTool::OrderStatus(args) if args.order == "77"));
}

#[test]
fn async_openai_sends_the_exchange_as_the_build_wrote_it() {
    // async-openai's request is OpenAI's wire format, so its tools and
    // response format are the prompt's JSON exactly, key for key.
    for (name, prompt) in crate::support::fixtures() {
        let request = async_openai_0_43::request(&prompt, "m");
        let body = serde_json::to_value(&request).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            body.get("tools").cloned(),
            prompt.exchange.tools_value(),
            "the tools of `{name}`"
        );
        assert_eq!(
            body.get("response_format").cloned(),
            prompt.exchange.response_format_value(),
            "the response format of `{name}`"
        );
    }
}
