//! The server against its OpenAPI document: every operation it describes is
//! answered, with a status it documents, and a body its schema accepts;
//! without a token every one of them is a documented `401`.

use crate::support;

use serde_json::{Value, json};
use support::{Auth, Console, Store};

fn document() -> Value {
    serde_json::from_str(promptpack_console::OPENAPI).expect("the document is JSON")
}

/// A validator of `reference` (`#/components/schemas/…` or an inline
/// schema) with the whole document as its root, so references resolve.
fn check(document: &Value, schema: &Value, body: &Value, what: &str) {
    let mut root = document.clone();
    if let (Some(root), Some(schema)) = (root.as_object_mut(), schema.as_object()) {
        for (key, value) in schema {
            root.insert(key.clone(), value.clone());
        }
        root.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
    }
    let validator = jsonschema::validator_for(&root)
        .unwrap_or_else(|e| panic!("{what}: the schema does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: the answer breaks its schema: {errors:?}\n{body}"
    );
}

/// The request the test makes for each operation: path parameters, query
/// and body.
fn request(method: &str, template: &str) -> (String, Value) {
    let id = match (method, template) {
        ("delete", _) => "xss",
        (_, t) if t.ends_with("/restore") => "xss",
        (_, t) if t.ends_with("/upgrade") => "letter",
        // The prompt the test publishes with a response to read answers as.
        (_, t) if t.ends_with("/parse") => "triage",
        _ => "greet",
    };
    let path = template
        .replace("{id}", id)
        .replace("{label}", "staging")
        .replace("{name}", "sign-off");
    let path = if template.ends_with("/diff") {
        format!("{path}?from=1&to=2")
    } else {
        path
    };
    let body = match (method, template) {
        ("post", t) if t.ends_with("/render") => json!({"vars": {"name": "Ada", "formal": true}}),
        ("post", t) if t.ends_with("/parse") => {
            json!({"answer": "{\"category\": \"bug\", \"summary\": \"It crashes\", \"order\": null}"})
        }
        ("post", t) if t.ends_with("/versions") => {
            json!({"system": "New {{name}}.\n", "message": "from the OpenAPI test"})
        }
        ("put", _) => json!({"version": 1}),
        _ => Value::Null,
    };
    (path, body)
}

fn call(
    console: &Console,
    method: &str,
    path: &str,
    auth: Auth<'_>,
    body: &Value,
) -> support::Answer {
    let full = format!("/api/v1{path}");
    match method {
        "get" => console.get(&full, auth),
        other => console.send(&other.to_uppercase(), &full, auth, body),
    }
}

#[test]
fn every_operation_answers_as_documented() {
    let document = document();
    let console = Console::start(Store::Sqlite, "openapi");
    console.publish_triage(support::TRIAGE_V1, "a response to read answers as");
    let paths = document["paths"].as_object().expect("paths");
    let mut operations = 0;
    for (template, item) in paths {
        for (method, operation) in item.as_object().expect("a path item") {
            if method == "parameters" {
                continue;
            }
            operations += 1;
            let (path, body) = request(method, template);
            let what = format!("{} {template}", method.to_uppercase());
            let answer = call(&console, method, &path, Auth::Bearer(&console.admin), &body);
            let documented = &operation["responses"][answer.status.to_string()];
            assert!(
                !documented.is_null(),
                "{what}: status {} is not documented: {}",
                answer.status,
                answer.body
            );
            assert!(
                (200..300).contains(&answer.status),
                "{what}: {} {}",
                answer.status,
                answer.body
            );
            let documented = match documented.get("$ref").and_then(Value::as_str) {
                Some(reference) => document
                    .pointer(reference.trim_start_matches('#'))
                    .cloned()
                    .unwrap_or_default(),
                None => documented.clone(),
            };
            if let Some(schema) = documented.pointer("/content/application~1json/schema") {
                check(&document, schema, &answer.json(), &what);
            }
            if operation.get("security") == Some(&json!([])) {
                continue;
            }
            let refused = call(&console, method, &path, Auth::None, &body);
            assert_eq!(refused.status, 401, "{what} without a token");
            assert!(
                !operation["responses"]["401"].is_null(),
                "{what}: 401 is not documented"
            );
            check(
                &document,
                &json!({"$ref": "#/components/schemas/Error"}),
                &refused.json(),
                &what,
            );
        }
    }
    assert!(operations >= 13, "only {operations} operations documented");
}

#[test]
fn errors_of_a_text_carry_located_diagnostics_as_documented() {
    let document = document();
    let console = Console::start(Store::Sqlite, "openapi_errors");
    let answer = console.send(
        "POST",
        "/api/v1/prompts/greet/versions",
        Auth::Bearer(&console.editor),
        &json!({"system": "{{#if x}}\n", "message": "broken"}),
    );
    assert_eq!(answer.status, 422);
    assert!(!document["paths"]["/prompts/{id}/versions"]["post"]["responses"]["422"].is_null());
    check(
        &document,
        &json!({"$ref": "#/components/schemas/Error"}),
        &answer.json(),
        "a refused publish",
    );
    assert_eq!(answer.json()["error"]["diagnostics"][0]["line"], 1);
}

#[test]
fn the_document_is_served() {
    let console = Console::start(Store::Sqlite, "openapi_served");
    let served = console.get("/api/v1/openapi.json", Auth::None);
    assert_eq!(served.status, 200);
    assert_eq!(served.json(), document());
}

/// The schema `path` documents for `method`'s answer of `status`.
fn answer_schema(document: &Value, path: &str, method: &str, status: &str) -> Value {
    document["paths"][path][method]["responses"][status]
        .pointer("/content/application~1json/schema")
        .cloned()
        .unwrap_or_else(|| panic!("{method} {path} documents no {status} body"))
}

/// A conversation published through the API renders as its messages, each
/// with its role (a tool result with its name), the history given among
/// them, as the document says; a prompt of two files gives its system and
/// user messages the same way.
#[test]
fn a_conversation_publishes_and_renders_as_documented() {
    let document = document();
    let console = Console::start(Store::Sqlite, "openapi_chat");
    let published = console.send(
        "POST",
        "/api/v1/prompts/chat/versions",
        Auth::Bearer(&console.editor),
        &json!({
            "system": CALCULATOR_SYSTEM,
            "messages": "---\nvars:\n  history: { kind: messages }\n---\n{{#user}}\nWhat is 2 + 2?\n{{/user}}\n{{#call calculator}}\n{\"sum\": \"2 + 2\"}\n{{/call}}\n{{#tool calculator}}\n4\n{{/tool}}\n{{history}}\n{{#user}}\n{{question}}\n{{/user}}",
            "message": "a conversation",
        }),
    );
    assert_eq!(published.status, 201, "{}", published.body);
    check(
        &document,
        &answer_schema(&document, "/prompts/{id}/versions", "post", "201"),
        &published.json(),
        "the published conversation",
    );
    assert!(published.json()["resolved_messages"].is_string());

    let rendered = console.send(
        "POST",
        "/api/v1/prompts/chat/render",
        Auth::Bearer(&console.viewer),
        &json!({"vars": {
            "name": "Ada",
            "history": [
                {"role": "call", "name": "calculator", "content": "{\"sum\": \"1 + 1\"}", "id": "call_8"},
                {"role": "tool", "name": "calculator", "content": "2", "id": "call_8"},
                {"role": "assistant", "content": "<b>earlier</b>"},
            ],
            "question": "And 3 + 3?",
        }}),
    );
    assert_eq!(rendered.status, 200, "{}", rendered.body);
    let body = rendered.json();
    check(
        &document,
        &answer_schema(&document, "/prompts/{id}/render", "post", "200"),
        &body,
        "a rendered conversation",
    );
    assert_eq!(body["system"], "You are Ada.");
    assert_eq!(body["user"], Value::Null);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are Ada."},
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "call", "content": "{\"sum\": \"2 + 2\"}", "name": "calculator"},
            {"role": "tool", "content": "4", "name": "calculator"},
            {"role": "call", "content": "{\"sum\": \"1 + 1\"}", "name": "calculator", "id": "call_8"},
            {"role": "tool", "content": "2", "name": "calculator", "id": "call_8"},
            {"role": "assistant", "content": "<b>earlier</b>"},
            {"role": "user", "content": "And 3 + 3?"},
        ])
    );

    let wrong = console.send(
        "POST",
        "/api/v1/prompts/chat/render",
        Auth::Bearer(&console.viewer),
        &json!({"vars": {"name": "Ada", "history": [{"role": "wizard", "content": "x"}], "question": "q"}}),
    );
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(!document["paths"]["/prompts/{id}/render"]["post"]["responses"]["400"].is_null());
    check(
        &document,
        &json!({"$ref": "#/components/schemas/Error"}),
        &wrong.json(),
        "a history with a wrong role",
    );
    assert_eq!(wrong.code(), "invalid_vars");

    // An example call of a tool the version does not declare is refused
    // at its place, and nothing is published.
    let undeclared = console.send(
        "POST",
        "/api/v1/prompts/chat/versions",
        Auth::Bearer(&console.editor),
        &json!({
            "system": "You are {{name}}.",
            "messages": "{{#call calculator}}\n{}\n{{/call}}\n{{#tool calculator}}\n4\n{{/tool}}\n{{#user}}\nq\n{{/user}}",
            "message": "no tools",
        }),
    );
    assert_eq!(undeclared.status, 422, "{}", undeclared.body);
    check(
        &document,
        &json!({"$ref": "#/components/schemas/Error"}),
        &undeclared.json(),
        "an example call of an undeclared tool",
    );
    assert_eq!(undeclared.code(), "invalid_call");
    assert!(
        undeclared.body.contains("messages.md:1:1"),
        "{}",
        undeclared.body
    );
    let latest = console.get("/api/v1/prompts/chat", Auth::Bearer(&console.viewer));
    assert_eq!(latest.json()["version"], 1, "{}", latest.body);
}

