//! The shared store: PostgreSQL through `tokio-postgres`, with every wait
//! on the server bounded (see [`BoundedConnection`]). Writers to one prompt
//! are serialized by a row lock on the prompt (`SELECT … FOR UPDATE`), so
//! version numbers have no gaps and no repeats however many instances
//! publish at once.

use super::{Cell, Dialect, Param, Row, Tx, Work};
use crate::redact::redact_url;
use crate::timeouts::Timeouts;
use promptpack_core::{Error, ErrorCode};
use std::collections::VecDeque;
use std::future::Future;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio_postgres::tls::NoTlsStream;
use tokio_postgres::types::{ToSql, Type, WrongType};
use tokio_postgres::{AsyncMessage, Client, Config, NoTls, Notification, Socket};

/// TCP keepalives, unless the URL sets its own (`keepalives_idle`,
/// `keepalives_interval`, `keepalives_retries`): a server whose host is
/// gone (powered off, cut off) is noticed on an idle connection, such as a
/// listener's, after about 30 s instead of the system's two hours.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;

pub(crate) struct PostgresStore {
    config: Config,
    timeouts: Timeouts,
    shown: String,
    /// `None` once a wait ran past its bound or the connection was lost:
    /// the next transaction connects again.
    session: Option<Session>,
}

/// A connection to the server, or to a pooler in front of it.
///
/// Statements are unnamed (`query_typed`: parse, bind, describe, execute in
/// one round trip, the parameters' types given), never prepared by name and
/// kept: behind pgbouncer in transaction mode (what fleets put in front of
/// PostgreSQL) each transaction may run on another server connection, where
/// a statement prepared earlier does not exist, and a name this connection
/// prepared may already exist, left there by another client (`prepared
/// statement "s0" already exists`). An unnamed statement lives only until
/// the next one, within the same round trip. The parse it costs each time is
/// small beside the round trip, which a named statement needed too.
struct Session {
    connection: BoundedConnection,
}

impl PostgresStore {
    pub fn connect(url: &str, timeouts: &Timeouts) -> Result<PostgresStore, Error> {
        let shown = redact_url(url);
        let config = config(url, &shown)?;
        let connection = BoundedConnection::connect(&config, timeouts)
            .map_err(|failure| failure.into_error(&context(&shown)))?;
        Ok(PostgresStore {
            config,
            timeouts: *timeouts,
            shown,
            session: Some(Session { connection }),
        })
    }

    /// The URL without its password, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    pub fn transaction<T>(&mut self, write: bool, work: Work<'_, T>) -> Result<T, Error> {
        let context = context(&self.shown);
        let session = match &mut self.session {
            Some(session) if session.connection.is_usable() => session,
            slot => {
                // Dropped first: a lost connection's socket is closed before
                // another is opened.
                *slot = None;
                let connection = BoundedConnection::connect(&self.config, &self.timeouts)
                    .map_err(|failure| failure.into_error(&context))?;
                slot.insert(Session { connection })
            }
        };
        let result = run_transaction(session, &context, write, work);
        if !session.connection.is_usable() {
            // Closing it now ends the server's side of a transaction that
            // ran past its bound, and frees its locks, once the server runs.
            self.session = None;
        }
        result
    }
}

