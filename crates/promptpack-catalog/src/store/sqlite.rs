//! The embedded store: one SQLite file, in WAL mode so that readers never
//! wait for the writer, with a busy timeout so that writers from other
//! threads and processes queue instead of failing.

use super::{Cell, Dialect, Mode, Param, Row, Tx, Work, numbered_parameters};
use crate::file_identity::FileIdentity;
use promptpack_core::{Error, ErrorCode};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one before the write is
/// `unavailable`: long enough for a queue of publishers, short enough that
/// a stuck one is reported.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The table every catalog has: its schema's versions.
const SCHEMA_TABLE: &str = "promptpack_schema";

/// Opens `path` for `access` and reads its table names: the first read of
/// the file, where a file that is not a database fails.
fn open_file(path: &Path, access: Mode) -> rusqlite::Result<(Connection, Vec<String>)> {
    let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX
        | match access {
            Mode::Read => OpenFlags::SQLITE_OPEN_READ_ONLY,
            Mode::Write => OpenFlags::SQLITE_OPEN_READ_WRITE,
            Mode::Create => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        };
    let connection = Connection::open_with_flags(path, flags)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    let tables = user_tables(&connection)?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    Ok((connection, tables))
}

/// Opens `path` read-only in SQLite's `immutable` mode: no locks, no
/// `-shm` file, the file read as it is.
fn open_snapshot(path: &Path) -> rusqlite::Result<(Connection, Vec<String>)> {
    let uri = format!("file:{}?immutable=1", uri_path(path));
    let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI;
    let connection = Connection::open_with_flags(uri, flags)?;
    let tables = user_tables(&connection)?;
    Ok((connection, tables))
}

/// Whether a read-only open failed because SQLite could not make the
/// files a WAL reader shares, in a folder it cannot write.
fn read_only_folder(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

/// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped, which
/// would otherwise end the path or start an escape.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// The names of the database's own tables (not SQLite's internal ones).
fn user_tables(connection: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut statement = connection.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )?;
    let names = statement.query_map([], |row| row.get::<_, String>(0))?;
    names.collect()
}

pub(crate) struct SqliteStore {
    connection: Connection,
    path: String,
    /// The file opened, and which file it was: a file moved over the path
    /// (a backup restored with `mv`) or a file removed would otherwise
    /// leave the connection reading the old, unlinked file and writing
    /// what nobody sees again.
    file: PathBuf,
    identity: Option<FileIdentity>,
    /// Set when the catalog is read from a folder this process cannot
    /// write, with no writer at work (no `-shm` file to share): the file is
    /// read through SQLite's `immutable` mode, which cannot follow a writer,
    /// so every read opens it anew and sees the file as it is then.
    snapshot_of: Option<PathBuf>,
}

