//! The embedded store: one SQLite file, in WAL mode so that readers never
//! wait for the writer, with a busy timeout so that writers from other
//! threads and processes queue instead of failing.

use super::{Cell, Dialect, Param, Row, Tx, Work, numbered_parameters};
use promptpack_core::{Error, ErrorCode};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// How long a writer waits for another one before the write is
/// `unavailable`: long enough for a queue of publishers, short enough that
/// a stuck one is reported.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) struct SqliteStore {
    connection: Connection,
    path: String,
}

impl SqliteStore {
    /// Opens (creating it and its folder when missing) the catalog file.
    pub fn open(path: &Path, create: bool) -> Result<SqliteStore, Error> {
        let shown = path.display().to_string();
        if !create && !path.exists() {
            // A reader pointed at the wrong path must not leave an empty
            // catalog behind it.
            return Err(Error::new(
                ErrorCode::NotConfigured,
                format!("no catalog at {shown} (`promptpack catalog init` creates one)"),
            ));
        }
        if let Some(parent) = path
            .parent()
            .filter(|p| create && !p.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "cannot create the catalog's folder {}: {e}",
                        parent.display()
                    ),
                )
            })?;
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let connection =
            Connection::open_with_flags(path, flags).map_err(|e| store_error(&shown, &e))?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| store_error(&shown, &e))?;
        // The first statement that reads the file: a file that is not a
        // database fails here, as `not_configured`.
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| store_error(&shown, &e))?;
        connection
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| store_error(&shown, &e))?;
        Ok(SqliteStore {
            connection,
            path: shown,
        })
    }

    pub fn transaction<T>(&mut self, write: bool, work: Work<'_, T>) -> Result<T, Error> {
        // A write takes the write lock at BEGIN, so that two writers never
        // both read the same latest version and then race to insert.
        let behavior = if write {
            TransactionBehavior::Immediate
        } else {
            TransactionBehavior::Deferred
        };
        let path = self.path.clone();
        let transaction = self
            .connection
            .transaction_with_behavior(behavior)
            .map_err(|e| store_error(&path, &e))?;
        let mut tx = SqliteTx {
            transaction,
            path: &path,
        };
        let value = work(&mut tx)?;
        tx.transaction
            .commit()
            .map_err(|e| store_error(&path, &e))?;
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
        let fail = |e: rusqlite::Error| store_error(path, &e);
        let mut statement = self
            .transaction
            .prepare_cached(&numbered_parameters(sql))
            .map_err(fail)?;
        let columns = statement.column_count();
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
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Error> {
        let path = self.path;
        if params.is_empty() && !sql.contains('$') {
            // Migrations: several statements in one text.
            self.transaction
                .execute_batch(sql)
                .map_err(|e| store_error(path, &e))?;
            return Ok(0);
        }
        let mut statement = self
            .transaction
            .prepare_cached(&numbered_parameters(sql))
            .map_err(|e| store_error(path, &e))?;
        let bound = bind(params);
        let changed = statement
            .execute(rusqlite::params_from_iter(bound.iter()))
            .map_err(|e| store_error(path, &e))?;
        Ok(changed as u64)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}

/// A SQLite error as the catalog's: a file that is not a database, or a
/// missing table, is `not_configured`; a duplicate key `already_exists`;
/// anything else (locked past the timeout, disk full, I/O) `unavailable`.
fn store_error(path: &str, error: &rusqlite::Error) -> Error {
    use rusqlite::ffi::ErrorCode as Sqlite;
    let code = match error.sqlite_error_code() {
        Some(Sqlite::NotADatabase) => ErrorCode::NotConfigured,
        Some(Sqlite::ConstraintViolation)
            if error.to_string().contains("UNIQUE") || error.to_string().contains("PRIMARY") =>
        {
            ErrorCode::AlreadyExists
        }
        _ if error.to_string().contains("no such table") => ErrorCode::NotConfigured,
        _ => ErrorCode::Unavailable,
    };
    let hint = match code {
        ErrorCode::NotConfigured if error.to_string().contains("no such table") => {
            ": the catalog's schema is not applied (run `promptpack catalog init`)"
        }
        ErrorCode::NotConfigured => " (give the path of a catalog, or of a file to create)",
        _ => "",
    };
    Error::new(code, format!("catalog {path}: {error}{hint}"))
}
