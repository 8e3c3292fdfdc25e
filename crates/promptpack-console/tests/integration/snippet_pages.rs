//! The snippet pages over real HTTP: a snippet's revisions, its text, the
//! diff of two revisions, the prompts that include it and what each of
//! their versions pins; an edit checked against every including prompt
//! before it publishes, and the pins-only upgrade offered after. Roles,
//! CSRF and escaping as on every page; and the diff pages bounded.

use crate::support;

use promptpack_catalog::{Catalog, Draft, Selector};
use support::{Auth, Console, Store, hidden};

/// A catalog connection writing as `who`.
fn catalog(c: &Console, who: &str) -> Catalog {
    Catalog::open(&c.db).expect("the catalog").with_author(who)
}

#[test]
fn a_snippet_page_shows_its_revisions_text_and_who_pins_which_revision() {
    let c = Console::start(Store::Sqlite, "snippet_page");
    let viewer = c.sign_in(&c.viewer);
    let list = c.get("/", Auth::Cookie(&viewer)).body;
    assert!(
        list.contains("<a href=\"/snippets/sign-off\">sign-off</a>"),
        "the list does not link the snippet"
    );
    let page = c.get("/snippets/sign-off", Auth::Cookie(&viewer));
    assert_eq!(page.status, 200, "{}", page.body);
    let body = page.body;
    // The newest text, with its line number.
    assert!(
        body.contains("<td class=\"n\">1</td><td>Kind regards.</td>"),
        "{body}"
    );
    // Both revisions, with who and why.
    assert!(body.contains("<td>r2</td><td>setup</td><td>warmer</td>"));
    assert!(body.contains("<td>r1</td><td>setup</td><td>first</td>"));
    // `letter` v1 pins r1, behind r2; a viewer is offered no write.
    assert!(body.contains("id=\"use-letter\""));
    assert!(body.contains("v1 pins r1") && body.contains("behind r2"));
    assert!(!body.contains("id=\"upgrade-letter\"") && !body.contains("id=\"edit\""));
    // An older revision's text.
    let first = c
        .get("/snippets/sign-off?revision=1", Auth::Cookie(&viewer))
        .body;
    assert!(first.contains("<td>Regards.</td>") && first.contains("not the newest"));

    let diff = c.get("/snippets/sign-off/diff?from=1&to=2", Auth::Cookie(&viewer));
    assert_eq!(diff.status, 200, "{}", diff.body);
    assert!(
        diff.body.contains("<td class=\"old\">Regards.</td>")
            && diff.body.contains("<td class=\"new\">Kind regards.</td>"),
        "{}",
        diff.body
    );

    for (path, status) in [
        ("/snippets/nope", 404),
        ("/snippets/sign-off?revision=9", 404),
        ("/snippets/sign-off/diff?from=1&to=9", 404),
        ("/snippets/sign-off/diff?from=1", 400),
    ] {
        assert_eq!(c.get(path, Auth::Cookie(&viewer)).status, status, "{path}");
    }
    for path in ["/snippets/sign-off", "/snippets/sign-off/edit"] {
        let answer = c.get(path, Auth::None);
        assert_eq!(answer.status, 303, "{path}");
        assert!(!answer.body.contains("regards"));
    }
}

#[test]
fn a_snippet_edit_is_checked_against_every_including_prompt_then_published_and_upgraded() {
    // Both stores: the pins are read with SQL of the catalog's own.
    for store in [Store::Sqlite, Store::Postgres] {
        edit_checked_published_and_upgraded(store);
    }
}

