//! The pages over real HTTP: signing in, what each role may do, CSRF, and
//! escaping of everything that comes from the catalog.

use crate::support;

use support::{Auth, Console, Store, hidden};

#[test]
fn without_a_session_every_page_sends_to_login() {
    let c = Console::start(Store::Sqlite, "pages_login");
    for path in [
        "/",
        "/prompts/greet",
        "/prompts/greet/diff?from=1&to=2",
        "/prompts/greet/preview",
        "/prompts/greet/edit",
    ] {
        let answer = c.get(path, Auth::None);
        assert_eq!(answer.status, 303, "{path}");
        let to = answer.location.unwrap_or_default();
        assert!(to.starts_with("/login?next=/"), "{path} → {to}");
        assert!(!answer.body.contains("Hello"));
    }
    // A bearer token is for the API: pages want a session.
    assert_eq!(c.get("/", Auth::Bearer(&c.admin)).status, 303);
}

#[test]
fn signing_in_gives_a_strict_http_only_cookie_and_goes_back_only_to_this_site() {
    let c = Console::start(Store::Sqlite, "pages_cookie");
    let answer = c.post_form(
        "/login",
        Auth::None,
        &[("token", &c.viewer), ("next", "/prompts/greet")],
    );
    assert_eq!(answer.status, 303);
    assert_eq!(answer.location.as_deref(), Some("/prompts/greet"));
    let cookie = answer.set_cookie.unwrap_or_default();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    for elsewhere in [
        "//evil.example/x",
        "https://evil.example/",
        "/\\evil.example",
    ] {
        let answer = c.post_form(
            "/login",
            Auth::None,
            &[("token", &c.viewer), ("next", elsewhere)],
        );
        assert_eq!(answer.location.as_deref(), Some("/"), "{elsewhere}");
    }
    let wrong = c.post_form(
        "/login",
        Auth::None,
        &[("token", "pp_wrong"), ("next", "/")],
    );
    assert_eq!(wrong.status, 401);
    assert!(wrong.set_cookie.is_none());
}

#[test]
fn catalog_text_is_escaped_on_every_page() {
    let c = Console::start(Store::Sqlite, "pages_escape");
    let cookie = c.sign_in(&c.admin);
    for path in [
        "/",
        "/prompts/xss",
        "/prompts/xss/preview?from=json&json=%7B%22x%22%3A%22%3Cimg%20src%3Dx%3E%22%7D",
        "/prompts/xss/edit",
    ] {
        let page = c.get(path, Auth::Cookie(&cookie));
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        assert!(
            !page.body.contains("<script>window"),
            "{path} has the stored script as markup"
        );
        assert!(!page.body.contains("<b>bold"), "{path} has stored markup");
        assert!(
            !page.body.contains("<img src=x>"),
            "{path} has a value as markup"
        );
        assert!(
            !page.body.contains("<i>markup"),
            "{path} has the message as markup"
        );
    }
    let prompt = c.get("/prompts/xss", Auth::Cookie(&cookie)).body;
    assert!(
        prompt.contains("&#60;script&#62;window.__pwned = 1&#60;/script&#62;"),
        "{prompt}"
    );
    assert!(prompt.contains("&#60;i&#62;markup&#60;/i&#62;"));
}

#[test]
fn a_form_without_its_csrf_token_is_refused() {
    let c = Console::start(Store::Sqlite, "pages_csrf");
    let cookie = c.sign_in(&c.admin);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    let csrf = hidden(&page, "csrf");
    for fields in [vec![], vec![("csrf", "0000")]] {
        let mut with = fields.clone();
        with.extend([("label", "staging"), ("target", "2")]);
        let answer = c.post_form("/prompts/greet/move", Auth::Cookie(&cookie), &with);
        assert_eq!(answer.status, 403, "{}", answer.body);
        assert!(answer.body.contains("csrf"));
        let deleted = c.post_form("/prompts/greet/delete", Auth::Cookie(&cookie), &fields);
        assert_eq!(deleted.status, 403);
    }
    let history = c
        .get("/api/v1/prompts/greet/history", Auth::Bearer(&c.viewer))
        .json();
    assert!(
        !history["labels"].to_string().contains("staging"),
        "a refused form wrote"
    );
    let answer = c.post_form(
        "/prompts/greet/move",
        Auth::Cookie(&cookie),
        &[("csrf", &csrf), ("label", "staging"), ("target", "2")],
    );
    assert_eq!(answer.status, 303, "{}", answer.body);
    let history = c
        .get("/api/v1/prompts/greet/history", Auth::Bearer(&c.viewer))
        .json();
    assert!(history["labels"].to_string().contains("staging"));
    assert_eq!(
        history["audit"]
            .as_array()
            .and_then(|a| a.last())
            .map(|e| e["author"].clone()),
        Some(serde_json::json!("ada"))
    );
}

#[test]
fn roles_limit_what_the_pages_do() {
    let c = Console::start(Store::Sqlite, "pages_roles");
    let viewer = c.sign_in(&c.viewer);
    let page = c.get("/prompts/greet", Auth::Cookie(&viewer)).body;
    assert!(
        !page.contains("id=\"edit\"") && !page.contains("Move…"),
        "a viewer is offered writes"
    );
    assert_eq!(
        c.get("/prompts/greet/edit", Auth::Cookie(&viewer)).status,
        403
    );
    let csrf = hidden(&page, "csrf");
    let publish = c.post_form(
        "/prompts/greet/edit",
        Auth::Cookie(&viewer),
        &[
            ("csrf", &csrf),
            ("system", "x"),
            ("message", "m"),
            ("action", "publish"),
        ],
    );
    assert_eq!(publish.status, 403);

    let editor = c.sign_in(&c.editor);
    let page = c.get("/prompts/greet", Auth::Cookie(&editor)).body;
    let csrf = hidden(&page, "csrf");
    let confirm = c.get(
        "/prompts/greet/move?label=production&version=2",
        Auth::Cookie(&editor),
    );
    assert_eq!(confirm.status, 403);
    let moved = c.post_form(
        "/prompts/greet/move",
        Auth::Cookie(&editor),
        &[("csrf", &csrf), ("label", "production"), ("target", "2")],
    );
    assert_eq!(moved.status, 403);
    let deleted = c.post_form(
        "/prompts/greet/delete",
        Auth::Cookie(&editor),
        &[("csrf", &csrf)],
    );
    assert_eq!(deleted.status, 403);
    let labelled = c
        .get(
            "/api/v1/prompts/greet?label=production",
            Auth::Bearer(&c.viewer),
        )
        .json();
    assert_eq!(labelled["version"], 1);
}