/// `work` between `BEGIN` and `COMMIT`, or `ROLLBACK` when it fails.
fn run_transaction<T>(
    session: &mut Session,
    context: &str,
    write: bool,
    work: Work<'_, T>,
) -> Result<T, Error> {
    let begin = if write {
        "BEGIN"
    } else {
        // One snapshot for every statement of a read.
        "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    };
    let fail = |failure: Failure| failure.into_error(context);
    session
        .connection
        .call(|client| client.batch_execute(begin))
        .map_err(fail)?;
    let mut tx = PostgresTx { session, context };
    match work(&mut tx) {
        Ok(value) => {
            tx.session
                .connection
                .call(|client| client.batch_execute("COMMIT"))
                .map_err(fail)?;
            Ok(value)
        }
        Err(error) => {
            let connection = &mut tx.session.connection;
            if connection.is_usable()
                && connection
                    .call(|client| client.batch_execute("ROLLBACK"))
                    .is_err()
            {
                // Never reused inside a transaction it could not end: the
                // server rolls back once the connection is closed.
                connection.abandon();
            }
            Err(error)
        }
    }
}

/// What messages name the store by.
fn context(shown: &str) -> String {
    format!("catalog {shown}")
}

/// The connection settings of `url` (`shown`, without its password, in
/// errors), with the TCP keepalives of this store unless the URL sets its
/// own.
pub(crate) fn config(url: &str, shown: &str) -> Result<Config, Error> {
    let mut config: Config = url.parse().map_err(|e: tokio_postgres::Error| {
        let detail = e.to_string();
        Error::new(
            ErrorCode::InvalidRequest,
            format!("catalog {shown}: not a PostgreSQL URL: {detail}"),
        )
        .caused_by(e)
    })?;
    config.keepalives(true);
    if !url.contains("keepalives_idle") {
        config.keepalives_idle(KEEPALIVE_IDLE);
    }
    if !url.contains("keepalives_interval") {
        config.keepalives_interval(KEEPALIVE_INTERVAL);
    }
    if !url.contains("keepalives_retries") {
        config.keepalives_retries(KEEPALIVE_RETRIES);
    }
    Ok(config)
}

/// A connection to PostgreSQL on which every wait is bounded: connecting
/// by [`Timeouts::connect`] (or the URL's `connect_timeout`), every request
/// by [`Timeouts::io`]. A request that runs past its bound leaves the
/// connection unusable ([`BoundedConnection::is_usable`]): its answer may
/// still come, and the connection is dropped rather than read further.
///
/// Only a timer bounds a wait on a stalled server: the kernel of a stopped
/// (SIGSTOP) or overloaded server still acknowledges TCP, so keepalives and
/// `tcp_user_timeout` see nothing wrong. The synchronous `postgres` client
/// has no timer for its requests; this drives `tokio-postgres` on a
/// current-thread runtime of its own, with `tokio::time::timeout` around
/// each request.
pub(crate) struct BoundedConnection {
    client: Client,
    driver: Driver,
}

/// What makes a request progress: the connection's socket, polled on the
/// calling thread while the request waits.
struct Driver {
    connection: tokio_postgres::Connection<Socket, NoTlsStream>,
    /// Notifications the connection received, until they are asked for.
    notifications: VecDeque<Notification>,
    /// The connection ended (an error, or the server closed it).
    ended: bool,
    /// A request ran past its bound (its answer may come later), or a
    /// transaction could not be ended.
    abandoned: bool,
    io: Duration,
    /// Last: the socket above is closed while its runtime still runs.
    runtime: Runtime,
}

/// A current-thread tokio runtime that waits for nothing when dropped:
/// dropping a connection returns at once whatever the network does (even
/// with a name lookup still running on the runtime's blocking thread).
/// `None` only while it is being dropped.
struct Runtime(Option<tokio::runtime::Runtime>);

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Runtime {
    fn new() -> Result<Runtime, Failure> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|runtime| Runtime(Some(runtime)))
            .map_err(Failure::Runtime)
    }

    /// `future`, or `None` when `bound` passed first.
    fn block_on_within<F: Future>(&self, bound: Duration, future: F) -> Option<F::Output> {
        let runtime = self.0.as_ref()?;
        // The timer is made inside the runtime, which it needs.
        runtime
            .block_on(async { tokio::time::timeout(bound, future).await })
            .ok()
    }
}

impl BoundedConnection {
    /// Connects with `config`, within the URL's `connect_timeout`, else
    /// `timeouts.connect`: TCP connect, TLS negotiation (none) and start-up
    /// alike, to every address the host has.
    pub fn connect(config: &Config, timeouts: &Timeouts) -> Result<BoundedConnection, Failure> {
        let runtime = Runtime::new()?;
        let bound = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(timeouts.connect);
        let (client, connection) = runtime
            .block_on_within(bound, config.connect(NoTls))
            .ok_or(Failure::TimedOut {
                bound,
                waiting_for: "connecting",
            })?
            .map_err(Failure::Postgres)?;
        Ok(BoundedConnection {
            client,
            driver: Driver {
                connection,
                notifications: VecDeque::new(),
                ended: false,
                abandoned: false,
                io: timeouts.io,
                runtime,
            },
        })
    }

    /// Whether requests can still be made: the connection neither ended
    /// nor has a request that ran past its bound.
    pub fn is_usable(&self) -> bool {
        !self.driver.ended && !self.driver.abandoned && !self.client.is_closed()
    }

