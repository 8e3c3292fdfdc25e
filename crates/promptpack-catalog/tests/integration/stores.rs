//! The store suite: every case runs against SQLite and against a real
//! PostgreSQL server, through the same [`Catalog`] API.

use crate::support;

use promptpack_catalog::{
    Arm, BuildRegistration, Catalog, Contract, Draft, ErrorCode, ListQuery, Page, Role, Selector,
    Syntax, User, UserAction, content_hash, contract_hash, token_hash,
};
use std::time::Duration;
use support::{SCHEMA_VERSION, TestStore, code, draft, write_tree};

every_store!(
    versions_are_numbered_and_never_change,
    labels_move_by_explicit_calls_and_every_move_is_audited,
    published_versions_keep_their_snippet_revisions,
    upgrade_moves_pins_and_refuses_when_current,
    refused_publishes_write_nothing,
    contract_violations_name_the_variable_and_the_fields,
    deleted_prompts_do_not_resolve_and_keep_their_history,
    list_pages_through_live_prompts_by_id,
    diff_is_a_unified_diff_of_the_resolved_texts,
    import_writes_changed_prompts_verbatim_and_export_gives_them_back,
    a_broken_tree_imports_nothing,
    the_schema_is_applied_once_and_checked,
    snippet_revisions_are_checked_and_append_only,
    a_version_keeps_the_syntax_it_was_written_in,
    publish_or_create_creates_only_what_it_publishes,
    a_label_splits_over_weighted_versions,
    labelled_reads_one_label_of_every_prompt_at_once,
    versions_with_sources_reads_many_versions_at_once,
    a_catalog_of_the_first_schema_is_migrated,
    declared_choices_fit_by_what_they_compare_and_warn_of_unhandled_values,
    console_users_are_added_found_by_token_and_removed,
    builds_register_refresh_and_expire,
    an_unregistered_build_is_gone_and_the_others_stay,
    a_registered_contract_is_checked_when_read,
    search_finds_text_in_ids_names_and_descriptions,
    listed_prompts_carry_their_labels_and_arms,
    snippets_lists_the_newest_revision_of_each,
    labels_that_differ_only_by_case_collide,
    console_sessions_are_hashed_capped_expired_and_end_with_their_user,
    a_conversation_is_published_read_judged_rendered_and_diffed,
    a_version_is_judged_by_whether_the_program_reads_its_answers_and_calls,
);

fn versions_are_numbered_and_never_change(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .create("greeter", Some("Greeter"), Some("says hello"))
        .expect("create");
    for n in 1..=3 {
        let version = catalog
            .publish("greeter", &draft(&format!("Hello {{{{name}}}} #{n}")), None)
            .expect("publish");
        assert_eq!(version.version, n);
    }
    let second = catalog.get("greeter", &Selector::Version(2)).expect("v2");
    assert_eq!(second.system, "Hello {{name}} #2");
    assert_eq!(second.resolved_system, "Hello {{name}} #2");
    assert_eq!(second.content_hash, content_hash("Hello {{name}} #2", None));
    assert_eq!(second.author, "test");
    let latest = catalog.get("greeter", &Selector::Latest).expect("latest");
    assert_eq!(latest.version, 3);
    assert_eq!(
        catalog
            .get("greeter", &Selector::Label("latest".into()))
            .expect("label latest")
            .version,
        3
    );
    assert_eq!(
        code(catalog.get("greeter", &Selector::Version(4))),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(catalog.get("greeter", &Selector::Version(0))),
        ErrorCode::NotFound
    );
    let history = catalog.history("greeter").expect("history");
    let numbers: Vec<u32> = history.versions.iter().map(|v| v.version).collect();
    assert_eq!(numbers, [3, 2, 1]);
    assert_eq!(history.prompt.name, "Greeter");
    assert_eq!(history.labels, [("latest".to_string(), 3)]);

    // No statement rewrites a version, not even one written by hand.
    let before = store.footprint();
    for sql in [
        "UPDATE prompt_versions SET system_text = 'x' WHERE version = 2",
        "DELETE FROM prompt_versions WHERE version = 2",
        "DELETE FROM audit",
    ] {
        let refused = store.raw(sql).expect_err(sql);
        assert!(refused.contains("append-only"), "{sql}: {refused}");
    }
    assert_eq!(store.footprint(), before);
    assert_eq!(
        catalog
            .get("greeter", &Selector::Version(2))
            .expect("v2")
            .system,
        "Hello {{name}} #2"
    );
}

fn labels_move_by_explicit_calls_and_every_move_is_audited(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("p", None, None).expect("create");
    for text in ["one", "two", "three"] {
        catalog.publish("p", &draft(text), None).expect("publish");
    }
    let production = Selector::Label("production".into());
    assert_eq!(code(catalog.get("p", &production)), ErrorCode::NotFound);
    let first = catalog.set_label("p", "production", 1).expect("label");
    assert_eq!((first.from_version, first.to_version), (None, Some(1)));
    catalog.set_label("p", "production", 3).expect("move");
    assert_eq!(catalog.get("p", &production).expect("get").system, "three");
    // Rolling back is moving the label back.
    catalog.set_label("p", "production", 2).expect("roll back");
    assert_eq!(catalog.get("p", &production).expect("get").system, "two");
    catalog.set_label("p", "staging", 3).expect("staging");

    let before = store.footprint();
    assert_eq!(
        code(catalog.set_label("p", "latest", 1)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.set_label("p", "production", 4)),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(catalog.set_label("p", "production", 0)),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(catalog.set_label("p", "bad label", 1)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.set_label("nope", "production", 1)),
        ErrorCode::NotFound
    );
    assert_eq!(store.footprint(), before);

    let history = catalog.history("p").expect("history");
    let moves: Vec<(String, Option<u32>, Option<u32>)> = history
        .audit
        .iter()
        .filter(|e| e.action == "label")
        .map(|e| {
            (
                e.label.clone().unwrap_or_default(),
                e.from_version,
                e.to_version,
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            ("production".into(), None, Some(1)),
            ("production".into(), Some(1), Some(3)),
            ("production".into(), Some(3), Some(2)),
            ("staging".into(), None, Some(3)),
        ]
    );
    assert!(history.audit.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(
        history.labels,
        [
            ("latest".to_string(), 3),
            ("production".to_string(), 2),
            ("staging".to_string(), 3)
        ]
    );
}

fn published_versions_keep_their_snippet_revisions(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_snippet("tone", "Be brief.", "tone 1")
        .expect("snippet");
    catalog
        .publish_snippet("rules", "Rules: {{snippet:tone}}", "rules 1")
        .expect("snippet");
    catalog.create("agent", None, None).expect("create");
    let v1 = catalog
        .publish("agent", &draft("{{snippet:rules}} Hi {{name}}."), None)
        .expect("publish");
    let pins: Vec<(String, u32)> = v1
        .pins
        .iter()
        .map(|p| (p.snippet.clone(), p.revision))
        .collect();
    assert_eq!(pins, [("rules".into(), 1), ("tone".into(), 1)]);
    assert_eq!(v1.resolved_system, "Rules: Be brief. Hi {{name}}.");

    let tone2 = catalog
        .publish_snippet("tone", "Be thorough.", "tone 2")
        .expect("snippet");
    assert_eq!(tone2.revision, 2);
    // The published version still renders what it rendered.
    let again = catalog.get("agent", &Selector::Version(1)).expect("v1");
    assert_eq!(again, v1);
    let sources = catalog.sources(&again).expect("sources");
    let tone = sources
        .snippets
        .iter()
        .find(|s| s.name == "tone")
        .expect("tone");
    assert_eq!(tone.file.text(), "Be brief.");
    assert_eq!(
        catalog.snippet("tone", Some(1)).expect("rev 1").text,
        "Be brief."
    );
    assert_eq!(catalog.snippet("tone", None).expect("newest").revision, 2);
    assert_eq!(code(catalog.snippet("tone", Some(3))), ErrorCode::NotFound);

    // A new version pins the newest revisions.
    let v2 = catalog
        .publish("agent", &draft("{{snippet:rules}} Hi {{name}}."), None)
        .expect("publish");
    assert_eq!(v2.resolved_system, "Rules: Be thorough. Hi {{name}}.");
    assert_ne!(v2.content_hash, v1.content_hash);
}

fn upgrade_moves_pins_and_refuses_when_current(store: &TestStore) {
    let mut catalog = support::with_tone(store, "agent", "A {{snippet:tone}}");
    let before = store.footprint();
    assert_eq!(code(catalog.upgrade("agent", None)), ErrorCode::PinsCurrent);
    assert_eq!(store.footprint(), before);

    catalog
        .publish_snippet("tone", "Be kind.", "tone 2")
        .expect("snippet");
    let upgraded = catalog.upgrade("agent", None).expect("upgrade");
    assert_eq!(upgraded.version, 2);
    assert_eq!(upgraded.system, "A {{snippet:tone}}");
    assert_eq!(upgraded.resolved_system, "A Be kind.");
    assert_eq!(upgraded.message, "upgrade pins: tone 1 → 2");
    assert_eq!(upgraded.pins[0].revision, 2);
    assert_eq!(code(catalog.upgrade("agent", None)), ErrorCode::PinsCurrent);

    // A snippet revision that breaks the prompt cannot be upgraded to.
    catalog
        .publish_snippet("tone", "{{#if x}}open", "tone 3")
        .expect_err("unclosed");
    catalog
        .publish_snippet("tone", "{{x}}", "tone 3")
        .expect("snippet");
    let contract = Contract::from_json(
        "contract.json",
        r#"{"format": 1, "prompts": {"agent": {"variables": []}}}"#,
    )
    .expect("contract");
    let before = store.footprint();
    assert_eq!(
        code(catalog.upgrade("agent", Some(&contract))),
        ErrorCode::ContractViolation
    );
    assert_eq!(store.footprint(), before);
}

fn refused_publishes_write_nothing(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("p", None, None).expect("create");
    catalog.publish("p", &draft("fine"), None).expect("publish");
    let before = store.footprint();
    let cases: [(&str, Option<&str>, ErrorCode, &str, usize); 6] = [
        (
            "Hi\n{{#if x}}",
            None,
            ErrorCode::UnclosedBlock,
            "templates/p/system.md",
            2,
        ),
        (
            "{{/if}}",
            None,
            ErrorCode::StrayClose,
            "templates/p/system.md",
            1,
        ),
        (
            "ok",
            Some("\n\n{{snippet:missing}}"),
            ErrorCode::SnippetNotFound,
            "templates/p/user.md",
            3,
        ),
        (
            "{{#if role == teacher}}x{{/if}}",
            None,
            ErrorCode::InvalidCondition,
            "templates/p/system.md",
            1,
        ),
        (
            "---\nvars: 3\n---\nx",
            None,
            ErrorCode::InvalidFrontMatter,
            "templates/p/system.md",
            2,
        ),
        (
            "---\nvars:\n  a: the a\n---\n{{b}}",
            None,
            ErrorCode::UndeclaredVar,
            "templates/p/system.md",
            5,
        ),
    ];
    for (system, user, want, path, line) in cases {
        let draft = Draft {
            system: system.into(),
            user: user.map(str::to_string),
            message: "bad".into(),
            ..Draft::default()
        };
        let error = catalog.publish("p", &draft, None).expect_err(system);
        let first = &error.diagnostics()[0];
        assert_eq!(first.code, want, "{system}: {error}");
        let location = first.location.as_ref().expect("a location");
        assert_eq!((location.path(), location.line()), (path, line), "{system}");
        assert_eq!(store.footprint(), before, "{system}");
    }
    assert_eq!(
        code(catalog.publish("nope", &draft("x"), None)),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(catalog.create("bad id", None, None)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.create("../up", None, None)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.create("p", None, None)),
        ErrorCode::AlreadyExists
    );
    assert_eq!(code(catalog.list(0, None)), ErrorCode::InvalidRequest);
    assert_eq!(store.footprint(), before);
    assert_eq!(
        catalog.get("p", &Selector::Latest).expect("latest").version,
        1
    );
}

fn contract_violations_name_the_variable_and_the_fields(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("agent", None, None).expect("create");
    let contract = Contract::from_json(
        "contract.json",
        r#"{"format": 1, "prompts": {"agent": {"variables": [
            {"name": "name", "kind": "text"}, {"name": "verbose", "kind": "flag"}]}}}"#,
    )
    .expect("contract");
    // Unused fields never block.
    catalog
        .publish("agent", &draft("Hi {{name}}."), Some(&contract))
        .expect("fits");
    let before = store.footprint();
    let error = catalog
        .publish(
            "agent",
            &draft("Hi {{name}}.\nTone: {{tone}}"),
            Some(&contract),
        )
        .expect_err("tone is not in the program");
    let first = &error.diagnostics()[0];
    assert_eq!(first.code, ErrorCode::ContractViolation);
    assert!(first.message.contains("tone"), "{}", first.message);
    let location = first.location.as_ref().expect("a location");
    assert_eq!(
        (location.path(), location.line(), location.column()),
        ("templates/agent/system.md", 2, 7)
    );
    let help = first.help.clone().unwrap_or_default();
    assert!(help.contains("name") && help.contains("verbose"), "{help}");

    let kind = catalog
        .publish("agent", &draft("{{verbose}}"), Some(&contract))
        .expect_err("a flag printed");
    assert_eq!(kind.code(), ErrorCode::ContractViolation);
    catalog.create("other", None, None).expect("create");
    let unknown = catalog
        .publish("other", &draft("x"), Some(&contract))
        .expect_err("not in the program");
    assert_eq!(unknown.code(), ErrorCode::ContractViolation);
    assert_eq!(store.footprint()[1], before[1]);
}

