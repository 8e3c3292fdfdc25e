//! Real clients against the local server: each sends the `orders` prompt
//! (a conversation with tools and a response), the server answers with a
//! call of each tool, the client sends the tools' results, and the server
//! answers with the final JSON. Both request bodies are held to goldens;
//! the calls are read into the generated `OrdersTool` and the answer into
//! `OrdersResponse`. rig 0.44 has no HTTP client without TLS, so its
//! requests are its wire's encoding and its replies are decoded by its own
//! OpenAI decoder, with no transport.

use crate::support::{
    Crate, async_openai_client, bounded, check_golden, genai_client, history, orders_prompt,
    rig_body, rig_wire,
};
use promptpack::ErrorCode;
use promptpack::adapters::{Call, async_openai_0_43, genai_0_7, rig_0_44};
use promptpack_wiretest::prompts::{OrdersResponse, OrdersTool};
use promptpack_wiretest::server::{MODEL, Script, Server, final_completion, tool_calls_completion};

/// The result each tool gives, as the model reads it.
fn result_of(call: &Call<OrdersTool>) -> String {
    match &call.call {
        OrdersTool::OrderStatus(_) => {
            r#"{"order": "1234", "status": "in_transit", "eta": "2026-12-08"}"#.to_string()
        }
        OrdersTool::Escalate(_) => r#"{"queued": true, "position": 3}"#.to_string(),
    }
}

/// The calls the script makes, read into the generated enum.
fn check_calls(calls: &[Call<OrdersTool>]) {
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].id, "call_status_1234");
    match &calls[0].call {
        OrdersTool::OrderStatus(args) => assert_eq!(args.order, "1234"),
        other => panic!("the first call is order_status, not {other:?}"),
    }
    assert_eq!(calls[1].id, "call_escalate_1");
    match &calls[1].call {
        OrdersTool::Escalate(args) => {
            assert_eq!(args.reason, "asks for a person");
            assert_eq!(format!("{:?}", args.priority), "Urgent");
            assert_eq!(args.note, None);
        }
        other => panic!("the second call is escalate, not {other:?}"),
    }
}

/// The final answer, read into the generated response.
fn check_answer(answer: &OrdersResponse) {
    assert_eq!(
        answer.reply,
        "Order 1234 left the warehouse and arrives on 8 December."
    );
    assert_eq!(format!("{:?}", answer.status), "InTransit");
    assert_eq!(answer.eta.as_deref(), Some("2026-12-08"));
}

