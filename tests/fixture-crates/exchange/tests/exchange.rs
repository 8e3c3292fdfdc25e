//! The generated types of a prompt's `response` and `tools`, used as a
//! user's crate uses them: every value of the response type reads back
//! from its JSON, a nullable key must be there (`null` is `None`), tool
//! calls read by name, and the JSON a request sends comes from `PromptId`.

use exchange_fixture::*;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A valid answer, every nullable key present.
fn answer() -> Value {
    json!({
        "reply": "Your parcel left today.",
        "priority": 2,
        "confidence": 0.75,
        "resolved": false,
        "category": "very urgent",
        "steps": ["wait", "track"],
        "refund": {"amount": 12.5, "currency": "EUR"},
        "lines": [{"sku": "A-1", "quantity": 3}],
        "orderId": "O-17",
        "note": null,
        "attempts": 1,
        "score": null,
        "urgent": true,
        "channel": "chat",
        "labels": null,
        "followUp": {"inDays": 7},
        "history": [{"at": "09:00", "said": "hello"}]
    })
}

#[test]
fn an_answer_reads_into_the_response_struct() {
    let read = TicketResponse::parse(&answer().to_string()).expect("reads");
    assert_eq!(read.category, TicketResponseCategory::VeryUrgent);
    assert_eq!(read.category.as_str(), "very urgent");
    assert_eq!(read.refund.currency, TicketResponseRefundCurrency::Eur);
    assert_eq!(read.order_id.as_deref(), Some("O-17"));
    assert_eq!(read.note, None);
    assert_eq!(read.follow_up, Some(TicketResponseFollowUp { in_days: 7 }));
    assert_eq!(
        read.lines,
        [TicketResponseLines {
            sku: "A-1".into(),
            quantity: 3
        }]
    );
    // Written back as it was read: camelCase keys, `None` as `null`.
    assert_eq!(serde_json::to_value(&read).expect("serializes"), answer());
}

#[test]
fn a_nullable_key_absent_is_refused_and_null_reads_as_none() {
    let nullable = [
        "orderId", "note", "attempts", "score", "urgent", "channel", "labels", "followUp",
        "history",
    ];
    for key in nullable {
        let mut absent = answer();
        absent.as_object_mut().expect("an object").remove(key);
        let error = TicketResponse::parse(&absent.to_string()).expect_err(key);
        assert_eq!(error.code().as_str(), "answer_mismatch", "{key}: {error}");
        assert!(error.to_string().contains(key), "{key}: {error}");

        let mut null = answer();
        null[key] = Value::Null;
        let read = TicketResponse::parse(&null.to_string()).expect(key);
        let written = serde_json::to_value(&read).expect("serializes");
        assert_eq!(written[key], Value::Null, "{key}");
    }
}

#[test]
fn what_the_type_cannot_hold_is_refused_where_it_is() {
    // A key the type lacks is read past: a newer version of the prompt may
    // add an optional field, which this program does not read.
    let mut extra = answer();
    extra["mood"] = json!("fine");
    let read = TicketResponse::parse(&extra.to_string()).expect("an undeclared key is read past");
    assert_eq!(read, TicketResponse::parse(&answer().to_string()).expect("reads"));
    let mut wrong = answer();
    wrong["category"] = json!("urgent");
    let error = TicketResponse::parse(&wrong.to_string()).expect_err("not a value");
    assert_eq!(error.code().as_str(), "answer_mismatch");
    // Located in the model's text, saying what the schema wanted there.
    let first = &error.diagnostics()[0];
    assert!(first.message.contains("$.category"), "{error}");
    assert!(first.message.contains("very urgent"), "{error}");
    let at = first.location.as_ref().expect("located in the answer");
    assert_eq!(at.path(), "answer", "{error}");
    let error = TicketResponse::parse("Sure! Here it is").expect_err("no JSON");
    assert_eq!(error.code().as_str(), "answer_not_json");
}