fn deleted_prompts_do_not_resolve_and_keep_their_history(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("gone", None, None).expect("create");
    catalog.create("kept", None, None).expect("create");
    catalog
        .publish("gone", &draft("bye"), None)
        .expect("publish");
    catalog.set_label("gone", "production", 1).expect("label");
    catalog.delete("gone").expect("delete");

    assert_eq!(
        code(catalog.get("gone", &Selector::Latest)),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(catalog.get("gone", &Selector::Label("production".into()))),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(catalog.publish("gone", &draft("again"), None)),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(catalog.set_label("gone", "production", 1)),
        ErrorCode::NotFound
    );
    assert_eq!(code(catalog.delete("gone")), ErrorCode::NotFound);
    assert_eq!(
        code(catalog.create("gone", None, None)),
        ErrorCode::AlreadyExists
    );
    assert_eq!(code(catalog.restore("kept")), ErrorCode::InvalidRequest);
    let listed: Vec<String> = catalog
        .list(10, None)
        .expect("list")
        .prompts
        .into_iter()
        .map(|l| l.prompt.id)
        .collect();
    assert_eq!(listed, ["kept"]);
    let history = catalog.history("gone").expect("the audit outlives it");
    assert!(history.prompt.deleted);
    assert_eq!(history.versions.len(), 1);
    let actions: Vec<&str> = history.audit.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["create", "label", "delete"]);

    catalog.restore("gone").expect("restore");
    assert_eq!(
        catalog
            .get("gone", &Selector::Label("production".into()))
            .expect("back")
            .system,
        "bye"
    );
    assert_eq!(code(catalog.history("never")), ErrorCode::NotFound);
}

fn list_pages_through_live_prompts_by_id(store: &TestStore) {
    let mut catalog = store.open();
    // Bytewise order on both stores: upper case before `_` before lower case.
    let mut ids: Vec<String> = (0..23).map(|n| format!("p{n:02}")).collect();
    ids.extend(["B", "_x", "a-b", "a_b", "ab"].map(String::from));
    for id in &ids {
        catalog.create(id, None, None).expect("create");
    }
    for id in ids.iter().step_by(2) {
        catalog.publish(id, &draft(id), None).expect("publish");
    }
    ids.sort();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = catalog.list(10, cursor.as_deref()).expect("page");
        pages += 1;
        assert!(page.prompts.len() <= 10);
        seen.extend(page.prompts.iter().map(|l| l.prompt.id.clone()));
        for listed in &page.prompts {
            let published = listed.prompt.latest_version > 0;
            assert_eq!(listed.current.is_some(), published, "{}", listed.prompt.id);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, ids);
    let exact = catalog.list(28, None).expect("all");
    assert_eq!((exact.prompts.len(), exact.next_cursor), (28, None));
}

fn diff_is_a_unified_diff_of_the_resolved_texts(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("p", None, None).expect("create");
    let one = Draft {
        system: "line one\nline two\nline three\n".into(),
        user: Some("ask {{q}}".into()),
        message: "v1".into(),
        ..Draft::default()
    };
    let two = Draft {
        system: "line one\nline 2\nline three\n".into(),
        ..one.clone()
    };
    catalog.publish("p", &one, None).expect("v1");
    catalog.publish("p", &two, None).expect("v2");
    catalog.publish("p", &one, None).expect("v3");
    catalog.set_label("p", "production", 1).expect("label");
    let diff = catalog
        .diff("p", &Selector::Version(1), &Selector::Version(2))
        .expect("diff");
    assert_eq!(
        diff,
        "--- a/p@1/system.md\n+++ b/p@2/system.md\n@@ -1,3 +1,3 @@\n line one\n-line two\n+line 2\n line three\n"
    );
    let same = catalog
        .diff(
            "p",
            &Selector::Label("production".into()),
            &Selector::Latest,
        )
        .expect("diff");
    assert_eq!(same, "");
    assert_eq!(
        code(catalog.diff("p", &Selector::Version(1), &Selector::Version(9))),
        ErrorCode::NotFound
    );
}

fn sample_tree(root: &std::path::Path) {
    write_tree(
        root,
        &[
            (
                "templates/agent/system.md",
                "---\ndescription: The agent.\nvars:\n  name: who\n  q: the question\n---\nYou are {{name}}.\r\n{{snippet:rules}}\n",
            ),
            ("templates/agent/user.md", "\u{feff}Question: {{q}}"),
            ("templates/plain/system.md", "Plain {{snippet:tone}}"),
            ("snippets/rules.md", "Rules:\n{{snippet:tone}}\n"),
            ("snippets/tone.md", "Be brief."),
        ],
    );
}

fn import_writes_changed_prompts_verbatim_and_export_gives_them_back(store: &TestStore) {
    let tree = tempfile::tempdir().expect("tree");
    sample_tree(tree.path());
    let mut catalog = store.open();
    let first = catalog.import(tree.path(), "import", None).expect("import");
    let written = |items: &[promptpack_catalog::Imported]| -> Vec<(String, u32, bool)> {
        items
            .iter()
            .map(|i| (i.name.clone(), i.version, i.written))
            .collect()
    };
    assert_eq!(
        written(&first.prompts),
        [("agent".into(), 1, true), ("plain".into(), 1, true)]
    );
    assert_eq!(
        written(&first.snippets),
        [("rules".into(), 1, true), ("tone".into(), 1, true)]
    );
    let agent = catalog.get("agent", &Selector::Latest).expect("agent");
    assert_eq!(
        agent.system,
        "---\ndescription: The agent.\nvars:\n  name: who\n  q: the question\n---\nYou are {{name}}.\r\n{{snippet:rules}}\n"
    );
    assert_eq!(agent.user.as_deref(), Some("\u{feff}Question: {{q}}"));
    assert_eq!(agent.front_matter["description"], "The agent.");
    assert_eq!(
        catalog.prompt("agent").expect("prompt").description,
        "The agent."
    );

    // Again: nothing changed, nothing written.
    let before = store.footprint();
    let again = catalog.import(tree.path(), "import", None).expect("import");
    assert!(
        again
            .prompts
            .iter()
            .chain(&again.snippets)
            .all(|i| !i.written)
    );
    assert_eq!(store.footprint(), before);

    // A snippet edit: a new revision, and new versions of both prompts that
    // reach it (their pins change); nothing else.
    write_tree(tree.path(), &[("snippets/tone.md", "Be kind.")]);
    let third = catalog.import(tree.path(), "tone", None).expect("import");
    assert_eq!(
        written(&third.prompts),
        [("agent".into(), 2, true), ("plain".into(), 2, true)]
    );
    assert_eq!(
        written(&third.snippets),
        [("rules".into(), 1, false), ("tone".into(), 2, true)]
    );

    let out = tempfile::tempdir().expect("out");
    let files = catalog
        .export("agent", &Selector::Latest, out.path())
        .expect("export");
    assert_eq!(files.len(), 4);
    for file in [
        "templates/agent/system.md",
        "templates/agent/user.md",
        "snippets/rules.md",
        "snippets/tone.md",
    ] {
        let exported = std::fs::read(out.path().join(file)).expect(file);
        let source = std::fs::read(tree.path().join(file)).expect(file);
        assert_eq!(exported, source, "{file}");
    }
    // Version 1 pins the old tone: exporting it over the new one is refused,
    // and leaves every file as it was.
    let refused = catalog.export("agent", &Selector::Version(1), out.path());
    assert_eq!(code(refused), ErrorCode::AlreadyExists);
    let tone = std::fs::read_to_string(out.path().join("snippets/tone.md")).expect("tone");
    assert_eq!(tone, "Be kind.");
}

