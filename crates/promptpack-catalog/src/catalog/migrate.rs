//! The schema's versions: the migrations embedded for each dialect (one
//! list, for both) and chosen by the store's dialect, as sqlx's migrator
//! does, applied in one write transaction on `init` and on first use, each
//! recorded with its checksum; and the checks that a database holds the
//! schema this promptpack reads, as this promptpack wrote it: the recorded
//! checksums are those of the embedded migrations, and the append-only
//! guards are all in place.

use crate::finding::{Finding, FindingCode, Subject};
use crate::store::{Dialect, Param, Store, Tx};
use promptpack_core::{Error, ErrorCode};
use sha2::{Digest, Sha256};

/// One migration: the schema version it brings the database to, its file
/// name and its SQL.
pub(crate) struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

/// The migrations, in order, each a file by the same name under
/// `migrations/sqlite/` and `migrations/postgres/` (a test holds this list
/// against both folders).
macro_rules! migrations {
    ($($version:literal => $file:literal),* $(,)?) => {
        /// The SQLite store's migrations, in order.
        #[cfg(feature = "sqlite")]
        const SQLITE: &[Migration] = &[$(Migration {
            version: $version,
            name: $file,
            sql: include_str!(concat!("../../migrations/sqlite/", $file)),
        }),*];
        /// The PostgreSQL store's migrations, in order.
        #[cfg(feature = "postgres")]
        const POSTGRES: &[Migration] = &[$(Migration {
            version: $version,
            name: $file,
            sql: include_str!(concat!("../../migrations/postgres/", $file)),
        }),*];
        #[cfg(test)]
        const FILES: &[(i64, &str)] = &[$(($version, $file)),*];
    };
}

migrations! {
    1 => "0001_catalog.sql",
    2 => "0002_label_arms.sql",
    3 => "0003_no_truncate.sql",
    4 => "0004_console_users.sql",
    5 => "0005_registered_builds.sql",
    6 => "0006_console_user_audit.sql",
    7 => "0007_console_sessions.sql",
    8 => "0008_conversations.sql",
}

/// The migrations of a store that speaks `dialect`, in order.
pub(crate) fn migrations(dialect: Dialect) -> &'static [Migration] {
    match dialect {
        #[cfg(feature = "sqlite")]
        Dialect::Sqlite => SQLITE,
        #[cfg(feature = "postgres")]
        Dialect::Postgres => POSTGRES,
        // Only a store of a dialect built in is ever connected.
        #[cfg(not(all(feature = "sqlite", feature = "postgres")))]
        _ => &[],
    }
}

/// The first schema version whose migrate recorded checksums.
const FIRST_CHECKSUMMED: i64 = 3;

/// The table of applied migrations: promptpack's own bookkeeping, kept
/// outside the migrations (as sqlx keeps `_sqlx_migrations`). A catalog
/// from before checksums has no `checksum` column: the first migrate adds
/// it.
const SCHEMA_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS promptpack_schema (version BIGINT NOT NULL, checksum TEXT)";

/// Applies every migration the database lacks; the schema version after.
///
/// # Errors
/// `damaged` when an applied migration's checksum is not the embedded
/// one's, or when an append-only guard is missing (before or after
/// migrating); nothing is written then.
pub(crate) fn migrate(store: &mut Store) -> Result<i64, Error> {
    let migrations = migrations(store.dialect());
    let lock = store.migration_lock();
    let latest = latest(migrations);
    store.write(&mut |tx| {
        if let Some(lock) = lock {
            tx.batch(lock)?;
        }
        tx.batch(SCHEMA_TABLE)?;
        let current = applied(tx)?;
        if current > latest {
            return Err(newer(current, latest));
        }
        if current < FIRST_CHECKSUMMED && !has_checksums(tx)? {
            // Recorded before promptpack kept checksums: the migrations
            // applied are taken to be the embedded ones, from now on held
            // to them. (A later schema without checksums lost them: that
            // is refused below, not blessed.)
            tx.execute(
                "ALTER TABLE promptpack_schema ADD COLUMN checksum TEXT",
                &[],
            )?;
            for migration in migrations.iter().filter(|m| m.version <= current) {
                tx.execute(
                    "UPDATE promptpack_schema SET checksum = $1 WHERE version = $2",
                    &[
                        Param::Text(&checksum(migration.sql)),
                        Param::Int(migration.version),
                    ],
                )?;
            }
        }
        refuse_any(migration_findings(tx, migrations)?)?;
        for migration in migrations.iter().filter(|m| m.version > current) {
            tx.batch(migration.sql)?;
            tx.execute(
                "INSERT INTO promptpack_schema (version, checksum) VALUES ($1, $2)",
                &[
                    Param::Int(migration.version),
                    Param::Text(&checksum(migration.sql)),
                ],
            )?;
        }
        refuse_any(guard_findings(tx)?.0)?;
        Ok(latest)
    })
}

