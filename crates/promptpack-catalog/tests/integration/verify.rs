//! A catalog changed outside promptpack, on both stores: a dropped guard
//! and a rewritten version are refused by every read of it and by `init`,
//! and listed by `verify`; TRUNCATE is refused; an applied migration whose
//! recorded checksum was edited is refused at connect; a catalog from
//! before checksums gets them; a clean catalog verifies.

use crate::support;

use promptpack_catalog::{
    Access, Catalog, Draft, ErrorCode, FindingCode, Selector, Subject, Syntax, Timeouts,
    VerifyReport,
};
use support::{Kind, SCHEMA_VERSION, TestStore, code, draft};

every_store!(
    a_rewritten_version_is_refused_by_reads_and_listed_by_verify,
    a_dropped_guard_is_refused_by_init_and_open,
    rewritten_files_and_snippets_and_lost_revisions_are_listed,
    disabled_or_changed_guards_are_listed,
    truncation_is_refused,
    an_edited_migration_checksum_is_refused_at_connect,
    a_catalog_from_before_checksums_gets_them,
    a_clean_catalog_verifies,
);

/// A catalog with snippet `tone` (two revisions) and prompt `greeter` at
/// versions 1 (tone@1) and 2 (tone@2, a user part).
fn greeter(store: &TestStore) -> Catalog {
    let mut catalog = support::with_tone(store, "greeter", "Hello {{name}}. {{snippet:tone}}");
    catalog
        .publish_snippet("tone", "Be kind.", "second")
        .expect("tone 2");
    let second = Draft {
        user: Some("Hi, I am {{name}}.".into()),
        ..draft("Hello {{name}}. {{snippet:tone}}")
    };
    catalog.publish("greeter", &second, None).expect("v2");
    catalog
        .set_label("greeter", "production", 1)
        .expect("label");
    catalog
}

/// SQL that drops the guard refusing UPDATE on `table`.
fn drop_update_guard(store: &TestStore, table: &str) -> String {
    match store.kind {
        Kind::Sqlite => format!("DROP TRIGGER {table}_append_only_update;"),
        Kind::Postgres => format!("DROP TRIGGER {table}_append_only ON {table};"),
    }
}

/// The name of the guard `drop_update_guard` drops.
fn update_guard(store: &TestStore, table: &str) -> String {
    match store.kind {
        Kind::Sqlite => format!("{table}_append_only_update"),
        Kind::Postgres => format!("{table}_append_only"),
    }
}

fn verify(store: &TestStore) -> VerifyReport {
    Catalog::connect_with(&store.url, Access::Verify, &Timeouts::DEFAULT)
        .expect("connects to verify")
        .verify()
        .expect("verifies")
}

/// The (code, subject) of every finding.
fn found(report: &VerifyReport) -> Vec<(FindingCode, Subject)> {
    report
        .findings
        .iter()
        .map(|f| (f.code, f.subject.clone()))
        .collect()
}

fn version(prompt: &str, version: u32) -> Subject {
    Subject::Version {
        prompt: prompt.into(),
        version,
    }
}

fn guard(name: &str, table: &str) -> Subject {
    Subject::Guard {
        name: name.into(),
        table: table.into(),
    }
}

fn damaged<T: std::fmt::Debug>(result: Result<T, promptpack_catalog::Error>, naming: &str) {
    match result {
        Ok(value) => panic!("expected `damaged` naming {naming}, got {value:?}"),
        Err(error) => {
            assert_eq!(error.code(), ErrorCode::Damaged, "{error}");
            let message = error.to_string();
            assert!(message.contains(naming), "{message} names {naming}");
            assert!(message.contains("catalog verify"), "{message}");
        }
    }
}

fn a_rewritten_version_is_refused_by_reads_and_listed_by_verify(store: &TestStore) {
    let mut catalog = greeter(store);
    store
        .raw(&format!(
            "{} UPDATE prompt_versions SET resolved_system = 'Obey me.' \
             WHERE prompt_id = 'greeter' AND version = 1;",
            drop_update_guard(store, "prompt_versions")
        ))
        .expect("rewritten by hand");

    let v1 = "version 1 of `greeter` does not match its content hash sha256:";
    damaged(catalog.get("greeter", &Selector::Version(1)), v1);
    damaged(
        catalog.get("greeter", &Selector::Label("production".into())),
        v1,
    );
    damaged(
        catalog.diff("greeter", &Selector::Version(1), &Selector::Latest),
        v1,
    );
    let target = tempfile::tempdir().expect("a folder");
    damaged(
        catalog.export("greeter", &Selector::Version(1), target.path()),
        v1,
    );
    let answers = catalog
        .versions_with_sources(&[("greeter".into(), 1), ("greeter".into(), 2)])
        .expect("reads");
    damaged(answers[0].clone(), v1);
    assert!(answers[1].is_ok(), "{:?}", answers[1]);
    // The other version is still served.
    let v2 = catalog.get("greeter", &Selector::Latest).expect("v2");
    assert_eq!(v2.version, 2);

    let report = verify(store);
    assert!(!report.is_ok());
    assert_eq!(
        found(&report),
        [
            (
                FindingCode::Guard,
                guard(&update_guard(store, "prompt_versions"), "prompt_versions")
            ),
            (FindingCode::HashMismatch, version("greeter", 1)),
            (FindingCode::ResolvedMismatch, version("greeter", 1)),
        ]
    );
    assert!(report.findings[1].message.starts_with(v1));
}

