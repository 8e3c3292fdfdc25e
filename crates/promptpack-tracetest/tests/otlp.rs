//! The spans exported as OpenTelemetry spans: through
//! `tracing-opentelemetry` and the OTLP exporter (HTTP, JSON bodies) to a
//! receiver this test runs on loopback, which checks the attribute names
//! and values that arrive, with their OTLP types (a version is an
//! integer). Its own binary: the subscriber is the process's global one.

mod support;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use promptpack::trace::{
    CATALOG_ARM, CATALOG_LABEL, CATALOG_PINS, CATALOG_SHA256, CATALOG_VERSION, ERROR_TYPE,
    LANGFUSE_PROMPT_NAME, LANGFUSE_PROMPT_VERSION, PARSE_SPAN, PROMPT_HASH, PROMPT_NAME, READ,
    RENDER_SPAN, SOURCE,
};
use promptpack::{Library, Provenance};
use promptpack_tracetest::{straight_line, tables};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::mpsc::{Receiver, Sender, channel};
use support::{Store, pins_text, seeded};
use tracing_subscriber::layer::SubscriberExt;

/// An OTLP/HTTP receiver on a loopback port: every request body, as JSON,
/// on the channel. It answers each export with an empty success.
fn receiver() -> (SocketAddr, Receiver<Value>) {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("binds loopback");
    listener.set_nonblocking(true).expect("non-blocking");
    let addr = listener.local_addr().expect("an address");
    let (sender, bodies) = channel::<Value>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
            let app = axum::Router::new()
                .fallback(axum::routing::post(take))
                .with_state(sender);
            let _ = axum::serve(listener, app).await;
        });
    });
    (addr, bodies)
}

/// One export: its body sent on, `{}` answered (OTLP's full success).
async fn take(
    axum::extract::State(sender): axum::extract::State<Sender<Value>>,
    body: axum::body::Bytes,
) -> axum::Json<Value> {
    let value = serde_json::from_slice(&body).unwrap_or_else(
        |e| json!({"unreadable": e.to_string(), "body": String::from_utf8_lossy(&body)}),
    );
    let _ = sender.send(value);
    axum::Json(json!({}))
}

/// An exported span: its name and its attributes as OTLP JSON values
/// (`{"stringValue": …}`, `{"intValue": …}`).
#[derive(Debug)]
struct Exported {
    name: String,
    attributes: BTreeMap<String, Value>,
}