/// Whether the database is at this promptpack's schema and passes every
/// check [`migrate`] makes (checksums, guards), read without the write
/// lock: a writer then has nothing to migrate, and need neither wait for
/// the migration lock nor run DDL (a PostgreSQL role allowed to write rows
/// but not to create tables writes all the same).
pub(crate) fn is_current(store: &mut Store) -> Result<bool, Error> {
    let migrations = migrations(store.dialect());
    store.read(&mut |tx| {
        Ok(applied(tx)? == latest(migrations)
            && has_checksums(tx)?
            && migration_findings(tx, migrations)?.is_empty()
            && guard_findings(tx)?.0.is_empty())
    })
}

/// Checks, without changing anything, that the database holds the schema
/// this promptpack reads and writes, with the migrations it embeds.
///
/// # Errors
/// `not_configured` for a schema never applied, older or newer; `damaged`
/// for an applied migration whose checksum is not the embedded one's.
pub(crate) fn check_schema(store: &mut Store) -> Result<i64, Error> {
    let migrations = migrations(store.dialect());
    store.read(&mut |tx| {
        let current = current_schema(tx, migrations)?;
        refuse_any(migration_findings(tx, migrations)?)?;
        Ok(current)
    })
}

/// The schema version the database is at, which must be this
/// promptpack's.
///
/// # Errors
/// As [`check_schema`], but for checksums.
pub(crate) fn current_schema(tx: &mut dyn Tx, migrations: &[Migration]) -> Result<i64, Error> {
    let latest = latest(migrations);
    match applied(tx)? {
        0 => Err(Error::new(
            ErrorCode::NotConfigured,
            "the catalog's schema is not applied: run `promptpack catalog init`",
        )),
        current if current > latest => Err(newer(current, latest)),
        current if current < latest => Err(Error::new(
            ErrorCode::NotConfigured,
            format!(
                "the catalog's schema is at version {current}, older than this promptpack's {latest}: run `promptpack catalog init` to migrate it"
            ),
        )),
        current => Ok(current),
    }
}

/// What is wrong with the recorded migrations: each applied one recorded
/// once, with the checksum of the migration this promptpack embeds.
pub(crate) fn migration_findings(
    tx: &mut dyn Tx,
    migrations: &[Migration],
) -> Result<Vec<Finding>, Error> {
    let current = applied(tx)?;
    let applied = migrations.iter().filter(|m| m.version <= current);
    if !has_checksums(tx)? {
        return Ok(applied
            .map(|m| migration_finding(m, "records no checksum"))
            .collect());
    }
    let recorded = tx.query(
        "SELECT version, checksum FROM promptpack_schema ORDER BY version",
        &[],
    )?;
    let mut findings = Vec::new();
    for migration in applied {
        let mut rows = recorded.iter().filter(|row| {
            row.int("version")
                .is_ok_and(|version| version == migration.version)
        });
        let first = rows.next();
        let why = match first.map(|row| row.opt_text("checksum")).transpose()? {
            None => "is not recorded as applied".to_string(),
            Some(None) => "records no checksum".to_string(),
            Some(_) if rows.next().is_some() => "is recorded as applied twice".to_string(),
            Some(Some(found)) if found != checksum(migration.sql) => format!(
                "was applied with checksum {}; this promptpack's is {}",
                short(&found),
                short(&checksum(migration.sql))
            ),
            Some(Some(_)) => continue,
        };
        findings.push(migration_finding(migration, &why));
    }
    Ok(findings)
}

fn migration_finding(migration: &Migration, why: &str) -> Finding {
    Finding {
        code: FindingCode::Migration,
        subject: Subject::Migration {
            version: migration.version,
            name: migration.name.to_string(),
        },
        message: format!(
            "migration {} (schema version {}) {why}",
            migration.name, migration.version
        ),
    }
}