#[test]
fn the_edit_page_checks_previews_and_keeps_a_refused_draft() {
    let c = Console::start(Store::Sqlite, "pages_edit");
    let cookie = c.sign_in(&c.editor);
    let form = c.get("/prompts/greet/edit", Auth::Cookie(&cookie)).body;
    let csrf = hidden(&form, "csrf");
    let broken = "---\ndescription: d\n---\nHi {{name}}\n{{#if formal}}sir\n";
    let checked = c.post_form(
        "/prompts/greet/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", broken),
            ("message", "m"),
            ("action", "check"),
        ],
    );
    assert_eq!(checked.status, 200);
    assert!(
        checked.body.contains("templates/greet/system.md:5:1"),
        "{}",
        checked.body
    );
    assert!(checked.body.contains("unclosed_block"));
    let refused = c.post_form(
        "/prompts/greet/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", broken),
            ("message", "m"),
            ("action", "publish"),
        ],
    );
    assert_eq!(refused.status, 422);
    assert!(
        refused.body.contains("{{#if formal}}sir"),
        "the draft is kept on screen"
    );
    assert_eq!(
        c.get("/api/v1/prompts/greet", Auth::Bearer(&c.viewer))
            .json()["version"],
        2
    );
    let fixed = support::GREET_V2.replace("Hi {{name}}!", "Hey {{name}}!");
    let preview = c.post_form(
        "/prompts/greet/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", &fixed),
            ("message", "m"),
            ("action", "preview"),
        ],
    );
    assert!(
        preview.body.contains("No errors, no warnings."),
        "{}",
        preview.body
    );
    assert!(
        preview.body.contains("Hey Bo!"),
        "the example renders the draft"
    );
    let published = c.post_form(
        "/prompts/greet/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", &fixed),
            ("message", "hey"),
            ("action", "publish"),
        ],
    );
    assert_eq!(published.status, 303, "{}", published.body);
    let latest = c
        .get("/api/v1/prompts/greet", Auth::Bearer(&c.viewer))
        .json();
    assert_eq!(
        (latest["version"].clone(), latest["author"].clone()),
        (serde_json::json!(3), serde_json::json!("ed"))
    );
}

/// The edit page of a conversation holds its `messages.md`, escaped; an
/// edit of it publishes a new version with the edited turns; user.md beside
/// it is refused at the file, and the draft stays on screen.
#[test]
fn the_edit_page_edits_a_conversations_messages() {
    let c = Console::start(Store::Sqlite, "pages_edit_chat");
    let messages = "{{#user}}\n<b>Hi</b> {{name}}\n{{/user}}";
    let published = c.send(
        "POST",
        "/api/v1/prompts/chat/versions",
        Auth::Bearer(&c.editor),
        &serde_json::json!({"system": "S", "messages": messages, "message": "v1"}),
    );
    assert_eq!(published.status, 201, "{}", published.body);
    let cookie = c.sign_in(&c.editor);
    let form = c.get("/prompts/chat/edit", Auth::Cookie(&cookie)).body;
    assert!(
        form.contains(
            "id=\"messages\">{{#user}}\n&#60;b&#62;Hi&#60;/b&#62; {{name}}\n{{/user}}</textarea>"
        ) && !form.contains("<b>Hi</b>"),
        "messages.md is in its textarea, escaped: {form}"
    );
    let csrf = hidden(&form, "csrf");
    let edited = "{{#user}}\nHello {{name}}\n{{/user}}\n{{#assistant}}\nHi.\n{{/assistant}}\n{{#user}}\nAgain\n{{/user}}";
    let both = c.post_form(
        "/prompts/chat/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", "S"),
            ("user", "ask"),
            ("messages", edited),
            ("message", "both"),
            ("action", "publish"),
        ],
    );
    assert_eq!(both.status, 422, "{}", both.body);
    assert!(both.body.contains("invalid_message"), "{}", both.body);
    assert!(both.body.contains("Hello {{name}}"), "the draft is kept");
    let published = c.post_form(
        "/prompts/chat/edit",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("system", "S"),
            ("messages", edited),
            ("message", "more turns"),
            ("action", "publish"),
        ],
    );
    assert_eq!(published.status, 303, "{}", published.body);
    let latest = c
        .get("/api/v1/prompts/chat", Auth::Bearer(&c.viewer))
        .json();
    assert_eq!(latest["version"], 2);
    assert_eq!(latest["messages"], edited);
    assert_eq!(latest["user"], serde_json::Value::Null);
}

