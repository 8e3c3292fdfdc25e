//! A prompt that declares a response and tools, as a person meets it: its
//! page lists both (markup in a description shown as text, never run), at
//! a desk's width and a phone's; an edit with a mistake in the response's
//! notation is shown at its line, then a changed response is published
//! through the edit page, and the diff shows the response's change; the
//! API reads a model's answer as that version declares it.

use super::support::{Auth, Console, TRIAGE_V1};
use super::{click_to, path, set_text, shot, text_of};
use fantoccini::{Client, Locator};
use serde_json::json;

/// A phone's width (and height), in CSS pixels.
const PHONE: (u32, u32) = (390, 844);
/// The desk's, as the browser starts.
const DESK: (u32, u32) = (1280, 1000);

async fn pwned(client: &Client) -> serde_json::Value {
    client
        .execute(
            "return window.__pwned === undefined ? null : window.__pwned;",
            vec![],
        )
        .await
        .expect("a script of the test runs")
}

async fn scroll_to(client: &Client, id: &str) {
    client
        .execute(
            "document.getElementById(arguments[0]).scrollIntoView();",
            vec![serde_json::json!(id)],
        )
        .await
        .expect("scrolled");
}

/// `name` at the desk's width, then `name-phone` at a phone's, `id` in
/// view in both.
async fn shots(client: &Client, id: &str, name: &str) {
    scroll_to(client, id).await;
    shot(client, name).await;
    client
        .set_window_size(PHONE.0, PHONE.1)
        .await
        .expect("a phone's width");
    scroll_to(client, id).await;
    shot(client, &format!("{name}-phone")).await;
    client
        .set_window_size(DESK.0, DESK.1)
        .await
        .expect("the desk's width again");
}

pub(crate) async fn tools_and_response(console: &Console, client: &Client) {
    console.publish_triage(TRIAGE_V1, "a response and tools");
    client
        .goto(&format!("{}/prompts/triage", console.base))
        .await
        .expect("the prompt");

    // The response: its fields, and the shape as the prompt prints it.
    let fields = text_of(client, "#response-fields").await;
    assert!(
        fields.contains("category") && fields.contains("the ticket in one line"),
        "{fields}"
    );
    let order = text_of(client, "#response-fields tbody tr:nth-child(3)").await;
    assert!(
        order.starts_with("order")
            && order.contains("optional")
            && order.contains("<script>window.__pwned = 5</script>"),
        "{order}"
    );
    let described = text_of(client, "#response-described").await;
    assert!(
        described.contains(r#""category": "bug" | "billing","#)
            && described.contains(r#""order": string | null // the order"#),
        "{described}"
    );
    // The tools, each with its arguments.
    let lookup = text_of(client, "#tool-lookup").await;
    assert!(
        lookup.contains("Finds an order <img src=x onerror=window.__pwned=6>")
            && lookup.contains("order: string"),
        "{lookup}"
    );
    assert!(text_of(client, "#tool-escalate").await.contains("none"));
    assert_eq!(
        pwned(client).await,
        serde_json::Value::Null,
        "a description ran"
    );
    shots(client, "exchange", "21-prompt-response").await;

    // An edit with a type that is none: shown at its line.
    click_to(client, "#edit", "#edit-form").await;
    let broken = TRIAGE_V1.replace("summary: string,", "summary: strng,");
    set_text(client, "system", &broken).await;
    click_to(client, "#check", "#diagnostics li.error").await;
    let diagnostics = text_of(client, "#diagnostics").await;
    assert!(
        diagnostics.contains("templates/triage/system.md:5:")
            && diagnostics.contains("invalid_schema"),
        "{diagnostics}"
    );
    assert!(
        text_of(client, "#line-system-5").await.contains("strng"),
        "the line is listed"
    );
    shots(client, "diagnostics", "22-edit-invalid-schema").await;

    // A changed response (a field the model may now fill), published.
    let changed = TRIAGE_V1.replace(
        "  summary: string, the ticket in one line\n",
        "  summary: string, the ticket in one line\n  urgent?: boolean, whether it blocks a priority customer\n",
    );
    set_text(client, "system", &changed).await;
    click_to(client, "#check", "#check-ok").await;
    assert!(
        text_of(client, "#response-fields").await.contains("urgent"),
        "the checked draft's response, as it was read"
    );
    shots(client, "exchange", "23-edit-checked-response").await;
    client
        .find(Locator::Id("message"))
        .await
        .expect("the message field")
        .send_keys("say when it is urgent")
        .await
        .expect("typed");
    click_to(client, "#publish", "#versions").await;
    assert_eq!(text_of(client, "#flash").await, "Published triage v2.");
    assert!(
        text_of(client, "#response-fields").await.contains("urgent"),
        "the page shows the newest version's response"
    );

    // The diff: the response's change, as the prompt prints it.
    click_to(client, "#diff-latest", "#part-response").await;
    assert_eq!(path(client).await, "/prompts/triage/diff?from=1&to=2");
    let response = text_of(client, "#part-response").await;
    assert!(
        response.contains(r#""urgent": boolean | null, // whether it blocks a priority customer"#),
        "{response}"
    );
    let added = client
        .find_all(Locator::Css(
            "#part-response tr.added td.new, #part-response tr.changed td.new",
        ))
        .await
        .expect("the rows");
    let mut texts = Vec::new();
    for row in added {
        texts.push(row.text().await.expect("its text"));
    }
    assert!(
        texts.iter().any(|t| t.contains("urgent")),
        "the new field is marked as added: {texts:?}"
    );
    assert!(
        text_of(client, "#part-tools")
            .await
            .contains("Same on both sides."),
        "the tools did not change"
    );
    assert_eq!(
        pwned(client).await,
        serde_json::Value::Null,
        "a description ran"
    );
    shots(client, "part-response", "24-diff-response").await;

    // The API reads a model's answer as the published version declares it.
    let answer = r#"{"category": "bug", "summary": "s", "urgent": "yes", "order": null}"#;
    let refused = console.send(
        "POST",
        "/api/v1/prompts/triage/parse",
        Auth::Bearer(&console.viewer),
        &json!({ "answer": answer }),
    );
    assert_eq!(
        (refused.status, refused.code().as_str()),
        (422, "answer_mismatch"),
        "{}",
        refused.body
    );
    let read = console.send(
        "POST",
        "/api/v1/prompts/triage/parse",
        Auth::Bearer(&console.viewer),
        &json!({ "answer": answer.replace(r#""yes""#, "true") }),
    );
    assert_eq!(read.json()["value"]["urgent"], json!(true), "{}", read.body);
}