fn edit_checked_published_and_upgraded(store: Store) {
    let c = Console::start(store, "snippet_edit");
    // A second prompt that includes the snippet, at its newest revision.
    let draft = Draft {
        system: "Note for {{name}}.\n{{snippet:sign-off}}\n".to_string(),
        message: "a note".to_string(),
        ..Draft::default()
    };
    catalog(&c, "setup")
        .publish_or_create("note", &draft, None)
        .expect("a version");

    let viewer = c.sign_in(&c.viewer);
    assert_eq!(
        c.get("/snippets/sign-off/edit", Auth::Cookie(&viewer))
            .status,
        403
    );
    let viewer_csrf = hidden(
        &c.get("/snippets/sign-off", Auth::Cookie(&viewer)).body,
        "csrf",
    );
    let refused = c.post_form(
        "/snippets/sign-off/edit",
        Auth::Cookie(&viewer),
        &[("csrf", &viewer_csrf), ("text", "x"), ("action", "publish")],
    );
    assert_eq!(refused.status, 403);

    let editor = c.sign_in(&c.editor);
    let form = c.get("/snippets/sign-off/edit", Auth::Cookie(&editor));
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(form.body.contains("Kind regards."));
    let csrf = hidden(&form.body, "csrf");
    // Without the CSRF token: refused, nothing written.
    let forged = c.post_form(
        "/snippets/sign-off/edit",
        Auth::Cookie(&editor),
        &[("text", "Bye.\n"), ("action", "publish")],
    );
    assert_eq!(forged.status, 403);

    // An unclosed block breaks both including prompts: checked, each named,
    // and a publish refused with nothing written.
    let broken = "Regards {{#if formal}}sir\n";
    let checked = c.post_form(
        "/snippets/sign-off/edit",
        Auth::Cookie(&editor),
        &[("csrf", &csrf), ("text", broken), ("action", "check")],
    );
    assert_eq!(checked.status, 200, "{}", checked.body);
    for prompt in ["letter", "note"] {
        let section = checked
            .body
            .split(&format!("id=\"check-{prompt}\""))
            .nth(1)
            .unwrap_or_else(|| panic!("no check of {prompt}: {}", checked.body));
        let section = section.split("</section>").next().unwrap_or("");
        assert!(section.contains("class=\"error\""), "{prompt}: {section}");
    }
    let published = c.post_form(
        "/snippets/sign-off/edit",
        Auth::Cookie(&editor),
        &[
            ("csrf", &csrf),
            ("text", broken),
            ("message", "broken"),
            ("action", "publish"),
        ],
    );
    assert_eq!(published.status, 422, "{}", published.body);
    assert!(published.body.contains("check_failed"));
    assert!(
        published.body.contains("Regards {{#if formal}}sir"),
        "the draft is kept"
    );
    assert_eq!(
        catalog(&c, "test")
            .snippet("sign-off", None)
            .unwrap()
            .revision,
        2,
        "a refused draft was published"
    );

    // A good one publishes r3 as `ed`; no prompt's version changes.
    let good = c.post_form(
        "/snippets/sign-off/edit",
        Auth::Cookie(&editor),
        &[
            ("csrf", &csrf),
            ("text", "Best regards.\r\n"),
            ("message", "best"),
            ("action", "publish"),
        ],
    );
    assert_eq!(good.status, 303, "{}", good.body);
    assert_eq!(
        good.location.as_deref(),
        Some("/snippets/sign-off?published=3")
    );
    let newest = catalog(&c, "test").snippet("sign-off", None).unwrap();
    assert_eq!((newest.revision, newest.author.as_str()), (3, "ed"));
    assert_eq!(newest.text, "Best regards.\n");
    let page = c
        .get("/snippets/sign-off?published=3", Auth::Cookie(&editor))
        .body;
    assert!(page.contains("Published r3"));
    assert!(page.contains("<td>r3</td><td>ed</td><td>best</td>"));
    // Both prompts are behind now, and the editor is offered each upgrade.
    for prompt in ["letter", "note"] {
        assert!(
            page.contains(&format!("id=\"upgrade-{prompt}\"")),
            "{prompt}"
        );
    }

    // Upgrading `letter` mints v2 pinning r3, as `ed`, and comes back.
    let upgraded = c.post_form(
        "/snippets/sign-off/upgrade",
        Auth::Cookie(&editor),
        &[("csrf", &csrf), ("prompt", "letter")],
    );
    assert_eq!(upgraded.status, 303, "{}", upgraded.body);
    assert_eq!(
        upgraded.location.as_deref(),
        Some("/snippets/sign-off?upgraded=letter&version=2")
    );
    let letter = catalog(&c, "test")
        .get("letter", &Selector::Latest)
        .unwrap();
    assert_eq!((letter.version, letter.author.as_str()), (2, "ed"));
    assert!(letter.resolved_system.contains("Best regards."));
    let page = c.get("/snippets/sign-off", Auth::Cookie(&editor)).body;
    assert!(page.contains("v2 pins r3"), "{page}");
    assert!(page.contains("v2 r3 · v1 r1"));
    assert!(!page.contains("id=\"upgrade-letter\"") && page.contains("id=\"upgrade-note\""));
    // The API says the same.
    let api = c
        .get("/api/v1/snippets/sign-off", Auth::Bearer(&c.viewer))
        .json();
    assert_eq!(api["revisions"][0]["revision"], 3);
    assert_eq!(
        api["uses"],
        serde_json::json!([
            {"prompt": "letter", "version": 2, "revision": 3},
            {"prompt": "letter", "version": 1, "revision": 1},
            {"prompt": "note", "version": 1, "revision": 2},
        ])
    );
    assert_eq!(
        c.get("/api/v1/snippets/nope", Auth::Bearer(&c.viewer))
            .status,
        404
    );
    // The upgrade wants its CSRF token and an editor.
    let forged = c.post_form(
        "/snippets/sign-off/upgrade",
        Auth::Cookie(&editor),
        &[("prompt", "note")],
    );
    assert_eq!(forged.status, 403);
    let by_viewer = c.post_form(
        "/snippets/sign-off/upgrade",
        Auth::Cookie(&viewer),
        &[("csrf", &viewer_csrf), ("prompt", "note")],
    );
    assert_eq!(by_viewer.status, 403);
    assert_eq!(
        catalog(&c, "test")
            .get("note", &Selector::Latest)
            .unwrap()
            .version,
        1
    );

    // A new snippet starts empty and is created by its first publish.
    let new = c.get("/snippets/fresh/edit", Auth::Cookie(&editor));
    assert_eq!(new.status, 200);
    let created = c.post_form(
        "/snippets/fresh/edit",
        Auth::Cookie(&editor),
        &[("csrf", &csrf), ("text", "Fresh.\n"), ("action", "publish")],
    );
    assert_eq!(
        created.location.as_deref(),
        Some("/snippets/fresh?published=1")
    );
    let page = c.get("/snippets/fresh", Auth::Cookie(&editor)).body;
    assert!(page.contains("id=\"no-uses\""));
}