/// A trigger that keeps a table append-only, as the migrations create it.
struct Guard {
    name: &'static str,
    table: &'static str,
    /// SQLite: the one statement it refuses. PostgreSQL: what it refuses,
    /// as `tgtype` says it (BEFORE, row or statement, and the events).
    refuses: &'static str,
    pg_type: i64,
}

/// What a refused change says, per table, in the SQLite triggers.
const SQLITE_MESSAGES: &[(&str, &str)] = &[
    ("prompt_versions", "prompt versions are append-only"),
    ("version_pins", "version pins are append-only"),
    ("snippet_revisions", "snippet revisions are append-only"),
    ("audit", "the audit history is append-only"),
    (
        "console_user_audit",
        "the console user audit is append-only",
    ),
];

/// The tables no statement may rewrite.
const APPEND_ONLY: [&str; 5] = [
    "prompt_versions",
    "version_pins",
    "snippet_revisions",
    "audit",
    "console_user_audit",
];

/// `tgtype` bits (PostgreSQL's `pg_trigger.h`).
const PG_ROW: i64 = 1;
const PG_BEFORE: i64 = 2;
const PG_DELETE: i64 = 8;
const PG_UPDATE: i64 = 16;
const PG_TRUNCATE: i64 = 32;

const SQLITE_GUARDS: [Guard; 10] = [
    sqlite_guard(
        "prompt_versions_append_only_update",
        APPEND_ONLY[0],
        "UPDATE",
    ),
    sqlite_guard(
        "prompt_versions_append_only_delete",
        APPEND_ONLY[0],
        "DELETE",
    ),
    sqlite_guard("version_pins_append_only_update", APPEND_ONLY[1], "UPDATE"),
    sqlite_guard("version_pins_append_only_delete", APPEND_ONLY[1], "DELETE"),
    sqlite_guard(
        "snippet_revisions_append_only_update",
        APPEND_ONLY[2],
        "UPDATE",
    ),
    sqlite_guard(
        "snippet_revisions_append_only_delete",
        APPEND_ONLY[2],
        "DELETE",
    ),
    sqlite_guard("audit_append_only_update", APPEND_ONLY[3], "UPDATE"),
    sqlite_guard("audit_append_only_delete", APPEND_ONLY[3], "DELETE"),
    sqlite_guard(
        "console_user_audit_append_only_update",
        APPEND_ONLY[4],
        "UPDATE",
    ),
    sqlite_guard(
        "console_user_audit_append_only_delete",
        APPEND_ONLY[4],
        "DELETE",
    ),
];

const fn sqlite_guard(name: &'static str, table: &'static str, refuses: &'static str) -> Guard {
    Guard {
        name,
        table,
        refuses,
        pg_type: 0,
    }
}

const PG_ROWS: i64 = PG_ROW | PG_BEFORE | PG_UPDATE | PG_DELETE;
const PG_TRUNCATES: i64 = PG_BEFORE | PG_TRUNCATE;

const POSTGRES_GUARDS: [Guard; 10] = [
    pg_guard("prompt_versions_append_only", APPEND_ONLY[0], PG_ROWS),
    pg_guard("version_pins_append_only", APPEND_ONLY[1], PG_ROWS),
    pg_guard("snippet_revisions_append_only", APPEND_ONLY[2], PG_ROWS),
    pg_guard("audit_append_only", APPEND_ONLY[3], PG_ROWS),
    pg_guard("prompt_versions_no_truncate", APPEND_ONLY[0], PG_TRUNCATES),
    pg_guard("version_pins_no_truncate", APPEND_ONLY[1], PG_TRUNCATES),
    pg_guard(
        "snippet_revisions_no_truncate",
        APPEND_ONLY[2],
        PG_TRUNCATES,
    ),
    pg_guard("audit_no_truncate", APPEND_ONLY[3], PG_TRUNCATES),
    pg_guard("console_user_audit_append_only", APPEND_ONLY[4], PG_ROWS),
    pg_guard(
        "console_user_audit_no_truncate",
        APPEND_ONLY[4],
        PG_TRUNCATES,
    ),
];

const fn pg_guard(name: &'static str, table: &'static str, pg_type: i64) -> Guard {
    let refuses = if pg_type & PG_TRUNCATE != 0 {
        "TRUNCATE"
    } else {
        "UPDATE, DELETE"
    };
    Guard {
        name,
        table,
        refuses,
        pg_type,
    }
}