    /// Makes the connection unusable: it is not in the state the next
    /// request expects.
    pub fn abandon(&mut self) {
        self.driver.abandoned = true;
    }

    /// The request `request` makes of the client, waited for at most
    /// [`Timeouts::io`].
    pub fn call<'c, T, F>(&'c mut self, request: impl FnOnce(&'c Client) -> F) -> Result<T, Failure>
    where
        F: Future<Output = Result<T, tokio_postgres::Error>>,
    {
        let BoundedConnection { client, driver } = self;
        if !driver.is_usable() {
            return Err(Failure::Unusable);
        }
        let mut request = std::pin::pin!(request(client));
        let bound = driver.io;
        let outcome = driver.drive_within(bound, |cx, _| match request.as_mut().poll(cx) {
            Poll::Ready(result) => Poll::Ready(result.map_err(Failure::Postgres)),
            Poll::Pending => Poll::Pending,
        });
        outcome.unwrap_or_else(|| {
            driver.abandoned = true;
            Err(Failure::TimedOut {
                bound,
                waiting_for: "an answer",
            })
        })
    }

    /// The next notification, waiting at most `within`; `None` when none
    /// came.
    pub fn next_notification(&mut self, within: Duration) -> Result<Option<Notification>, Failure> {
        let driver = &mut self.driver;
        if let Some(notification) = driver.notifications.pop_front() {
            return Ok(Some(notification));
        }
        if !driver.is_usable() {
            return Err(Failure::Unusable);
        }
        let outcome =
            driver.drive_within(within, |_, notifications| match notifications.pop_front() {
                Some(notification) => Poll::Ready(Ok(notification)),
                None => Poll::Pending,
            });
        // Nothing came: not an error, and the connection stays usable.
        outcome.transpose()
    }
}

impl Driver {
    fn is_usable(&self) -> bool {
        !self.ended && !self.abandoned
    }

    /// Polls the connection and `done` until `done` is ready, the
    /// connection ends, or `bound` passes (`None`).
    fn drive_within<T>(
        &mut self,
        bound: Duration,
        mut done: impl FnMut(&mut Context<'_>, &mut VecDeque<Notification>) -> Poll<Result<T, Failure>>,
    ) -> Option<Result<T, Failure>> {
        let Driver {
            connection,
            notifications,
            ended,
            runtime,
            ..
        } = self;
        let driving = std::future::poll_fn(|cx| {
            if let Err(error) = poll_connection(connection, notifications, ended, cx) {
                return Poll::Ready(Err(Failure::Postgres(error)));
            }
            match done(cx, notifications) {
                Poll::Pending if *ended => Poll::Ready(Err(Failure::Ended)),
                polled => polled,
            }
        });
        runtime.block_on_within(bound, driving)
    }
}

/// Reads what the connection received (answers go to the requests waiting
/// for them; notifications are kept) until it has nothing more for now.
/// An error ends the connection.
fn poll_connection(
    connection: &mut tokio_postgres::Connection<Socket, NoTlsStream>,
    notifications: &mut VecDeque<Notification>,
    ended: &mut bool,
    cx: &mut Context<'_>,
) -> Result<(), tokio_postgres::Error> {
    while !*ended {
        match connection.poll_message(cx) {
            Poll::Ready(Some(Ok(AsyncMessage::Notification(notification)))) => {
                notifications.push_back(notification);
            }
            // Notices (`… already exists, skipping`) say nothing the
            // catalog acts on.
            Poll::Ready(Some(Ok(_))) => {}
            Poll::Ready(Some(Err(error))) => {
                *ended = true;
                return Err(error);
            }
            Poll::Ready(None) => *ended = true,
            Poll::Pending => break,
        }
    }
    Ok(())
}

/// Why a request to the server failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server's error, or the client's.
    Postgres(tokio_postgres::Error),
    /// No answer within the bound.
    TimedOut {
        bound: Duration,
        waiting_for: &'static str,
    },
    /// The connection ended while the request waited.
    Ended,
    /// An earlier request ran past its bound, or the connection ended.
    Unusable,
    /// The client's runtime could not be started.
    Runtime(std::io::Error),
}

impl Failure {
    /// The catalog's error, its message starting with `context`.
    pub fn into_error(self, context: &str) -> Error {
        match self {
            Failure::Postgres(error) => postgres_error(context, error),
            Failure::TimedOut { bound, waiting_for } => {
                let seconds = bound.as_secs_f64();
                io_error(
                    context,
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no answer within {seconds} s while {waiting_for}: the server is stalled, overloaded or unreachable"
                    ),
                )
            }
            Failure::Ended => io_error(
                context,
                std::io::ErrorKind::ConnectionAborted,
                "the connection to the server ended".into(),
            ),
            Failure::Unusable => io_error(
                context,
                std::io::ErrorKind::NotConnected,
                "the connection was dropped after an earlier failure".into(),
            ),
            Failure::Runtime(error) => {
                let detail = error.to_string();
                Error::new(
                    ErrorCode::Unavailable,
                    format!("{context}: cannot start the client's runtime: {detail}"),
                )
                .caused_by(error)
            }
        }
    }
}