fn a_broken_tree_imports_nothing(store: &TestStore) {
    let tree = tempfile::tempdir().expect("tree");
    sample_tree(tree.path());
    write_tree(
        tree.path(),
        &[("templates/broken/system.md", "{{#if x}}never closed")],
    );
    let mut catalog = store.open();
    let before = store.footprint();
    let error = catalog
        .import(tree.path(), "import", None)
        .expect_err("broken");
    assert_eq!(error.code(), ErrorCode::UnclosedBlock);
    assert_eq!(store.footprint(), before);

    // A tree that compiles but breaks the program's contract: nothing either.
    std::fs::remove_dir_all(tree.path().join("templates/broken")).expect("remove");
    let contract = Contract::from_json(
        "contract.json",
        r#"{"format": 1, "prompts": {"agent": {"variables": [{"name": "name", "kind": "text"}]},
            "plain": {"variables": []}}}"#,
    )
    .expect("contract");
    let error = catalog
        .import(tree.path(), "import", Some(&contract))
        .expect_err("q is not in the program");
    assert_eq!(error.code(), ErrorCode::ContractViolation);
    assert_eq!(store.footprint(), before);
}

fn the_schema_is_applied_once_and_checked(store: &TestStore) {
    let unready = Catalog::connect(&store.url).expect_err("no schema yet");
    assert_eq!(unready.code(), ErrorCode::NotConfigured, "{unready}");
    if let Some(path) = store.url.strip_prefix("sqlite:") {
        // A reader pointed at a missing file leaves nothing behind.
        assert!(unready.to_string().contains("catalog init"), "{unready}");
        assert!(
            !std::path::Path::new(path).exists(),
            "connect created {path}"
        );
    }
    let mut catalog = store.open();
    assert_eq!(catalog.init().expect("init again"), SCHEMA_VERSION);
    Catalog::connect(&store.url).expect("schema applied");
    assert_eq!(
        store.count("SELECT COUNT(*) FROM promptpack_schema"),
        SCHEMA_VERSION
    );
    store
        .raw("INSERT INTO promptpack_schema (version) VALUES (99)")
        .expect("a newer schema");
    for result in [Catalog::open(&store.url), Catalog::connect(&store.url)] {
        let error = result.expect_err("newer schema");
        assert_eq!(error.code(), ErrorCode::NotConfigured);
        assert!(error.to_string().contains("newer"), "{error}");
    }
}

fn snippet_revisions_are_checked_and_append_only(store: &TestStore) {
    let mut catalog = store.open();
    let before = store.footprint();
    let error = catalog
        .publish_snippet("rules", "a\n{{#if x}}", "bad")
        .expect_err("unclosed");
    let first = &error.diagnostics()[0];
    assert_eq!(first.code, ErrorCode::UnclosedBlock);
    let location = first.location.as_ref().expect("a location");
    assert_eq!((location.path(), location.line()), ("snippets/rules.md", 2));
    assert_eq!(
        code(catalog.publish_snippet("rules", "{{snippet:missing}}", "bad")),
        ErrorCode::SnippetNotFound
    );
    assert_eq!(
        code(catalog.publish_snippet("a/b", "x", "bad")),
        ErrorCode::InvalidRequest
    );
    assert_eq!(store.footprint(), before);
    for n in 1..=3 {
        let revision = catalog
            .publish_snippet("rules", &format!("rule {n}"), "ok")
            .expect("snippet");
        assert_eq!(revision.revision, n);
    }
    // A snippet may not include itself, through another or directly.
    catalog
        .publish_snippet("other", "{{snippet:rules}}", "ok")
        .expect("other");
    assert_eq!(
        code(catalog.publish_snippet("rules", "{{snippet:other}}", "cycle")),
        ErrorCode::SnippetCycle
    );
    let refused = store
        .raw("UPDATE snippet_revisions SET text = 'x'")
        .expect_err("append-only");
    assert!(refused.contains("append-only"), "{refused}");
}

fn a_version_keeps_the_syntax_it_was_written_in(store: &TestStore) {
    let tree = tempfile::tempdir().expect("tree");
    write_tree(
        tree.path(),
        &[
            (
                "promptpack.toml",
                "[syntax]\nstandalone_tags = true\n[delimiters]\nopen = \"<<\"\nclose = \">>\"\n",
            ),
            (
                "templates/angle/system.md",
                "Hi <<name>>.\n<<#if formal>>\nDear sir.\n<</if>>\n<<snippet:sign>>",
            ),
            ("snippets/sign.md", "-- <<signer>>"),
        ],
    );
    let mut catalog = store.open();
    catalog.import(tree.path(), "angle", None).expect("import");
    let version = catalog.get("angle", &Selector::Latest).expect("angle");
    let syntax = Syntax {
        open: "<<".into(),
        close: ">>".into(),
        standalone_tags: true,
    };
    assert_eq!(version.syntax, syntax);
    // Standalone tag lines are gone; tokens print in the version's own syntax.
    assert_eq!(
        version.resolved_system,
        "Hi <<name>>.\n<<#if formal>>Dear sir.\n<</if>>-- <<signer>>"
    );
    // Importing the same files under the default syntax is a new version:
    // they read otherwise.
    std::fs::remove_file(tree.path().join("promptpack.toml")).expect("remove");
    let report = catalog
        .import(tree.path(), "default syntax", None)
        .expect("import");
    assert!(report.prompts[0].written);
    let default = catalog.get("angle", &Selector::Latest).expect("v2");
    assert_eq!(default.syntax, Syntax::default());
    assert_eq!(default.resolved_system, default.system);

    // Snippets are checked in the catalog's syntax.
    let mut angled = store
        .open()
        .with_settings(syntax.settings().expect("settings"));
    angled
        .publish_snippet("sign", "-- <<#if x>>", "unclosed")
        .expect_err("unclosed");
    angled
        .publish_snippet("sign", "-- <<who>>", "angled")
        .expect("angled");
}

fn publish_or_create_creates_only_what_it_publishes(store: &TestStore) {
    let mut catalog = store.open();
    let before = store.footprint();
    assert_eq!(
        code(catalog.publish_or_create("fresh", &draft("{{#if x}}"), None)),
        ErrorCode::UnclosedBlock
    );
    assert_eq!(
        code(catalog.publish_or_create("bad id", &draft("x"), None)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        store.footprint(),
        before,
        "a refused draft leaves no prompt behind"
    );
    let (first, created) = catalog
        .publish_or_create("fresh", &draft("one"), None)
        .expect("new");
    assert_eq!((first.version, created), (1, true));
    let (second, created) = catalog
        .publish_or_create("fresh", &draft("two"), None)
        .expect("next");
    assert_eq!((second.version, created), (2, false));
    catalog.delete("fresh").expect("delete");
    assert_eq!(
        code(catalog.publish_or_create("fresh", &draft("three"), None)),
        ErrorCode::NotFound
    );

    // The same snippet text twice is one revision.
    let one = catalog
        .publish_snippet("tone", "Be brief.", "one")
        .expect("snippet");
    let again = catalog
        .publish_snippet("tone", "Be brief.", "again")
        .expect("snippet");
    assert_eq!(
        (one.revision, again.revision, again.message.as_str()),
        (1, 1, "one")
    );
}

fn labelled_reads_one_label_of_every_prompt_at_once(store: &TestStore) {
    let mut catalog = store.open();
    let arm = |version, weight| Arm { version, weight };
    // Ids whose bytewise order differs from a collation's: `B` < `a`.
    for id in ["b-split", "B-plain", "a-unlabelled", "c-deleted", "d-plain"] {
        for text in ["one", "two", "three"] {
            catalog
                .publish_or_create(id, &draft(text), None)
                .expect("publish");
        }
    }
    catalog
        .set_label("B-plain", "production", 2)
        .expect("label");
    catalog
        .set_label("d-plain", "production", 1)
        .expect("label");
    catalog
        .set_label("c-deleted", "production", 1)
        .expect("label");
    catalog.delete("c-deleted").expect("delete");
    catalog
        .split_label("b-split", "production", &[arm(1, 30), arm(3, 70)])
        .expect("split");
    catalog.set_label("d-plain", "staging", 3).expect("label");
    let expected = vec![
        ("B-plain".to_string(), vec![arm(2, 1)]),
        ("b-split".to_string(), vec![arm(3, 70), arm(1, 30)]),
        ("d-plain".to_string(), vec![arm(1, 1)]),
    ];
    assert_eq!(catalog.labelled("production").expect("reads"), expected);
    // Each agrees with the per-prompt read.
    for (id, arms) in &expected {
        assert_eq!(&catalog.label_arms(id, "production").expect("arms"), arms);
    }
    assert_eq!(
        catalog.labelled("staging").expect("reads"),
        [("d-plain".to_string(), vec![arm(3, 1)])]
    );
    let latest = catalog.labelled("latest").expect("reads");
    let ids: Vec<&str> = latest.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["B-plain", "a-unlabelled", "b-split", "d-plain"]);
    assert!(latest.iter().all(|(_, arms)| *arms == [arm(3, 1)]));
    assert_eq!(catalog.labelled("nobody").expect("reads"), []);
}

