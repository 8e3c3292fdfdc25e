//! The two stores behind one interface: a connection that runs a closure in
//! a read or a write transaction, and a transaction that runs SQL. The
//! catalog's statements are written once, with `$1`-style parameters, over
//! a schema both databases share; each backend maps its own values, errors
//! and locking onto these.

use crate::timeouts::Timeouts;
use promptpack_core::{Error, ErrorCode};

#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

/// A parameter of a statement.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Int(i64),
    OptInt(Option<i64>),
}

/// One value of a result row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
}

/// A result row, read by column name: a statement that lists its columns
/// in another order, or a store that returns them so, reads the same.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// The names of the columns, shared by every row of one result.
    pub columns: std::sync::Arc<[String]>,
    pub cells: Vec<Cell>,
}

impl Row {
    fn cell(&self, column: &str) -> Result<&Cell, Error> {
        self.columns
            .iter()
            .position(|name| name == column)
            .and_then(|index| self.cells.get(index))
            .ok_or_else(|| schema_mismatch(column, "a column of the result"))
    }

    pub fn text(&self, column: &str) -> Result<String, Error> {
        match self.cell(column)? {
            Cell::Text(text) => Ok(text.clone()),
            _ => Err(schema_mismatch(column, "text")),
        }
    }

    pub fn opt_text(&self, column: &str) -> Result<Option<String>, Error> {
        match self.cell(column)? {
            Cell::Null => Ok(None),
            Cell::Text(text) => Ok(Some(text.clone())),
            Cell::Int(_) => Err(schema_mismatch(column, "text or NULL")),
        }
    }

    pub fn int(&self, column: &str) -> Result<i64, Error> {
        match self.cell(column)? {
            Cell::Int(value) => Ok(*value),
            _ => Err(schema_mismatch(column, "an integer")),
        }
    }

    pub fn opt_int(&self, column: &str) -> Result<Option<i64>, Error> {
        match self.cell(column)? {
            Cell::Null => Ok(None),
            Cell::Int(value) => Ok(Some(*value)),
            Cell::Text(_) => Err(schema_mismatch(column, "an integer or NULL")),
        }
    }
}

fn schema_mismatch(column: &str, wanted: &str) -> Error {
    Error::new(
        ErrorCode::NotConfigured,
        format!(
            "column `{column}` of a catalog row is not {wanted}: the database's schema is not the one this promptpack writes"
        ),
    )
}

/// Which SQL the store speaks where the two differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A transaction. Statements use `$1`, `$2`, … for parameters.
pub(crate) trait Tx {
    /// Rows of a query.
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, Error>;
    /// Runs one statement, prepared; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Error>;
    /// Runs `sql`, one or more statements without parameters, as a batch
    /// (a migration, a lock, `ANALYZE`): nothing prepared, nothing counted.
    fn batch(&mut self, sql: &str) -> Result<(), Error>;
    /// Which SQL this store speaks.
    fn dialect(&self) -> Dialect;
}

impl dyn Tx + '_ {
    /// The one row a query must return, or `None`.
    pub fn query_opt(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Option<Row>, Error> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Brings the query planner's statistics up to date after many rows
    /// were added at once (PostgreSQL's `ANALYZE`; SQLite plans these
    /// queries from its indexes alone).
    pub fn refresh_statistics(&mut self) -> Result<(), Error> {
        match self.dialect() {
            Dialect::Postgres => self.batch("ANALYZE prompts, prompt_versions, labels"),
            Dialect::Sqlite => Ok(()),
        }
    }

    /// `SELECT … FOR UPDATE` where the store locks rows (PostgreSQL); SQLite
    /// holds the whole database for a write transaction already.
    pub fn for_update(&self) -> &'static str {
        match self.dialect() {
            Dialect::Postgres => " FOR UPDATE",
            Dialect::Sqlite => "",
        }
    }
}

/// What a connection may do to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Read only: a SQLite file is opened read-only and must be a catalog.
    Read,
    /// Read and write a catalog that exists.
    Write,
    /// As `Write`, creating a missing SQLite file and its folder.
    Create,
}

/// A connection to one of the stores, and what it may do.
pub(crate) struct Store {
    backend: Backend,
    access: Mode,
}

/// The connection itself.
enum Backend {
    #[cfg(feature = "sqlite")]
    Sqlite(sqlite::SqliteStore),
    #[cfg(feature = "postgres")]
    // Boxed: the client and its prepared statements are several times the
    // size of a SQLite connection.
    Postgres(Box<postgres::PostgresStore>),
}

/// The closure a transaction runs.
pub(crate) type Work<'w, T> = &'w mut dyn FnMut(&mut dyn Tx) -> Result<T, Error>;

impl Store {
    /// Connects to `url`: `sqlite:PATH` (or a path), `postgres://…` or
    /// `postgresql://…`, for `access`.
    /// SQLite waits on no network: `timeouts` bound PostgreSQL's waits.
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub fn connect(url: &str, access: Mode, timeouts: &Timeouts) -> Result<Store, Error> {
        match StoreUrl::parse(url)? {
            #[cfg(feature = "sqlite")]
            StoreUrl::Sqlite(path) => Ok(Store {
                backend: Backend::Sqlite(sqlite::SqliteStore::open(&path, access)?),
                access,
            }),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(url) => Ok(Store {
                backend: Backend::Postgres(Box::new(postgres::PostgresStore::connect(
                    &url, timeouts,
                )?)),
                access,
            }),
        }
    }

