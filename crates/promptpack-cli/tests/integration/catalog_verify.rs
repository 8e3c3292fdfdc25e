//! `promptpack catalog verify` on both stores: a clean catalog is `ok`
//! (exit 0); one with a guard dropped and a version rewritten by hand
//! refuses to `get` that version (`damaged`), and `verify` lists the
//! version and the guard and exits 1, in text and in JSON.

use std::path::Path;

use crate::support::{self, Output, fixture};

/// `promptpack catalog ARGS --db DB` in `dir`, as text.
fn catalog(dir: &Path, db: &str, args: &[&str]) -> Output {
    support::catalog(Some(dir), db, args).into()
}

/// Runs `sql` on the store behind `db` directly, as an operator's
/// hand-written statement would.
fn raw(db: &str, sql: &str) {
    match db.strip_prefix("sqlite:") {
        Some(path) => rusqlite::Connection::open(path)
            .and_then(|c| c.execute_batch(sql))
            .expect("hand-written SQL"),
        None => postgres::Client::connect(db, postgres::NoTls)
            .and_then(|mut c| c.batch_execute(sql))
            .expect("hand-written SQL"),
    }
}

#[test]
fn verify_on_sqlite() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = format!("sqlite:{}", dir.path().join("c.db").display());
    verify_finds_what_was_changed_by_hand(
        dir.path(),
        &db,
        "DROP TRIGGER prompt_versions_append_only_update;",
        "prompt_versions_append_only_update",
    );
}

#[test]
fn verify_on_postgres() {
    let shared = promptpack_pgtest::shared().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
    let db = shared
        .unique_database("cliverify")
        .unwrap_or_else(|e| panic!("PostgreSQL database: {e}"));
    let dir = tempfile::tempdir().expect("temp dir");
    verify_finds_what_was_changed_by_hand(
        dir.path(),
        &db,
        "DROP TRIGGER prompt_versions_append_only ON prompt_versions;",
        "prompt_versions_append_only",
    );
}

fn verify_finds_what_was_changed_by_hand(dir: &Path, db: &str, drop_guard: &str, guard: &str) {
    let from = fixture("clean").display().to_string();
    let init = catalog(dir, db, &["init"]);
    assert_eq!(init.code, Some(0), "{}", init.stderr);
    let imported = catalog(dir, db, &["import", "--from", &from, "-m", "first"]);
    assert_eq!(imported.code, Some(0), "{}", imported.stderr);

    let clean = catalog(dir, db, &["verify"]);
    assert_eq!(clean.code, Some(0), "{}", clean.stderr);
    assert_eq!(
        clean.stdout,
        "ok: 3 versions, 2 snippet revisions, guards and migrations checked\n"
    );
    let clean = catalog(dir, db, &["verify", "--json"]);
    assert_eq!(clean.code, Some(0), "{}", clean.stderr);
    let report: serde_json::Value = serde_json::from_str(&clean.stdout).expect("JSON");
    assert_eq!(report["ok"], true);
    assert_eq!(report["findings"], serde_json::json!([]));

    // Against a program whose `greet` has no variables: each version it
    // would refuse is listed, as its live handle would refuse it.
    let contract = dir.join("contract.json");
    std::fs::write(
        &contract,
        r#"{"format": 1, "prompts": {"greet": {"variables": []}}}"#,
    )
    .expect("a contract file");
    let refused = catalog(
        dir,
        db,
        &["verify", "--contract", &contract.display().to_string()],
    );
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    let lines: Vec<&str> = refused.stdout.lines().collect();
    assert!(
        lines[0].starts_with("contract_violation ")
            && lines[0]
                .contains("version 1 of `greet` is refused by the contract: contract_violation:"),
        "{}",
        refused.stdout
    );

    raw(
        db,
        &format!(
            "{drop_guard} UPDATE prompt_versions SET resolved_system = 'Obey me.' \
             WHERE prompt_id = 'greet' AND version = 1;"
        ),
    );

    let get = catalog(dir, db, &["get", "greet", "--version", "1"]);
    assert_eq!(get.code, Some(1), "{}", get.stdout);
    assert!(get.stdout.is_empty(), "{}", get.stdout);
    // Refused for the version's hash, or before that for the guard, by a
    // command that opens the catalog for writing.
    assert!(
        get.stderr.contains("error[damaged]")
            && (get
                .stderr
                .contains("version 1 of `greet` does not match its content hash sha256:")
                || get.stderr.contains(&format!("guard `{guard}`"))),
        "{}",
        get.stderr
    );

    let damaged = catalog(dir, db, &["verify"]);
    assert_eq!(damaged.code, Some(1), "{}", damaged.stderr);
    let lines: Vec<&str> = damaged.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", damaged.stdout);
    assert!(
        lines[0].starts_with("guard ") && lines[0].contains(&format!("guard `{guard}`")),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("is missing"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("hash_mismatch ")
            && lines[1].contains("version 1 of `greet` does not match its content hash"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("resolved_mismatch ") && lines[2].contains("version 1 of `greet`"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        "checked 3 versions, 2 snippet revisions, 10 guards, 8 migrations"
    );
    assert!(damaged.stderr.contains("damaged"), "{}", damaged.stderr);
    assert!(damaged.stderr.contains("3 findings"), "{}", damaged.stderr);

    let json = catalog(dir, db, &["verify", "--json"]);
    assert_eq!(json.code, Some(1), "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(report["ok"], false);
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["code"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(codes, ["guard", "hash_mismatch", "resolved_mismatch"]);
    assert_eq!(
        report["findings"][1]["subject"],
        serde_json::json!({"version": {"prompt": "greet", "version": 1}})
    );

    // `init` no longer says all is well.
    let init = catalog(dir, db, &["init"]);
    assert_eq!(init.code, Some(1), "{}", init.stdout);
    assert!(
        init.stderr.contains(&format!("guard `{guard}`")) && init.stderr.contains("catalog verify"),
        "{}",
        init.stderr
    );
}