fn versions_with_sources_reads_many_versions_at_once(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_snippet("tone", "Be brief.", "tone 1")
        .expect("snippet");
    catalog
        .publish_or_create("a", &draft("A {{snippet:tone}} {{name}}"), None)
        .expect("publish");
    catalog
        .publish_snippet("tone", "Be thorough.", "tone 2")
        .expect("snippet");
    catalog
        .publish_or_create("a", &draft("A2 {{snippet:tone}}"), None)
        .expect("publish");
    catalog
        .publish_or_create("b", &draft("B {{snippet:tone}}"), None)
        .expect("publish");
    catalog
        .publish_or_create("gone", &draft("G"), None)
        .expect("publish");
    catalog.delete("gone").expect("delete");
    let wanted = [
        ("a".to_string(), 1),
        ("b".to_string(), 1),
        ("a".to_string(), 2),
        ("a".to_string(), 9),
        ("gone".to_string(), 1),
        ("nobody".to_string(), 1),
    ];
    let answers = catalog.versions_with_sources(&wanted).expect("reads");
    assert_eq!(answers.len(), wanted.len());
    // Each found answer is what `get` and `sources` give one at a time.
    for ((id, number), answer) in wanted.iter().zip(&answers).take(3) {
        let (version, sources) = answer.as_ref().expect("found");
        let alone = catalog.get(id, &Selector::Version(*number)).expect("get");
        assert_eq!(version, &alone);
        assert_eq!(sources, &catalog.sources(&alone).expect("sources"));
    }
    let tone_of = |answer: &Result<_, _>| -> u32 {
        let (version, _): &(promptpack_catalog::Version, _) = answer.as_ref().expect("found");
        version.pins[0].revision
    };
    assert_eq!(
        [
            tone_of(&answers[0]),
            tone_of(&answers[1]),
            tone_of(&answers[2])
        ],
        [1, 2, 2]
    );
    for missing in &answers[3..] {
        let error = missing.as_ref().expect_err("missing");
        assert_eq!(error.code(), ErrorCode::NotFound, "{error}");
    }
    assert_eq!(catalog.versions_with_sources(&[]).expect("reads"), []);

    // More than one batch, a key asked twice, every answer in order.
    for n in 1..=70 {
        catalog
            .publish_or_create("many", &draft(&format!("M{n} {{{{snippet:tone}}}}")), None)
            .expect("publish");
    }
    let mut wanted: Vec<(String, u32)> = (1..=70).rev().map(|n| ("many".to_string(), n)).collect();
    wanted.push(("many".to_string(), 7));
    let answers = catalog.versions_with_sources(&wanted).expect("reads");
    assert_eq!(answers.len(), 71);
    for ((_, number), answer) in wanted.iter().zip(&answers) {
        let (version, sources) = answer.as_ref().expect("found");
        assert_eq!(version.version, *number);
        assert_eq!(version.system, format!("M{number} {{{{snippet:tone}}}}"));
        assert_eq!(sources.snippets.len(), 1);
    }
}

fn a_label_splits_over_weighted_versions(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("p", None, None).expect("create");
    for text in ["one", "two", "three"] {
        catalog.publish("p", &draft(text), None).expect("publish");
    }
    catalog.set_label("p", "production", 1).expect("label");
    let arm = |version, weight| Arm { version, weight };
    let split = catalog
        .split_label("p", "production", &[arm(3, 10), arm(2, 90)])
        .expect("split");
    assert_eq!(
        (split.action.as_str(), split.from_version, split.to_version),
        ("split", Some(1), Some(2))
    );
    assert_eq!(split.arms, [arm(2, 90), arm(3, 10)]);
    assert_eq!(
        catalog.label_arms("p", "production").expect("arms"),
        [arm(2, 90), arm(3, 10)]
    );
    // `get` by the label reads its heaviest arm.
    assert_eq!(
        catalog
            .get("p", &Selector::Label("production".into()))
            .expect("get")
            .version,
        2
    );

    let before = store.footprint();
    for bad in [
        vec![],
        vec![arm(1, 0), arm(2, 1)],
        vec![arm(1, 5), arm(1, 5)],
        vec![arm(1, 600_000), arm(2, 600_000)],
        (1..=17).map(|v| arm(v, 1)).collect(),
    ] {
        assert_eq!(
            code(catalog.split_label("p", "production", &bad)),
            ErrorCode::InvalidRequest,
            "{bad:?}"
        );
    }
    assert_eq!(
        code(catalog.split_label("p", "latest", &[arm(1, 1), arm(2, 1)])),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.split_label("p", "production", &[arm(1, 1), arm(4, 1)])),
        ErrorCode::NotFound
    );
    assert_eq!(store.footprint(), before);

    // A plain move ends the split; the audit keeps both.
    catalog.set_label("p", "production", 3).expect("move");
    assert_eq!(
        catalog.label_arms("p", "production").expect("arms"),
        [arm(3, 1)]
    );
    assert_eq!(
        catalog.label_arms("p", "latest").expect("arms"),
        [arm(3, 1)]
    );
    assert_eq!(
        code(catalog.label_arms("p", "staging")),
        ErrorCode::NotFound
    );
    let history = catalog.history("p").expect("history");
    let actions: Vec<(&str, Vec<Arm>)> = history
        .audit
        .iter()
        .map(|e| (e.action.as_str(), e.arms.clone()))
        .collect();
    assert_eq!(
        actions,
        [
            ("create", vec![]),
            ("label", vec![]),
            ("split", vec![arm(2, 90), arm(3, 10)]),
            ("label", vec![])
        ]
    );
}

fn a_catalog_of_the_first_schema_is_migrated(store: &TestStore) {
    // A catalog written by a promptpack that knew only migration 1.
    let mut catalog = store.open();
    catalog.create("p", None, None).expect("create");
    catalog.publish("p", &draft("one"), None).expect("publish");
    catalog.set_label("p", "production", 1).expect("label");
    store.roll_back_schema(
        "ALTER TABLE prompt_versions DROP COLUMN messages_text; ALTER TABLE prompt_versions DROP COLUMN resolved_messages; \
         DROP TABLE console_sessions; DROP TABLE console_user_audit; DROP TABLE console_users; DROP TABLE registered_builds; \
         DROP TABLE label_arms; ALTER TABLE audit DROP COLUMN arms; \
         DELETE FROM promptpack_schema WHERE version >= 2; \
         ALTER TABLE promptpack_schema DROP COLUMN checksum;",
    );
    let error = Catalog::connect(&store.url).expect_err("older schema");
    assert_eq!(error.code(), ErrorCode::NotConfigured);
    assert!(error.to_string().contains("older"), "{error}");
    let mut migrated = store.open();
    assert_eq!(
        migrated
            .get("p", &Selector::Label("production".into()))
            .expect("kept")
            .system,
        "one"
    );
    migrated
        .split_label(
            "p",
            "production",
            &[
                Arm {
                    version: 1,
                    weight: 1,
                },
                Arm {
                    version: 1,
                    weight: 2,
                },
            ],
        )
        .expect_err("a version twice");
    assert_eq!(migrated.history("p").expect("history").audit.len(), 2);
}

/// A version declaring a choice's values is checked by what it compares:
/// dropping a value the program's enum has, or declaring one it lacks
/// without comparing with it, fits; comparing with one it lacks does not.
/// Publishing names each declared value no branch compares, also in a
/// snippet (the catalog's newest revision of it), from the compile that
/// checked the draft.
fn declared_choices_fit_by_what_they_compare_and_warn_of_unhandled_values(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("lesson", None, None).expect("create");
    let contract = Contract::from_json(
        "contract.json",
        r#"{"format": 1, "prompts": {"lesson": {"variables": [
            {"name": "role", "kind": "choice", "values": ["teacher", "student", "observer"]}]}}}"#,
    )
    .expect("contract");
    let declared = |values: &str, body: &str| {
        draft(&format!(
            "---\nvars:\n  role: {{kind: choice, values: [{values}]}}\n---\n{body}"
        ))
    };
    let fewer = declared(
        "teacher, student",
        "{{#if role == \"teacher\"}}T{{else}}S{{/if}}",
    );
    catalog
        .publish("lesson", &fewer, Some(&contract))
        .expect("a dropped value fits");
    let wider = declared(
        "teacher, student, guest",
        "{{#if role == \"teacher\"}}T{{else if role == \"student\"}}S{{/if}}",
    );
    catalog
        .publish("lesson", &wider, Some(&contract))
        .expect("a value declared, not compared, fits");
    let compares = declared("teacher, guest", "{{#if role == \"guest\"}}G{{/if}}");
    let error = catalog
        .publish("lesson", &compares, Some(&contract))
        .expect_err("guest is not in the program's enum");
    assert_eq!(error.code(), ErrorCode::ContractViolation);

    let warned = |catalog: &mut Catalog, draft: &Draft| -> Vec<String> {
        catalog
            .publish_with_warnings("lesson", draft, None)
            .expect("it publishes")
            .warnings
            .iter()
            .map(|w| {
                let at = w.location.as_ref().expect("located");
                format!("{} {}:{}:{}", w.code, at.path(), at.line(), at.column())
            })
            .collect()
    };
    assert_eq!(
        warned(&mut catalog, &wider),
        ["unhandled_choice templates/lesson/system.md:3:51"]
    );
    catalog
        .publish_snippet(
            "pace",
            "---\nvars:\n  pace: {kind: choice, values: [slow, fast]}\n---\n{{#if pace == \"slow\"}}Slowly.{{/if}}",
            "pace 1",
        )
        .expect("snippet");
    let with_snippet = draft("{{snippet:pace}}");
    assert_eq!(
        warned(&mut catalog, &with_snippet),
        ["unhandled_choice snippets/pace.md:3:39"]
    );
    // A draft that does not compile has errors, not warnings.
    let refused = catalog.publish_with_warnings("lesson", &draft("{{#if pace}}"), None);
    assert_eq!(
        refused.map(|_| ()).map_err(|e| e.code()),
        Err(ErrorCode::UnclosedBlock)
    );
}