/// Holds the server's requests to the goldens of the two turns.
fn check_turns(server: &Server, krate: Crate) {
    let received = server.received();
    assert_eq!(
        received.len(),
        2,
        "two requests: the question, then the tools' results"
    );
    let mut failures = Vec::new();
    for (request, golden) in received.iter().zip(["orders", "orders-tool-results"]) {
        assert_eq!(request.path, "/v1/chat/completions");
        if let Err(failure) = check_golden(krate, golden, &request.body) {
            failures.push(failure);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_openai_client_round_trip() {
    let server = bounded(
        "the server starts",
        Server::start(Script::tool_calls_then_answer()),
    )
    .await
    .unwrap_or_else(|e| panic!("the server: {e}"));
    let client = async_openai_client(&server);
    let prompt = orders_prompt(&history()).unwrap_or_else(|e| panic!("{e}"));

    let mut request = async_openai_0_43::request(&prompt, MODEL);
    let response = bounded("the first answer", client.chat().create(request.clone()))
        .await
        .unwrap_or_else(|e| panic!("async-openai's client: {e}"));
    // The client sends the request as its serde writes it: the goldens of
    // the table are what goes on the wire.
    let sent = serde_json::to_string(&request).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(server.received()[0].body, sent);

    let calls: Vec<Call<OrdersTool>> =
        async_openai_0_43::tool_calls(&response).unwrap_or_else(|e| panic!("{e}"));
    check_calls(&calls);
    // A response of tool calls has no answer yet.
    let early = async_openai_0_43::answer::<OrdersResponse>(&response)
        .map(|_| ())
        .map_err(|e| e.code());
    assert_eq!(early, Err(ErrorCode::AnswerNotJson));

    let Some(choice) = response.choices.first() else {
        panic!("the script's first answer has a choice");
    };
    request
        .messages
        .push(async_openai_0_43::assistant_message(&choice.message));
    for call in &calls {
        request
            .messages
            .push(async_openai_0_43::tool_result(call, result_of(call)));
    }
    let response = bounded("the final answer", client.chat().create(request))
        .await
        .unwrap_or_else(|e| panic!("async-openai's client: {e}"));
    let answer: OrdersResponse =
        async_openai_0_43::answer(&response).unwrap_or_else(|e| panic!("{e}"));
    check_answer(&answer);
    assert!(
        async_openai_0_43::tool_calls::<OrdersTool>(&response)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    );

    check_turns(&server, Crate::AsyncOpenAi);
    bounded("the server stops", server.stop())
        .await
        .unwrap_or_else(|e| panic!("the server: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn genai_client_round_trip() {
    let server = bounded(
        "the server starts",
        Server::start(Script::tool_calls_then_answer()),
    )
    .await
    .unwrap_or_else(|e| panic!("the server: {e}"));
    let client = genai_client(&server);
    let prompt = orders_prompt(&history()).unwrap_or_else(|e| panic!("{e}"));

    let request = genai_0_7::request(&prompt);
    let options = genai_0_7::options(&prompt);
    let response = bounded(
        "the first answer",
        client.exec_chat(MODEL, request.clone(), Some(&options)),
    )
    .await
    .unwrap_or_else(|e| panic!("genai's client: {e}"));

    let calls: Vec<Call<OrdersTool>> =
        genai_0_7::tool_calls(&response).unwrap_or_else(|e| panic!("{e}"));
    check_calls(&calls);
    let early = genai_0_7::answer::<OrdersResponse>(&response)
        .map(|_| ())
        .map_err(|e| e.code());
    assert_eq!(early, Err(ErrorCode::AnswerNotJson));

    // genai's own way to send the calls back, then the adapter's results.
    let Some(assistant) = response.into_assistant_message_for_tool_use() else {
        panic!("the first answer calls tools");
    };
    let mut request = request.append_message(assistant);
    for call in &calls {
        request = request.append_message(genai_0_7::tool_result(call, result_of(call)));
    }
    let response = bounded(
        "the final answer",
        client.exec_chat(MODEL, request, Some(&options)),
    )
    .await
    .unwrap_or_else(|e| panic!("genai's client: {e}"));
    let answer: OrdersResponse = genai_0_7::answer(&response).unwrap_or_else(|e| panic!("{e}"));
    check_answer(&answer);

    check_turns(&server, Crate::Genai);
    bounded("the server stops", server.stop())
        .await
        .unwrap_or_else(|e| panic!("the server: {e}"));
}

/// A chat completion read by rig's own OpenAI decoder.
fn rig_decoded(
    server: &Server,
    completion: serde_json::Value,
) -> rig_core::completion::CompletionResponse {
    use rig_core::wire::{Mode, WireFrame};
    let frame = WireFrame::Bytes(completion.to_string().into_bytes());
    rig_core::test_utils::history::decode(&rig_wire(server), Mode::Unary, [frame])
        .unwrap_or_else(|e| panic!("rig's decoder: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rig_wire_round_trip() {
    // The server only gives the wire its base URL: nothing is sent.
    let server = bounded("the server starts", Server::start(Script::answer_only()))
        .await
        .unwrap_or_else(|e| panic!("the server: {e}"));
    let prompt = orders_prompt(&history()).unwrap_or_else(|e| panic!("{e}"));

    let request = rig_0_44::request(&prompt);
    let mut failures = Vec::new();
    if let Err(failure) = check_golden(Crate::Rig, "orders", &rig_body(request.clone(), &server)) {
        failures.push(failure);
    }

    let response = rig_decoded(&server, tool_calls_completion());
    let calls: Vec<Call<OrdersTool>> =
        rig_0_44::tool_calls(&response).unwrap_or_else(|e| panic!("{e}"));
    check_calls(&calls);
    let early = rig_0_44::answer::<OrdersResponse>(&response)
        .map(|_| ())
        .map_err(|e| e.code());
    assert_eq!(early, Err(ErrorCode::AnswerNotJson));

    let Some(assistant) = response.message() else {
        panic!("the first answer has content");
    };
    // An agent's loop appends the turn and the results after the prompt
    // (`CompletionRequest::messages` would put them before its last).
    let mut request = request;
    request.chat_history.push(assistant);
    request.chat_history.extend(
        calls
            .iter()
            .map(|call| rig_0_44::tool_result(call, result_of(call))),
    );
    let body = rig_body(request, &server);
    if let Err(failure) = check_golden(Crate::Rig, "orders-tool-results", &body) {
        failures.push(failure);
    }

    let response = rig_decoded(&server, final_completion());
    let answer: OrdersResponse = rig_0_44::answer(&response).unwrap_or_else(|e| panic!("{e}"));
    check_answer(&answer);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    bounded("the server stops", server.stop())
        .await
        .unwrap_or_else(|e| panic!("the server: {e}"));
}
