//! Tools and responses through `Library`: the request's JSON, a model's
//! answer and a tool call's arguments read against what the prompt
//! declares (refusals located in the model's text), and a declaration
//! edited on disk seen by a watched library's next reload.

use promptpack::{Config, ErrorCode, Library, SourceFile, TemplateSource};
use serde_json::json;

const TRIAGE: &str = "---
tools:
  lookup:
    description: Finds an order
    parameters:
      order: string
response:
  category: [bug, billing]
  summary: string
  order?: string
---
Triage the ticket.
";

fn library(system: &str) -> Library {
    let template = TemplateSource {
        id: "triage".into(),
        system: SourceFile::new("templates/triage/system.md", system),
        user: None,
        messages: None,
    };
    Library::from_sources(vec![template], vec![], &Config::default()).expect("loads")
}

#[test]
fn the_request_carries_the_declared_tools_and_response_format() {
    let library = library(TRIAGE);
    let tools = library.tools("triage").expect("a prompt");
    assert_eq!(tools[0]["function"]["name"], "lookup");
    assert_eq!(tools[0]["function"]["strict"], true);
    let format = library.response_format("triage").expect("a response");
    assert_eq!(format["json_schema"]["name"], "triage");
    assert_eq!(
        format["json_schema"]["schema"]["properties"]["order"]["type"],
        json!(["string", "null"])
    );
    let plain = self::library("Triage.");
    assert_eq!(plain.tools("triage"), Some(json!([])));
    assert_eq!(plain.response_format("triage"), None);
    assert_eq!(plain.tools("nope"), None);
}

#[test]
fn an_answer_is_read_strictly_and_refused_where_it_breaks() {
    let library = library(TRIAGE);
    let value = library
        .parse_response(
            "triage",
            "Sure! Here is the triage:\n```json\n{\"category\": \"bug\", \"summary\": \"Crash\", \"order\": null}\n```\nAnything else?",
        )
        .expect("a fenced answer after a sentence reads");
    assert_eq!(
        value,
        json!({"category": "bug", "summary": "Crash", "order": null})
    );

    let refused = library
        .parse_response(
            "triage",
            "{\n  \"category\": \"refund\",\n  \"summary\": \"x\",\n  \"order\": null\n}",
        )
        .expect_err("refund is not a category");
    let first = &refused.diagnostics()[0];
    assert_eq!(first.code, ErrorCode::AnswerMismatch);
    let at = first.location.as_ref().expect("located in the answer");
    assert_eq!((at.line(), at.column()), (2, 15), "{refused}");
    assert!(first.message.contains("$.category"), "{refused}");

    let cut = library
        .parse_response("triage", "{\"category\": \"bug\", \"summ")
        .expect_err("cut short");
    assert_eq!(cut.code(), ErrorCode::AnswerNotJson);

    let none = self::library("Triage.")
        .parse_response("triage", "{}")
        .expect_err("no response declared");
    assert_eq!(none.code(), ErrorCode::InvalidSchema);
    let unknown = library
        .parse_response("nope", "{}")
        .expect_err("no such prompt");
    assert_eq!(unknown.code(), ErrorCode::UnknownPrompt);
}

#[test]
fn a_tool_calls_arguments_are_read_against_its_parameters() {
    let library = library(TRIAGE);
    let args = library
        .parse_tool_call("triage", "lookup", "{\"order\": \"A-18\"}")
        .expect("reads");
    assert_eq!(args, json!({"order": "A-18"}));
    let wrong = library
        .parse_tool_call("triage", "lookup", "{\"order\": 18}")
        .expect_err("a number");
    assert_eq!(wrong.code(), ErrorCode::AnswerMismatch);
    let unknown = library
        .parse_tool_call("triage", "refund", "{}")
        .expect_err("no such tool");
    assert_eq!(unknown.code(), ErrorCode::InvalidSchema);
    assert!(unknown.to_string().contains("lookup"), "{unknown}");
}

#[cfg(feature = "hot-reload")]
#[test]
fn an_edited_response_is_read_after_the_reload() {
    use promptpack::{WatchOptions, WatchedLibrary};
    use promptpack_testkit::files::write_tree;
    let dir = tempfile::tempdir().expect("temp dir");
    write_tree(dir.path(), &[("templates/triage/system.md", TRIAGE)]);
    let watched = WatchedLibrary::new(dir.path(), WatchOptions::new()).expect("watches");
    let answer = "{\"category\": \"bug\", \"summary\": \"x\", \"order\": null, \"mood\": \"calm\"}";
    assert_eq!(
        watched
            .current()
            .parse_response("triage", answer)
            .map_err(|e| e.code()),
        Err(ErrorCode::AnswerMismatch),
        "mood is not declared yet"
    );
    write_tree(
        dir.path(),
        &[(
            "templates/triage/system.md",
            &TRIAGE.replace("  order?: string\n", "  order?: string\n  mood: string\n"),
        )],
    );
    watched.reload().expect("reloads");
    let value = watched
        .current()
        .parse_response("triage", answer)
        .expect("mood is declared now");
    assert_eq!(value["mood"], "calm");
}