/// The body of PostgreSQL's trigger function, whitespace folded.
const PG_GUARD_BODY: &str = "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END;";

/// What is wrong with the append-only guards (each missing, disabled or
/// not the one the migrations created), and how many there are to check.
pub(crate) fn guard_findings(tx: &mut dyn Tx) -> Result<(Vec<Finding>, u64), Error> {
    let dialect = tx.dialect();
    let (guards, found) = match dialect {
        Dialect::Sqlite => (&SQLITE_GUARDS, sqlite_triggers(tx)?),
        Dialect::Postgres => (&POSTGRES_GUARDS, postgres_triggers(tx)?),
    };
    let findings = guards
        .iter()
        .filter_map(|guard| {
            let why = match found.iter().find(|t| t.name == guard.name) {
                None => "is missing",
                Some(trigger) if trigger.table != guard.table => "is on another table",
                Some(trigger) if !trigger.enabled => "is disabled",
                Some(trigger) if trigger.definition != expected_definition(dialect, guard) => {
                    "is not the one promptpack created"
                }
                Some(_) => return None,
            };
            Some(Finding {
                code: FindingCode::Guard,
                subject: Subject::Guard {
                    name: guard.name.to_string(),
                    table: guard.table.to_string(),
                },
                message: format!(
                    "guard `{}` (refuses {} on `{}`) {why}",
                    guard.name, guard.refuses, guard.table
                ),
            })
        })
        .collect();
    Ok((findings, guards.len() as u64))
}

/// A trigger as the database holds it.
struct Trigger {
    name: String,
    table: String,
    enabled: bool,
    /// SQLite: its `CREATE TRIGGER` text, whitespace folded. PostgreSQL:
    /// its `tgtype`, whether it fires unconditionally on every column, its
    /// function and that function's body.
    definition: String,
}

fn sqlite_triggers(tx: &mut dyn Tx) -> Result<Vec<Trigger>, Error> {
    tx.query(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'",
        &[],
    )?
    .iter()
    .map(|row| {
        Ok(Trigger {
            name: row.text("name")?,
            table: row.text("tbl_name")?,
            enabled: true,
            definition: fold(&row.opt_text("sql")?.unwrap_or_default()),
        })
    })
    .collect()
}

fn postgres_triggers(tx: &mut dyn Tx) -> Result<Vec<Trigger>, Error> {
    let sql = "SELECT t.tgname::text AS name, c.relname::text AS table_name, \
               t.tgenabled::text AS enabled, t.tgtype::int8 AS kind, \
               (t.tgqual IS NULL AND t.tgattr::text = '') AS every_row, \
               p.proname::text AS function, p.prosrc AS body \
               FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
               JOIN pg_proc p ON p.oid = t.tgfoid \
               WHERE NOT t.tgisinternal \
               AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())";
    tx.query(sql, &[])?
        .iter()
        .map(|row| {
            // `O`: fires in origin and local sessions; `A`: always. `D` is
            // disabled, `R` fires only on replicas.
            let enabled = matches!(row.text("enabled")?.as_str(), "O" | "A");
            Ok(Trigger {
                name: row.text("name")?,
                table: row.text("table_name")?,
                enabled,
                definition: pg_definition(
                    row.int("kind")?,
                    row.int("every_row")? != 0,
                    &row.text("function")?,
                    &row.text("body")?,
                ),
            })
        })
        .collect()
}

fn pg_definition(tgtype: i64, every_row: bool, function: &str, body: &str) -> String {
    format!("{tgtype} {every_row} {function} {}", fold(body))
}

fn expected_definition(dialect: Dialect, guard: &Guard) -> String {
    match dialect {
        Dialect::Sqlite => {
            let message = SQLITE_MESSAGES
                .iter()
                .find(|(table, _)| *table == guard.table)
                .map_or("", |(_, message)| message);
            format!(
                "CREATE TRIGGER {} BEFORE {} ON {} BEGIN SELECT RAISE(ABORT, '{message}'); END",
                guard.name, guard.refuses, guard.table
            )
        }
        Dialect::Postgres => {
            pg_definition(guard.pg_type, true, "promptpack_append_only", PG_GUARD_BODY)
        }
    }
}