fn console_users_are_added_found_by_token_and_removed(store: &TestStore) {
    let mut catalog = store.open().with_author("root");
    assert_eq!(catalog.users().expect("no users"), []);
    let ada_hash = token_hash("ada's token");
    let ada = catalog
        .add_user("ada", Role::Admin, &ada_hash)
        .expect("add ada");
    assert_eq!(
        (ada.name.as_str(), ada.role, ada.created_by.as_str()),
        ("ada", Role::Admin, "root")
    );
    let bob = catalog
        .add_user("bob", Role::Viewer, &token_hash("bob's token"))
        .expect("add bob");
    catalog
        .add_user("amy", Role::Editor, &token_hash("amy's token"))
        .expect("add amy");
    let names: Vec<(String, Role)> = catalog
        .users()
        .expect("users")
        .into_iter()
        .map(|user| (user.name, user.role))
        .collect();
    assert_eq!(
        names,
        [
            ("ada".to_string(), Role::Admin),
            ("amy".to_string(), Role::Editor),
            ("bob".to_string(), Role::Viewer)
        ]
    );
    assert_eq!(
        catalog.user_by_token_hash(&ada_hash).expect("by hash"),
        Some(ada.clone())
    );
    assert_eq!(
        catalog
            .user_by_token_hash(&token_hash("bob's token"))
            .expect("by hash"),
        Some(bob)
    );
    assert_eq!(
        catalog
            .user_by_token_hash(&token_hash("a guess"))
            .expect("unknown"),
        None
    );
    // The token itself is never stored: only its hash.
    assert_eq!(
        store.count("SELECT COUNT(*) FROM console_users WHERE token_hash LIKE '%token%'"),
        0
    );

    let before = store.footprint();
    let taken = catalog
        .add_user("ada", Role::Viewer, &token_hash("another"))
        .expect_err("a taken name");
    assert_eq!(taken.code(), ErrorCode::AlreadyExists);
    assert!(taken.to_string().contains("`ada`"), "{taken}");
    let same_token = catalog
        .add_user("eve", Role::Viewer, &ada_hash)
        .expect_err("a taken token");
    assert_eq!(same_token.code(), ErrorCode::AlreadyExists);
    assert!(!same_token.to_string().contains("ada"), "{same_token}");
    for bad_hash in [
        "ada's token".to_string(),
        ada_hash.to_uppercase(),
        ada_hash[..63].to_string(),
        format!("{ada_hash}0"),
        format!("{}g", &ada_hash[..63]),
    ] {
        assert_eq!(
            code(catalog.add_user("eve", Role::Viewer, &bad_hash)),
            ErrorCode::InvalidRequest,
            "{bad_hash}"
        );
        assert_eq!(
            code(catalog.user_by_token_hash(&bad_hash)),
            ErrorCode::InvalidRequest,
            "{bad_hash}"
        );
    }
    for bad_name in ["", "two words", "-dash", "a/b", &"x".repeat(201)] {
        assert_eq!(
            code(catalog.add_user(bad_name, Role::Viewer, &token_hash("eve"))),
            ErrorCode::InvalidRequest,
            "{bad_name}"
        );
    }
    assert_eq!(store.footprint(), before, "a refused add wrote");

    catalog.remove_user("ada").expect("remove ada");
    assert_eq!(catalog.user_by_token_hash(&ada_hash).expect("gone"), None);
    assert_eq!(code(catalog.remove_user("ada")), ErrorCode::NotFound);
    assert_eq!(code(catalog.remove_user("nobody")), ErrorCode::NotFound);
    // A removed name may come back, with its old token or a new one.
    let again = catalog
        .add_user("ada", Role::Editor, &ada_hash)
        .expect("ada again");
    assert_eq!(again.role, Role::Editor);
    let users: Vec<User> = catalog.users().expect("users");
    assert_eq!(users.len(), 3);

    // Each add and remove is in the user audit, with who made it, and
    // refused ones are not; the audit is append-only.
    let mut ops = store.open().with_author("ops");
    ops.remove_user("bob").expect("ops removes bob");
    let history: Vec<(String, UserAction, Role, String)> = catalog
        .user_history()
        .expect("user history")
        .into_iter()
        .map(|change| (change.user, change.action, change.role, change.author))
        .collect();
    let entry = |user: &str, action, role, author: &str| {
        (user.to_string(), action, role, author.to_string())
    };
    assert_eq!(
        history,
        [
            entry("ada", UserAction::Add, Role::Admin, "root"),
            entry("bob", UserAction::Add, Role::Viewer, "root"),
            entry("amy", UserAction::Add, Role::Editor, "root"),
            entry("ada", UserAction::Remove, Role::Admin, "root"),
            entry("ada", UserAction::Add, Role::Editor, "root"),
            entry("bob", UserAction::Remove, Role::Viewer, "ops"),
        ]
    );
    let users: Vec<User> = catalog.users().expect("users");
    assert_eq!(users.len(), 2);
    let before = store.footprint();
    for sql in [
        "UPDATE console_user_audit SET author = 'nobody'",
        "DELETE FROM console_user_audit",
    ] {
        let refused = store.raw(sql).expect_err(sql);
        assert!(refused.contains("append-only"), "{sql}: {refused}");
    }
    assert_eq!(store.footprint(), before);

    // A reader finds users, and writes none.
    let mut reader = Catalog::connect(&store.url).expect("a reader");
    assert_eq!(reader.users().expect("users"), users);
    assert_eq!(
        reader
            .user_by_token_hash(&ada_hash)
            .expect("by hash")
            .map(|user| user.role),
        Some(Role::Editor)
    );
    let before = store.footprint();
    assert!(
        reader
            .add_user("zed", Role::Admin, &token_hash("zed"))
            .is_err()
    );
    assert!(reader.remove_user("amy").is_err());
    assert_eq!(store.footprint(), before);
    assert_eq!(reader.user_history().expect("history").len(), 6);
}

