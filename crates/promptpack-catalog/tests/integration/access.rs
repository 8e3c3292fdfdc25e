//! What each way of connecting may do to a store: only `open` (what
//! `catalog init` runs) makes a catalog, a writer needs one that exists,
//! and a reader changes nothing and waits for no writer. Every case runs
//! against SQLite and PostgreSQL; the SQLite-only cases below them are
//! about the file.

use crate::support;

use promptpack_catalog::{Access, Catalog, ErrorCode, Selector, Timeouts};
use support::{Kind, TestStore, code, draft};

every_store!(
    only_open_makes_a_catalog,
    readers_do_not_wait_for_a_writer,
    a_reader_cannot_write,
    publishing_the_newest_version_again_writes_nothing,
    latest_is_reserved_in_any_case,
    store_errors_keep_their_cause,
    every_write_refuses_a_nul_in_what_it_records,
);

/// A NUL byte in the author or a description is refused alike on both
/// stores by every write (PostgreSQL's text refuses it, SQLite's keeps it),
/// with nothing written.
fn every_write_refuses_a_nul_in_what_it_records(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_or_create("greeter", &draft("Hello"), None)
        .expect("publish");
    let before = store.footprint();
    assert_eq!(
        code(catalog.create("other", None, Some("a\0b"))),
        ErrorCode::InvalidRequest
    );
    let mut catalog = catalog.with_author("eve\0");
    assert_eq!(
        code(catalog.create("other", None, None)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.set_label("greeter", "production", 1)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(code(catalog.delete("greeter")), ErrorCode::InvalidRequest);
    assert_eq!(store.footprint(), before);
}

fn connect(url: &str) -> Result<Catalog, promptpack_catalog::Error> {
    Catalog::connect_with(url, Access::Read, &Timeouts::DEFAULT)
}

fn connect_writable(url: &str) -> Result<Catalog, promptpack_catalog::Error> {
    Catalog::connect_with(url, Access::Write, &Timeouts::DEFAULT)
}

/// The tables of the store's database, by name.
fn tables(store: &TestStore) -> i64 {
    match store.kind {
        Kind::Sqlite => store.count("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"),
        Kind::Postgres => store
            .count("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'"),
    }
}

fn only_open_makes_a_catalog(store: &TestStore) {
    if store.kind == Kind::Sqlite {
        // No file yet: neither a reader nor a writer makes one.
        let path = store.url.trim_start_matches("sqlite:");
        assert_eq!(code(connect(&store.url)), ErrorCode::NotConfigured);
        assert_eq!(code(connect_writable(&store.url)), ErrorCode::NotConfigured);
        assert!(!std::path::Path::new(path).exists(), "{path} was created");
        // An empty database file is no catalog either.
        store
            .raw("CREATE TABLE scratch (x INTEGER); DROP TABLE scratch;")
            .expect("an empty database");
    }
    let before = tables(store);
    assert_eq!(code(connect(&store.url)), ErrorCode::NotConfigured);
    let refused = connect_writable(&store.url).expect_err("refused");
    assert_eq!(refused.code(), ErrorCode::NotConfigured);
    assert!(refused.to_string().contains("catalog init"), "{refused}");
    assert_eq!(tables(store), before, "a refused connection added tables");
    let mut catalog = store.open();
    catalog.create("greeter", None, None).expect("create");
    drop(catalog);
    let mut writer = connect_writable(&store.url).expect("a writer of a catalog");
    writer
        .publish("greeter", &draft("Hello"), None)
        .expect("publish");
    let mut reader = connect(&store.url).expect("a reader of a catalog");
    assert_eq!(
        reader
            .get("greeter", &Selector::Latest)
            .expect("get")
            .system,
        "Hello"
    );
}

/// Another connection holds a write transaction open, with the schema's
/// migration lock and the rows a publish locks; a reader connects, gets,
/// lists and reads history all the same. (It used to migrate in a write
/// transaction first, and so waited behind the writer: 60 s and then
/// `unavailable` on SQLite, for ever on PostgreSQL.)
fn readers_do_not_wait_for_a_writer(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_or_create("greeter", &draft("Hello"), None)
        .expect("publish");
    drop(catalog);
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (locked, is_locked) = std::sync::mpsc::channel::<()>();
    let url = store.url.clone();
    let kind = store.kind;
    let writer = std::thread::spawn(move || match kind {
        Kind::Sqlite => {
            let path = url.trim_start_matches("sqlite:");
            let connection = rusqlite::Connection::open(path).expect("sqlite");
            connection
                .execute_batch("BEGIN IMMEDIATE; UPDATE prompts SET description = 'being edited';")
                .expect("a write transaction");
            locked.send(()).expect("the test waits");
            let _ = held.recv();
            connection.execute_batch("ROLLBACK").expect("rollback");
        }
        Kind::Postgres => {
            let mut client =
                ::postgres::Client::connect(&url, ::postgres::NoTls).expect("postgres");
            let mut transaction = client.transaction().expect("a write transaction");
            transaction
                .batch_execute(
                    "SELECT pg_advisory_xact_lock(7325163); \
                     SELECT * FROM prompts FOR UPDATE; \
                     UPDATE prompts SET description = 'being edited';",
                )
                .expect("locks");
            locked.send(()).expect("the test waits");
            let _ = held.recv();
            transaction.rollback().expect("rollback");
        }
    });
    is_locked.recv().expect("the writer holds its locks");
    let mut reader = connect(&store.url).expect("a reader connects");
    let version = reader.get("greeter", &Selector::Latest).expect("get");
    assert_eq!(version.system, "Hello");
    let page = reader.list(10, None).expect("list");
    assert_eq!(page.prompts.len(), 1);
    // What it reads is the last commit, not the writer's edit.
    assert_eq!(page.prompts[0].prompt.description, "");
    reader.history("greeter").expect("history");
    release.send(()).expect("the writer waits");
    writer.join().expect("the writer ends");
}

fn a_reader_cannot_write(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_or_create("greeter", &draft("Hello"), None)
        .expect("publish");
    drop(catalog);
    let before = store.footprint();
    let mut reader = connect(&store.url).expect("a reader").with_author("test");
    let refused = reader.publish("greeter", &draft("Changed"), None);
    assert!(refused.is_err(), "a reader published {refused:?}");
    assert!(reader.set_label("greeter", "production", 1).is_err());
    let hash = promptpack_catalog::token_hash("a token");
    let refused = reader.add_user("ada", promptpack_catalog::Role::Admin, &hash);
    assert_eq!(code(refused), ErrorCode::InvalidRequest);
    assert_eq!(code(reader.remove_user("ada")), ErrorCode::InvalidRequest);
    assert_eq!(store.footprint(), before);
}

fn publishing_the_newest_version_again_writes_nothing(store: &TestStore) {
    let mut catalog = store.open();
    let (first, created) = catalog
        .publish_or_create("greeter", &draft("Hello {{name}}"), None)
        .expect("publish");
    assert!(created);
    let before = store.footprint();
    let again = catalog
        .publish("greeter", &draft("Hello {{name}}"), None)
        .expect("publish again");
    assert_eq!(again.version, first.version);
    assert_eq!(again.content_hash, first.content_hash);
    assert_eq!(store.footprint(), before, "an unchanged publish wrote");
    // Another message alone is no change either, as for import.
    let mut other = draft("Hello {{name}}");
    other.message = "another message".into();
    assert_eq!(
        catalog
            .publish("greeter", &other, None)
            .expect("publish")
            .version,
        1
    );
    let changed = catalog
        .publish("greeter", &draft("Hi {{name}}"), None)
        .expect("a change");
    assert_eq!(changed.version, 2);
}

fn latest_is_reserved_in_any_case(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_or_create("greeter", &draft("Hello"), None)
        .expect("publish");
    for label in ["latest", "LATEST", "Latest"] {
        assert_eq!(
            code(catalog.set_label("greeter", label, 1)),
            ErrorCode::InvalidRequest,
            "{label}"
        );
    }
}

fn store_errors_keep_their_cause(store: &TestStore) {
    let mut catalog = store.open();
    catalog
        .publish_or_create("greeter", &draft("Hello"), None)
        .expect("publish");
    // A duplicate key, from the database itself.
    let duplicate = catalog.create("greeter", None, None).expect_err("refused");
    assert_eq!(duplicate.code(), ErrorCode::AlreadyExists);
    assert!(!duplicate.is_retryable());
    // The driver's error behind a store failure: a table dropped by hand.
    let drop_labels = match store.kind {
        Kind::Sqlite => "DROP TABLE labels",
        Kind::Postgres => "DROP TABLE labels CASCADE",
    };
    store.raw(drop_labels).expect("drop a table");
    let broken = catalog.set_label("greeter", "production", 1);
    let error = broken.expect_err("a missing table fails");
    assert!(
        std::error::Error::source(&error).is_some(),
        "{error} has no cause"
    );
}

/// A SQLite file that is not a catalog is refused by every connection,
/// untouched: its bytes and journal mode stay as they were.
#[test]
fn another_applications_database_is_left_alone() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("app.db");
    let connection = rusqlite::Connection::open(&path).expect("sqlite");
    connection
        .execute_batch(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY); INSERT INTO orders VALUES (1);",
        )
        .expect("an application's table");
    drop(connection);
    let bytes = std::fs::read(&path).expect("the file");
    let url = format!("sqlite:{}", path.display());
    for (what, result) in [
        ("connect", connect(&url).map(drop)),
        ("connect_writable", connect_writable(&url).map(drop)),
        ("open", Catalog::open(&url).map(drop)),
    ] {
        let error = result.err().unwrap_or_else(|| panic!("{what} accepted it"));
        assert_eq!(error.code(), ErrorCode::NotConfigured, "{what}: {error}");
        assert!(error.to_string().contains("app.db"), "{what}: {error}");
    }
    assert_eq!(std::fs::read(&path).expect("the file"), bytes);
    let connection = rusqlite::Connection::open(&path).expect("sqlite");
    let mode: String = connection
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("journal mode");
    assert_eq!(mode, "delete");
}