#[test]
fn diff_and_preview_show_examples_on_both_sides() {
    let c = Console::start(Store::Sqlite, "pages_diff");
    let cookie = c.sign_in(&c.viewer);
    let diff = c.get("/prompts/greet/diff?from=1&to=2", Auth::Cookie(&cookie));
    assert_eq!(diff.status, 200);
    assert!(diff.body.contains("<h3>casual</h3>"), "{}", diff.body);
    assert!(diff.body.contains("declared <code>formal</code> added"));
    let small = support::GREET_V2.replace("Hi {{name}}!", "Hi there {{name}}!");
    let published = c.send(
        "POST",
        "/api/v1/prompts/greet/versions",
        Auth::Bearer(&c.editor),
        &serde_json::json!({"system": small, "message": "m"}),
    );
    assert_eq!(published.status, 200);
    let diff = c
        .get("/prompts/greet/diff?from=2&to=3", Auth::Cookie(&cookie))
        .body;
    assert!(
        diff.contains("<ins>there </ins>") || diff.contains("<ins>there</ins>"),
        "word-level highlights: {diff}"
    );
    let preview = c
        .get(
            "/prompts/greet/preview?version=2&from=example&example=casual",
            Auth::Cookie(&cookie),
        )
        .body;
    assert!(preview.contains("Hi Bo!"), "{preview}");
    assert!(preview.contains("{{#if formal}} else: reached by casual"));
    assert!(preview.contains("{{#if formal}} then: reached by no example"));
    let form = c
        .get(
            "/prompts/greet/preview?version=2&from=form&var.name=Cy&var.formal=on",
            Auth::Cookie(&cookie),
        )
        .body;
    assert!(form.contains("Good day, Cy."), "{form}");
    let missing = c
        .get(
            "/prompts/greet/preview?version=2&from=json&json=%7B%7D",
            Auth::Cookie(&cookie),
        )
        .body;
    assert!(missing.contains("missing_var"));
}

#[test]
fn a_prompt_behind_its_snippets_offers_the_upgrade_chip() {
    let c = Console::start(Store::Sqlite, "pages_upgrade");
    let cookie = c.sign_in(&c.editor);
    let page = c.get("/prompts/letter", Auth::Cookie(&cookie)).body;
    assert!(
        page.contains("id=\"upgrade\"") && page.contains("sign-off r1 → r2"),
        "{page}"
    );
    assert!(
        !c.get("/prompts/greet", Auth::Cookie(&cookie))
            .body
            .contains("id=\"upgrade\""),
        "a chip without snippets behind"
    );
    let csrf = hidden(&page, "csrf");
    let upgraded = c.post_form(
        "/prompts/letter/upgrade",
        Auth::Cookie(&cookie),
        &[("csrf", &csrf)],
    );
    assert_eq!(upgraded.status, 303);
    let page = c.get("/prompts/letter", Auth::Cookie(&cookie)).body;
    assert!(
        !page.contains("id=\"upgrade\""),
        "the chip stays after the upgrade"
    );
    assert!(page.contains("sign-off r2"));
}

#[test]
fn registered_builds_show_what_they_serve_and_what_they_would_refuse() {
    let c = Console::start(Store::Sqlite, "pages_builds");
    // A service whose binary knows `greet` with `name` only: v1 fits it,
    // v2 (which adds the flag `formal`) does not.
    c.register_name_only_build("agent-service#42", "production");
    let cookie = c.sign_in(&c.admin);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    assert!(
        page.contains("<td>agent-service#42</td><td>production</td><td>v1</td>"),
        "the build serves v1: {page}"
    );
    let confirm = c
        .get(
            "/prompts/greet/move?label=production&version=2",
            Auth::Cookie(&cookie),
        )
        .body;
    assert!(confirm.contains("id=\"refusals\""), "{confirm}");
    assert!(
        confirm.contains("agent-service#42")
            && confirm.contains("contract_violation")
            && confirm.contains("formal"),
        "{confirm}"
    );
    let fine = c
        .get(
            "/prompts/greet/move?label=production&version=1",
            Auth::Cookie(&cookie),
        )
        .body;
    assert!(
        !fine.contains("id=\"refusals\"")
            && fine.contains("Builds that would serve it: agent-service#42"),
        "{fine}"
    );
    // The prompt page, once production is on v2, says the build refuses it.
    let csrf = hidden(&page, "csrf");
    c.post_form(
        "/prompts/greet/move",
        Auth::Cookie(&cookie),
        &[("csrf", &csrf), ("label", "production"), ("target", "2")],
    );
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    assert!(
        page.contains(
            "<td>agent-service#42</td><td>production</td><td>refuses v2 (contract_violation"
        ),
        "{page}"
    );
}

#[test]
fn a_removed_user_is_signed_out_at_once() {
    let c = Console::start(Store::Sqlite, "pages_removed");
    let cookie = c.sign_in(&c.viewer);
    assert_eq!(c.get("/", Auth::Cookie(&cookie)).status, 200);
    let mut catalog = promptpack_catalog::Catalog::connect_with(
        &c.db,
        promptpack_catalog::Access::Write,
        &promptpack_catalog::Timeouts::DEFAULT,
    )
    .expect("the catalog");
    catalog.remove_user("vi").expect("removed");
    assert_eq!(c.get("/", Auth::Cookie(&cookie)).status, 303);
    assert_eq!(c.get("/api/v1/me", Auth::Bearer(&c.viewer)).status, 401);
}

#[test]
fn beyond_loopback_only_once_an_admin_exists() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = format!("sqlite:{}", dir.path().join("catalog.db").display());
    let mut catalog = promptpack_catalog::Catalog::open(&db)
        .expect("a catalog")
        .with_author("setup");
    let wide = promptpack_console::Settings::new(db.clone()).listen("0.0.0.0:0".parse().unwrap());
    let refused = promptpack_console::Server::bind(wide.clone()).expect_err("no admin yet");
    assert_eq!(
        refused.code(),
        promptpack_catalog::ErrorCode::InvalidRequest
    );
    assert!(refused.to_string().contains("--role admin"), "{refused}");
    let token = promptpack_console::new_token();
    catalog
        .add_user(
            "ed",
            promptpack_catalog::Role::Editor,
            &promptpack_catalog::token_hash(&token),
        )
        .expect("an editor");
    assert!(
        promptpack_console::Server::bind(wide.clone()).is_err(),
        "an editor is no admin"
    );
    let token = promptpack_console::new_token();
    catalog
        .add_user(
            "ada",
            promptpack_catalog::Role::Admin,
            &promptpack_catalog::token_hash(&token),
        )
        .expect("an admin");
    let server = promptpack_console::Server::bind(wide).expect("an admin exists");
    assert!(server.local_addr().ip().is_unspecified());
    // Loopback needs no admin.
    let other = tempfile::tempdir().expect("a folder");
    let empty = format!("sqlite:{}", other.path().join("catalog.db").display());
    promptpack_catalog::Catalog::open(&empty).expect("a catalog");
    let local = promptpack_console::Settings::new(empty).listen("127.0.0.1:0".parse().unwrap());
    assert!(promptpack_console::Server::bind(local).is_ok());
}

