//! What `promptpack catalog` commands may do to a store: reads change
//! nothing and wait for no writer, only `init` makes a catalog, a catalog
//! in a folder the user cannot write still reads, and what people wrote
//! into the catalog (authors, messages) is shown with its control
//! characters escaped.

use promptpack_testkit::files::copy_tree;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

use crate::support::{self, BIN, fixture};

/// `promptpack catalog ARGS --db DB`, run where the tests run.
fn catalog(db: &str, args: &[&str]) -> Output {
    support::catalog(None, db, args)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A temp folder with the `clean` tree in `tree/` and an imported catalog
/// at `c.db`.
fn imported() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&fixture("clean"), &dir.path().join("tree"), &[]);
    let db = format!("sqlite:{}", dir.path().join("c.db").display());
    let tree = dir.path().join("tree").display().to_string();
    for args in [vec!["init"], vec!["import", "--from", &tree, "-m", "first"]] {
        let out = catalog(&db, &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    (dir, db)
}

#[test]
fn reading_commands_leave_another_applications_database_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("app.db");
    let connection = rusqlite::Connection::open(&path).expect("sqlite");
    connection
        .execute_batch(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY); INSERT INTO orders VALUES (7);",
        )
        .expect("an application's table");
    drop(connection);
    let bytes = std::fs::read(&path).expect("the file");
    let db = format!("sqlite:{}", path.display());
    for args in [
        &["list"][..],
        &["get", "greet"],
        &["history", "greet"],
        &["label", "greet", "production", "1"],
        &["init"],
    ] {
        let out = catalog(&db, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains("error[not_configured]"), "{args:?}: {err}");
        assert!(
            err.contains("is not a promptpack catalog"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(&path).expect("the file"), bytes);
    assert!(!dir.path().join("app.db-wal").exists());
}

#[test]
fn a_mistyped_path_creates_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = format!("sqlite:{}", dir.path().join("typo/catalog.db").display());
    for args in [&["list"][..], &["label", "greet", "production", "1"]] {
        let out = catalog(&db, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains("catalog init"), "{}", stderr(&out));
    }
    assert!(!dir.path().join("typo").exists());
    for db in ["sqlite:", "sqlite::memory:"] {
        let out = catalog(db, &["list"]);
        assert_eq!(out.status.code(), Some(1), "{db}");
        assert!(
            stderr(&out).contains("error[invalid_request]"),
            "{db}: {}",
            stderr(&out)
        );
    }
}

/// Another connection holds the write lock; reading commands answer all
/// the same (they used to apply the schema in a write transaction first,
/// and so waited 60 s and failed).
#[test]
fn reads_do_not_wait_for_a_writer() {
    let (dir, db) = imported();
    let connection = rusqlite::Connection::open(dir.path().join("c.db")).expect("sqlite");
    connection
        .execute_batch("BEGIN IMMEDIATE; UPDATE prompts SET description = 'being edited';")
        .expect("a write transaction");
    for args in [&["list"][..], &["get", "greet"], &["history", "greet"]] {
        let out = catalog(&db, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!stdout(&out).contains("being edited"), "{args:?}");
    }
    connection.execute_batch("ROLLBACK").expect("rollback");
}

/// A catalog whose file and folder the user cannot write: reading commands
/// work, writing ones fail, and the file is unchanged. Tests run as root,
/// whom file modes do not stop, so there the commands run as `nobody`.
#[test]
fn a_catalog_in_a_read_only_folder_reads() {
    let (dir, db) = imported();
    let path = dir.path().join("c.db");
    // Closed cleanly: no -wal or -shm file for a reader to share.
    assert!(!dir.path().join("c.db-shm").exists());
    let bytes = std::fs::read(&path).expect("the file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let as_user = |args: &[&str]| -> Output {
        let mut command = if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "nobody", "--", BIN]);
            command
        } else {
            Command::new(BIN)
        };
        command
            .arg("catalog")
            .args(args)
            .args(["--db", &db])
            .env("NO_COLOR", "1")
            .env_remove("PROMPTPACK_DB")
            .output()
            .expect("the binary runs")
    };
    let listed = as_user(&["list"]);
    let got = as_user(&["get", "greet"]);
    let labelled = as_user(&["label", "greet", "production", "1"]);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(stdout(&listed).contains("greet"), "{}", stdout(&listed));
    assert_eq!(got.status.code(), Some(0), "{}", stderr(&got));
    assert_eq!(
        labelled.status.code(),
        Some(1),
        "a read-only catalog was written"
    );
    assert_eq!(std::fs::read(&path).expect("the file"), bytes);
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
        .unwrap_or(false)
}

#[test]
fn history_escapes_what_people_wrote() {
    let (dir, db) = imported();
    let tree = dir.path().join("tree");
    std::fs::write(
        tree.join("templates/greet/system.md"),
        "Changed {{agentName}}\n",
    )
    .expect("edit");
    let tree = tree.display().to_string();
    let out = Command::new(BIN)
        .args(["catalog", "publish", "greet", "--from", &tree, "--db", &db])
        .args(["-m", "fine\u{1b}[2J\u{1b}[31mforged line\nv9 ok"])
        .args(["--author", "eve\u{7}"])
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let history = catalog(&db, &["history", "greet"]);
    let text = stdout(&history);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("fine\\u{1b}[2J"), "{text}");
    assert!(text.contains("eve\\u{7}"), "{text}");
    assert!(!text.contains("\nv9 ok"), "a message forged a line: {text}");
}

#[test]
fn publishing_unchanged_files_writes_nothing() {
    let (dir, db) = imported();
    let tree = dir.path().join("tree").display().to_string();
    let out = catalog(&db, &["publish", "greet", "--from", &tree]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("unchanged greet v1 "),
        "{}",
        stdout(&out)
    );
    let history = catalog(&db, &["history", "greet", "--json"]);
    let parsed: serde_json::Value = serde_json::from_slice(&history.stdout).expect("json");
    assert_eq!(parsed["versions"].as_array().map(Vec::len), Some(1));
}