/// URLs that name no file, or a database that keeps nothing, are refused
/// before anything is opened.
#[test]
fn urls_that_keep_nothing_are_refused() {
    for url in [
        "sqlite:",
        "sqlite::memory:",
        ":memory:",
        "sqlite:file::memory:",
    ] {
        assert_eq!(code(Catalog::open(url)), ErrorCode::InvalidRequest, "{url}");
    }
}

/// A SQLite file whose pages were overwritten is `damaged`, not
/// `unavailable`: retrying does not help.
#[test]
fn a_corrupt_file_is_damaged() {
    let store = TestStore::sqlite();
    let mut catalog = store.open();
    for n in 0..40 {
        catalog
            .publish_or_create(&format!("p{n}"), &draft(&"text ".repeat(200)), None)
            .expect("publish");
    }
    drop(catalog);
    let path = store.url.trim_start_matches("sqlite:").to_string();
    // Checkpointed into the file, so that its pages hold everything.
    rusqlite::Connection::open(&path)
        .and_then(|c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);"))
        .expect("checkpoint");
    let mut bytes = std::fs::read(&path).expect("the file");
    let page = 4096;
    for byte in &mut bytes[page * 2..] {
        *byte = 0xA5;
    }
    std::fs::write(&path, &bytes).expect("overwrite");
    let error = connect(&store.url)
        .and_then(|mut catalog| catalog.list(100, None).map(drop))
        .expect_err("a corrupt file fails");
    assert_eq!(error.code(), ErrorCode::Damaged, "{error}");
    assert!(!error.is_retryable());
}