#[test]
fn a_label_is_split_and_a_prompt_deleted_and_restored_through_the_pages() {
    let c = Console::start(Store::Sqlite, "pages_split");
    let cookie = c.sign_in(&c.admin);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    assert!(page.contains("id=\"split-label\""));
    let csrf = hidden(&page, "csrf");
    let confirm = c.get(
        "/prompts/greet/move?label=canary&arms=1:90,2:10",
        Auth::Cookie(&cookie),
    );
    assert_eq!(confirm.status, 200, "{}", confirm.body);
    assert!(
        confirm.body.contains("to v1 90 / v2 10") && confirm.body.contains("nothing (a new label)"),
        "{}",
        confirm.body
    );
    assert_eq!(hidden(&confirm.body, "target"), "1:90,2:10");
    let split = c.post_form(
        "/prompts/greet/move",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("label", "canary"),
            ("target", "1:90,2:10"),
        ],
    );
    assert_eq!(split.status, 303, "{}", split.body);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    assert!(
        page.contains("<td>v1 90 / v2 10</td>") && page.contains("canary: split v1 90 / v2 10"),
        "{page}"
    );

    let deleted = c.post_form(
        "/prompts/greet/delete",
        Auth::Cookie(&cookie),
        &[("csrf", &csrf)],
    );
    assert_eq!(deleted.status, 303);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    assert!(
        page.contains("chip deleted") && page.contains("id=\"restore\""),
        "{page}"
    );
    assert!(
        !c.get("/", Auth::Cookie(&cookie))
            .body
            .contains("href=\"/prompts/greet\""),
        "a deleted prompt is listed"
    );
    let restored = c.post_form(
        "/prompts/greet/restore",
        Auth::Cookie(&cookie),
        &[("csrf", &csrf)],
    );
    assert_eq!(restored.status, 303);
    assert!(
        c.get("/", Auth::Cookie(&cookie))
            .body
            .contains("href=\"/prompts/greet\"")
    );
}

/// The preview page and an edit's preview render within the console's
/// render bound (`--max-render-bytes`): past it, the page says `too_large`
/// and what the output would have been, instead of allocating it.
#[test]
fn previews_refuse_a_render_past_the_bound() {
    let c = Console::start_with(Store::Sqlite, "preview_bound", |s| s.max_render_bytes(64));
    let session = c.sign_in(&c.viewer);
    let page = c.get(
        &format!(
            "/prompts/greet/preview?version=1&from=form&var.name={}",
            "n".repeat(100)
        ),
        Auth::Cookie(&session),
    );
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("too_large"), "{}", page.body);
    assert!(page.body.contains("107 bytes"), "{}", page.body);
    let fits = c.get(
        "/prompts/greet/preview?version=1&from=form&var.name=Ada",
        Auth::Cookie(&session),
    );
    assert!(fits.body.contains("Hello Ada."), "{}", fits.body);
}

/// Whether `cookie` is signed in on `console`: a page, not the login.
fn signed_in(console: &Console, cookie: &str) -> bool {
    let answer = console.get("/", Auth::Cookie(cookie));
    match answer.status {
        200 => true,
        303 => false,
        other => panic!("GET / answered {other}: {}", answer.body),
    }
}

#[test]
fn after_sign_in_next_goes_only_to_a_path_of_this_site_as_a_browser_reads_it() {
    let c = Console::start(Store::Sqlite, "pages_next");
    // (next as sent, where the sign-in goes)
    let cases = [
        ("/prompts/greet", "/prompts/greet"),
        (
            "/prompts/greet/diff?from=1&to=2",
            "/prompts/greet/diff?from=1&to=2",
        ),
        ("/prompts/greet#labels", "/prompts/greet#labels"),
        ("/", "/"),
        ("", "/"),
        ("/@evil.example", "/@evil.example"),
        // Percent escapes are not decoded by a browser, so they stay a path.
        ("/%2F/evil.example", "/%2F/evil.example"),
        ("/%5Cevil.example", "/%5Cevil.example"),
        ("/é", "/%C3%A9"),
        // Control characters a browser keeps are escaped, never a 500.
        ("/a\u{0}b", "/a%00b"),
        ("/a\u{1}b", "/a%01b"),
        ("/a\u{7f}b", "/a%7Fb"),
        // Another host, however it is written.
        ("//evil.example/x", "/"),
        ("///evil.example/x", "/"),
        ("/\\evil.example", "/"),
        ("\\\\evil.example", "/"),
        ("\\/evil.example", "/"),
        ("/\t/evil.example", "/"),
        ("/\n/evil.example", "/"),
        ("/\r\n/evil.example", "/"),
        ("/\t\\evil.example", "/"),
        ("\t//evil.example", "/"),
        (" //evil.example", "/"),
        ("\u{1}//evil.example", "/"),
        ("//evil.example\t", "/"),
        ("/.//evil.example", "/"),
        ("/..//evil.example", "/"),
        ("/./\\evil.example", "/"),
        ("https://evil.example/", "/"),
        ("http://evil.example", "/"),
        ("HTTP://evil.example", "/"),
        ("https:evil.example", "/"),
        ("https:\\\\evil.example", "/"),
        ("ht\ttp://evil.example", "/"),
        ("javascript:alert(1)", "/"),
        ("java\nscript:alert(1)", "/"),
        ("data:text/html,<b>x</b>", "/"),
        // Not a path at all.
        ("prompts/greet", "/"),
        ("%2F%2Fevil.example", "/"),
    ];
    for (next, expected) in cases {
        let answer = c.post_form(
            "/login",
            Auth::None,
            &[("token", &c.viewer), ("next", next)],
        );
        assert!(
            answer.status < 500 || answer.set_cookie.is_none(),
            "{next:?}: a cookie with a {}",
            answer.status
        );
        assert_eq!(
            (answer.status, answer.location.as_deref()),
            (303, Some(expected)),
            "{next:?}: {}",
            answer.body
        );
        assert!(answer.set_cookie.is_some(), "{next:?}");
        let form = c.get(
            &format!("/login?next={}", support::encode(next)),
            Auth::None,
        );
        assert_eq!(form.status, 200, "{next:?}");
        if expected == "/" {
            assert!(
                !form.body.contains("evil"),
                "{next:?} kept in the form: {}",
                form.body
            );
        }
    }
}

