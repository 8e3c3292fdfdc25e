//! A snippet edited as a person would: from the list to the snippet's
//! page, an edit that breaks a prompt that includes it (refused, the
//! prompt named), fixed and published, then the including prompt's pins
//! upgraded from the snippet's page.

use super::support::{Auth, Console};
use super::{click_to, path, set_text, shot, text_of};
use fantoccini::{Client, Locator};
use serde_json::json;

pub(crate) async fn snippet_edit(console: &Console, client: &Client) {
    client
        .goto(&format!("{}/", console.base))
        .await
        .expect("the list");
    click_to(
        client,
        "#snippets a[href='/snippets/sign-off']",
        "#revisions",
    )
    .await;
    assert_eq!(path(client).await, "/snippets/sign-off");
    assert!(text_of(client, "#text").await.contains("Kind regards."));
    assert!(
        text_of(client, "#use-letter").await.contains("v1 pins r1"),
        "the including prompt and its pin"
    );
    shot(client, "12-snippet").await;

    // A draft that breaks `letter`: checked, refused, `letter` named.
    click_to(client, "#edit", "#edit-form").await;
    set_text(client, "text", "Regards {{#if formal}}sir\n").await;
    click_to(client, "#publish", "#refusal").await;
    let refusal = text_of(client, "#refusal").await;
    assert!(refusal.contains("check_failed"), "{refusal}");
    let letter = text_of(client, "#check-letter").await;
    assert!(letter.contains("unclosed_block"), "{letter}");
    shot(client, "13-snippet-refused").await;

    // Fixed, and published: a new revision, and `letter` behind it.
    set_text(client, "text", "Warmest regards.\n").await;
    let message = client
        .find(Locator::Id("message"))
        .await
        .expect("the message field");
    message.clear().await.expect("cleared");
    message.send_keys("warmest").await.expect("typed");
    click_to(client, "#publish", "#published").await;
    assert_eq!(path(client).await, "/snippets/sign-off?published=3");
    let revisions = text_of(client, "#revisions").await;
    assert!(
        revisions.contains("r3") && revisions.contains("warmest"),
        "{revisions}"
    );
    assert!(text_of(client, "#text").await.contains("Warmest regards."));
    shot(client, "14-snippet-published").await;

    // The pins-only upgrade of `letter`, from here.
    click_to(client, "#upgrade-letter", "#upgraded").await;
    let letter = text_of(client, "#use-letter").await;
    assert!(letter.contains("v2 pins r3"), "{letter}");
    shot(client, "15-snippet-upgraded").await;
    let rendered = console.send(
        "POST",
        "/api/v1/prompts/letter/render",
        Auth::Bearer(&console.viewer),
        &json!({"vars": {"name": "Ada"}}),
    );
    assert!(
        rendered.body.contains("Warmest regards."),
        "{}",
        rendered.body
    );
}
