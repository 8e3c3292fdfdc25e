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