/// `unavailable`, caused by an I/O error of `kind` saying `detail`.
fn io_error(context: &str, kind: std::io::ErrorKind, detail: String) -> Error {
    let message = format!("{context}: {detail}");
    Error::new(ErrorCode::Unavailable, message).caused_by(std::io::Error::new(kind, detail))
}

/// A driver error as the catalog's, by its SQLSTATE when the server sent
/// one ([`code_of_sqlstate`]); without one, a value that does not fit its
/// column's type is `not_configured` (the schema is not this promptpack's),
/// and anything else (refused, lost or broken connection) `unavailable`.
fn postgres_error(context: &str, error: tokio_postgres::Error) -> Error {
    let (code, detail) = match error.as_db_error() {
        Some(db) => {
            let state = db.code().code();
            let code = code_of_sqlstate(state);
            let hint = if code == ErrorCode::NotConfigured && state == "42P01" {
                " (run `promptpack catalog init`)"
            } else {
                ""
            };
            let message = db.message();
            (code, format!("{message} (SQLSTATE {state}){hint}"))
        }
        None => {
            let source = std::error::Error::source(&error);
            let code = if source.is_some_and(|s| s.is::<WrongType>()) {
                ErrorCode::NotConfigured
            } else {
                ErrorCode::Unavailable
            };
            let detail = match source {
                Some(source) => format!("{error}: {source}"),
                None => error.to_string(),
            };
            (code, detail)
        }
    };
    Error::new(code, format!("{context}: {detail}")).caused_by(error)
}

/// The catalog's code for a server error, by its SQLSTATE
/// (<https://www.postgresql.org/docs/current/errcodes-appendix.html>):
///
/// - `unavailable` (a retry may succeed) for a server that cannot be
///   reached or cannot serve now: connection exceptions (08), too many
///   connections or no disk space (53), shutdown and cancelled statements
///   (57), system errors (58), serialization failures and deadlocks (40),
///   locks not available (55), a standby refusing writes (25), and any
///   code not listed here;
/// - `invalid_request` for what the request holds: data exceptions (22,
///   such as a NUL byte, 22021), integrity violations (23) but a unique
///   one, limits exceeded (54), and errors raised by PL/pgSQL (P0, such as
///   the append-only triggers refusing an `UPDATE`);
/// - `already_exists` for a unique violation (23505);
/// - `not_configured` for a database that is not what this promptpack
///   expects: an undefined table, column, function or schema, a syntax
///   error or missing privilege (42), no such database (3D), a feature the
///   server lacks (0A), and credentials it refuses (28);
/// - `damaged` for data the server found corrupt (XX001, XX002).
fn code_of_sqlstate(state: &str) -> ErrorCode {
    match state {
        "23505" => return ErrorCode::AlreadyExists,
        "XX001" | "XX002" => return ErrorCode::Damaged,
        _ => {}
    }
    match state.get(..2).unwrap_or_default() {
        "22" | "23" | "54" | "P0" => ErrorCode::InvalidRequest,
        "42" | "3D" | "3F" | "0A" | "28" => ErrorCode::NotConfigured,
        _ => ErrorCode::Unavailable,
    }
}

struct PostgresTx<'t> {
    session: &'t mut Session,
    context: &'t str,
}

impl PostgresTx<'_> {
    fn fail(&self) -> impl Fn(Failure) -> Error + '_ {
        |failure| failure.into_error(self.context)
    }
}

