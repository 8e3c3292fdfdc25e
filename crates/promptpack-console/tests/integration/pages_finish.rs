//! What a new user missed on the pages: a role refusal in English, code
//! spans in catalog prose (and nothing else of it as markup), a first
//! preview that asks before it complains, numbered lines beside an edit's
//! diagnostics, builds gone stale shown so and not counted, a confirmation
//! after Publish, the filter on snippets too, readable times, and a label's
//! version without its name again.

use crate::support;

use promptpack_catalog::{Access, Catalog, Draft, Timeouts};
use support::{Auth, Console, Store, hidden};

fn publish(c: &Console, id: &str, system: &str) {
    let mut catalog = Catalog::connect_with(&c.db, Access::Write, &Timeouts::DEFAULT)
        .expect("the catalog")
        .with_author("setup");
    let draft = Draft {
        system: system.to_string(),
        message: "for the test".to_string(),
        ..Draft::default()
    };
    catalog
        .publish_or_create(id, &draft, None)
        .expect("a version");
}

/// The part of `page` from `start` to the next `end` (empty when `start`
/// is not there, which the assertions then show).
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let Some(at) = page.find(start) else {
        return "";
    };
    let rest = &page[at..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The text a reader sees: the page without its tags (and so without
/// their attributes).
fn visible(page: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in page.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

/// Whether `text` holds an RFC 3339 time with milliseconds
/// (`2026-12-04T22:44:31.123Z`): its `22:44:31.123Z`.
fn has_iso_millis(text: &str) -> bool {
    text.as_bytes().windows(13).any(|w| {
        let digits = |range: std::ops::Range<usize>| w[range].iter().all(u8::is_ascii_digit);
        digits(0..2)
            && w[2] == b':'
            && digits(3..5)
            && w[5] == b':'
            && digits(6..8)
            && w[8] == b'.'
            && digits(9..12)
            && w[12] == b'Z'
    })
}

#[test]
fn a_role_refusal_reads_as_english() {
    let c = Console::start(Store::Sqlite, "finish_role");
    let editor = c.sign_in(&c.editor);
    let refused = c.get(
        "/prompts/greet/move?label=production&version=2",
        Auth::Cookie(&editor),
    );
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(!refused.body.contains("is a editor"), "{}", refused.body);
    assert!(
        refused.body.contains("has the editor role"),
        "{}",
        refused.body
    );
    // The error page's message is prose too: its code spans shown as code.
    assert!(
        refused.body.contains("<code>production</code>"),
        "{}",
        refused.body
    );
    let missing = c.get("/prompts/%3Cb%3Ebold", Auth::Cookie(&editor));
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert!(!missing.body.contains("<b>bold"), "{}", missing.body);
}

/// Descriptions and messages: backticks become code spans, and every other
/// character from the catalog stays text, inside a span too.
#[test]
fn backticks_become_code_spans_and_nothing_else_becomes_markup() {
    let c = Console::start(Store::Sqlite, "finish_spans");
    publish(
        &c,
        "ticks",
        "---\ndescription: Reviews `code` for <b>bugs</b>, `<script>alert(1)</script>` too\nvars:\n  lang:\n    kind: text\n    description: The `language` of <i>the</i> diff\n---\nReview {{lang}}.\n",
    );
    let cookie = c.sign_in(&c.editor);
    for path in ["/", "/prompts/ticks"] {
        let page = c.get(path, Auth::Cookie(&cookie)).body;
        assert!(page.contains("<code>code</code>"), "{path}: {page}");
        assert!(
            page.contains("<code>&#60;script&#62;alert(1)&#60;/script&#62;</code>"),
            "{path}: {page}"
        );
        assert!(!page.contains("`code`"), "{path} shows the backticks");
        assert!(!page.contains("<b>bugs") && !page.contains("<script>alert"));
    }
    let preview = c.get("/prompts/ticks/preview", Auth::Cookie(&cookie)).body;
    assert!(preview.contains("<code>language</code>"), "{preview}");
    assert!(!preview.contains("<i>the"), "{preview}");

    // A diagnostic's message and help, beside the edit.
    let form = c.get("/prompts/greet/edit", Auth::Cookie(&cookie)).body;
    let csrf = hidden(&form, "csrf");
    let checked = c.post_form(
        "/prompts/greet/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            (
                "system",
                "---\ndescription: d\n---\nHi {{name}}\n{{#if formal}}sir\n",
            ),
            ("message", "m"),
            ("action", "check"),
        ],
    );
    let diagnostics = between(&checked.body, "id=\"diagnostics\"", "</aside>");
    assert!(diagnostics.contains("<code>"), "{diagnostics}");
    assert!(!diagnostics.contains('`'), "{diagnostics}");
}

#[test]
fn a_fresh_preview_asks_before_it_complains_then_lists_each_error() {
    let c = Console::start(Store::Sqlite, "finish_preview");
    publish(&c, "bare", "{{a}} and {{b}} and {{c}}\n");
    let cookie = c.sign_in(&c.viewer);
    for path in ["/prompts/bare/preview", "/prompts/greet/preview?version=1"] {
        let fresh = c.get(path, Auth::Cookie(&cookie));
        assert_eq!(fresh.status, 200, "{path}");
        assert!(
            !fresh.body.contains("missing_var"),
            "{path}: {}",
            fresh.body
        );
        assert!(fresh.body.contains("name=\"var."), "{path}: the form");
    }
    let asked = c
        .get(
            "/prompts/bare/preview?from=form&var.a=x",
            Auth::Cookie(&cookie),
        )
        .body;
    let items = asked
        .split("<li")
        .filter(|item| item.contains("missing_var"))
        .count();
    assert_eq!(items, 2, "one item per missing value: {asked}");
}

#[test]
fn an_edit_shows_numbered_lines_with_the_error_line_marked() {
    let c = Console::start(Store::Sqlite, "finish_lines");
    let cookie = c.sign_in(&c.editor);
    let form = c.get("/prompts/greet/edit", Auth::Cookie(&cookie)).body;
    let csrf = hidden(&form, "csrf");
    let broken = "---\ndescription: d\n---\nHi {{name}}\n{{#if formal}}sir\n";
    for action in ["check", "publish"] {
        let page = c
            .post_form(
                "/prompts/greet/edit",
                Auth::Cookie(&cookie),
                &[
                    ("csrf", &csrf),
                    ("system", broken),
                    ("message", "m"),
                    ("action", action),
                ],
            )
            .body;
        assert!(
            page.contains("<tr id=\"line-system-5\" class=\"marked\">"),
            "{action}: {page}"
        );
        assert!(page.contains("href=\"#line-system-5\""), "{action}: {page}");
        assert!(
            !page.contains("id=\"line-system-6\""),
            "{action}: the final line break starts no line"
        );
        let line4 = between(&page, "<tr id=\"line-system-4\"", "</tr>");
        assert!(
            line4.contains(">4<") && line4.contains("Hi {{name}}"),
            "{action}: {line4}"
        );
    }
}

/// A registration not refreshed for a while is shown as stale and does not
/// count among the builds that would refuse a move.
#[test]
fn a_stale_build_is_shown_so_and_not_counted_as_refusing() {
    let c = Console::start(Store::Sqlite, "finish_stale");
    c.register_name_only_build("once#7", "production");
    // An hour without a refresh: the process is gone without a word.
    let file = c.db.strip_prefix("sqlite:").expect("a SQLite catalog");
    rusqlite::Connection::open(file)
        .and_then(|db| {
            db.execute(
                "UPDATE registered_builds SET last_seen = last_seen - 3600000",
                [],
            )
        })
        .expect("the registration aged");
    let cookie = c.sign_in(&c.admin);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    let row = between(&page, "<td>once#7</td>", "</tr>");
    assert!(row.contains("stale"), "{page}");
    let confirm = c
        .get(
            "/prompts/greet/move?label=production&version=2",
            Auth::Cookie(&cookie),
        )
        .body;
    assert!(!confirm.contains("id=\"refusals\""), "{confirm}");
    assert!(!confirm.contains("Builds that would serve it"), "{confirm}");
}

#[test]
fn publishing_says_so_on_the_page_it_lands_on() {
    let c = Console::start(Store::Sqlite, "finish_flash");
    let cookie = c.sign_in(&c.editor);
    let form = c.get("/prompts/greet/edit", Auth::Cookie(&cookie)).body;
    let csrf = hidden(&form, "csrf");
    let published = c.post_form(
        "/prompts/greet/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", "Hey {{name}}.\n"),
            ("message", "shorter"),
            ("action", "publish"),
        ],
    );
    assert_eq!(published.status, 303, "{}", published.body);
    let to = published.location.expect("a redirect");
    let landed = c.get(&to, Auth::Cookie(&cookie));
    assert_eq!(landed.status, 200);
    assert!(
        between(&landed.body, "id=\"flash\"", "</p>").contains("Published greet v3"),
        "{to}: {}",
        landed.body
    );
    for not_published in [
        "/prompts/greet",
        "/prompts/greet?published=9",
        "/prompts/greet?published=%3Cb%3E",
    ] {
        let page = c.get(not_published, Auth::Cookie(&cookie));
        assert_eq!(page.status, 200, "{not_published}");
        assert!(!page.body.contains("id=\"flash\""), "{not_published}");
    }
}