/// `text` with every run of whitespace one space, trimmed.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `Err(damaged)` for the first of `findings`, if any.
fn refuse_any(findings: Vec<Finding>) -> Result<(), Error> {
    match findings.into_iter().next() {
        Some(finding) => Err(finding.into_error()),
        None => Ok(()),
    }
}

/// Whether the schema table records checksums (a catalog from before them
/// does not, until its next migrate).
fn has_checksums(tx: &mut dyn Tx) -> Result<bool, Error> {
    let sql = match tx.dialect() {
        Dialect::Sqlite => {
            "SELECT COUNT(*) AS found FROM pragma_table_info('promptpack_schema') \
             WHERE name = 'checksum'"
        }
        Dialect::Postgres => {
            "SELECT COUNT(*) AS found FROM information_schema.columns \
             WHERE table_schema = current_schema() \
             AND table_name = 'promptpack_schema' AND column_name = 'checksum'"
        }
    };
    let row = tx.query_opt(sql, &[])?;
    Ok(row.map(|row| row.int("found")).transpose()?.unwrap_or(0) > 0)
}

/// A migration's checksum: SHA-256 of its text with line ends as `\n`
/// (a checkout that turns them into `\r\n` changes no migration), as
/// lowercase hex.
fn checksum(sql: &str) -> String {
    let digest = Sha256::digest(sql.replace("\r\n", "\n").as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `sha256:` and the first 12 hex digits of a checksum, for messages.
fn short(checksum: &str) -> String {
    format!("sha256:{}", checksum.get(..12).unwrap_or(checksum))
}

fn latest(migrations: &[Migration]) -> i64 {
    migrations.last().map_or(0, |m| m.version)
}

/// Whether the store holds a catalog's schema, of any version: what a
/// writer checks so that only `init` makes a catalog.
pub(crate) fn has_schema(store: &mut Store) -> Result<bool, Error> {
    match store.read(&mut |tx| applied(tx)) {
        Ok(version) => Ok(version > 0),
        Err(error) if error.code() == ErrorCode::NotConfigured => Ok(false),
        Err(error) => Err(error),
    }
}

fn applied(tx: &mut dyn Tx) -> Result<i64, Error> {
    let row = tx.query_opt("SELECT MAX(version) AS version FROM promptpack_schema", &[])?;
    Ok(row
        .map(|r| r.opt_int("version"))
        .transpose()?
        .flatten()
        .unwrap_or(0))
}

fn newer(current: i64, latest: i64) -> Error {
    Error::new(
        ErrorCode::NotConfigured,
        format!(
            "the catalog's schema is at version {current}, newer than this promptpack knows ({latest}): use a newer promptpack"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files of `migrations/<dialect>/`, by name.
    fn folder(dialect: &str) -> Vec<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(dialect);
        let mut names: Vec<String> = std::fs::read_dir(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|entry| {
                let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                entry.file_name().to_string_lossy().into_owned()
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_list_holds_every_migration_file_in_order() {
        let listed: Vec<String> = FILES.iter().map(|(_, name)| name.to_string()).collect();
        for dialect in ["sqlite", "postgres"] {
            assert_eq!(listed, folder(dialect), "migrations/{dialect}/");
        }
        for (index, (version, name)) in FILES.iter().enumerate() {
            assert_eq!(*version, index as i64 + 1, "{name}: versions are 1, 2, …");
            let number: Option<i64> = name.split('_').next().and_then(|n| n.parse().ok());
            assert_eq!(number, Some(*version), "{name} is named after its version");
        }
    }

    /// The dialects built in, each with its folder under `migrations/`.
    const DIALECTS: &[(Dialect, &str)] = &[
        #[cfg(feature = "sqlite")]
        (Dialect::Sqlite, "sqlite"),
        #[cfg(feature = "postgres")]
        (Dialect::Postgres, "postgres"),
    ];

    /// A dialect's list is its own folder's files, text for text: a store
    /// given the other dialect's migrations fails here.
    #[test]
    fn each_dialect_is_given_its_own_folders_migrations() {
        assert!(!DIALECTS.is_empty(), "no store built in");
        for &(dialect, name) in DIALECTS {
            let list = migrations(dialect);
            let names: Vec<String> = list.iter().map(|m| m.name.to_string()).collect();
            assert_eq!(names, folder(name), "{dialect:?}");
            for migration in list {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("migrations")
                    .join(name)
                    .join(migration.name);
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(migration.sql == text, "{dialect:?}: {}", path.display());
            }
        }
    }

    /// The checksums every catalog this promptpack migrated recorded
    /// (`sha256sum` of the files): a migration's text changed, or a
    /// dialect given another list, and each of those catalogs is refused
    /// (`catalog verify`'s `migration` finding).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[test]
    fn the_embedded_migrations_keep_the_checksums_catalogs_recorded() {
        #[rustfmt::skip]
        const RECORDED: [(Dialect, &str, &str); 16] = [
            (Dialect::Sqlite, "0001_catalog.sql", "2ee3a6be4d7b0ddfaf0d740e440985e1734aec894c3f4ac7e7c3f0478799c1cd"),
            (Dialect::Sqlite, "0002_label_arms.sql", "03003a4892182e5f2ea199c14dac448a69489256f4c9a664878f7d94724247be"),
            (Dialect::Sqlite, "0003_no_truncate.sql", "88decd4b6664b221894601f800261fab5d3e0ff034b1ed9c42cf3a7d0f472149"),
            (Dialect::Sqlite, "0004_console_users.sql", "afe27557c238027b33f4e93998494e6388f7df98a26b37bce64cffca5f45a116"),
            (Dialect::Sqlite, "0005_registered_builds.sql", "a887420ad12887df3f918685d5ab12be8fd984530ed484be2a5172235930655d"),
            (Dialect::Sqlite, "0006_console_user_audit.sql", "44196a0c9aa07dfebf41fec42bf1a7c0a5ee417eb76db7dbe5159d56d17e0f3a"),
            (Dialect::Sqlite, "0007_console_sessions.sql", "5c95cbdb4f5beba910842b580d4c98d1bd7f9604c7277929d8239cc84d9552f6"),
            (Dialect::Sqlite, "0008_conversations.sql", "98ea7971565abd0e56fb840ec3935482fdf8c1feed129c66dbbd5d4c3cbebda8"),
            (Dialect::Postgres, "0001_catalog.sql", "9bdc561aac81a9cad45c4cb47e671c3cd045e94dc9c0deeb1a946604b24794bd"),
            (Dialect::Postgres, "0002_label_arms.sql", "8bb767c98e33196dd4c92e21e126b895f0295c3574a5df58469090fbe61a0943"),
            (Dialect::Postgres, "0003_no_truncate.sql", "038efb6d08ce69c26e6d7c5d309eca611c71a24bc1e1821bbb3a34f6c84ba6e2"),
            (Dialect::Postgres, "0004_console_users.sql", "e2f317b98bf184412aac9838a237603ac7c84cc3762e4d948f2f5a704a8e04b4"),
            (Dialect::Postgres, "0005_registered_builds.sql", "de4ef3a35c6690b20566d63e66c31cd96090d8e34bdc6742b6a53d2635f8b21c"),
            (Dialect::Postgres, "0006_console_user_audit.sql", "a736ed7c97d295b5856f7adc80f0922bdf142978fb8eb7733c483fd01c09ec34"),
            (Dialect::Postgres, "0007_console_sessions.sql", "510a8e66073d49b3803e1b2d8ede01bd4f35fc9ba8c39955fbedecc7b8185c6e"),
            (Dialect::Postgres, "0008_conversations.sql", "087b0bea16f06d2ebc354fef45a2e0df7ea8e9cdd2a1abb9112cd81e26669f9a"),
        ];
        let embedded: Vec<(Dialect, &str, String)> = [Dialect::Sqlite, Dialect::Postgres]
            .into_iter()
            .flat_map(|dialect| {
                migrations(dialect)
                    .iter()
                    .map(move |m| (dialect, m.name, checksum(m.sql)))
            })
            .collect();
        let recorded: Vec<(Dialect, &str, String)> = RECORDED
            .iter()
            .map(|&(dialect, name, sum)| (dialect, name, sum.to_string()))
            .collect();
        assert_eq!(embedded, recorded);
    }

    #[test]
    fn checksums_ignore_how_a_checkout_ends_lines() {
        assert_eq!(checksum("a;\r\nb;\n"), checksum("a;\nb;\n"));
        assert_ne!(checksum("a;\n"), checksum("b;\n"));
        assert_eq!(checksum("").len(), 64);
    }
}