#[test]
fn every_console_of_a_catalog_serves_its_sessions() {
    // Two consoles behind a load balancer: a browser signed in through one
    // is served by the other, its forms' CSRF token holds on both, and
    // signing out through one ends the session on both.
    let one = Console::start(Store::Sqlite, "pages_two_consoles");
    let two = one.another(|settings| settings);
    let cookie = one.sign_in(&one.editor);
    assert!(signed_in(&two, &cookie));
    let page = two.get("/prompts/greet", Auth::Cookie(&cookie));
    assert_eq!(page.status, 200, "{}", page.body);
    let csrf = hidden(&page.body, "csrf");
    assert_eq!(
        csrf,
        hidden(&one.get("/", Auth::Cookie(&cookie)).body, "csrf")
    );
    let moved = one.post_form(
        "/prompts/greet/move",
        Auth::Cookie(&cookie),
        &[("csrf", &csrf), ("label", "staging"), ("target", "2")],
    );
    assert_eq!(moved.status, 303, "{}", moved.body);
    let out = two.post_form("/logout", Auth::Cookie(&cookie), &[("csrf", &csrf)]);
    assert_eq!(out.status, 303, "{}", out.body);
    assert!(!signed_in(&one, &cookie));
    assert!(!signed_in(&two, &cookie));
}

#[test]
fn a_restarted_console_keeps_its_sessions() {
    let before = Console::start(Store::Postgres, "pages_restart");
    let cookie = before.sign_in(&before.viewer);
    assert!(signed_in(&before, &cookie));
    // A new server over the catalog: nothing of the old one's memory.
    let after = before.another(|settings| settings);
    assert!(signed_in(&after, &cookie));
    assert_eq!(before.catalog().sessions("vi").expect("sessions").len(), 1);
}

#[test]
fn removing_a_user_ends_every_session_of_theirs() {
    let c = Console::start(Store::Sqlite, "pages_removed_sessions");
    let browsers = [c.sign_in(&c.editor), c.sign_in(&c.editor)];
    let viewer = c.sign_in(&c.viewer);
    let mut catalog = c.catalog();
    catalog.remove_user("ed").expect("removed");
    assert_eq!(catalog.sessions("ed").expect("sessions"), []);
    // Added again, even with the same token, the user signs in afresh:
    // the sessions from before the removal stay ended.
    catalog
        .add_user(
            "ed",
            promptpack_catalog::Role::Editor,
            &promptpack_catalog::token_hash(&c.editor),
        )
        .expect("added again");
    for cookie in &browsers {
        assert!(!signed_in(&c, cookie), "a session outlived its user");
    }
    assert!(signed_in(&c, &viewer), "another user's session ended");
    assert!(signed_in(&c, &c.sign_in(&c.editor)));
}

#[test]
fn a_user_keeps_at_most_the_cap_of_sessions_the_oldest_ending() {
    const CAP: usize = 3;
    let c = Console::start_with(Store::Sqlite, "pages_session_cap", |settings| {
        settings.max_sessions_per_user(CAP as u32)
    });
    let cookies: Vec<String> = (0..CAP + 2).map(|_| c.sign_in(&c.viewer)).collect();
    let live: Vec<bool> = cookies.iter().map(|cookie| signed_in(&c, cookie)).collect();
    assert_eq!(live, [false, false, true, true, true]);
    assert_eq!(c.catalog().sessions("vi").expect("sessions").len(), CAP);
    // The default is 20.
    let default = c.another(|settings| settings);
    for _ in 0..22 {
        default.sign_in(&default.admin);
    }
    assert_eq!(c.catalog().sessions("ada").expect("sessions").len(), 20);
}

#[test]
fn signing_out_everywhere_ends_every_session_of_the_user() {
    let one = Console::start(Store::Sqlite, "pages_everywhere");
    let two = one.another(|settings| settings);
    let here = one.sign_in(&one.editor);
    let there = two.sign_in(&two.editor);
    let viewer = one.sign_in(&one.viewer);
    let page = one.get("/", Auth::Cookie(&here)).body;
    assert!(
        page.contains("name=\"everywhere\""),
        "no control to sign out everywhere"
    );
    let csrf = hidden(&page, "csrf");
    let out = one.post_form(
        "/logout",
        Auth::Cookie(&here),
        &[("csrf", &csrf), ("everywhere", "1")],
    );
    assert_eq!(out.status, 303, "{}", out.body);
    assert_eq!(out.location.as_deref(), Some("/login"));
    assert!(!signed_in(&one, &here));
    assert!(!signed_in(&two, &there));
    assert!(signed_in(&two, &viewer), "another user's session ended");
    // Without `everywhere` only that browser is signed out.
    let (first, second) = (one.sign_in(&one.editor), one.sign_in(&one.editor));
    let csrf = hidden(&one.get("/", Auth::Cookie(&first)).body, "csrf");
    one.post_form("/logout", Auth::Cookie(&first), &[("csrf", &csrf)]);
    assert!(!signed_in(&one, &first));
    assert!(signed_in(&one, &second));
}

