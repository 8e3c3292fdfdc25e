//! Responses the adapters refuse, each with its code and a message naming
//! what was wrong; the role mapping of a tool result without a name; and
//! calls paired with their results, in a table.

use promptpack::adapters::{Call, async_openai_0_43, few_shot_call_id};
use promptpack::{ErrorCode, Message, MessageRef, Role};
use promptpack_wiretest::prompts::{OrdersResponse, OrdersTool};
use promptpack_wiretest::server::pairing_problem;
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
        id: None,
    };
    let nameless = MessageRef {
        role: Role::Tool,
        content: "{}",
        name: None,
        id: None,
    };
    let empty = MessageRef {
        role: Role::Tool,
        content: "{}",
        name: Some(""),
        id: None,
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

/// The messages async-openai's request of `messages` (after the system
/// message) sends, as JSON, and whether they pair as OpenAI demands.
fn sent(messages: Vec<Message>) -> (Vec<Value>, Option<String>) {
    let prompt = promptpack::Prompt {
        id: "t".to_string(),
        system: "Help.".to_string(),
        user: None,
        messages,
        hash: promptpack::PromptHash::from(0),
        provenance: promptpack::Provenance::Loaded,
        exchange: promptpack::Exchange::NONE,
    };
    let body = serde_json::to_value(async_openai_0_43::request(&prompt, "m"))
        .unwrap_or_else(|e| panic!("{e}"));
    let problem = pairing_problem(&body);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    (messages.into_iter().skip(1).collect(), problem)
}

/// A call of `tool` with `id`, as async-openai sends it.
fn call_json(id: &str, tool: &str, arguments: &str) -> Value {
    json!({"type": "function", "id": id, "function": {"name": tool, "arguments": arguments}})
}

#[test]
fn calls_pair_with_their_results() {
    let user = || Message::new(Role::User, "Where are my orders?");
    let result =
        |tool: &str, text: &str| json!({"role": "tool", "content": text, "tool_call_id": tool});
    // (what, messages, what async-openai sends after the system message)
    let cases: Vec<(&str, Vec<Message>, Vec<Value>)> = vec![
        (
            "an example call and its result: numbered",
            vec![
                user(),
                Message::call("order_status", "{}"),
                Message::tool("order_status", "late"),
            ],
            vec![
                json!({"role": "user", "content": "Where are my orders?"}),
                json!({"role": "assistant", "tool_calls": [call_json("example_1", "order_status", "{}")]}),
                result("example_1", "late"),
            ],
        ),
        (
            "the assistant's text and the calls after it: one message",
            vec![
                user(),
                Message::new(Role::Assistant, "Looking."),
                Message::call("order_status", "{\"order\":\"1\"}"),
                Message::call("escalate", "{}"),
                Message::tool("escalate", "queued"),
                Message::tool("order_status", "late"),
            ],
            vec![
                json!({"role": "user", "content": "Where are my orders?"}),
                json!({"role": "assistant", "content": "Looking.", "tool_calls": [
                    call_json("example_1", "order_status", "{\"order\":\"1\"}"),
                    call_json("example_2", "escalate", "{}"),
                ]}),
                result("example_2", "queued"),
                result("example_1", "late"),
            ],
        ),
        (
            "two calls of one tool: answered in order",
            vec![
                user(),
                Message::call("order_status", "{\"order\":\"1\"}"),
                Message::call("order_status", "{\"order\":\"2\"}"),
                Message::tool("order_status", "first"),
                Message::tool("order_status", "second"),
            ],
            vec![
                json!({"role": "user", "content": "Where are my orders?"}),
                json!({"role": "assistant", "tool_calls": [
                    call_json("example_1", "order_status", "{\"order\":\"1\"}"),
                    call_json("example_2", "order_status", "{\"order\":\"2\"}"),
                ]}),
                result("example_1", "first"),
                result("example_2", "second"),
            ],
        ),
        (
            "a history's ids: kept, and a result answers the call of its id",
            vec![
                Message::call("order_status", "{}").with_id("call_b"),
                Message::call("order_status", "{}").with_id("call_a"),
                Message::tool("order_status", "a").with_id("call_a"),
                Message::tool("order_status", "b").with_id("call_b"),
                user(),
            ],
            vec![
                json!({"role": "assistant", "tool_calls": [
                    call_json("call_b", "order_status", "{}"),
                    call_json("call_a", "order_status", "{}"),
                ]}),
                result("call_a", "a"),
                result("call_b", "b"),
                json!({"role": "user", "content": "Where are my orders?"}),
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (what, messages, expected) in cases {
        let (got, problem) = sent(messages);
        if got != expected {
            failures.push(format!(
                "{what}:\n  got  {}\n  want {}",
                Value::Array(got),
                Value::Array(expected)
            ));
        } else if let Some(problem) = problem {
            failures.push(format!("{what}: unpaired: {problem}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_result_that_answers_no_call_keeps_its_tool_name_and_is_refused_by_the_server_check() {
    let (got, problem) = sent(vec![
        Message::new(Role::User, "Hi"),
        Message::tool("order_status", "late"),
    ]);
    assert_eq!(
        got[1],
        json!({"role": "tool", "content": "late", "tool_call_id": "order_status"})
    );
    let problem = problem.unwrap_or_else(|| panic!("the pairing check let it pass"));
    assert!(problem.contains("messages[2]"), "{problem}");
}
