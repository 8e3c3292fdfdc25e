//! A version's tools and response on the pages: the prompt page lists
//! them (markup in their descriptions shown as text), the diff compares
//! them, an edit with a bad schema is shown at its line, and an edit whose
//! answers a running build could not read is refused by that build as any
//! contract violation is.

use crate::support;

use support::{Auth, Console, Store, TRIAGE_V1, hidden};

/// The part of `page` from `start` to the next `end` (empty when `start`
/// is not there, which the assertions then show).
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let Some(at) = page.find(start) else {
        return "";
    };
    let rest = &page[at..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

#[test]
fn a_prompt_page_lists_its_tools_and_response_as_text() {
    let c = Console::start(Store::Sqlite, "tools_page");
    c.publish_triage(TRIAGE_V1, "a response and tools");
    let cookie = c.sign_in(&c.viewer);
    let page = c.get("/prompts/triage", Auth::Cookie(&cookie));
    assert_eq!(page.status, 200, "{}", page.body);
    let page = page.body;

    let tools = between(&page, "id=\"tools\"", "</table>");
    let lookup = between(tools, "id=\"tool-lookup\"", "</tr>");
    assert!(
        lookup.contains("<code>lookup</code>")
            && lookup.contains("Finds an order")
            && lookup.contains("<code>order: string</code>"),
        "{tools}"
    );
    let escalate = between(tools, "id=\"tool-escalate\"", "</tr>");
    assert!(
        escalate.contains("Hands the ticket to a person") && escalate.contains("none"),
        "a tool without arguments: {tools}"
    );

    let fields = between(&page, "id=\"response-fields\"", "</table>");
    let rows: Vec<&str> = fields.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 3, "{fields}");
    assert!(
        rows[0].contains("<code>category</code>")
            && rows[0].contains("<code>&#34;bug&#34; | &#34;billing&#34;</code>")
            && !rows[0].contains("optional"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("<code>summary</code>") && rows[1].contains("the ticket in one line"),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].contains("<code>order</code>") && rows[2].contains("<td>optional</td>"),
        "{}",
        rows[2]
    );
    let described = between(&page, "id=\"response-described\"", "</pre>");
    assert!(
        described.contains("&#34;category&#34;: &#34;bug&#34; | &#34;billing&#34;,")
            && described.contains("&#34;order&#34;: string | null // the order"),
        "{described}"
    );

    // Descriptions are the catalog's text: never markup.
    assert!(
        !page.contains("<script>window.__pwned = 5") && !page.contains("<img src=x"),
        "stored markup on the page: {page}"
    );
    assert!(
        page.contains("&#60;script&#62;window.__pwned = 5&#60;/script&#62;")
            && page.contains("&#60;img src=x onerror=window.__pwned=6&#62;"),
        "{page}"
    );

    // A prompt that declares neither shows neither.
    let greet = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    assert!(!greet.contains("id=\"exchange\""), "{greet}");
}

#[test]
fn the_diff_shows_a_change_of_tools_and_response() {
    let c = Console::start(Store::Sqlite, "tools_diff");
    c.publish_triage(TRIAGE_V1, "first");
    let second = TRIAGE_V1
        .replace("[bug, billing]", "[bug, billing, other]")
        .replace(
            "      order: string, the order number\n",
            "      order: string, the order number\n      customer?: string\n",
        );
    assert_eq!(c.publish_triage(&second, "wider"), 2);
    let cookie = c.sign_in(&c.viewer);
    let page = c
        .get("/prompts/triage/diff?from=1&to=2", Auth::Cookie(&cookie))
        .body;
    let response = between(&page, "id=\"part-response\"", "</section>");
    assert!(
        response.contains("<ins>") && response.contains("other") && response.contains("category"),
        "{response}"
    );
    let tools = between(&page, "id=\"part-tools\"", "</section>");
    let added = between(tools, "<tr class=\"added\">", "</tr>");
    assert!(added.contains("  customer?: string"), "{tools}");
    assert!(
        !page.contains("<script>window.__pwned = 5") && !page.contains("<img src=x"),
        "stored markup on the diff"
    );
    // The same version on both sides: the parts are there, and the same.
    let same = c
        .get("/prompts/triage/diff?from=2&to=2", Auth::Cookie(&cookie))
        .body;
    assert!(
        between(&same, "id=\"part-response\"", "</section>").contains("Same on both sides."),
        "{same}"
    );
    // A prompt without either has no such parts.
    let greet = c
        .get("/prompts/greet/diff?from=1&to=2", Auth::Cookie(&cookie))
        .body;
    assert!(
        !greet.contains("id=\"part-response\"") && !greet.contains("id=\"part-tools\""),
        "{greet}"
    );
}

