//! The JSON API, over real HTTP on loopback, against a real SQLite file and
//! a real PostgreSQL database: every route, its errors and its roles.

use crate::support;

use serde_json::json;
use support::{Auth, Console, Store};

/// One case, run against both stores.
macro_rules! on_every_store {
    ($($name:ident => $body:expr;)*) => {
        mod sqlite { use super::*; $( #[test] fn $name() { ($body)(Console::start(Store::Sqlite, stringify!($name))); } )* }
        mod postgres { use super::*; $( #[test] fn $name() { ($body)(Console::start(Store::Postgres, stringify!($name))); } )* }
    };
}

on_every_store! {
    no_token_no_data => |c: Console| {
        for path in ["/api/v1/prompts", "/api/v1/prompts/greet", "/api/v1/prompts/greet/history", "/api/v1/snippets", "/api/v1/me"] {
            let answer = c.get(path, Auth::None);
            assert_eq!(answer.status, 401, "{path}: {}", answer.body);
            assert_eq!(answer.code(), "unauthenticated");
            assert!(!answer.body.contains("Hello"), "{path} leaked data");
        }
        let answer = c.get("/api/v1/prompts", Auth::Bearer("pp_not-a-token"));
        assert_eq!(answer.status, 401);
        let answer = c.send("POST", "/api/v1/prompts/greet/render", Auth::None, &json!({"vars": {"name": "x"}}));
        assert_eq!(answer.status, 401);
        // Reading an answer is a read too: it needs a user.
        for auth in [Auth::None, Auth::Bearer("pp_not-a-token")] {
            let answer = c.send("POST", "/api/v1/prompts/greet/parse", auth, &json!({"answer": "{}"}));
            assert_eq!((answer.status, answer.code().as_str()), (401, "unauthenticated"), "{}", answer.body);
        }
    };

    list_get_and_history => |c: Console| {
        let list = c.get("/api/v1/prompts?limit=1", Auth::Bearer(&c.viewer)).json();
        assert_eq!(list["prompts"][0]["prompt"]["id"], "greet");
        assert_eq!(list["next_cursor"], "greet");
        let rest = c.get("/api/v1/prompts?limit=1&cursor=greet", Auth::Bearer(&c.viewer)).json();
        assert_eq!(rest["prompts"][0]["prompt"]["id"], "letter");
        let filtered = c.get("/api/v1/prompts?q=GREETS", Auth::Bearer(&c.viewer)).json();
        assert_eq!(filtered["prompts"].as_array().map(Vec::len), Some(1));
        let latest = c.get("/api/v1/prompts/greet", Auth::Bearer(&c.viewer)).json();
        assert_eq!(latest["version"], 2);
        let labelled = c.get("/api/v1/prompts/greet?label=production", Auth::Bearer(&c.viewer)).json();
        assert_eq!(labelled["version"], 1);
        let first = c.get("/api/v1/prompts/greet?version=1", Auth::Bearer(&c.viewer)).json();
        assert_eq!(first["system"], support::GREET_V1);
        let history = c.get("/api/v1/prompts/greet/history", Auth::Bearer(&c.viewer)).json();
        assert_eq!(history["versions"].as_array().map(Vec::len), Some(2));
        assert_eq!(history["audit"].as_array().and_then(|a| a.last()).map(|e| e["author"].clone()), Some(json!("setup")));
        let missing = c.get("/api/v1/prompts/nope", Auth::Bearer(&c.viewer));
        assert_eq!((missing.status, missing.code().as_str()), (404, "not_found"));
        let both = c.get("/api/v1/prompts/greet?version=1&label=production", Auth::Bearer(&c.viewer));
        assert_eq!((both.status, both.code().as_str()), (400, "invalid_request"));
    };

    render_strictly => |c: Console| {
        let body = json!({"vars": {"name": "Ada", "formal": true}});
        let answer = c.send("POST", "/api/v1/prompts/greet/render", Auth::Bearer(&c.viewer), &body);
        assert_eq!(answer.status, 200, "{}", answer.body);
        let rendered = answer.json();
        assert_eq!(rendered["system"], "Good day, Ada.");
        assert_eq!(rendered["version"], 2);
        assert_eq!(rendered["content_hash"].as_str().map(str::len), Some(64));
        let labelled = c.send("POST", "/api/v1/prompts/greet/render", Auth::Bearer(&c.viewer), &json!({"label": "production", "vars": {"name": "Bo"}})).json();
        assert_eq!((labelled["system"].clone(), labelled["version"].clone()), (json!("Hello Bo."), json!(1)));
        let missing = c.send("POST", "/api/v1/prompts/greet/render", Auth::Bearer(&c.viewer), &json!({"vars": {}}));
        assert_eq!((missing.status, missing.code().as_str()), (422, "missing_var"), "{}", missing.body);
        let not_json = c.send("POST", "/api/v1/prompts/greet/render", Auth::Bearer(&c.viewer), &json!("text"));
        assert_eq!((not_json.status / 100, not_json.code().as_str()), (4, "invalid_request"));
    };

    render_gives_the_tools_and_the_response_format => |c: Console| {
        c.publish_triage(support::TRIAGE_V1, "tools and a response");
        let answer = c.send("POST", "/api/v1/prompts/triage/render", Auth::Bearer(&c.viewer), &json!({"vars": {"ticket": "My invoice is wrong"}}));
        assert_eq!(answer.status, 200, "{}", answer.body);
        let body = answer.json();
        assert_eq!(body["system"], "Triage the ticket: My invoice is wrong");
        // Each tool as a chat request lists it, in the order declared; the
        // description is the catalog's text, as it is.
        assert_eq!(body["tools"], json!([
            {"type": "function", "function": {
                "name": "lookup",
                "description": "Finds an order <img src=x onerror=window.__pwned=6>",
                "parameters": {"type": "object", "properties": {"order": {"type": "string", "description": "the order number"}}, "required": ["order"], "additionalProperties": false},
                "strict": true}},
            {"type": "function", "function": {
                "name": "escalate",
                "description": "Hands the ticket to a person",
                "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
                "strict": true}},
        ]), "{}", answer.body);
        let format = &body["response_format"];
        assert_eq!((format["type"].clone(), format["json_schema"]["name"].clone(), format["json_schema"]["strict"].clone()), (json!("json_schema"), json!("triage"), json!(true)), "{format}");
        let schema = &format["json_schema"]["schema"];
        assert_eq!(schema["required"], json!(["category", "summary", "order"]), "{schema}");
        assert_eq!(schema["properties"]["category"]["enum"], json!(["bug", "billing"]));
        assert_eq!(schema["properties"]["order"]["type"], json!(["string", "null"]), "an optional field is nullable");
        assert_eq!(schema["additionalProperties"], json!(false));
        // A version of a prompt that declares neither: no tools, no format.
        let greet = c.send("POST", "/api/v1/prompts/greet/render", Auth::Bearer(&c.viewer), &json!({"vars": {"name": "Ada"}, "version": 1})).json();
        assert_eq!(greet["tools"], json!([]));
        assert!(greet.get("response_format").is_none(), "{greet}");
    };

    parse_reads_an_answer_against_the_versions_response => |c: Console| {
        c.publish_triage(support::TRIAGE_V1, "a response");
        let parse = |body: serde_json::Value| c.send("POST", "/api/v1/prompts/triage/parse", Auth::Bearer(&c.viewer), &body);
        // The JSON of the answer, fenced and with prose around it, read.
        let answer = "Here it is:\n```json\n{\"category\": \"bug\", \"summary\": \"It crashes <b>at once</b>\", \"order\": null}\n```\nAnything else?";
        let read = parse(json!({"answer": answer}));
        assert_eq!(read.status, 200, "{}", read.body);
        assert_eq!(read.json()["value"], json!({"category": "bug", "summary": "It crashes <b>at once</b>", "order": null}));
        assert_eq!(read.json()["version"], 1);
        // Against a version chosen as the other endpoints choose it.
        let second = support::TRIAGE_V1.replace("[bug, billing]", "[bug, billing, spam]");
        assert_eq!(c.publish_triage(&second, "spam too"), 2);
        c.catalog().set_label("triage", "production", 1).expect("a label");
        let spam = "{\"category\": \"spam\", \"summary\": \"s\", \"order\": null}";
        assert_eq!(parse(json!({"answer": spam})).status, 200, "the newest version takes `spam`");
        assert_eq!(parse(json!({"answer": spam, "version": 2})).json()["version"], 2);
        // One the schema does not take: located in the answer's text.
        let refused = parse(json!({"answer": spam, "label": "production"}));
        assert_eq!((refused.status, refused.code().as_str()), (422, "answer_mismatch"), "{}", refused.body);
        let diagnostic = &refused.json()["error"]["diagnostics"][0];
        assert_eq!((diagnostic["code"].clone(), diagnostic["path"].clone(), diagnostic["line"].clone(), diagnostic["column"].clone()), (json!("answer_mismatch"), json!("answer"), json!(1), json!(14)), "{diagnostic}");
        assert!(diagnostic["message"].as_str().is_some_and(|m| m.contains("$.category")), "{diagnostic}");
        // On the line it is on.
        let lines = "{\n  \"category\": \"bug\",\n  \"summary\": 3,\n  \"order\": null\n}";
        let refused = parse(json!({"answer": lines, "version": 1}));
        assert_eq!((refused.status, refused.code().as_str()), (422, "answer_mismatch"), "{}", refused.body);
        let diagnostic = &refused.json()["error"]["diagnostics"][0];
        assert_eq!((diagnostic["line"].clone(), diagnostic["column"].clone()), (json!(3), json!(14)), "{diagnostic}");
        // Text that holds no JSON, or JSON cut short.
        let prose = parse(json!({"answer": "I cannot help with that."}));
        assert_eq!((prose.status, prose.code().as_str()), (422, "answer_not_json"), "{}", prose.body);
        let cut = parse(json!({"answer": "{\"category\": \"bug\",\n  \"summary\": \"s"}));
        assert_eq!((cut.status, cut.code().as_str()), (422, "answer_not_json"), "{}", cut.body);
        assert_eq!(cut.json()["error"]["diagnostics"][0]["path"], "answer", "{}", cut.body);
        // A version without a response: nothing to read the answer as.
        let none = c.send("POST", "/api/v1/prompts/greet/parse", Auth::Bearer(&c.viewer), &json!({"answer": "{}"}));
        assert_eq!((none.status, none.code().as_str()), (409, "no_response"), "{}", none.body);
        assert!(none.json()["error"]["message"].as_str().is_some_and(|m| m.contains("v2 of `greet`")), "{}", none.body);
        // The request's own mistakes.
        let missing = parse(json!({"version": 1}));
        assert_eq!((missing.status, missing.code().as_str()), (422, "invalid_request"), "{}", missing.body);
        let both = parse(json!({"answer": spam, "version": 1, "label": "production"}));
        assert_eq!((both.status, both.code().as_str()), (400, "invalid_request"));
        let unknown = c.send("POST", "/api/v1/prompts/nope/parse", Auth::Bearer(&c.viewer), &json!({"answer": "{}"}));
        assert_eq!((unknown.status, unknown.code().as_str()), (404, "not_found"));
        // A read: any signed-in user, and nothing is written to the audit.
        let audit = c.get("/api/v1/prompts/triage/history", Auth::Bearer(&c.viewer)).json()["audit"].clone();
        for token in [&c.viewer, &c.editor, &c.admin] {
            let read = c.send("POST", "/api/v1/prompts/triage/parse", Auth::Bearer(token), &json!({"answer": spam}));
            assert_eq!(read.status, 200, "{}", read.body);
        }
        assert_eq!(c.get("/api/v1/prompts/triage/history", Auth::Bearer(&c.viewer)).json()["audit"], audit, "a read is not audited");
    };

    a_render_past_the_bound_is_refused_and_the_console_lives_on => |c: Console| {
        // 20,000 uses of one variable: publishable (the source is 100 KB),
        // and a 1 MiB value would render 20 GiB, which used to abort the
        // process on its allocation.
        let amplifier = json!({"system": "{{v}}".repeat(20_000), "message": "many uses"});
        let created = c.send("POST", "/api/v1/prompts/amplifier/versions", Auth::Bearer(&c.editor), &amplifier);
        assert_eq!(created.status, 201, "{}", created.body);
        let body = json!({"vars": {"v": "x".repeat(1 << 20)}});
        let refused = c.send("POST", "/api/v1/prompts/amplifier/render", Auth::Bearer(&c.viewer), &body);
        assert_eq!((refused.status, refused.code().as_str()), (413, "too_large"), "{}", &refused.body[..refused.body.len().min(500)]);
        let message = refused.json()["error"]["message"].as_str().unwrap_or_default().to_string();
        assert!(message.contains("`amplifier`") && message.contains("20971520000 bytes") && message.contains("16777216"), "{message}");
        let small = c.send("POST", "/api/v1/prompts/amplifier/render", Auth::Bearer(&c.viewer), &json!({"vars": {"v": "ab"}}));
        assert_eq!(small.status, 200, "the console still serves: {}", small.body);
        assert_eq!(small.json()["system"].as_str().map(str::len), Some(40_000));
    };

    publish_with_roles_and_errors => |c: Console| {
        let draft = json!({"system": "Bye {{name}}.\n", "message": "shorter"});
        let viewer = c.send("POST", "/api/v1/prompts/greet/versions", Auth::Bearer(&c.viewer), &draft);
        assert_eq!((viewer.status, viewer.code().as_str()), (403, "forbidden"));
        let published = c.send("POST", "/api/v1/prompts/greet/versions", Auth::Bearer(&c.editor), &draft);
        assert_eq!(published.status, 200, "{}", published.body);
        assert_eq!(published.json()["version"], 3);
        assert_eq!(published.json()["author"], "ed");
        let created = c.send("POST", "/api/v1/prompts/fresh/versions", Auth::Bearer(&c.editor), &json!({"system": "New.\n", "message": "new"}));
        assert_eq!(created.status, 201, "{}", created.body);
        let broken = c.send("POST", "/api/v1/prompts/greet/versions", Auth::Bearer(&c.editor), &json!({"system": "line\n{{#if x}}open\n", "message": "broken"}));
        assert_eq!((broken.status, broken.code().as_str()), (422, "unclosed_block"), "{}", broken.body);
        let diagnostic = &broken.json()["error"]["diagnostics"][0];
        assert_eq!((diagnostic["line"].clone(), diagnostic["column"].clone()), (json!(2), json!(1)));
        let after = c.get("/api/v1/prompts/greet", Auth::Bearer(&c.viewer)).json();
        assert_eq!(after["version"], 3, "a refused publish wrote nothing");
        let contract = json!({"format": 1, "prompts": {"greet": {"variables": [{"name": "name", "kind": "text"}]}}});
        let violating = c.send("POST", "/api/v1/prompts/greet/versions", Auth::Bearer(&c.editor), &json!({"system": "{{who}}\n", "message": "m", "contract": contract}));
        assert_eq!((violating.status, violating.code().as_str()), (409, "contract_violation"), "{}", violating.body);
    };

    labels_roles_and_splits => |c: Console| {
        let editor_production = c.send("PUT", "/api/v1/prompts/greet/labels/production", Auth::Bearer(&c.editor), &json!({"version": 2}));
        assert_eq!((editor_production.status, editor_production.code().as_str()), (403, "forbidden"));
        let viewer_staging = c.send("PUT", "/api/v1/prompts/greet/labels/staging", Auth::Bearer(&c.viewer), &json!({"version": 2}));
        assert_eq!(viewer_staging.status, 403);
        let staging = c.send("PUT", "/api/v1/prompts/greet/labels/staging", Auth::Bearer(&c.editor), &json!({"version": 2}));
        assert_eq!(staging.status, 200, "{}", staging.body);
        assert_eq!(staging.json()["author"], "ed");
        let moved = c.send("PUT", "/api/v1/prompts/greet/labels/production", Auth::Bearer(&c.admin), &json!({"version": 2}));
        assert_eq!(moved.status, 200);
        assert_eq!((moved.json()["from_version"].clone(), moved.json()["to_version"].clone()), (json!(1), json!(2)));
        let split = c.send("PUT", "/api/v1/prompts/greet/labels/canary", Auth::Bearer(&c.editor), &json!({"arms": [[1, 90], [2, 10]]}));
        assert_eq!(split.status, 200, "{}", split.body);
        let listed = c.get("/api/v1/prompts?q=greet", Auth::Bearer(&c.viewer)).json();
        let labels = listed["prompts"][0]["labels"].to_string();
        assert!(labels.contains("canary") && labels.contains("production"), "{labels}");
        let nothing = c.send("PUT", "/api/v1/prompts/greet/labels/x", Auth::Bearer(&c.editor), &json!({}));
        assert_eq!(nothing.status, 400);
        let no_version = c.send("PUT", "/api/v1/prompts/greet/labels/x", Auth::Bearer(&c.editor), &json!({"version": 9}));
        assert_eq!((no_version.status, no_version.code().as_str()), (404, "not_found"));
    };

    look_alike_labels_are_protected_and_collide => |c: Console| {
        // Protection compares without case, on every prompt.
        for (id, label) in [("greet", "Production"), ("greet", "PRODUCTION"), ("xss", "pRODUCTION")] {
            let editor = c.send("PUT", &format!("/api/v1/prompts/{id}/labels/{label}"), Auth::Bearer(&c.editor), &json!({"version": 1}));
            assert_eq!((editor.status, editor.code().as_str()), (403, "forbidden"), "{id} {label}: {}", editor.body);
            let split = c.send("PUT", &format!("/api/v1/prompts/{id}/labels/{label}"), Auth::Bearer(&c.editor), &json!({"arms": [[1, 50], [2, 50]]}));
            assert_eq!(split.status, 403, "{id} {label}: {}", split.body);
        }
        // Collisions too: not even an admin makes `Production` beside `production`.
        let admin = c.send("PUT", "/api/v1/prompts/xss/labels/Production", Auth::Bearer(&c.admin), &json!({"version": 1}));
        assert_eq!((admin.status, admin.code().as_str()), (409, "already_exists"), "{}", admin.body);
        let staging = c.send("PUT", "/api/v1/prompts/greet/labels/staging", Auth::Bearer(&c.editor), &json!({"version": 2}));
        assert_eq!(staging.status, 200, "{}", staging.body);
        let look_alike = c.send("PUT", "/api/v1/prompts/xss/labels/Staging", Auth::Bearer(&c.editor), &json!({"version": 1}));
        assert_eq!((look_alike.status, look_alike.code().as_str()), (409, "already_exists"), "{}", look_alike.body);
        assert!(look_alike.body.contains("`staging`"), "{}", look_alike.body);
    };

    diff_delete_restore_and_snippets => |c: Console| {
        let diff = c.get("/api/v1/prompts/greet/diff?from=1&to=2", Auth::Bearer(&c.viewer)).json();
        assert!(diff["diff"].as_str().is_some_and(|d| d.contains("-Hello {{name}}.")), "{diff}");
        let editor = c.send("DELETE", "/api/v1/prompts/xss", Auth::Bearer(&c.editor), &json!(null));
        assert_eq!(editor.status, 403);
        let deleted = c.send("DELETE", "/api/v1/prompts/xss", Auth::Bearer(&c.admin), &json!(null));
        assert_eq!(deleted.status, 204, "{}", deleted.body);
        assert_eq!(c.get("/api/v1/prompts/xss", Auth::Bearer(&c.viewer)).status, 404);
        let restored = c.send("POST", "/api/v1/prompts/xss/restore", Auth::Bearer(&c.admin), &json!(null));
        assert_eq!(restored.status, 204);
        assert_eq!(c.get("/api/v1/prompts/xss", Auth::Bearer(&c.viewer)).status, 200);
        let snippets = c.get("/api/v1/snippets", Auth::Bearer(&c.viewer)).json();
        assert_eq!((snippets[0]["name"].clone(), snippets[0]["revision"].clone()), (json!("sign-off"), json!(2)));
        let viewer = c.send("POST", "/api/v1/prompts/letter/upgrade", Auth::Bearer(&c.viewer), &json!(null));
        assert_eq!(viewer.status, 403);
        let upgraded = c.send("POST", "/api/v1/prompts/letter/upgrade", Auth::Bearer(&c.editor), &json!(null)).json();
        assert_eq!(upgraded["pins"], json!([{"snippet": "sign-off", "revision": 2}]));
        let again = c.send("POST", "/api/v1/prompts/letter/upgrade", Auth::Bearer(&c.editor), &json!(null));
        assert_eq!((again.status, again.code().as_str()), (409, "pins_current"));
        let me = c.get("/api/v1/me", Auth::Bearer(&c.editor)).json();
        assert_eq!((me["name"].clone(), me["role"].clone()), (json!("ed"), json!("editor")));
    };
}

#[test]
fn bodies_are_size_limited() {
    let console = Console::start_with(Store::Sqlite, "limits", |s| s.max_body_bytes(4096));
    let big = "x".repeat(10_000);
    let answer = console.send(
        "POST",
        "/api/v1/prompts/greet/versions",
        Auth::Bearer(&console.editor),
        &json!({"system": big, "message": "big"}),
    );
    assert_eq!(
        (answer.status, answer.code().as_str()),
        (413, "too_large"),
        "{}",
        answer.body
    );
}

#[test]
fn unknown_routes_answer_json() {
    let console = Console::start(Store::Sqlite, "routes");
    let answer = console.get("/api/v1/nothing", Auth::Bearer(&console.viewer));
    assert_eq!((answer.status, answer.code().as_str()), (404, "not_found"));
}