#[test]
fn a_label_that_differs_from_a_protected_one_only_by_case_is_protected() {
    let c = Console::start(Store::Sqlite, "pages_look_alike");
    let editor = c.sign_in(&c.editor);
    let csrf = hidden(&c.get("/", Auth::Cookie(&editor)).body, "csrf");
    // `xss` has no `production`: an editor would make the first `Production`.
    for (id, label) in [
        ("greet", "Production"),
        ("greet", "PRODUCTION"),
        ("xss", "Production"),
    ] {
        let confirm = c.get(
            &format!("/prompts/{id}/move?label={label}&version=1"),
            Auth::Cookie(&editor),
        );
        assert_eq!(confirm.status, 403, "{id} {label}");
        let moved = c.post_form(
            &format!("/prompts/{id}/move"),
            Auth::Cookie(&editor),
            &[("csrf", &csrf), ("label", label), ("target", "1")],
        );
        assert_eq!(moved.status, 403, "{id} {label}: {}", moved.body);
    }
    // An admin is refused too: the catalog has `production`, which
    // `Production` would be read as.
    let admin = c.sign_in(&c.admin);
    let csrf = hidden(&c.get("/", Auth::Cookie(&admin)).body, "csrf");
    let moved = c.post_form(
        "/prompts/xss/move",
        Auth::Cookie(&admin),
        &[("csrf", &csrf), ("label", "Production"), ("target", "1")],
    );
    assert_eq!(moved.status, 409, "{}", moved.body);
    assert!(moved.body.contains("production"), "{}", moved.body);
    let labels = c
        .get("/api/v1/prompts/xss/history", Auth::Bearer(&c.viewer))
        .body;
    assert!(!labels.contains("Production"), "{labels}");
}

#[test]
fn a_cross_site_sign_in_is_refused() {
    let c = Console::start(Store::Sqlite, "pages_login_csrf");
    let other_port = format!(
        "http://127.0.0.1:{}",
        1 + c
            .base
            .rsplit(':')
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(1)
    );
    let refused: Vec<Vec<(&str, &str)>> = vec![
        vec![("origin", "http://evil.example")],
        vec![("origin", "null")],
        vec![("origin", &other_port)],
        vec![("sec-fetch-site", "cross-site")],
        vec![("sec-fetch-site", "same-site")],
        vec![("origin", &c.base), ("sec-fetch-site", "cross-site")],
    ];
    for headers in &refused {
        let answer = c.post_form_with(
            "/login",
            Auth::None,
            &[("token", &c.viewer), ("next", "/")],
            headers,
        );
        assert_eq!(answer.status, 403, "{headers:?}: {}", answer.body);
        assert!(answer.set_cookie.is_none(), "{headers:?}");
        assert!(answer.content_type.starts_with("text/html"), "{headers:?}");
        assert!(answer.body.contains("another site"), "{}", answer.body);
    }
    for headers in [
        vec![("origin", c.base.as_str())],
        vec![
            ("origin", c.base.as_str()),
            ("sec-fetch-site", "same-origin"),
        ],
        vec![("sec-fetch-site", "same-origin")],
        // Behind a proxy that sends its own `Host`: the browser's word.
        vec![
            ("origin", "https://console.example"),
            ("sec-fetch-site", "same-origin"),
        ],
        // A client that is no browser (curl) sends neither.
        vec![],
    ] {
        let answer = c.post_form_with(
            "/login",
            Auth::None,
            &[("token", &c.viewer), ("next", "/")],
            &headers,
        );
        assert_eq!(answer.status, 303, "{headers:?}: {}", answer.body);
        assert!(answer.set_cookie.is_some(), "{headers:?}");
    }
}

/// Every answer's protective headers: not framed, not sniffed, no referrer
/// beyond this site, and not cached.
fn assert_protected(path: &str, answer: &support::Answer) {
    let csp = answer.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("frame-ancestors 'none'"),
        "{path}: CSP {csp:?}"
    );
    assert!(csp.contains("default-src"), "{path}: CSP {csp:?}");
    assert_eq!(answer.header("x-frame-options"), Some("DENY"), "{path}");
    assert_eq!(
        answer.header("x-content-type-options"),
        Some("nosniff"),
        "{path}"
    );
    assert_eq!(
        answer.header("referrer-policy"),
        Some("same-origin"),
        "{path}"
    );
    assert_eq!(answer.header("cache-control"), Some("no-store"), "{path}");
}

#[test]
fn every_answer_carries_the_protective_headers() {
    let c = Console::start(Store::Sqlite, "pages_headers");
    let cookie = c.sign_in(&c.admin);
    for path in [
        "/",
        "/?q=greet",
        "/prompts/greet",
        "/prompts/nothing",
        "/prompts/greet/diff?from=1&to=2",
        "/prompts/greet/preview",
        "/prompts/greet/edit",
        "/prompts/greet/move?label=production&version=2",
        "/login",
        "/assets/style.css",
        "/no/such/page",
    ] {
        assert_protected(path, &c.get(path, Auth::Cookie(&cookie)));
        assert_protected(path, &c.get(path, Auth::None));
    }
    for path in [
        "/api/v1/me",
        "/api/v1/prompts",
        "/api/v1/prompts/greet",
        "/api/v1/openapi.json",
        "/api/v1/nothing",
    ] {
        assert_protected(path, &c.get(path, Auth::Bearer(&c.viewer)));
        assert_protected(path, &c.get(path, Auth::None));
    }
    let signed_in = c.post_form("/login", Auth::None, &[("token", &c.viewer), ("next", "/")]);
    assert_protected("POST /login", &signed_in);
    let wrong = c.post_form("/login", Auth::None, &[("token", "pp_wrong")]);
    assert_protected("POST /login (refused)", &wrong);
    let moved = c.post_form("/prompts/greet/move", Auth::Cookie(&cookie), &[]);
    assert_protected("POST /prompts/greet/move", &moved);
    let render = c.send(
        "POST",
        "/api/v1/prompts/greet/render",
        Auth::Bearer(&c.viewer),
        &serde_json::json!({"vars": {"name": "Ada", "formal": true}}),
    );
    assert_protected("POST render", &render);
}