fn a_dropped_guard_is_refused_by_init_and_open(store: &TestStore) {
    let mut catalog = greeter(store);
    let name = update_guard(store, "audit");
    store
        .raw(&drop_update_guard(store, "audit"))
        .expect("dropped by hand");
    damaged(catalog.init(), &format!("guard `{name}`"));
    damaged(Catalog::open(&store.url), &format!("guard `{name}`"));
    let report = verify(store);
    assert_eq!(
        found(&report),
        [(FindingCode::Guard, guard(&name, "audit"))]
    );
    assert!(
        report.findings[0].message.contains("is missing"),
        "{:?}",
        report.findings
    );
}

fn rewritten_files_and_snippets_and_lost_revisions_are_listed(store: &TestStore) {
    let mut catalog = greeter(store);
    // The files of v2 rewritten under its old resolved text and hash: a
    // read checks the hash only, `verify` compiles the files.
    let rewrite = "UPDATE prompt_versions SET system_text = 'Obey me.' \
                   WHERE prompt_id = 'greeter' AND version = 2;\
                   UPDATE snippet_revisions SET text = 'Be rude.' \
                   WHERE name = 'tone' AND revision = 1;";
    let repin = "UPDATE version_pins SET revision = 9 WHERE prompt_id = 'greeter' AND version = 1;";
    let sql = match store.kind {
        Kind::Sqlite => format!(
            "PRAGMA foreign_keys = OFF;{}{}{rewrite}{}{repin}",
            drop_update_guard(store, "prompt_versions"),
            drop_update_guard(store, "snippet_revisions"),
            drop_update_guard(store, "version_pins"),
        ),
        // A superuser's session that skips every trigger, the guards and
        // the foreign keys alike: what no schema can refuse.
        Kind::Postgres => format!("SET session_replication_role = replica;{rewrite}{repin}"),
    };
    store.raw(&sql).expect("rewritten by hand");
    assert_eq!(
        catalog
            .get("greeter", &Selector::Version(2))
            .expect("v2 matches its hash")
            .system,
        "Obey me."
    );
    damaged(
        catalog.snippet("tone", Some(1)),
        "revision 1 of snippet `tone` does not match its content hash",
    );

    let report = verify(store);
    let findings: Vec<(FindingCode, Subject)> = found(&report)
        .into_iter()
        .filter(|(code, _)| *code != FindingCode::Guard)
        .collect();
    assert_eq!(
        findings,
        [
            (
                FindingCode::SnippetHashMismatch,
                Subject::SnippetRevision {
                    snippet: "tone".into(),
                    revision: 1
                }
            ),
            (FindingCode::MissingRevision, version("greeter", 1)),
            (FindingCode::ResolvedMismatch, version("greeter", 2)),
        ]
    );
}

fn disabled_or_changed_guards_are_listed(store: &TestStore) {
    greeter(store);
    let (sql, disabled, changed) = match store.kind {
        Kind::Sqlite => (
            // SQLite cannot disable a trigger: one that never fires instead.
            "DROP TRIGGER audit_append_only_delete; \
             CREATE TRIGGER audit_append_only_delete BEFORE DELETE ON audit WHEN 0 \
             BEGIN SELECT RAISE(ABORT, 'the audit history is append-only'); END;",
            None,
            ("audit_append_only_delete", "audit"),
        ),
        Kind::Postgres => (
            "ALTER TABLE audit DISABLE TRIGGER audit_append_only; \
             DROP TRIGGER prompt_versions_no_truncate ON prompt_versions; \
             CREATE TRIGGER prompt_versions_no_truncate BEFORE TRUNCATE ON version_pins \
             FOR EACH STATEMENT EXECUTE FUNCTION promptpack_append_only();",
            Some(("audit_append_only", "audit")),
            ("prompt_versions_no_truncate", "prompt_versions"),
        ),
    };
    store.raw(sql).expect("changed by hand");
    let report = verify(store);
    let mut expected = Vec::new();
    if let Some((name, table)) = disabled {
        expected.push((FindingCode::Guard, guard(name, table)));
    }
    expected.push((FindingCode::Guard, guard(changed.0, changed.1)));
    expected.sort_by_key(|(_, subject)| format!("{subject:?}"));
    let mut listed = found(&report);
    listed.sort_by_key(|(_, subject)| format!("{subject:?}"));
    assert_eq!(listed, expected, "{:?}", report.findings);
    damaged(Catalog::open(&store.url), "guard `");
}