#[test]
fn tool_calls_read_by_name() {
    let arguments = r#"{"orderId": "O-17", "verbose": null, "type": "return", "self": "me"}"#;
    let call = TicketTool::parse("lookup-order", arguments).expect("reads");
    assert_eq!(
        call,
        TicketTool::LookupOrder(TicketLookupOrderArgs {
            order_id: "O-17".into(),
            verbose: None,
            r#type: TicketLookupOrderArgsType::Return,
            self_: Some("me".into()),
        })
    );
    assert_eq!(call.name(), "lookup-order");
    let escalate = TicketTool::parse("escalate", "{}").expect("no arguments");
    assert_eq!(escalate, TicketTool::Escalate(TicketEscalateArgs {}));
    assert_eq!(escalate.name(), TicketEscalateArgs::NAME);
    assert_eq!(TicketTool::NAMES, ["lookup-order", "escalate"]);

    let missing = TicketTool::parse("lookup-order", r#"{"orderId": "O-17", "type": "order", "self": null}"#)
        .expect_err("`verbose` absent");
    assert_eq!(missing.code().as_str(), "answer_mismatch");
    let unknown = TicketTool::parse("escalte", "{}").expect_err("no such tool");
    assert_eq!(unknown.code().as_str(), "answer_mismatch");
    let help = unknown.diagnostics()[0].help.clone().unwrap_or_default();
    assert_eq!(help, "did you mean `escalate`? The tools are: lookup-order, escalate");
}

#[test]
fn the_request_json_comes_from_the_prompt_id() {
    let format = PromptId::Ticket.response_format().expect("a response");
    assert_eq!(format, TicketResponse::FORMAT);
    assert_eq!(format, <TicketResponse as promptpack::Response>::FORMAT);
    let format = format.to_value();
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "ticket");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(
        format["json_schema"]["schema"]["properties"]["orderId"]["type"],
        json!(["string", "null"])
    );
    let tools = PromptId::Ticket.tools().expect("tools").to_value();
    assert_eq!(tools[0]["function"]["name"], "lookup-order");
    assert_eq!(tools[1]["function"]["parameters"]["properties"], json!({}));
    assert_eq!(PromptId::Ticket.tools(), Some(TicketTool::TOOLS));
    // A prompt with a response and no tools.
    assert_eq!(PromptId::Summary.tools(), None);
    assert!(PromptId::Summary.response_format().is_some());
}

#[test]
fn the_prompt_still_renders() {
    let prompt = build_prompt(PromptId::Ticket, TicketVars { customer: "Ada" }).expect("renders");
    assert_eq!(prompt.system, "Triage the ticket from Ada.");
}

/// Generic code reads any generated response through the trait.
fn read<R: promptpack::Response>(text: &str) -> Result<R, promptpack::Error> {
    R::parse(text)
}

#[test]
fn the_response_trait_reads_as_the_type_does() {
    let summary: SummaryResponse = read(r#"{"text": "short"}"#).expect("reads");
    assert_eq!(summary.text, "short");
}

fn text() -> impl Strategy<Value = String> {
    any::<String>()
}

/// Every finite number (JSON has no NaN nor infinity).
fn number() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("finite", |n| n.is_finite())
}

fn category() -> impl Strategy<Value = TicketResponseCategory> {
    prop_oneof![
        Just(TicketResponseCategory::Billing),
        Just(TicketResponseCategory::Shipping),
        Just(TicketResponseCategory::VeryUrgent),
    ]
}

fn refund() -> impl Strategy<Value = TicketResponseRefund> {
    let currency = prop_oneof![
        Just(TicketResponseRefundCurrency::Eur),
        Just(TicketResponseRefundCurrency::Usd),
    ];
    (number(), currency).prop_map(|(amount, currency)| TicketResponseRefund { amount, currency })
}

fn line() -> impl Strategy<Value = TicketResponseLines> {
    (text(), any::<i64>()).prop_map(|(sku, quantity)| TicketResponseLines { sku, quantity })
}

fn channel() -> impl Strategy<Value = TicketResponseChannel> {
    prop_oneof![
        Just(TicketResponseChannel::Email),
        Just(TicketResponseChannel::Chat)
    ]
}

fn history() -> impl Strategy<Value = TicketResponseHistory> {
    (text(), text()).prop_map(|(at, said)| TicketResponseHistory { at, said })
}

/// Every value of `TicketResponse`, written by hand field by field.
fn ticket_response() -> impl Strategy<Value = TicketResponse> {
    let required = (
        text(),
        any::<i64>(),
        number(),
        any::<bool>(),
        category(),
        prop::collection::vec(text(), 0..4),
        refund(),
        prop::collection::vec(line(), 0..4),
    );
    let nullable = (
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(any::<i64>()),
        prop::option::of(number()),
        prop::option::of(any::<bool>()),
        prop::option::of(channel()),
        prop::option::of(prop::collection::vec(text(), 0..4)),
        prop::option::of(any::<i64>().prop_map(|in_days| TicketResponseFollowUp { in_days })),
        prop::option::of(prop::collection::vec(history(), 0..3)),
    );
    (required, nullable).prop_map(
        |(
            (reply, priority, confidence, resolved, category, steps, refund, lines),
            (order_id, note, attempts, score, urgent, channel, labels, follow_up, history),
        )| TicketResponse {
            reply,
            priority,
            confidence,
            resolved,
            category,
            steps,
            refund,
            lines,
            order_id,
            note,
            attempts,
            score,
            urgent,
            channel,
            labels,
            follow_up,
            history,
        },
    )
}

proptest! {
    /// What the type writes, it reads back equal: the serde names, the
    /// nullable fields written as `null` and read as required, every
    /// number (serde_json's `float_roundtrip`, which this crate turns on,
    /// reads each `f64` back exactly).
    #[test]
    fn every_response_reads_back_equal(response in ticket_response()) {
        let text = serde_json::to_string(&response).expect("serializes");
        let read = TicketResponse::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read, response);
    }
}