#[test]
fn snippet_text_is_escaped_on_its_pages() {
    let c = Console::start(Store::Sqlite, "snippet_escape");
    let mut catalog = catalog(&c, "setup");
    catalog
        .publish_snippet("xss", "<b>bold</b>\n", "<i>markup</i> first")
        .expect("a snippet");
    catalog
        .publish_snippet(
            "xss",
            "<script>window.__pwned = 1</script>\n",
            "<i>more</i>",
        )
        .expect("a revision");
    let cookie = c.sign_in(&c.admin);
    for path in [
        "/snippets/xss",
        "/snippets/xss?revision=1",
        "/snippets/xss/diff?from=1&to=2",
        "/snippets/xss/edit",
    ] {
        let page = c.get(path, Auth::Cookie(&cookie));
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        for raw in ["<script>window", "<b>bold", "<i>markup", "<i>more"] {
            assert!(!page.body.contains(raw), "{path} has {raw} as markup");
        }
    }
}

/// `lines` distinct numbered lines.
fn numbered(prefix: &str, lines: usize) -> String {
    (0..lines).map(|i| format!("{prefix} {i}\n")).collect()
}

#[test]
fn a_diff_of_two_twelve_thousand_line_versions_answers_line_by_line() {
    let c = Console::start(Store::Sqlite, "snippet_big_diff");
    let mut catalog = catalog(&c, "setup");
    for (system, message) in [
        (numbered("old line", 12_000), "old"),
        (numbered("new line", 12_000), "new"),
    ] {
        let draft = Draft {
            system,
            message: message.to_string(),
            ..Draft::default()
        };
        catalog
            .publish_or_create("big", &draft, None)
            .expect("a version");
    }
    catalog
        .publish_snippet("big", &numbered("old line", 12_000), "old")
        .expect("a snippet");
    catalog
        .publish_snippet("big", &numbered("new line", 12_000), "new")
        .expect("a revision");
    let cookie = c.sign_in(&c.viewer);
    for path in [
        "/prompts/big/diff?from=1&to=2",
        "/snippets/big/diff?from=1&to=2",
    ] {
        let page = c.get(path, Auth::Cookie(&cookie));
        assert_eq!(page.status, 200, "{path}");
        assert!(page.body.contains("class=\"hint coarse\""), "{path}");
        assert!(page.body.contains("new line 11999") && page.body.contains("old line 11999"));
    }
}