/// A contract of one prompt `greeter` with the variables `vars`.
fn greeter_contract(vars: &[&str]) -> Contract {
    let variables: Vec<String> = vars
        .iter()
        .map(|name| format!(r#"{{"name": "{name}", "kind": "text"}}"#))
        .collect();
    let json = format!(
        r#"{{"format": 1, "prompts": {{"greeter": {{"variables": [{}]}}}}}}"#,
        variables.join(", ")
    );
    Contract::from_json("contract.json", &json).expect("a contract")
}

fn registration(process: &str, label: &str, contract: &Contract) -> BuildRegistration {
    BuildRegistration {
        process: process.to_string(),
        label: label.to_string(),
        contract: contract.clone(),
    }
}

// A handle that stops takes its registration away: that process and label
// only, and a second time finds none.
fn an_unregistered_build_is_gone_and_the_others_stay(store: &TestStore) {
    let mut catalog = store.open();
    let contract = greeter_contract(&["name"]);
    for (process, label) in [
        ("once#1", "production"),
        ("once#1", "staging"),
        ("svc#2", "production"),
    ] {
        catalog
            .register_build(&registration(process, label, &contract))
            .expect("registered");
    }
    let once = registration("once#1", "production", &contract);
    assert!(catalog.unregister_build(&once).expect("unregistered"));
    assert!(
        !catalog
            .unregister_build(&once)
            .expect("none the second time")
    );
    let left: Vec<(String, String)> = catalog
        .builds(DAY)
        .expect("builds")
        .into_iter()
        .map(|b| (b.process, b.label))
        .collect();
    assert_eq!(
        left,
        [
            ("once#1".to_string(), "staging".to_string()),
            ("svc#2".to_string(), "production".to_string())
        ]
    );
    let refused = catalog
        .unregister_build(&registration("two\nlines", "production", &contract))
        .expect_err("not a process name");
    assert_eq!(refused.code(), ErrorCode::InvalidRequest);
}

const HOUR_MS: i64 = 60 * 60 * 1000;
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

fn builds_register_refresh_and_expire(store: &TestStore) {
    let mut catalog = store.open();
    assert_eq!(catalog.builds(DAY).expect("none yet"), []);
    let before_tone = greeter_contract(&["name"]);
    let with_tone = greeter_contract(&["name", "tone"]);
    assert_ne!(contract_hash(&before_tone), contract_hash(&with_tone));
    assert_eq!(contract_hash(&before_tone).len(), 64);
    catalog
        .register_build(&registration("svc#2", "production", &with_tone))
        .expect("register svc#2");
    catalog
        .register_build(&registration("svc#1", "staging", &before_tone))
        .expect("register svc#1 staging");
    catalog
        .register_build(&registration("svc#1", "production", &before_tone))
        .expect("register svc#1 production");
    let builds = catalog.builds(DAY).expect("builds");
    let listed: Vec<(&str, &str, &Contract)> = builds
        .iter()
        .map(|b| (b.process.as_str(), b.label.as_str(), &b.contract))
        .collect();
    assert_eq!(
        listed,
        [
            ("svc#1", "production", &before_tone),
            ("svc#1", "staging", &before_tone),
            ("svc#2", "production", &with_tone),
        ]
    );
    for build in &builds {
        assert_eq!(build.contract_hash, contract_hash(&build.contract));
        assert!(build.first_seen <= build.last_seen, "{build:?}");
    }

    // A refresh keeps first_seen and moves last_seen; a new contract
    // under the same process and label is seen first now.
    store
        .raw(&format!(
            "UPDATE registered_builds SET first_seen = first_seen - {}, \
             last_seen = last_seen - {} WHERE process = 'svc#1'",
            10 * HOUR_MS,
            2 * HOUR_MS
        ))
        .expect("backdated");
    let find = |catalog: &mut Catalog, process: &str, label: &str| {
        catalog
            .builds(DAY)
            .expect("builds")
            .into_iter()
            .find(|b| b.process == process && b.label == label)
            .unwrap_or_else(|| panic!("{process} {label} is registered"))
    };
    let old = find(&mut catalog, "svc#1", "production");
    // Seen within an hour: only svc#2 (svc#1 was last seen 2 hours ago).
    let recent: Vec<String> = catalog
        .builds(Duration::from_secs(60 * 60))
        .expect("recent")
        .into_iter()
        .map(|b| b.process)
        .collect();
    assert_eq!(recent, ["svc#2"]);
    catalog
        .register_build(&registration("svc#1", "production", &before_tone))
        .expect("refresh");
    let refreshed = find(&mut catalog, "svc#1", "production");
    assert_eq!(refreshed.first_seen, old.first_seen);
    assert!(refreshed.last_seen.0 >= old.last_seen.0 + 2 * HOUR_MS - 1000);
    catalog
        .register_build(&registration("svc#1", "production", &with_tone))
        .expect("a new contract");
    let renewed = find(&mut catalog, "svc#1", "production");
    assert_eq!(renewed.contract, with_tone);
    assert_eq!(renewed.contract_hash, contract_hash(&with_tone));
    assert!(renewed.first_seen.0 >= old.first_seen.0 + 10 * HOUR_MS - 1000);
    assert_eq!(
        store.count("SELECT COUNT(*) FROM registered_builds"),
        3,
        "a refresh is an update, not another row"
    );

    // Not seen for a day: the next registration deletes it.
    store
        .raw(&format!(
            "UPDATE registered_builds SET last_seen = last_seen - {} WHERE label = 'staging'",
            25 * HOUR_MS
        ))
        .expect("a day old");
    assert_eq!(store.count("SELECT COUNT(*) FROM registered_builds"), 3);
    catalog
        .register_build(&registration("svc#2", "production", &with_tone))
        .expect("refresh svc#2");
    let left: Vec<(String, String)> = catalog
        .builds(Duration::from_secs(365 * 24 * 60 * 60))
        .expect("builds")
        .into_iter()
        .map(|b| (b.process, b.label))
        .collect();
    assert_eq!(
        left,
        [
            ("svc#1".to_string(), "production".to_string()),
            ("svc#2".to_string(), "production".to_string())
        ]
    );

    // Refused: bad names, and any write of a reader.
    let before = store.footprint();
    let long = "p".repeat(201);
    for (process, label) in [
        ("", "production"),
        ("svc\n1", "production"),
        (long.as_str(), "production"),
        ("svc#1", "bad label"),
        ("svc#1", ""),
    ] {
        assert_eq!(
            code(catalog.register_build(&registration(process, label, &before_tone))),
            ErrorCode::InvalidRequest,
            "{process:?} {label:?}"
        );
    }
    let mut reader = Catalog::connect(&store.url).expect("a reader");
    assert_eq!(reader.builds(DAY).expect("a reader reads").len(), 2);
    assert_eq!(
        code(reader.register_build(&registration("svc#3", "production", &before_tone))),
        ErrorCode::InvalidRequest
    );
    assert_eq!(store.footprint(), before);
}

fn a_registered_contract_is_checked_when_read(store: &TestStore) {
    let mut catalog = store.open();
    let contract = greeter_contract(&["name"]);
    catalog
        .register_build(&registration("svc#1", "production", &contract))
        .expect("register");
    // A contract of a format this promptpack does not read (a newer
    // promptpack's registration) is left out, not an error.
    let newer = r#"{"format":99,"prompts":{}}"#;
    store
        .raw(&format!(
            "INSERT INTO registered_builds VALUES ('svc#9', 'production', '{}', '{newer}', 0, {})",
            token_hash(newer),
            i64::MAX / 2
        ))
        .expect("a newer registration");
    let processes: Vec<String> = catalog
        .builds(DAY)
        .expect("builds")
        .into_iter()
        .map(|b| b.process)
        .collect();
    assert_eq!(processes, ["svc#1"]);
    // A contract that is not what its hash names was edited by hand.
    store
        .raw("UPDATE registered_builds SET contract = REPLACE(contract, 'name', 'nom') WHERE process = 'svc#1'")
        .expect("edited by hand");
    let damaged = catalog.builds(DAY).expect_err("damaged");
    assert_eq!(damaged.code(), ErrorCode::Damaged);
    assert!(damaged.to_string().contains("svc#1"), "{damaged}");
}

fn ids(page: &Page) -> Vec<&str> {
    page.prompts.iter().map(|l| l.prompt.id.as_str()).collect()
}

fn search<'a>(text: Option<&'a str>, limit: u32, cursor: Option<&'a str>) -> ListQuery<'a> {
    ListQuery {
        limit,
        cursor,
        text,
    }
}

fn search_finds_text_in_ids_names_and_descriptions(store: &TestStore) {
    let mut catalog = store.open();
    for (id, name, description) in [
        ("alpha", "Alpha Helper", "Writes 100% of the docs"),
        ("beta_one", "first", "plain"),
        ("beta-two", "BETA TWO", "plain"),
        ("gamma", "gamma", "under_score here"),
        ("delta", "Alpha gone", "deleted"),
        ("Zeta", "zeta", "a\\b"),
    ] {
        catalog
            .create(id, Some(name), Some(description))
            .expect("create");
    }
    catalog.delete("delta").expect("delete");
    let mut found = |text: &str| -> Vec<String> {
        let page = catalog
            .search(&search(Some(text), 100, None))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(page.next_cursor, None);
        ids(&page).into_iter().map(str::to_string).collect()
    };
    // Any case, in the id, the name or the description; never deleted.
    assert_eq!(found("ALPHA"), ["alpha"]);
    assert_eq!(found("helper"), ["alpha"]);
    assert_eq!(found("docs"), ["alpha"]);
    assert_eq!(found("beta"), ["beta-two", "beta_one"]);
    assert_eq!(found("zeta"), ["Zeta"]);
    // `%`, `_` and `\` are themselves, not wildcards or escapes.
    assert_eq!(found("100%"), ["alpha"]);
    assert_eq!(found("%"), ["alpha"]);
    assert_eq!(found("_"), ["beta_one", "gamma"]);
    // As wildcards these would find the betas and alpha.
    assert_eq!(found("b_ta"), Vec::<String>::new());
    assert_eq!(found("1%s"), Vec::<String>::new());
    assert_eq!(found("\\"), ["Zeta"]);
    assert_eq!(found("a\\b"), ["Zeta"]);
    assert_eq!(found("nothing like it"), Vec::<String>::new());
    assert_eq!(
        found(""),
        ["Zeta", "alpha", "beta-two", "beta_one", "gamma"]
    );

    // Pages of one search, by id.
    let first = catalog
        .search(&search(Some("BeTa"), 1, None))
        .expect("page 1");
    assert_eq!(ids(&first), ["beta-two"]);
    assert_eq!(first.next_cursor.as_deref(), Some("beta-two"));
    let second = catalog
        .search(&search(Some("BeTa"), 1, first.next_cursor.as_deref()))
        .expect("page 2");
    assert_eq!(ids(&second), ["beta_one"]);
    assert_eq!(second.next_cursor, None);

    // `list` is a search without text.
    let listed = catalog.list(100, None).expect("list");
    assert_eq!(
        listed,
        catalog.search(&search(None, 100, None)).expect("search")
    );
    for limit in [0, promptpack_catalog::MAX_PAGE + 1] {
        assert_eq!(
            code(catalog.search(&search(Some("a"), limit, None))),
            ErrorCode::InvalidRequest
        );
    }
    assert_eq!(
        code(catalog.search(&search(Some("a\0b"), 10, None))),
        ErrorCode::InvalidRequest
    );
    let mut reader = Catalog::connect(&store.url).expect("a reader");
    assert_eq!(
        ids(&reader
            .search(&search(Some("GAMMA"), 10, None))
            .expect("a reader searches")),
        ["gamma"]
    );
}

fn listed_prompts_carry_their_labels_and_arms(store: &TestStore) {
    let mut catalog = store.open();
    for text in ["one", "two", "three"] {
        catalog
            .publish_or_create("multi", &draft(text), None)
            .expect("publish");
    }
    catalog
        .publish_or_create("plain", &draft("plain"), None)
        .expect("publish");
    catalog.create("empty", None, None).expect("create");
    catalog.set_label("multi", "production", 2).expect("label");
    catalog
        .split_label(
            "multi",
            "canary",
            &[
                Arm {
                    version: 3,
                    weight: 10,
                },
                Arm {
                    version: 1,
                    weight: 90,
                },
            ],
        )
        .expect("split");
    catalog.set_label("plain", "staging", 1).expect("label");
    let page = catalog.list(10, None).expect("list");
    type Labels = [(String, Vec<Arm>)];
    let labels: Vec<(&str, &Labels)> = page
        .prompts
        .iter()
        .map(|l| (l.prompt.id.as_str(), l.labels.as_slice()))
        .collect();
    let arm = |version, weight| Arm { version, weight };
    assert_eq!(
        labels,
        [
            ("empty", &[][..]),
            (
                "multi",
                &[
                    ("canary".to_string(), vec![arm(1, 90), arm(3, 10)]),
                    ("production".to_string(), vec![arm(2, 1)]),
                ][..]
            ),
            ("plain", &[("staging".to_string(), vec![arm(1, 1)])][..]),
        ]
    );
    // A label's arms are those `label_arms` reads.
    assert_eq!(
        catalog.label_arms("multi", "canary").expect("arms"),
        [arm(1, 90), arm(3, 10)]
    );
    // Ending the split leaves one arm; a searched page has the same labels.
    catalog.set_label("multi", "canary", 3).expect("unsplit");
    let page = catalog
        .search(&search(Some("MULTI"), 10, None))
        .expect("search");
    assert_eq!(ids(&page), ["multi"]);
    assert_eq!(
        page.prompts[0].labels,
        [
            ("canary".to_string(), vec![arm(3, 1)]),
            ("production".to_string(), vec![arm(2, 1)]),
        ]
    );
    assert_eq!(page.prompts[0].current.as_ref().map(|v| v.version), Some(3));
}

fn snippets_lists_the_newest_revision_of_each(store: &TestStore) {
    let mut catalog = store.open();
    assert_eq!(catalog.snippets().expect("none"), []);
    catalog
        .publish_snippet("tone", "Be brief.", "tone 1")
        .expect("tone 1");
    let tone = catalog
        .publish_snippet("tone", "Be thorough.", "tone 2")
        .expect("tone 2");
    let rules = catalog
        .publish_snippet("rules", "Rules: {{snippet:tone}}", "rules 1")
        .expect("rules");
    let upper = catalog
        .publish_snippet("Upper", "Shout.", "upper 1")
        .expect("upper");
    assert_eq!(catalog.snippets().expect("snippets"), [upper, rules, tone]);
    store
        .raw("UPDATE snippets SET latest_revision = 1 WHERE name = 'tone'")
        .expect("pointed back by hand");
    let newest: Vec<(String, u32)> = catalog
        .snippets()
        .expect("snippets")
        .into_iter()
        .map(|s| (s.name, s.revision))
        .collect();
    assert_eq!(
        newest,
        [
            ("Upper".to_string(), 1),
            ("rules".to_string(), 1),
            ("tone".to_string(), 1)
        ]
    );
}

fn labels_that_differ_only_by_case_collide(store: &TestStore) {
    let mut catalog = store.open();
    for id in ["p", "q"] {
        catalog.create(id, None, None).expect("create");
        for text in ["one", "two"] {
            catalog.publish(id, &draft(text), None).expect("publish");
        }
    }
    catalog.set_label("p", "production", 1).expect("label");
    let arm = |version, weight| Arm { version, weight };
    let before = store.footprint();
    // Beside `production` on its prompt, and on another prompt, where a
    // service following `production` would never see it.
    for (id, label) in [
        ("p", "Production"),
        ("p", "PRODUCTION"),
        ("q", "Production"),
        ("q", "pRODUCTION"),
    ] {
        for refused in [
            catalog.set_label(id, label, 2).map(|_| ()),
            catalog
                .split_label(id, label, &[arm(1, 50), arm(2, 50)])
                .map(|_| ()),
        ] {
            let error = refused.expect_err(label);
            assert_eq!(error.code(), ErrorCode::AlreadyExists, "{id} {label}");
            assert!(
                error.to_string().contains("`production`"),
                "{id} {label}: {error}"
            );
        }
    }
    assert_eq!(store.footprint(), before);
    // The label itself moves and splits on every prompt, and a name that
    // is more than a change of case is another label.
    catalog.set_label("p", "production", 2).expect("move");
    catalog.set_label("q", "production", 1).expect("label q");
    catalog
        .split_label("q", "production", &[arm(1, 50), arm(2, 50)])
        .expect("split");
    catalog.set_label("q", "production-eu", 2).expect("another");
    assert_eq!(
        code(catalog.set_label("p", "Production-EU", 1)),
        ErrorCode::AlreadyExists
    );

    // A catalog from before the check, holding two spellings of a label:
    // each still moves (on its prompt and onto others), and no third
    // spelling is added.
    catalog.set_label("p", "staging", 1).expect("staging");
    store
        .raw("INSERT INTO labels (prompt_id, label, version) VALUES ('q', 'Staging', 1)")
        .expect("a look-alike written before the check");
    catalog.set_label("p", "staging", 2).expect("staging moves");
    catalog.set_label("q", "Staging", 2).expect("Staging moves");
    catalog
        .set_label("q", "staging", 2)
        .expect("staging onto q");
    assert_eq!(
        code(catalog.set_label("p", "STAGING", 1)),
        ErrorCode::AlreadyExists
    );
}

fn console_sessions_are_hashed_capped_expired_and_end_with_their_user(store: &TestStore) {
    let mut catalog = store.open().with_author("root");
    let (ada_token, bob_token) = (token_hash("ada's token"), token_hash("bob's token"));
    catalog
        .add_user("ada", Role::Admin, &ada_token)
        .expect("ada");
    catalog
        .add_user("bob", Role::Viewer, &bob_token)
        .expect("bob");
    let hour = Duration::from_secs(60 * 60);
    let id = |name: &str| token_hash(&format!("session {name}"));
    let rows = |user: &str| {
        store.count(&format!(
            "SELECT COUNT(*) FROM console_sessions WHERE user_name = '{user}'"
        ))
    };
    // A token that is no user's opens nothing.
    let nobody = catalog.open_session(&token_hash("nobody"), &id("x"), hour, 3);
    assert_eq!(nobody.expect("no user"), None);
    assert_eq!(store.count("SELECT COUNT(*) FROM console_sessions"), 0);

    // A session opened through one connection is found through another
    // (another console of the catalog), by the id's hash; only the hash
    // is kept.
    let ada = catalog
        .open_session(&ada_token, &id("a1"), hour, 3)
        .expect("sign in")
        .expect("ada");
    assert_eq!(ada.name, "ada");
    let mut other = store.open();
    let user_of = |catalog: &mut Catalog, name: &str| {
        catalog
            .session_user(&id(name))
            .expect("lookup")
            .map(|user| user.name)
    };
    assert_eq!(user_of(&mut other, "a1").as_deref(), Some("ada"));
    assert_eq!(user_of(&mut other, "x"), None);
    assert_eq!(
        store.count(&format!(
            "SELECT COUNT(*) FROM console_sessions WHERE id_hash = '{}'",
            id("a1")
        )),
        1
    );
    // Refused: an id made twice, a value that is not a hash, a cap of 0.
    let before = store.footprint();
    assert_eq!(
        code(catalog.open_session(&ada_token, &id("a1"), hour, 3)),
        ErrorCode::AlreadyExists
    );
    assert_eq!(
        code(catalog.open_session(&ada_token, "a2", hour, 3)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.open_session(&ada_token, &id("a2"), hour, 0)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(code(other.session_user("a1")), ErrorCode::InvalidRequest);
    assert_eq!(store.footprint(), before);

    // The cap: past 3 sessions of a user, the oldest end; another user's
    // sessions are not counted against it.
    for name in ["b1", "b2"] {
        catalog
            .open_session(&bob_token, &id(name), hour, 3)
            .expect("bob signs in");
    }
    for name in ["a2", "a3", "a4", "a5", "a6"] {
        catalog
            .open_session(&ada_token, &id(name), hour, 3)
            .expect("ada signs in");
    }
    let live: Vec<Option<String>> = ["a1", "a2", "a3", "a4", "a5", "a6", "b1", "b2"]
        .iter()
        .map(|name| user_of(&mut other, name))
        .collect();
    let (ada, bob) = (Some("ada".to_string()), Some("bob".to_string()));
    assert_eq!(
        live,
        [
            None,
            None,
            None,
            ada.clone(),
            ada.clone(),
            ada.clone(),
            bob.clone(),
            bob.clone()
        ]
    );
    assert_eq!((rows("ada"), rows("bob")), (3, 2));
    let sessions = catalog.sessions("ada").expect("sessions");
    assert_eq!(sessions.len(), 3);
    assert!(sessions.iter().all(|s| s.user == "ada"));
    assert!(
        sessions
            .iter()
            .all(|s| s.expires_at.0 - s.created_at.0 == 3_600_000)
    );

    // Signing out ends that session only.
    assert!(catalog.close_session(&id("a4")).expect("sign out"));
    assert!(
        !catalog
            .close_session(&id("a4"))
            .expect("signed out already")
    );
    assert_eq!(user_of(&mut other, "a4"), None);
    assert_eq!(user_of(&mut other, "a5"), ada);
    assert_eq!(rows("ada"), 2);

    // An expired session signs no one in, and the next sign-in (of anyone)
    // deletes it.
    catalog
        .open_session(&bob_token, &id("b3"), Duration::ZERO, 3)
        .expect("a session that ends at once");
    assert_eq!(user_of(&mut other, "b3"), None);
    assert_eq!(catalog.sessions("bob").expect("sessions").len(), 2);
    assert_eq!(rows("bob"), 3);
    catalog
        .open_session(&ada_token, &id("a7"), hour, 3)
        .expect("ada signs in");
    assert_eq!((rows("ada"), rows("bob")), (3, 2));

    // Signing out everywhere ends every session of that user, no other.
    assert_eq!(catalog.close_sessions("ada").expect("everywhere"), 3);
    assert_eq!(user_of(&mut other, "a7"), None);
    assert_eq!((rows("ada"), rows("bob")), (0, 2));

    // Removing a user ends their sessions in the same transaction: added
    // again with the same token, the old sessions stay ended.
    catalog.remove_user("bob").expect("remove bob");
    assert_eq!(rows("bob"), 0);
    catalog
        .add_user("bob", Role::Viewer, &bob_token)
        .expect("bob again");
    assert_eq!(user_of(&mut other, "b1"), None);
    assert_eq!(catalog.sessions("bob").expect("sessions"), []);

    // A reader looks sessions up and opens or ends none.
    catalog
        .open_session(&bob_token, &id("b4"), hour, 3)
        .expect("bob signs in");
    let mut reader = Catalog::connect(&store.url).expect("a reader");
    assert_eq!(user_of(&mut reader, "b4"), bob);
    let before = store.footprint();
    assert!(reader.open_session(&bob_token, &id("b5"), hour, 3).is_err());
    assert!(reader.close_session(&id("b4")).is_err());
    assert!(reader.close_sessions("bob").is_err());
    assert_eq!(store.footprint(), before);
}

/// A conversation's `messages.md`: a history declared and placed, few-shot
/// turns from a snippet of whole turns under an `{{#if}}`, the new
/// question.
const CONVERSATION: &str = "---\nvars:\n  history: { kind: messages, description: The chat so far }\n---\n{{#if examples}}\n{{snippet:shot}}\n{{/if}}\n{{history}}\n{{#user}}\n{{question}}\n{{/user}}\n";

/// The few-shot turns: a question, the assistant's call and the tool's answer.
const SHOT: &str = "{{#user}}\nWhat is 2 + 2?\n{{/user}}\n{{#assistant}}\nLet me compute it.\n{{/assistant}}\n{{#tool calculator}}\n4\n{{/tool}}";

fn a_conversation_is_published_read_judged_rendered_and_diffed(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_snippet("shot", SHOT, "few-shot turns")
        .expect("a snippet of whole turns publishes");
    catalog.create("chat", None, None).expect("create");
    let one = Draft {
        system: "You are {{name}}.".into(),
        messages: Some(CONVERSATION.into()),
        message: "v1".into(),
        ..Draft::default()
    };
    let published = catalog.publish("chat", &one, None).expect("v1");

    // Read back: the file verbatim, its resolved conversation canonical.
    let v1 = catalog.get("chat", &Selector::Version(1)).expect("v1");
    assert_eq!(v1, published);
    assert_eq!(v1.messages.as_deref(), Some(CONVERSATION));
    assert_eq!(v1.user, None);
    assert_eq!(v1.resolved_user, None);
    assert_eq!(
        v1.resolved_messages.as_deref(),
        Some(
            "---\nvars:\n  \"history\": { kind: messages }\n---\n{{#if examples}}\n{{#user}}\nWhat is 2 + 2?\n{{/user}}\n{{#assistant}}\nLet me compute it.\n{{/assistant}}\n{{#tool calculator}}\n4\n{{/tool}}\n{{/if}}\n{{history}}\n{{#user}}\n{{question}}\n{{/user}}"
        )
    );
    assert_eq!(
        v1.pins
            .iter()
            .map(|p| p.snippet.as_str())
            .collect::<Vec<_>>(),
        ["shot"]
    );

    // Judged as a live handle judges it: its hash holds.
    let verdict = catalog.judge("chat", 1, None).expect("judged");
    assert!(verdict.refusal().is_none(), "{:?}", verdict.refusal());
    assert!(catalog.verify().expect("verify").is_ok());

    // Rendered from its files and pins, and from its resolved text alone:
    // the same messages, each under its role.
    let vars = serde_json::json!({
        "name": "Ada",
        "examples": true,
        "history": [
            {"role": "user", "content": "Hi {{name}}"},
            {"role": "assistant", "content": "Hello."},
        ],
        "question": "And 3 + 3?",
    });
    let expected: Vec<(String, String, Option<String>)> = [
        ("system", "You are Ada.", None),
        ("user", "What is 2 + 2?", None),
        ("assistant", "Let me compute it.", None),
        ("tool", "4", Some("calculator")),
        ("user", "Hi {{name}}", None),
        ("assistant", "Hello.", None),
        ("user", "And 3 + 3?", None),
    ]
    .into_iter()
    .map(|(role, content, name)| {
        (
            role.to_string(),
            content.to_string(),
            name.map(String::from),
        )
    })
    .collect();
    let from_files = conversation_library(catalog.sources(&v1).expect("sources"));
    let from_resolved = conversation_library(v1.resolved_sources());
    for (how, library) in [("files", &from_files), ("resolved text", &from_resolved)] {
        let prompt = library.build_prompt("chat", &vars).expect("renders");
        let sent: Vec<(String, String, Option<String>)> = prompt
            .messages()
            .map(|m| {
                (
                    m.role.to_string(),
                    m.content.to_string(),
                    m.name.map(String::from),
                )
            })
            .collect();
        assert_eq!(sent, expected, "rendered from its {how}");
    }

    // A second version: one few-shot answer dropped, the question reworded.
    let two = Draft {
        messages: Some(
            CONVERSATION
                .replace("{{snippet:shot}}\n", "")
                .replace("{{question}}", "Question: {{question}}"),
        ),
        message: "v2".into(),
        ..one.clone()
    };
    catalog.publish("chat", &two, None).expect("v2");
    let diff = catalog
        .diff("chat", &Selector::Version(1), &Selector::Version(2))
        .expect("diff");
    assert!(
        !diff.contains("system.md") && !diff.contains("user.md"),
        "only messages.md changed: {diff}"
    );
    assert!(
        diff.starts_with("--- a/chat@1/messages.md\n+++ b/chat@2/messages.md\n"),
        "{diff}"
    );
    for line in [
        "-{{#tool calculator}}\n",
        "-{{question}}\n",
        "+Question: {{question}}\n",
    ] {
        assert!(diff.contains(line), "the diff holds {line:?}: {diff}");
    }

    // The binary's contract of v1 (a conversation with its history): a
    // version that drops the history, or a prompt of two files, is refused
    // by the judge live handles use, and by a publish checked against it.
    let contract = Contract::from_json(
        "contract.json",
        r#"{"format": 1, "prompts": {"chat": {"shape": "conversation", "variables": [
            {"name": "name", "kind": "text"}, {"name": "examples", "kind": "flag"},
            {"name": "history", "kind": "messages"}, {"name": "question", "kind": "text"}]}}}"#,
    )
    .expect("a contract");
    let compiled = &contract.prompts["chat"];
    for number in [1, 2] {
        let verdict = catalog
            .judge("chat", number, Some(compiled))
            .expect("judged");
        assert!(
            verdict.refusal().is_none(),
            "v{number}: {:?}",
            verdict.refusal()
        );
    }
    let dropped = Draft {
        messages: Some(CONVERSATION.replace("{{history}}\n", "")),
        message: "no history".into(),
        ..one.clone()
    };
    let files = Draft {
        messages: None,
        user: Some("{{question}}".into()),
        message: "two files".into(),
        ..one.clone()
    };
    for (draft, says) in [
        (&dropped, "no longer places history `history`"),
        (
            &files,
            "is two files (`system.md`, `user.md`), but the program's vars struct is of a conversation",
        ),
    ] {
        let refused = catalog
            .publish("chat", draft, Some(&contract))
            .expect_err("the contract refuses it");
        assert_eq!(refused.code(), ErrorCode::ContractViolation, "{refused}");
        assert!(refused.to_string().contains(says), "{refused}");
        let number = catalog
            .publish("chat", draft, None)
            .expect("published")
            .version;
        let verdict = catalog
            .judge("chat", number, Some(compiled))
            .expect("judged");
        let refusal = verdict.refusal().unwrap_or_default();
        assert!(
            refusal.starts_with("contract_violation: ") && refusal.contains(says),
            "v{number}: {refusal}"
        );
    }
    catalog.publish("chat", &two, None).expect("v5: v2 again");

    // One prompt, one shape: user.md beside messages.md is refused and
    // writes nothing.
    let both = Draft {
        user: Some("ask {{question}}".into()),
        ..one.clone()
    };
    assert_eq!(
        code(catalog.publish("chat", &both, None)),
        ErrorCode::InvalidMessage
    );
    assert_eq!(
        catalog
            .get("chat", &Selector::Latest)
            .expect("latest")
            .version,
        5
    );

    // Export gives the files back; a tree holding them imports as they are.
    let out = tempfile::tempdir().expect("out");
    let files = catalog
        .export("chat", &Selector::Version(1), out.path())
        .expect("export");
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix(out.path()).ok())
        .map(|f| f.display().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "templates/chat/system.md",
            "templates/chat/messages.md",
            "snippets/shot.md"
        ]
    );
    let read = |path: &str| std::fs::read_to_string(out.path().join(path)).expect("exported");
    assert_eq!(read("templates/chat/messages.md"), CONVERSATION);
    std::fs::rename(
        out.path().join("templates/chat"),
        out.path().join("templates/talk"),
    )
    .expect("renamed");
    let report = catalog.import(out.path(), "import", None).expect("import");
    let talk = report
        .prompts
        .iter()
        .find(|p| p.name == "talk")
        .expect("imported");
    assert!(talk.written);
    let talk = catalog.get("talk", &Selector::Latest).expect("talk");
    assert_eq!(talk.messages.as_deref(), Some(CONVERSATION));
    assert_eq!(talk.content_hash, v1.content_hash);

    // The schema itself holds a version to one shape, whoever writes it:
    // the row with messages.md alone is taken (and rolled back), the same
    // row with user.md too, or with both resolved texts, is refused.
    let insert = |user: &str, messages: &str, resolved_user: &str, resolved_messages: &str| {
        format!(
            "BEGIN; INSERT INTO prompt_versions (prompt_id, version, system_text, user_text, \
             messages_text, front_matter, delimiter_open, delimiter_close, standalone_tags, \
             resolved_system, resolved_user, resolved_messages, content_hash, author, message, \
             created_at) VALUES ('chat', 99, 's', {user}, {messages}, '{{}}', '{{{{', '}}}}', 0, \
             's', {resolved_user}, {resolved_messages}, 'h', 'a', 'm', 0); ROLLBACK;"
        )
    };
    store
        .raw(&insert("NULL", "'m'", "NULL", "'m'"))
        .expect("a conversation's row");
    for sql in [
        insert("'u'", "'m'", "NULL", "'m'"),
        insert("NULL", "'m'", "'u'", "'m'"),
    ] {
        let refused = store.raw(&sql).expect_err(&sql);
        assert!(
            refused.to_lowercase().contains("check constraint"),
            "{sql}: {refused}"
        );
    }
}