fn truncation_is_refused(store: &TestStore) {
    let catalog = greeter(store);
    drop(catalog);
    let before = store.footprint();
    let statements: &[&str] = match store.kind {
        // SQLite has no TRUNCATE; its DELETE without WHERE runs the guards.
        Kind::Sqlite => &["DELETE FROM audit", "DELETE FROM prompt_versions"],
        Kind::Postgres => &[
            "TRUNCATE audit",
            "TRUNCATE console_user_audit",
            "TRUNCATE version_pins",
            "TRUNCATE prompt_versions CASCADE",
            "TRUNCATE snippet_revisions CASCADE",
            "TRUNCATE prompts CASCADE",
        ],
    };
    for sql in statements {
        let refused = store.raw(sql).expect_err(sql);
        assert!(refused.contains("append-only"), "{sql}: {refused}");
    }
    assert_eq!(store.footprint(), before);
}

fn an_edited_migration_checksum_is_refused_at_connect(store: &TestStore) {
    greeter(store);
    store
        .raw("UPDATE promptpack_schema SET checksum = 'edited' WHERE version = 2")
        .expect("edited by hand");
    let naming = "migration 0002_label_arms.sql (schema version 2) was applied with checksum";
    damaged(Catalog::connect(&store.url), naming);
    damaged(Catalog::open(&store.url), naming);
    let report = verify(store);
    assert_eq!(
        found(&report),
        [(
            FindingCode::Migration,
            Subject::Migration {
                version: 2,
                name: "0002_label_arms.sql".into()
            }
        )]
    );

    store
        .raw("UPDATE promptpack_schema SET checksum = NULL WHERE version = 1")
        .expect("erased by hand");
    damaged(
        Catalog::connect(&store.url),
        "migration 0001_catalog.sql (schema version 1) records no checksum",
    );
    store
        .raw("ALTER TABLE promptpack_schema DROP COLUMN checksum")
        .expect("dropped by hand");
    // Lost, not from before checksums: refused, not recorded anew.
    let naming = "migration 0001_catalog.sql (schema version 1) records no checksum";
    damaged(Catalog::connect(&store.url), naming);
    damaged(Catalog::open(&store.url), naming);
    store
        .raw("ALTER TABLE promptpack_schema ADD COLUMN checksum TEXT")
        .expect("added back by hand");
    store
        .raw("DELETE FROM promptpack_schema WHERE version = 1")
        .expect("deleted by hand");
    damaged(
        Catalog::connect(&store.url),
        "migration 0001_catalog.sql (schema version 1) is not recorded as applied",
    );
}

fn a_catalog_from_before_checksums_gets_them(store: &TestStore) {
    // A catalog written by a promptpack that knew migrations 1 and 2, and
    // no checksums.
    let mut catalog = greeter(store);
    drop(catalog);
    store.roll_back_schema(
        "DELETE FROM promptpack_schema WHERE version >= 3; \
         ALTER TABLE prompt_versions DROP COLUMN messages_text; ALTER TABLE prompt_versions DROP COLUMN resolved_messages; \
         DROP TABLE console_sessions; DROP TABLE console_user_audit; DROP TABLE console_users; DROP TABLE registered_builds; \
         ALTER TABLE promptpack_schema DROP COLUMN checksum;",
    );
    let older = Catalog::connect(&store.url).expect_err("older");
    assert_eq!(older.code(), ErrorCode::NotConfigured, "{older}");
    catalog = store.open();
    assert_eq!(catalog.init().expect("migrated"), SCHEMA_VERSION);
    assert_eq!(
        store.count("SELECT COUNT(*) FROM promptpack_schema WHERE checksum IS NOT NULL"),
        SCHEMA_VERSION
    );
    Catalog::connect(&store.url).expect("connects");
    assert_eq!(
        catalog
            .get("greeter", &Selector::Label("production".into()))
            .expect("kept")
            .version,
        1
    );
    assert!(verify(store).is_ok());
}

fn a_clean_catalog_verifies(store: &TestStore) {
    let mut catalog = greeter(store);
    let custom = Draft {
        system: "---\ndescription: square\n---\nHi [[name]] [[snippet:tone]]".into(),
        syntax: Syntax {
            open: "[[".into(),
            close: "]]".into(),
            standalone_tags: true,
        },
        ..Draft::default()
    };
    catalog.create("square", None, None).expect("create");
    catalog.publish("square", &custom, None).expect("square v1");
    catalog.upgrade("greeter", None).expect_err("pins current");
    catalog.delete("square").expect("delete");
    assert_eq!(catalog.init().expect("init"), SCHEMA_VERSION);
    let report = catalog.verify().expect("verifies");
    assert_eq!(
        report,
        VerifyReport {
            versions: 3,
            snippet_revisions: 2,
            guards: 10,
            migrations: SCHEMA_VERSION as u64,
            findings: Vec::new(),
        }
    );
    assert_eq!(
        code(catalog.get("square", &Selector::Latest)),
        ErrorCode::NotFound
    );
}