    /// Runs `work` in a transaction that sees one snapshot and writes nothing.
    pub fn read<T>(&mut self, work: Work<'_, T>) -> Result<T, Error> {
        match &mut self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(store) => store.transaction(false, work),
            #[cfg(feature = "postgres")]
            Backend::Postgres(store) => store.transaction(false, work),
        }
    }

    /// Runs `work` in a write transaction, committed only when it returns
    /// `Ok`: a catalog write is all or nothing. Writers to one prompt are
    /// serialized by the database (SQLite's write lock, PostgreSQL's row
    /// locks), so that two never compute the same version number.
    pub fn write<T>(&mut self, work: Work<'_, T>) -> Result<T, Error> {
        if self.access == Mode::Read {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "catalog {}: connected to read (`Catalog::connect`), and this writes: connect with `Catalog::connect_with(url, Access::Write, …)`",
                    self.shown()
                ),
            ));
        }
        match &mut self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(store) => store.transaction(true, work),
            #[cfg(feature = "postgres")]
            Backend::Postgres(store) => store.transaction(true, work),
        }
    }

    /// Which SQL the store speaks: what chooses its migrations, which the
    /// catalog holds, not the store.
    pub fn dialect(&self) -> Dialect {
        match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(_) => Dialect::Sqlite,
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => Dialect::Postgres,
        }
    }

    /// A statement that makes concurrent first uses of an empty database
    /// apply the migrations one after the other (PostgreSQL's transaction
    /// advisory lock; SQLite's write transaction is exclusive already).
    pub fn migration_lock(&self) -> Option<&'static str> {
        match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(_) => None,
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => Some("SELECT pg_advisory_xact_lock(7325163)"),
        }
    }

    /// The store as messages name it: the SQLite file's path, or the
    /// PostgreSQL URL without its password.
    pub fn shown(&self) -> &str {
        match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(store) => store.shown(),
            #[cfg(feature = "postgres")]
            Backend::Postgres(store) => store.shown(),
        }
    }

    /// Which store this is, for messages: `sqlite` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(_) => "sqlite",
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => "postgres",
        }
    }
}

/// A store URL, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreUrl {
    #[cfg(feature = "sqlite")]
    Sqlite(std::path::PathBuf),
    #[cfg(feature = "postgres")]
    Postgres(String),
}

impl StoreUrl {
    /// `sqlite:PATH`, `sqlite://PATH`, `postgres://…`, `postgresql://…`; a
    /// bare path is a SQLite file.
    pub fn parse(url: &str) -> Result<StoreUrl, Error> {
        if url.trim().is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "the catalog URL is empty: give `sqlite:PATH` or `postgres://…`",
            ));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return Ok(StoreUrl::Postgres(url.to_string()));
            #[cfg(not(feature = "postgres"))]
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "this promptpack was built without PostgreSQL: enable promptpack-catalog's `postgres` feature",
            ));
        }
        let path = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .unwrap_or(url);
        if path.trim().is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("`{url}` names no file: give `sqlite:PATH`"),
            ));
        }
        if path.contains(":memory:") || path.contains("mode=memory") {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`{url}` is an in-memory database, which keeps nothing once the command ends: give the path of a file"
                ),
            ));
        }
        if let Some((scheme, _)) = path.split_once("://") {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`{scheme}://` is not a catalog store: give `sqlite:PATH` or `postgres://…`"
                ),
            ));
        }
        #[cfg(feature = "sqlite")]
        return Ok(StoreUrl::Sqlite(std::path::PathBuf::from(path)));
        #[cfg(not(feature = "sqlite"))]
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "`{path}` would be a SQLite catalog, and this promptpack was built without SQLite: enable promptpack-catalog's `sqlite` feature"
            ),
        ));
    }
}

/// `$1`, `$2`, … as SQLite's numbered `?1`, `?2`, …: a numbered parameter
/// binds by its number, whatever the order it appears in.
#[cfg(feature = "sqlite")]
pub(crate) fn numbered_parameters(sql: &str) -> std::borrow::Cow<'_, str> {
    if sql.contains('$') {
        std::borrow::Cow::Owned(sql.replace('$', "?"))
    } else {
        std::borrow::Cow::Borrowed(sql)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_column_name_in_any_order() {
        let row = Row {
            columns: ["version", "prompt_id"].map(String::from).into(),
            cells: vec![Cell::Int(3), Cell::Text("greeter".into())],
        };
        assert_eq!(row.text("prompt_id").ok(), Some("greeter".to_string()));
        assert_eq!(row.int("version").ok(), Some(3));
        let missing = row.text("author").err().map(|e| e.code());
        assert_eq!(missing, Some(ErrorCode::NotConfigured));
        let wrong_kind = row.int("prompt_id").err().map(|e| e.code());
        assert_eq!(wrong_kind, Some(ErrorCode::NotConfigured));
    }

    #[test]
    fn urls_name_their_store() {
        #[cfg(feature = "sqlite")]
        {
            let path = |p: &str| StoreUrl::Sqlite(std::path::PathBuf::from(p));
            assert_eq!(StoreUrl::parse("sqlite:a/b.db").ok(), Some(path("a/b.db")));
            assert_eq!(
                StoreUrl::parse("sqlite:///tmp/x.db").ok(),
                Some(path("/tmp/x.db"))
            );
            assert_eq!(StoreUrl::parse("cat.db").ok(), Some(path("cat.db")));
        }
        for bad in [
            "",
            "  ",
            "mysql://h/db",
            "sqlite:",
            "sqlite://",
            "sqlite::memory:",
            ":memory:",
            "sqlite:file::memory:?cache=shared",
        ] {
            let error = StoreUrl::parse(bad).err().map(|e| e.code());
            assert_eq!(error, Some(ErrorCode::InvalidRequest), "{bad:?}");
        }
    }
}