#[test]
fn the_filter_applies_to_snippets_too() {
    let c = Console::start(Store::Sqlite, "finish_filter");
    let cookie = c.sign_in(&c.viewer);
    let greet = c.get("/?q=greet", Auth::Cookie(&cookie)).body;
    assert!(
        !between(&greet, "id=\"snippets\"", "</table>").contains("sign-off"),
        "{greet}"
    );
    let sign = c.get("/?q=SIGN", Auth::Cookie(&cookie)).body;
    assert!(
        between(&sign, "id=\"snippets\"", "</table>").contains("sign-off"),
        "{sign}"
    );
}

#[test]
fn times_read_as_minutes_in_utc_with_the_full_time_on_hover() {
    let c = Console::start(Store::Sqlite, "finish_times");
    let cookie = c.sign_in(&c.viewer);
    for path in ["/", "/prompts/greet"] {
        let page = c.get(path, Auth::Cookie(&cookie)).body;
        let text = visible(&page);
        assert!(!has_iso_millis(&text), "{path}: {text}");
        assert!(text.contains(" UTC"), "{path}: {text}");
        assert!(page.contains("<time title=\"20"), "{path}: {page}");
    }
}

#[test]
fn a_label_shows_what_it_serves_without_its_name_again() {
    let c = Console::start(Store::Sqlite, "finish_serves");
    let cookie = c.sign_in(&c.viewer);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    let row = between(&page, "<tr id=\"label-production\">", "</tr>");
    assert!(row.contains("<td>v1</td>"), "{row}");
    assert!(!row.contains("production →"), "{row}");
}