/// A system message declaring the tool `calculator`, for conversations
/// that show a call of it.
const CALCULATOR_SYSTEM: &str = "---\ntools:\n  calculator:\n    description: Works a sum out\n    parameters:\n      sum: string, the sum to work out\n---\nYou are {{name}}.";

/// A version that declares tools and a response renders them beside its
/// messages, as the document says.
#[test]
fn tools_and_a_response_render_as_documented() {
    let document = document();
    let console = Console::start(Store::Sqlite, "openapi_tools");
    console.publish_triage(support::TRIAGE_V1, "tools and a response");
    let rendered = console.send(
        "POST",
        "/api/v1/prompts/triage/render",
        Auth::Bearer(&console.viewer),
        &json!({"vars": {"ticket": "Where is my order?"}}),
    );
    assert_eq!(rendered.status, 200, "{}", rendered.body);
    let body = rendered.json();
    check(
        &document,
        &answer_schema(&document, "/prompts/{id}/render", "post", "200"),
        &body,
        "a render with tools and a response",
    );
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
    assert_eq!(body["response_format"]["json_schema"]["name"], "triage");
}

/// A model's answer read against a version's response: the value, or the
/// answer's error located in its text, or the version's lack of a response,
/// each as the document says.
#[test]
fn answers_are_read_as_documented() {
    let document = document();
    let console = Console::start(Store::Sqlite, "openapi_parse");
    console.publish_triage(support::TRIAGE_V1, "a response to read answers as");
    let parse = |id: &str, body: Value| {
        console.send(
            "POST",
            &format!("/api/v1/prompts/{id}/parse"),
            Auth::Bearer(&console.viewer),
            &body,
        )
    };
    let read = parse(
        "triage",
        json!({"answer": "```json\n{\"category\": \"billing\", \"summary\": \"s\", \"order\": \"A-1\"}\n```"}),
    );
    assert_eq!(read.status, 200, "{}", read.body);
    check(
        &document,
        &answer_schema(&document, "/prompts/{id}/parse", "post", "200"),
        &read.json(),
        "a read answer",
    );
    for (id, answer, status) in [
        ("triage", "{\"category\": \"spam\"}", "422"),
        ("triage", "no JSON here", "422"),
        ("greet", "{}", "409"),
    ] {
        let refused = parse(id, json!({"answer": answer}));
        assert_eq!(refused.status.to_string(), status, "{}", refused.body);
        check(
            &document,
            &answer_schema(&document, "/prompts/{id}/parse", "post", status),
            &refused.json(),
            answer,
        );
    }
}