impl SqliteStore {
    /// Opens the catalog file for `access`: only [`Mode::Create`] makes a
    /// missing file (and its folder) or turns on WAL; [`Mode::Read`] opens
    /// the file read-only, so that reading another application's database,
    /// or a catalog on a read-only disk, changes nothing. A file that is not
    /// a catalog is refused before anything touches it.
    pub fn open(path: &Path, access: Mode) -> Result<SqliteStore, Error> {
        let shown = path.display().to_string();
        if access != Mode::Create && !path.exists() {
            // A reader or writer pointed at the wrong path must not leave an
            // empty catalog behind it.
            return Err(Error::new(
                ErrorCode::NotConfigured,
                format!("no catalog at {shown} (`promptpack catalog init` creates one)"),
            ));
        }
        if let Some(parent) = path
            .parent()
            .filter(|p| access == Mode::Create && !p.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "cannot create the catalog's folder {}: {e}",
                        parent.display()
                    ),
                )
                .caused_by(e)
            })?;
        }
        let (connection, tables, snapshot_of) = match open_file(path, access) {
            Ok((connection, tables)) => (connection, tables, None),
            // A WAL catalog in a folder this process cannot write, with no
            // writer at work: SQLite cannot make the `-shm` file a reader
            // shares, so read the file as it is.
            Err(error) if access == Mode::Read && read_only_folder(&error) => {
                let (connection, tables) =
                    open_snapshot(path).map_err(|e| store_error(&shown, e))?;
                (connection, tables, Some(path.to_path_buf()))
            }
            Err(error) => return Err(store_error(&shown, error)),
        };
        let is_catalog = tables.iter().any(|name| name == SCHEMA_TABLE);
        if !is_catalog && (access != Mode::Create || !tables.is_empty()) {
            let holds = match tables.len() {
                0 => "an empty database".to_string(),
                1 => "a database of another application (1 table)".to_string(),
                n => format!("a database of another application ({n} tables)"),
            };
            let advice = match access {
                Mode::Create => "give the path of a catalog, or of a file to create",
                _ => "`promptpack catalog init` creates one at a new path",
            };
            return Err(Error::new(
                ErrorCode::NotConfigured,
                format!("{shown} is not a promptpack catalog: it holds {holds} ({advice})"),
            ));
        }
        if access == Mode::Create {
            // Persistent in the file: readers never wait for the writer.
            connection
                .pragma_update(None, "journal_mode", "WAL")
                .map_err(|e| store_error(&shown, e))?;
        }
        Ok(SqliteStore {
            connection,
            path: shown,
            file: path.to_path_buf(),
            identity: FileIdentity::of(path),
            snapshot_of,
        })
    }

    /// Refuses a transaction once the file at the path is no longer the
    /// file the connection holds (moved over, or removed). Not opened
    /// again in its place: SQLite names a file's WAL after its path, so a
    /// new connection beside the old one would read the old file's WAL as
    /// the new file's. A new `Catalog` opens whatever is there then.
    fn check_the_path(&self) -> Result<(), Error> {
        if self.snapshot_of.is_some() || FileIdentity::of(&self.file) == self.identity {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "catalog {}: the file at this path was replaced or removed since it was opened; \
                 nothing was read or written: open the catalog again",
                self.path
            ),
        ))
    }

    /// The file's path, for messages.
    pub fn shown(&self) -> &str {
        &self.path
    }

    pub fn transaction<T>(&mut self, write: bool, work: Work<'_, T>) -> Result<T, Error> {
        // A write takes the write lock at BEGIN, so that two writers never
        // both read the same latest version and then race to insert.
        let behavior = if write {
            TransactionBehavior::Immediate
        } else {
            TransactionBehavior::Deferred
        };
        self.check_the_path()?;
        let path = self.path.clone();
        if let Some(file) = &self.snapshot_of {
            // A writer may have come since: share its `-shm` when it has
            // made one, else read the file as it is now.
            self.connection = match open_file(file, Mode::Read) {
                Ok((connection, _)) => connection,
                Err(_) => open_snapshot(file).map_err(|e| store_error(&path, e))?.0,
            };
        }
        let transaction = self
            .connection
            .transaction_with_behavior(behavior)
            .map_err(|e| store_error(&path, e))?;
        let mut tx = SqliteTx {
            transaction,
            path: &path,
        };
        let value = work(&mut tx)?;
        tx.transaction.commit().map_err(|e| store_error(&path, e))?;
        Ok(value)
    }
}

struct SqliteTx<'t> {
    transaction: rusqlite::Transaction<'t>,
    path: &'t str,
}

fn bind<'a>(params: &'a [Param<'a>]) -> Vec<ToSqlOutput<'a>> {
    params
        .iter()
        .map(|param| match *param {
            Param::Text(text) | Param::OptText(Some(text)) => {
                ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes()))
            }
            Param::Int(value) | Param::OptInt(Some(value)) => {
                ToSqlOutput::Owned(Value::Integer(value))
            }
            Param::OptText(None) | Param::OptInt(None) => ToSqlOutput::Owned(Value::Null),
        })
        .collect()
}

