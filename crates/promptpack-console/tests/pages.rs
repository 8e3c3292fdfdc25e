//! The pages over real HTTP: signing in, what each role may do, CSRF, and
//! escaping of everything that comes from the catalog.

mod support;

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
    let contract = promptpack_catalog::Contract::from_json(
        "contract.json",
        r#"{"format": 1, "prompts": {"greet": {"variables": [{"name": "name", "kind": "text"}]}}}"#,
    )
    .expect("a contract");
    let mut catalog = promptpack_catalog::Catalog::connect_writable(
        &c.db,
        &promptpack_catalog::Timeouts::DEFAULT,
    )
    .expect("the catalog");
    catalog
        .register_build(&promptpack_catalog::BuildRegistration {
            process: "agent-service#42".to_string(),
            label: "production".to_string(),
            contract,
        })
        .expect("a registration");
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
    let mut catalog = promptpack_catalog::Catalog::connect_writable(
        &c.db,
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