/// `url` signing in as `role` (password `pw`: ignored by a server that
/// trusts local connections, used by one that does not).
fn as_role(url: &str, role: &str) -> String {
    let (_, rest) = url.split_once("://").expect("a URL with a scheme");
    let host = rest.split_once('@').map_or(rest, |(_, host)| host);
    format!("postgres://{role}:pw@{host}")
}

/// A PostgreSQL role that may write rows but not create tables (what an
/// operator gives a service) writes to a catalog at this schema: a
/// writable connection runs no DDL and takes no migration lock when there
/// is nothing to migrate. A role that may only read is refused the write
/// (as a live handle's registration is), and writes nothing.
#[test]
fn postgres_roles_write_as_their_grants_allow() {
    let store = TestStore::postgres("roles");
    let mut catalog = store.open();
    catalog
        .publish_or_create("greeter", &draft("Hello"), None)
        .expect("publish");
    // Roles are the server's, databases' names unique: named after it.
    let database = store.url.rsplit('/').next().expect("a database name");
    let (writer, reader) = (format!("{database}_w"), format!("{database}_r"));
    store
        .raw(&format!(
            "REVOKE CREATE ON SCHEMA public FROM PUBLIC; \
             CREATE ROLE \"{writer}\" LOGIN PASSWORD 'pw'; \
             GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \"{writer}\"; \
             GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO \"{writer}\"; \
             CREATE ROLE \"{reader}\" LOGIN PASSWORD 'pw'; \
             GRANT SELECT ON ALL TABLES IN SCHEMA public TO \"{reader}\";"
        ))
        .expect("roles");
    let contract =
        promptpack_catalog::Contract::from_json("contract.json", r#"{"format": 1, "prompts": {}}"#)
            .expect("a contract");
    let build = |process: &str| promptpack_catalog::BuildRegistration {
        process: process.to_string(),
        label: "production".to_string(),
        contract: contract.clone(),
    };
    let mut writes = connect_writable(&as_role(&store.url, &writer))
        .expect("a role that writes rows connects to write");
    writes
        .register_build(&build("writer#1"))
        .expect("registers");
    writes
        .set_label("greeter", "production", 1)
        .expect("moves a label");

    let before = store.footprint();
    let refused = connect_writable(&as_role(&store.url, &reader))
        .and_then(|mut catalog| catalog.register_build(&build("reader#1")));
    assert_eq!(code(refused), ErrorCode::NotConfigured);
    assert_eq!(store.footprint(), before);
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    let processes: Vec<String> = catalog
        .builds(day)
        .expect("builds")
        .into_iter()
        .map(|build| build.process)
        .collect();
    assert_eq!(processes, ["writer#1"]);
    drop((writes, catalog));
    store
        .raw(&format!(
            "DROP OWNED BY \"{writer}\", \"{reader}\"; DROP ROLE \"{writer}\", \"{reader}\";"
        ))
        .expect("roles dropped");
}