#[test]
fn malformed_forms_and_unknown_pages_get_the_consoles_own_error_page() {
    let c = Console::start(Store::Sqlite, "pages_own_errors");
    let cookie = c.sign_in(&c.admin);
    let page = c.get("/prompts/greet", Auth::Cookie(&cookie)).body;
    let csrf = hidden(&page, "csrf");
    let duplicated = c.post_form(
        "/prompts/greet/move",
        Auth::Cookie(&cookie),
        &[
            ("csrf", &csrf),
            ("csrf", &csrf),
            ("label", "staging"),
            ("target", "2"),
        ],
    );
    let signed_out = c.post_form("/login", Auth::None, &[("token", "a"), ("token", "b")]);
    let bad_query = c.get("/prompts/greet/diff?from=x&to=2", Auth::Cookie(&cookie));
    let unknown = c.get("/no/such/page", Auth::Cookie(&cookie));
    let stranger = c.get("/no/such/page", Auth::None);
    for (what, answer, status) in [
        ("duplicate fields", &duplicated, 400),
        ("duplicate sign-in fields", &signed_out, 400),
        ("a query that does not parse", &bad_query, 400),
        ("an unknown page", &unknown, 404),
        ("an unknown page without a session", &stranger, 404),
    ] {
        assert_eq!(answer.status, status, "{what}: {}", answer.body);
        assert!(
            answer.content_type.starts_with("text/html"),
            "{what}: {} {}",
            answer.content_type,
            answer.body
        );
        assert!(
            answer.body.contains("id=\"error-code\""),
            "{what}: {}",
            answer.body
        );
        assert!(
            answer.body.contains("All prompts"),
            "{what}: {}",
            answer.body
        );
    }
    assert!(
        unknown.body.contains("ada"),
        "the header of who is signed in"
    );
    // An unknown prompt's page says what is missing once, and names no
    // command that does not exist.
    let missing = c.get("/prompts/nothing", Auth::Cookie(&cookie));
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert_eq!(
        missing.body.matches("nothing").count(),
        1,
        "{}",
        missing.body
    );
    assert!(!missing.body.contains("catalog create"), "{}", missing.body);
    assert!(!missing.body.contains("or `create`"), "{}", missing.body);
}

#[test]
fn a_keyword_value_connection_string_is_refused_without_its_password() {
    let dir = tempfile::tempdir().expect("a folder");
    for db in [
        "host=127.0.0.1 port=1 user=ada password=s3cret dbname=cat",
        "dbname=cat sslpassword=s3cret",
        "  user = ada password='s3 cret'",
    ] {
        let settings = promptpack_console::Settings::new(db).listen("127.0.0.1:0".parse().unwrap());
        let refused = promptpack_console::Server::bind(settings).expect_err(db);
        let shown = format!("{refused} {refused:?}");
        assert_eq!(
            refused.code(),
            promptpack_catalog::ErrorCode::InvalidRequest,
            "{shown}"
        );
        assert!(!shown.contains("s3"), "{shown}");
        assert!(shown.contains("postgres://"), "{shown}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).map(|d| d.count()).ok(),
        Some(0)
    );
    let settings = promptpack_console::Settings::new("host=db password=s3cret");
    assert!(!format!("{settings:?}").contains("s3cret"));
    let settings = promptpack_console::Settings::new("postgres://db/cat?sslpassword=s3cret");
    assert!(!format!("{settings:?}").contains("s3cret"));
}

#[test]
fn a_stranger_learns_only_that_the_catalog_is_unavailable() {
    let cluster = promptpack_pgtest::Cluster::start().expect("a PostgreSQL cluster");
    let db = cluster.create_database("strangers").expect("a database");
    let c = Console::start_on(db.clone(), None, |settings| {
        settings.timeouts(
            promptpack_catalog::Timeouts::DEFAULT
                .with_connect(std::time::Duration::from_secs(2))
                .with_io(std::time::Duration::from_secs(2)),
        )
    });
    let cookie = c.sign_in(&c.viewer);
    cluster.stop().expect("the server stops");
    let port = cluster.port().to_string();
    let secrets = ["127.0.0.1", port.as_str(), "strangers", "postgres"];
    let api = c.get("/api/v1/me", Auth::Bearer("pp_stranger"));
    let login = c.post_form(
        "/login",
        Auth::None,
        &[("token", "pp_stranger"), ("next", "/")],
    );
    let page = c.get("/", Auth::Cookie(&cookie));
    for (what, answer) in [("the API", &api), ("the login", &login), ("a page", &page)] {
        assert_eq!(answer.status, 503, "{what}: {}", answer.body);
        assert!(answer.set_cookie.is_none(), "{what}");
        for secret in secrets {
            assert!(
                !answer.body.contains(secret),
                "{what} names {secret}: {}",
                answer.body
            );
        }
        assert!(
            answer.body.contains("unavailable"),
            "{what}: {}",
            answer.body
        );
    }
    assert_eq!(api.code(), "unavailable");
    assert!(
        login.body.contains("Sign in"),
        "the login form again: {}",
        login.body
    );
}

/// Whether the server has closed `stream` (or answered and closed it): a
/// read that ends or fails, as opposed to one that would wait.
fn closed_by_server(stream: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    let mut buffer = [0u8; 4096];
    stream.set_nonblocking(true).expect("non-blocking");
    let closed = loop {
        match stream.read(&mut buffer) {
            Ok(0) => break true,
            // An answer (a 408) before the close: read on.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    stream.set_nonblocking(false).expect("blocking");
    closed
}

/// Sends `lines` one at a time, a pause between them, until the server
/// closes the connection: whether it did before the lines ran out.
fn trickle(base: &str, head: &str, lines: impl Iterator<Item = String>) -> bool {
    use std::io::Write;
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).expect("a connection");
    stream.write_all(head.as_bytes()).expect("the first line");
    for line in lines {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if stream.write_all(line.as_bytes()).is_err() || closed_by_server(&mut stream) {
            return true;
        }
    }
    false
}

#[test]
fn half_sent_requests_are_closed() {
    let c = Console::start_with(Store::Sqlite, "pages_slow", |settings| {
        settings
            .header_timeout(std::time::Duration::from_millis(300))
            .request_timeout(std::time::Duration::from_millis(600))
    });
    // 400 lines 50 ms apart: far past either bound, however slow the machine.
    let headers = (0..400).map(|i| format!("x-slow-{i}: 1\r\n"));
    assert!(
        trickle(&c.base, "GET / HTTP/1.1\r\nhost: x\r\n", headers),
        "a header trickle was held to the end"
    );
    let body = (0..400).map(|_| "a".to_string());
    assert!(
        trickle(
            &c.base,
            "POST /login HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 1000\r\n\r\ntoken=",
            body,
        ),
        "a body trickle was held to the end"
    );
    // An idle connection that never sends a request is closed too.
    let idle = (0..400).map(|_| String::new());
    assert!(trickle(&c.base, "", idle), "an idle connection was held");
    // And the console still answers.
    assert_eq!(c.get("/login", Auth::None).status, 200);
}

#[test]
fn connections_past_the_cap_wait_for_a_free_one() {
    use std::io::{Read, Write};
    let c = Console::start_with(Store::Sqlite, "pages_cap", |settings| {
        settings.max_connections(2)
    });
    let address = c.base.trim_start_matches("http://").to_string();
    let request = format!("GET /login HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n");
    // Two connections that hold their slot (each with a request answered,
    // so they are surely accepted).
    let mut held: Vec<std::net::TcpStream> = (0..2)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(&address).expect("a connection");
            stream
                .write_all(format!("GET /login HTTP/1.1\r\nhost: {address}\r\n\r\n").as_bytes())
                .expect("a request");
            let mut head = [0u8; 12];
            stream.read_exact(&mut head).expect("an answer");
            assert_eq!(&head, b"HTTP/1.1 200");
            stream
        })
        .collect();
    let mut third = std::net::TcpStream::connect(&address).expect("the kernel queues it");
    third.write_all(request.as_bytes()).expect("a request");
    third
        .set_read_timeout(Some(std::time::Duration::from_millis(500)))
        .expect("a read timeout");
    let mut answer = Vec::new();
    let waited = third.read_to_end(&mut answer);
    assert!(
        waited.is_err() && answer.is_empty(),
        "a third connection was served past a cap of 2: {:?}",
        String::from_utf8_lossy(&answer)
    );
    held.pop();
    third.set_read_timeout(None).expect("no read timeout");
    answer.clear();
    third
        .read_to_end(&mut answer)
        .expect("the answer once a slot is free");
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );
}

