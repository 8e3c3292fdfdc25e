//! What the catalog's tests share: a fresh store of each kind, raw SQL
//! against it, and the macro that runs one case against every store.
#![allow(dead_code)]

use promptpack_catalog::{Catalog, Draft, Error, ErrorCode};

/// The schema version this promptpack's migrations bring a catalog to.
pub const SCHEMA_VERSION: i64 = 8;

/// A fresh, empty catalog store.
pub struct TestStore {
    /// Its URL.
    pub url: String,
    /// Which store it is.
    pub kind: Kind,
    /// The SQLite file's folder, removed with the store.
    _dir: Option<tempfile::TempDir>,
}

/// The two stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

impl TestStore {
    /// A SQLite file in a temporary folder.
    pub fn sqlite() -> TestStore {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let url = format!("sqlite:{}", dir.path().join("catalog.db").display());
        TestStore {
            url,
            kind: Kind::Sqlite,
            _dir: Some(dir),
        }
    }

    /// A new database on the PostgreSQL server the tests share (CI's, or
    /// one started for this test process).
    pub fn postgres(name: &str) -> TestStore {
        let shared = promptpack_pgtest::shared().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
        let url = shared
            .unique_database(&name[..name.len().min(24)])
            .unwrap_or_else(|e| panic!("PostgreSQL database: {e}"));
        TestStore {
            url,
            kind: Kind::Postgres,
            _dir: None,
        }
    }

    /// The store of `kind`.
    pub fn of(kind: Kind, name: &str) -> TestStore {
        match kind {
            Kind::Sqlite => TestStore::sqlite(),
            Kind::Postgres => TestStore::postgres(name),
        }
    }

    /// A catalog on it, written by `test`.
    pub fn open(&self) -> Catalog {
        Catalog::open(&self.url)
            .unwrap_or_else(|e| panic!("open {}: {e}", self.url))
            .with_author("test")
    }

    /// Takes the catalog back to an older schema by hand: `sql` and, on
    /// PostgreSQL, the `TRUNCATE` guards (schema 2) dropped too.
    pub fn roll_back_schema(&self, sql: &str) {
        let mut back = sql.to_string();
        if self.kind == Kind::Postgres {
            for table in [
                "prompt_versions",
                "version_pins",
                "snippet_revisions",
                "audit",
            ] {
                back.push_str(&format!("DROP TRIGGER {table}_no_truncate ON {table};"));
            }
        }
        self.raw(&back).expect("back to an older schema");
    }

    /// Runs `sql` on the store directly; its error as text.
    pub fn raw(&self, sql: &str) -> Result<(), String> {
        match self.kind {
            Kind::Sqlite => {
                let path = self.url.trim_start_matches("sqlite:");
                let connection = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
                connection.execute_batch(sql).map_err(|e| e.to_string())
            }
            Kind::Postgres => {
                let mut client = postgres::Client::connect(&self.url, postgres::NoTls)
                    .map_err(|e| e.to_string())?;
                client.batch_execute(sql).map_err(|e| {
                    e.as_db_error()
                        .map_or_else(|| e.to_string(), |db| db.message().to_string())
                })
            }
        }
    }

    /// The one integer `sql` selects.
    pub fn count(&self, sql: &str) -> i64 {
        match self.kind {
            Kind::Sqlite => {
                let path = self.url.trim_start_matches("sqlite:");
                let connection = rusqlite::Connection::open(path).expect("sqlite");
                connection
                    .query_row(sql, [], |row| row.get(0))
                    .expect("a count")
            }
            Kind::Postgres => {
                let mut client =
                    postgres::Client::connect(&self.url, postgres::NoTls).expect("postgres");
                client.query_one(sql, &[]).expect("a count").get(0)
            }
        }
    }

    /// Every row of every table that a write could leave behind, as one
    /// number per table: what must not change when a write is refused.
    pub fn footprint(&self) -> Vec<i64> {
        [
            "prompts",
            "prompt_versions",
            "version_pins",
            "snippets",
            "snippet_revisions",
            "labels",
            "audit",
            "console_users",
            "console_user_audit",
            "console_sessions",
            "registered_builds",
        ]
        .iter()
        .map(|table| self.count(&format!("SELECT COUNT(*) FROM {table}")))
        .collect()
    }
}

/// A draft of `system` with a message.
pub fn draft(system: &str) -> Draft {
    Draft {
        system: system.to_string(),
        user: None,
        message: format!("publish {}", system.len()),
        ..Draft::default()
    }
}

/// The error's code, or a panic showing what came instead.
pub fn code<T: std::fmt::Debug>(result: Result<T, Error>) -> ErrorCode {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => error.code(),
    }
}

/// Writes `files` (path, text) under `root`: the test kit's, under the name
/// these tests use.
// faults.rs, the other binary that includes this module, writes no tree.
#[allow(unused_imports)]
pub use promptpack_testkit::files::write_tree;

/// One `#[test]` per case and store: `mod sqlite { fn case() }` and
/// `mod postgres { fn case() }`, each case a `fn(&TestStore)`.
#[macro_export]
macro_rules! every_store {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $case() {
                    let store = $crate::support::TestStore::sqlite();
                    super::$case(&store);
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $case() {
                    let store = $crate::support::TestStore::postgres(stringify!($case));
                    super::$case(&store);
                }
            )*
        }
    };
}

/// A catalog on `store` whose snippet `tone` (`Be brief.`) prompt `id`'s
/// version 1, `system`, includes: where the tests of pins start.
pub fn with_tone(store: &TestStore, id: &str, system: &str) -> Catalog {
    let mut catalog = store.open();
    catalog
        .publish_snippet("tone", "Be brief.", "tone 1")
        .expect("snippet");
    catalog.create(id, None, None).expect("create");
    catalog.publish(id, &draft(system), None).expect("v1");
    catalog
}