/// Every span of an export request's body.
fn spans_of(body: &Value) -> Vec<Exported> {
    assert!(
        body.get("unreadable").is_none(),
        "an export that is not JSON: {body}"
    );
    let mut spans = Vec::new();
    let resource_spans = body["resourceSpans"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for resource in resource_spans {
        for scope in resource["scopeSpans"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            for span in scope["spans"].as_array().cloned().unwrap_or_default() {
                let attributes = span["attributes"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|kv| {
                        (
                            kv["key"].as_str().unwrap_or("").to_string(),
                            kv["value"].clone(),
                        )
                    })
                    .collect();
                spans.push(Exported {
                    name: span["name"].as_str().unwrap_or("").to_string(),
                    attributes,
                });
            }
        }
    }
    spans
}

fn text(value: &str) -> Value {
    json!({"stringValue": value})
}

/// An OTLP integer: proto3's JSON writes an int64 as a string, and some
/// writers as a number; either is the integer `n`.
fn is_int(value: &Value, n: u32) -> bool {
    match &value["intValue"] {
        Value::String(s) => s == &n.to_string(),
        Value::Number(number) => number.as_u64() == Some(u64::from(n)),
        _ => false,
    }
}

#[test]
fn spans_arrive_over_otlp_with_their_attributes() {
    let (addr, bodies) = receiver();
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(format!("http://{addr}/v1/traces"))
        .build()
        .expect("an OTLP/HTTP exporter");
    // Each span exported as it ends, on the thread that ends it.
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter)
        .build();
    let tracer = provider.tracer("promptpack-tracetest");
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    promptpack::trace::set_langfuse_attributes(true);

    let store = Store::sqlite();
    let mut catalog = store.open();
    catalog.init().expect("creates the schema");
    let (greeters, _) = seeded(&mut catalog);
    let live = straight_line::Prompts::connect(&store.url)
        .label("production")
        .start()
        .expect("follows production");

    // A live render of the label's heaviest arm: v2, pinning tone@2.
    let prompt = live
        .build_prompt(
            straight_line::PromptId::Greeter,
            straight_line::GreeterVars { name: "Ada" },
        )
        .expect("renders");
    assert!(
        matches!(prompt.provenance, Provenance::Catalog(_)),
        "{}",
        prompt.provenance
    );
    // The generated code's own.
    tables::build_prompt(
        tables::PromptId::Greeter,
        tables::GreeterVars { name: "Ada" },
    )
    .expect("renders");
    // A read that fails.
    let library = Library::load(promptpack_tracetest::PROMPTS).expect("loads");
    library
        .parse_response("triage", "{\"category\": \"sales\", \"urgent\": false}")
        .expect_err("not a category");
    let _ = provider.force_flush();

    let mut spans: Vec<Exported> = Vec::new();
    let (mut live_span, mut embedded_span, mut parse_span) = (None, None, None);
    while live_span.is_none() || embedded_span.is_none() || parse_span.is_none() {
        let body = promptpack_testkit::wait::recv_until(&bodies, "an OTLP export", |_| true)
            .pop()
            .expect("a body");
        spans.extend(spans_of(&body));
        for (i, span) in spans.iter().enumerate() {
            let source = span.attributes.get(SOURCE);
            if span.name == RENDER_SPAN && source == Some(&text("catalog")) {
                live_span = Some(i);
            } else if span.name == RENDER_SPAN && source == Some(&text("embedded")) {
                embedded_span = Some(i);
            } else if span.name == PARSE_SPAN {
                parse_span = Some(i);
            }
        }
    }
    let (live_span, embedded_span, parse_span) = (
        &spans[live_span.unwrap_or_default()],
        &spans[embedded_span.unwrap_or_default()],
        &spans[parse_span.unwrap_or_default()],
    );

    let v2 = &greeters[1];
    let attributes = &live_span.attributes;
    assert_eq!(
        attributes.get(PROMPT_NAME),
        Some(&text("greeter")),
        "{attributes:#?}"
    );
    assert_eq!(
        attributes.get(PROMPT_HASH),
        Some(&text(&prompt.hash.to_string()))
    );
    assert!(
        is_int(&attributes[CATALOG_VERSION], v2.version),
        "{attributes:#?}"
    );
    assert_eq!(
        attributes.get(CATALOG_SHA256),
        Some(&text(&v2.content_hash))
    );
    assert_eq!(attributes.get(CATALOG_LABEL), Some(&text("production")));
    assert_eq!(attributes.get(CATALOG_ARM), Some(&text("3/4")));
    assert_eq!(attributes.get(CATALOG_PINS), Some(&text(&pins_text(v2))));
    assert_eq!(attributes.get(LANGFUSE_PROMPT_NAME), Some(&text("greeter")));
    assert!(
        is_int(&attributes[LANGFUSE_PROMPT_VERSION], v2.version),
        "{attributes:#?}"
    );
    assert!(!attributes.contains_key(ERROR_TYPE));

    let attributes = &embedded_span.attributes;
    assert_eq!(
        attributes.get(PROMPT_NAME),
        Some(&text("greeter")),
        "{attributes:#?}"
    );
    assert_eq!(
        attributes.get(PROMPT_HASH),
        Some(&text(&tables::PromptId::Greeter.hash().to_string()))
    );
    // No catalog version: no version, no Langfuse link, even when on.
    for absent in [
        CATALOG_VERSION,
        CATALOG_SHA256,
        LANGFUSE_PROMPT_NAME,
        LANGFUSE_PROMPT_VERSION,
    ] {
        assert!(
            !attributes.contains_key(absent),
            "{absent} in {attributes:#?}"
        );
    }

    let attributes = &parse_span.attributes;
    assert_eq!(
        attributes.get(PROMPT_NAME),
        Some(&text("triage")),
        "{attributes:#?}"
    );
    assert_eq!(attributes.get(READ), Some(&text("response")));
    assert_eq!(attributes.get(SOURCE), Some(&text("loaded")));
    assert_eq!(attributes.get(ERROR_TYPE), Some(&text("answer_mismatch")));

    promptpack::trace::set_langfuse_attributes(false);
    let _ = provider.shutdown();
}