/// The parameters with their types, for an unnamed statement: the catalog's
/// columns are TEXT and BIGINT only (its migrations), so these are the types
/// the server would infer.
fn bind<'a>(params: &'a [Param<'a>]) -> Vec<(&'a (dyn ToSql + Sync), Type)> {
    params
        .iter()
        .map(|param| -> (&(dyn ToSql + Sync), Type) {
            match param {
                Param::Text(text) => (text, Type::TEXT),
                Param::OptText(text) => (text, Type::TEXT),
                Param::Int(value) => (value, Type::INT8),
                Param::OptInt(value) => (value, Type::INT8),
            }
        })
        .collect()
}

impl Tx for PostgresTx<'_> {
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, Error> {
        let bound = bind(params);
        let rows = self
            .session
            .connection
            .call(|client| client.query_typed(sql, &bound))
            .map_err(self.fail())?;
        let mut out = Vec::with_capacity(rows.len());
        // Every row has the statement's columns.
        let names: std::sync::Arc<[String]> = rows
            .first()
            .map(|row| {
                row.columns()
                    .iter()
                    .map(|column| column.name().to_string())
                    .collect()
            })
            .unwrap_or_default();
        for row in rows {
            let mut cells = Vec::with_capacity(row.len());
            for (index, column) in row.columns().iter().enumerate() {
                let cell = match *column.type_() {
                    Type::INT8 => row
                        .try_get::<_, Option<i64>>(index)
                        .map(|v| v.map(Cell::Int)),
                    Type::INT4 => row
                        .try_get::<_, Option<i32>>(index)
                        .map(|v| v.map(|v| Cell::Int(v.into()))),
                    Type::BOOL => row
                        .try_get::<_, Option<bool>>(index)
                        .map(|v| v.map(|v| Cell::Int(v.into()))),
                    _ => row
                        .try_get::<_, Option<String>>(index)
                        .map(|v| v.map(Cell::Text)),
                };
                let cell = cell.map_err(|e| Failure::Postgres(e).into_error(self.context))?;
                cells.push(cell.unwrap_or(Cell::Null));
            }
            out.push(Row {
                columns: names.clone(),
                cells,
            });
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Error> {
        let bound = bind(params);
        self.session
            .connection
            .call(|client| client.execute_typed(sql, &bound))
            .map_err(self.fail())
    }

    fn batch(&mut self, sql: &str) -> Result<(), Error> {
        self.session
            .connection
            .call(|client| client.batch_execute(sql))
            .map_err(self.fail())
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_errors_have_the_code_of_their_sqlstate() {
        let cases = [
            // Cannot be reached, or cannot serve now: retry.
            ("08006", ErrorCode::Unavailable), // connection failure
            ("08001", ErrorCode::Unavailable), // cannot establish
            ("53300", ErrorCode::Unavailable), // too many connections
            ("53100", ErrorCode::Unavailable), // disk full
            ("57P01", ErrorCode::Unavailable), // admin shutdown
            ("57P03", ErrorCode::Unavailable), // cannot connect now
            ("57014", ErrorCode::Unavailable), // statement timeout
            ("40001", ErrorCode::Unavailable), // serialization failure
            ("40P01", ErrorCode::Unavailable), // deadlock
            ("55P03", ErrorCode::Unavailable), // lock not available
            ("25006", ErrorCode::Unavailable), // read-only (a standby)
            ("XX000", ErrorCode::Unavailable), // internal error
            // What the request holds.
            ("22021", ErrorCode::InvalidRequest), // NUL: not in the encoding
            ("22001", ErrorCode::InvalidRequest), // value too long
            ("23503", ErrorCode::InvalidRequest), // foreign key
            ("23502", ErrorCode::InvalidRequest), // not null
            ("54000", ErrorCode::InvalidRequest), // program limit
            ("P0001", ErrorCode::InvalidRequest), // RAISE: append-only
            ("23505", ErrorCode::AlreadyExists),
            // A database that is not this promptpack's.
            ("42P01", ErrorCode::NotConfigured), // undefined table
            ("42703", ErrorCode::NotConfigured), // undefined column
            ("42501", ErrorCode::NotConfigured), // insufficient privilege
            ("3D000", ErrorCode::NotConfigured), // no such database
            ("28P01", ErrorCode::NotConfigured), // wrong password
            ("0A000", ErrorCode::NotConfigured), // feature not supported
            ("XX001", ErrorCode::Damaged),       // data corrupted
            ("XX002", ErrorCode::Damaged),       // index corrupted
            ("", ErrorCode::Unavailable),
        ];
        for (state, code) in cases {
            assert_eq!(code_of_sqlstate(state), code, "{state}");
        }
    }

    /// A store on a database of its own on the shared server, holding the
    /// catalog's schema (with its append-only triggers), one prompt with
    /// one version, and a table `scratch` with a unique column.
    fn store() -> PostgresStore {
        let shared = promptpack_pgtest::shared().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
        let url = shared
            .unique_database("pg_errors")
            .unwrap_or_else(|e| panic!("a database: {e}"));
        let mut catalog = crate::Catalog::open(&url).expect("the schema");
        catalog.create("p", None, None).expect("a prompt");
        let draft = crate::Draft {
            system: "one".into(),
            message: "v1".into(),
            ..crate::Draft::default()
        };
        catalog.publish("p", &draft, None).expect("v1");
        let mut store = PostgresStore::connect(&url, &Timeouts::DEFAULT).expect("connect");
        store
            .transaction(true, &mut |tx| {
                tx.batch("CREATE TABLE scratch (x TEXT UNIQUE)")
            })
            .expect("scratch");
        store
    }

    /// The driver's error that caused `error`. `Error::source` gives the
    /// `Arc` the cause is kept in, or, once it unwraps it, the cause.
    fn driver_cause(error: &Error) -> Option<&tokio_postgres::Error> {
        type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
        let source = std::error::Error::source(error)?;
        source.downcast_ref().or_else(|| {
            source
                .downcast_ref::<Shared>()
                .and_then(|shared| shared.downcast_ref())
        })
    }

    /// The error of the one statement `sql` in a write transaction.
    fn refusal(store: &mut PostgresStore, sql: &str, params: &[Param<'_>]) -> Error {
        store
            .transaction(true, &mut |tx| tx.query(sql, params))
            .expect_err(sql)
    }

    #[test]
    fn server_errors_are_classified_and_keep_their_cause() {
        let mut store = store();
        let text = |text| [Param::Text(text)];
        let cases: [(&str, &[Param<'_>], ErrorCode, &str); 6] = [
            // A NUL byte is not text to PostgreSQL.
            (
                "SELECT $1",
                &text("a\0b"),
                ErrorCode::InvalidRequest,
                "22021",
            ),
            (
                "INSERT INTO scratch (x) VALUES ($1), ($1)",
                &text("twice"),
                ErrorCode::AlreadyExists,
                "23505",
            ),
            (
                "SELECT x FROM missing",
                &[],
                ErrorCode::NotConfigured,
                "42P01",
            ),
            // The append-only triggers.
            (
                "UPDATE prompt_versions SET message = $1",
                &text("rewritten"),
                ErrorCode::InvalidRequest,
                "P0001",
            ),
            ("DELETE FROM audit", &[], ErrorCode::InvalidRequest, "P0001"),
            // The server going away under the connection.
            (
                "SELECT pg_terminate_backend(pg_backend_pid())",
                &[],
                ErrorCode::Unavailable,
                "57P01",
            ),
        ];
        for (sql, params, code, state) in cases {
            let error = refusal(&mut store, sql, params);
            assert_eq!(error.code(), code, "{sql}: {error}");
            assert_eq!(error.is_retryable(), code == ErrorCode::Unavailable);
            let cause = driver_cause(&error)
                .and_then(tokio_postgres::Error::code)
                .map(|state| state.code().to_string());
            // A terminated backend sends its FATAL 57P01 and closes the
            // socket: the client may see the close first, with no SQLSTATE.
            // Either way it is `unavailable` with the driver's error kept.
            let raced = code == ErrorCode::Unavailable && cause.is_none();
            if raced {
                assert!(driver_cause(&error).is_some(), "{sql}: {error}");
                continue;
            }
            assert!(error.to_string().contains(state), "{sql}: {error}");
            assert_eq!(cause.as_deref(), Some(state), "{sql}: {error}");
        }
        // After the server closed the connection, the next transaction
        // connects again; every refusal above wrote nothing.
        let rows = store
            .transaction(false, &mut |tx| {
                tx.query("SELECT COUNT(*) FROM scratch", &[])
            })
            .expect("connected again");
        assert_eq!(rows[0].int("count").ok(), Some(0));
    }
}