#[test]
fn an_edit_with_a_bad_schema_is_shown_at_its_line() {
    let c = Console::start(Store::Sqlite, "tools_edit");
    c.publish_triage(TRIAGE_V1, "first");
    let cookie = c.sign_in(&c.editor);
    let form = c.get("/prompts/triage/edit", Auth::Cookie(&cookie)).body;
    assert!(
        form.contains("  category: [bug, billing]"),
        "the front matter is edited with the text: {form}"
    );
    let csrf = hidden(&form, "csrf");
    let broken = TRIAGE_V1.replace("summary: string,", "summary: strng,");
    for action in ["check", "publish"] {
        let answer = c.post_form(
            "/prompts/triage/edit",
            Auth::Cookie(&cookie),
            &[
                ("csrf", &csrf),
                ("system", &broken),
                ("message", "typo"),
                ("action", action),
            ],
        );
        assert_eq!(
            answer.status,
            if action == "check" { 200 } else { 422 },
            "{action}: {}",
            answer.body
        );
        let body = &answer.body;
        assert!(
            body.contains("invalid_schema") && body.contains("templates/triage/system.md:5:"),
            "{action}: {body}"
        );
        assert!(
            body.contains("<tr id=\"line-system-5\" class=\"marked\">"),
            "{action}: the line is marked: {body}"
        );
        assert!(body.contains("strng"), "{action}: {body}");
    }
    assert_eq!(
        c.get("/api/v1/prompts/triage", Auth::Bearer(&c.viewer))
            .json()["version"],
        1,
        "nothing was published"
    );
    // Fixed and checked: the draft's response as it was read, before it is
    // published.
    let fixed = TRIAGE_V1.replace(
        "  summary: string, the ticket in one line\n",
        "  summary: string, the ticket in one line\n  urgent?: boolean, whether it <b>blocks</b>\n",
    );
    let checked = c.post_form(
        "/prompts/triage/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", &fixed),
            ("message", "urgent"),
            ("action", "check"),
        ],
    );
    assert!(checked.body.contains("No errors"), "{}", checked.body);
    let fields = between(&checked.body, "id=\"response-fields\"", "</table>");
    assert!(
        fields.contains("<code>urgent</code>")
            && fields.contains("<code>boolean</code>")
            && fields.contains("whether it &#60;b&#62;blocks&#60;/b&#62;"),
        "{}",
        checked.body
    );
    assert!(checked.body.contains("in the draft"), "{}", checked.body);
    // A draft without errors that declares neither shows neither.
    let plain = c.post_form(
        "/prompts/triage/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", "Triage the ticket.\n"),
            ("message", "m"),
            ("action", "check"),
        ],
    );
    assert!(
        plain.body.contains("No errors") && !plain.body.contains("id=\"exchange\""),
        "{}",
        plain.body
    );
}

/// A build whose binary reads `triage`'s answers as v1 declares them: an
/// edit that widens the response's enum publishes (no contract is given
/// with a page's edit, as with any edit), and that build refuses it as it
/// refuses any version that breaks its contract: on the move's
/// confirmation, and on the prompt page once its label points there.
#[test]
fn an_edit_a_running_build_could_not_read_is_refused_by_that_build() {
    let c = Console::start(Store::Sqlite, "tools_contract");
    c.publish_triage(TRIAGE_V1, "first");
    c.catalog()
        .set_label("triage", "production", 1)
        .expect("a label");
    c.register_triage_build("triage-service#7", "production");
    let cookie = c.sign_in(&c.admin);
    let page = c.get("/prompts/triage", Auth::Cookie(&cookie)).body;
    assert!(
        page.contains("<td>triage-service#7</td><td>production</td><td>v1</td>"),
        "the build serves v1: {page}"
    );
    let form = c.get("/prompts/triage/edit", Auth::Cookie(&cookie)).body;
    let csrf = hidden(&form, "csrf");
    let wider = TRIAGE_V1.replace("[bug, billing]", "[bug, billing, other]");
    let published = c.post_form(
        "/prompts/triage/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", &wider),
            ("message", "a third category"),
            ("action", "publish"),
        ],
    );
    assert_eq!(published.status, 303, "{}", published.body);
    let confirm = c
        .get(
            "/prompts/triage/move?label=production&version=2",
            Auth::Cookie(&cookie),
        )
        .body;
    let refusals = between(&confirm, "id=\"refusals\"", "</div>");
    assert!(
        refusals.contains("triage-service#7")
            && refusals.contains("contract_violation")
            && refusals.contains("category"),
        "{confirm}"
    );
    c.post_form(
        "/prompts/triage/move",
        Auth::Cookie(&cookie),
        &[("csrf", &csrf), ("label", "production"), ("target", "2")],
    );
    let page = c.get("/prompts/triage", Auth::Cookie(&cookie)).body;
    assert!(
        page.contains(
            "<td>triage-service#7</td><td>production</td><td>refuses v2 (contract_violation"
        ),
        "{page}"
    );
    // The API's publish with the build's contract refuses the same text at
    // its line, writing nothing.
    let contract: serde_json::Value =
        serde_json::from_str(support::TRIAGE_CONTRACT).expect("the contract");
    let refused = c.send(
        "POST",
        "/api/v1/prompts/triage/versions",
        Auth::Bearer(&c.editor),
        &serde_json::json!({"system": wider.replace("other]", "other, spam]"), "message": "m", "contract": contract}),
    );
    assert_eq!(
        (refused.status, refused.code().as_str()),
        (409, "contract_violation"),
        "{}",
        refused.body
    );
    let diagnostic = &refused.json()["error"]["diagnostics"][0];
    assert_eq!(
        (diagnostic["path"].as_str(), diagnostic["line"].as_u64()),
        (Some("templates/triage/system.md"), Some(4)),
        "{diagnostic}"
    );
}