impl Tx for SqliteTx<'_> {
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, Error> {
        let path = self.path;
        let fail = |e: rusqlite::Error| store_error(path, e);
        let mut statement = self
            .transaction
            .prepare_cached(&numbered_parameters(sql))
            .map_err(fail)?;
        let columns = statement.column_count();
        let names: std::sync::Arc<[String]> =
            statement.column_names().map(str::to_string).collect();
        let bound = bind(params);
        let mut rows = statement
            .query(rusqlite::params_from_iter(bound.iter()))
            .map_err(fail)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(fail)? {
            let mut cells = Vec::with_capacity(columns);
            for index in 0..columns {
                cells.push(match row.get_ref(index).map_err(fail)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(value) => Cell::Int(value),
                    ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
                        Cell::Text(String::from_utf8_lossy(bytes).into_owned())
                    }
                    ValueRef::Real(value) => Cell::Text(value.to_string()),
                });
            }
            out.push(Row {
                columns: names.clone(),
                cells,
            });
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Error> {
        let path = self.path;
        let mut statement = self
            .transaction
            .prepare_cached(&numbered_parameters(sql))
            .map_err(|e| store_error(path, e))?;
        let bound = bind(params);
        let changed = statement
            .execute(rusqlite::params_from_iter(bound.iter()))
            .map_err(|e| store_error(path, e))?;
        Ok(changed as u64)
    }

    fn batch(&mut self, sql: &str) -> Result<(), Error> {
        self.transaction
            .execute_batch(sql)
            .map_err(|e| store_error(self.path, e))
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}

/// A SQLite error as the catalog's, by its extended result code: a file
/// that is not a database is `not_configured`, a corrupt one `damaged`; a
/// duplicate key `already_exists`; another refused constraint, or text the
/// schema does not take, `invalid_request`; a statement the schema does not
/// fit `not_configured`; a lock held past the busy timeout, a full disk or
/// a failed read or write `unavailable`. The driver's error is kept as the
/// cause.
fn store_error(path: &str, error: rusqlite::Error) -> Error {
    let (code, hint) = classify(&error);
    Error::new(code, format!("catalog {path}: {error}{hint}")).caused_by(error)
}

fn classify(error: &rusqlite::Error) -> (ErrorCode, &'static str) {
    use rusqlite::ffi;
    let Some(failure) = error.sqlite_error() else {
        return match error {
            // A value the model cannot take (text that is not UTF-8, a
            // number out of range): what the database holds is not what
            // promptpack writes.
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::Utf8Error(..)
            | rusqlite::Error::InvalidColumnType(..) => (ErrorCode::Damaged, ""),
            rusqlite::Error::NulError(_) => (ErrorCode::InvalidRequest, ""),
            _ => (ErrorCode::Unavailable, ""),
        };
    };
    match failure.extended_code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
            return (ErrorCode::AlreadyExists, "");
        }
        ffi::SQLITE_CONSTRAINT_TRIGGER => {
            return (
                ErrorCode::InvalidRequest,
                ": the catalog's history is append-only",
            );
        }
        _ => {}
    }
    match failure.code {
        ffi::ErrorCode::NotADatabase => (
            ErrorCode::NotConfigured,
            " (give the path of a catalog, or of a file to create)",
        ),
        ffi::ErrorCode::DatabaseCorrupt => (
            ErrorCode::Damaged,
            ": the file is corrupt (restore it from a backup)",
        ),
        ffi::ErrorCode::ConstraintViolation | ffi::ErrorCode::TooBig => {
            (ErrorCode::InvalidRequest, "")
        }
        // Our statements are fixed: one the database cannot run means a
        // schema other than the one this promptpack writes.
        ffi::ErrorCode::Unknown => (
            ErrorCode::NotConfigured,
            ": the database's schema is not the one this promptpack writes (`promptpack catalog init` migrates an older catalog)",
        ),
        _ => (ErrorCode::Unavailable, ""),
    }
}