fn conversation_library(sources: promptpack::machinery::core::Sources) -> promptpack::Library {
    promptpack::Library::from_sources(
        sources.templates,
        sources.snippets,
        &promptpack::Config::default(),
    )
    .unwrap_or_else(|e| panic!("a published conversation does not compile:\n{e}"))
}

/// The contract of a program whose `triage` reads a response of a category
/// (`bug` or `billing`) and a summary, and calls to `lookup(order)`.
const TRIAGE_CONTRACT: &str = r#"{"format": 1, "prompts": {"triage": {"variables": [],
    "response": {"type": "object", "properties": {
        "category": {"type": "string", "enum": ["bug", "billing"]},
        "summary": {"type": "string"}},
        "required": ["category", "summary"], "additionalProperties": false},
    "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"order": {"type": "string"}},
        "required": ["order"], "additionalProperties": false}, "strict": true}}]}}}"#;

/// A `triage` version declaring `response` (under the key) and `tools`.
fn triage(response: &str, tools: &str) -> Draft {
    draft(&format!(
        "---\nresponse:\n{response}tools:\n{tools}---\nTriage the ticket."
    ))
}

fn a_version_is_judged_by_whether_the_program_reads_its_answers_and_calls(store: &TestStore) {
    let mut catalog = store.open();
    catalog.create("triage", None, None).expect("create");
    let contract = Contract::from_json("contract.json", TRIAGE_CONTRACT).expect("contract");
    let response = "  category: [bug, billing]\n  summary: string\n";
    let tools =
        "  lookup:\n    description: Finds an order\n    parameters:\n      order: string\n";
    catalog
        .publish("triage", &triage(response, tools), Some(&contract))
        .expect("the program's own shape");
    let added_optional = format!("{response}  order?: string, the order named\n");
    let v2 = catalog
        .publish("triage", &triage(&added_optional, tools), Some(&contract))
        .expect("an optional field added passes");
    // The version keeps what it declares: read back, it sends the new field.
    let library = conversation_library(catalog.sources(&v2).expect("sources"));
    let format = library.response_format("triage").expect("a response");
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        serde_json::json!(["category", "summary", "order"])
    );
    assert_eq!(
        library.tools("triage").expect("tools")[0]["function"]["name"],
        "lookup"
    );

    let before = store.footprint();
    let refused = [
        (
            format!("{response}  mood: string\n"),
            tools.to_string(),
            "$.mood",
            5,
        ),
        (
            response.replace("[bug, billing]", "[bug, billing, other]"),
            tools.to_string(),
            "$.category",
            3,
        ),
        (
            "  category: [bug, billing]\n".to_string(),
            tools.to_string(),
            "$.summary",
            2,
        ),
        (
            response.to_string(),
            tools.replace("order: string", "order: integer"),
            "lookup",
            9,
        ),
        (
            response.to_string(),
            format!("{tools}  refund: Refunds an order\n"),
            "refund",
            10,
        ),
    ];
    for (response, tools, named, line) in refused {
        let error = catalog
            .publish("triage", &triage(&response, &tools), Some(&contract))
            .expect_err("the program could not read it");
        let first = &error.diagnostics()[0];
        assert_eq!(first.code, ErrorCode::ContractViolation, "{first}");
        assert!(first.message.contains(named), "{named}: {}", first.message);
        let at = first.location.as_ref().expect("located");
        assert_eq!(
            (at.path(), at.line()),
            ("templates/triage/system.md", line),
            "{first}"
        );
    }
    assert_eq!(
        store.footprint(),
        before,
        "a refused version writes nothing"
    );

    // Judged when read, as a live handle judges what a label points at.
    let compiled = contract.prompts.get("triage");
    let verdict = catalog.judge("triage", 2, compiled).expect("judged");
    assert!(verdict.refusal().is_none(), "{:?}", verdict.refusal());
    catalog
        .publish(
            "triage",
            &triage(&format!("{response}  mood: string\n"), tools),
            None,
        )
        .expect("without a contract, anything that compiles publishes");
    let verdict = catalog.judge("triage", 3, compiled).expect("judged");
    let refusal = verdict
        .refusal()
        .expect("the program could not read v3's answers");
    assert!(
        refusal.contains("contract_violation") && refusal.contains("mood"),
        "{refusal}"
    );
}