/// What the console logged, from every test of this binary.
fn captured_log() -> &'static std::sync::Mutex<Vec<String>> {
    struct Capture(std::sync::Mutex<Vec<String>>);
    impl log::Log for Capture {
        fn enabled(&self, _: &log::Metadata<'_>) -> bool {
            true
        }
        fn log(&self, record: &log::Record<'_>) {
            // The console's own lines, not the HTTP client's.
            if !record.target().starts_with("promptpack_console") {
                return;
            }
            if let Ok(mut lines) = self.0.lock() {
                lines.push(format!(
                    "{} {} {}",
                    record.level(),
                    record.target(),
                    record.args()
                ));
            }
        }
        fn flush(&self) {}
    }
    static CAPTURE: std::sync::OnceLock<&'static Capture> = std::sync::OnceLock::new();
    let capture = CAPTURE.get_or_init(|| {
        let capture: &'static Capture = Box::leak(Box::new(Capture(Default::default())));
        // Another logger set first would leave the capture empty, and the
        // test below fails saying so.
        let _ = log::set_logger(capture);
        log::set_max_level(log::LevelFilter::Trace);
        capture
    });
    &capture.0
}

#[test]
fn requests_and_refused_sign_ins_are_logged_without_tokens_or_cookies() {
    let log = captured_log();
    let c = Console::start(Store::Sqlite, "pages_log");
    let cookie = c.sign_in(&c.editor);
    let session = cookie.split('=').nth(1).unwrap_or_default().to_string();
    assert_eq!(
        c.get("/prompts/greet?from=secret-query", Auth::Cookie(&cookie))
            .status,
        200
    );
    assert_eq!(c.get("/api/v1/me", Auth::Bearer(&c.viewer)).status, 200);
    let wrong = c.post_form(
        "/login",
        Auth::None,
        &[("token", "pp_wrong_token_0123"), ("next", "/")],
    );
    assert_eq!(wrong.status, 401);
    let port = c.base.rsplit(':').next().unwrap_or_default().to_string();
    let lines: Vec<String> = log.lock().map(|lines| lines.clone()).unwrap_or_default();
    let ours: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains(&port) || l.contains("sign-in"))
        .collect();
    let has = |parts: &[&str]| lines.iter().any(|l| parts.iter().all(|p| l.contains(p)));
    assert!(
        has(&["INFO", "GET /prompts/greet", "200"]),
        "no request line in {lines:#?}"
    );
    assert!(
        has(&["GET /api/v1/me", "200", "vi"]),
        "no API line with its user in {lines:#?}"
    );
    assert!(has(&["POST /login", "303"]), "{lines:#?}");
    assert!(
        has(&["WARN", "sign-in refused"]),
        "no refused sign-in in {lines:#?}"
    );
    for secret in [
        c.admin.as_str(),
        c.editor.as_str(),
        c.viewer.as_str(),
        session.as_str(),
        "pp_wrong_token_0123",
        "secret-query",
    ] {
        assert!(
            !lines.iter().any(|l| l.contains(secret)),
            "{secret} logged: {ours:#?}"
        );
    }
}
