//! The shared store: PostgreSQL through the synchronous `postgres` client.
//! Writers to one prompt are serialized by a row lock on the prompt
//! (`SELECT … FOR UPDATE`), so version numbers have no gaps and no repeats
//! however many instances publish at once.

use super::{Cell, Dialect, Param, Row, Tx, Work};
use crate::timeouts::Timeouts;
use postgres::types::{ToSql, Type};
use postgres::{Client, IsolationLevel, NoTls, Statement};
use promptpack_core::{Error, ErrorCode};
use std::collections::HashMap;

pub(crate) struct PostgresStore {
    client: Client,
    shown: String,
    /// Every statement prepared on this connection, by its text: the
    /// catalog runs a dozen statements over and over, and preparing one
    /// each time costs a round trip and a parse. Prepared statements
    /// outlive the transaction they were prepared in.
    statements: HashMap<String, Statement>,
}

impl PostgresStore {
    pub fn connect(url: &str, timeouts: &Timeouts) -> Result<PostgresStore, Error> {
        let shown = without_password(url);
        let mut config: postgres::Config = url.parse().map_err(|e| store_error(&shown, &e))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(timeouts.connect);
        }
        let client = config.connect(NoTls).map_err(|e| store_error(&shown, &e))?;
        Ok(PostgresStore {
            client,
            shown,
            statements: HashMap::new(),
        })
    }

    pub fn transaction<T>(&mut self, write: bool, work: Work<'_, T>) -> Result<T, Error> {
        let PostgresStore {
            client,
            shown,
            statements,
        } = self;
        let fail = |e: postgres::Error| store_error(shown, &e);
        let mut builder = client.build_transaction();
        if !write {
            // One snapshot for every statement of a read.
            builder = builder
                .read_only(true)
                .isolation_level(IsolationLevel::RepeatableRead);
        }
        let transaction = builder.start().map_err(fail)?;
        let mut tx = PostgresTx {
            transaction,
            shown,
            statements,
        };
        let value = work(&mut tx)?;
        tx.transaction.commit().map_err(fail)?;
        Ok(value)
    }
}

struct PostgresTx<'t> {
    transaction: postgres::Transaction<'t>,
    shown: &'t str,
    statements: &'t mut HashMap<String, Statement>,
}

impl PostgresTx<'_> {
    /// The statement of `sql`, prepared once per connection.
    fn prepared(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.transaction.prepare(sql)?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

fn bind<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params
        .iter()
        .map(|param| -> &(dyn ToSql + Sync) {
            match param {
                Param::Text(text) => text,
                Param::OptText(text) => text,
                Param::Int(value) => value,
                Param::OptInt(value) => value,
            }
        })
        .collect()
}

impl Tx for PostgresTx<'_> {
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, Error> {
        let shown = self.shown;
        let fail = |e: postgres::Error| store_error(shown, &e);
        let statement = self.prepared(sql).map_err(fail)?;
        let rows = self
            .transaction
            .query(&statement, &bind(params))
            .map_err(fail)?;
        let mut out = Vec::with_capacity(rows.len());
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
                cells.push(cell.map_err(fail)?.unwrap_or(Cell::Null));
            }
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Error> {
        let shown = self.shown;
        if params.is_empty() && !sql.contains("$1") {
            // Migrations: several statements in one text.
            self.transaction
                .batch_execute(sql)
                .map_err(|e| store_error(shown, &e))?;
            return Ok(0);
        }
        let statement = self.prepared(sql).map_err(|e| store_error(shown, &e))?;
        self.transaction
            .execute(&statement, &bind(params))
            .map_err(|e| store_error(shown, &e))
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}

/// A PostgreSQL error as the catalog's: a missing table is
/// `not_configured`, a duplicate key `already_exists`, anything else
/// (refused connection, lost server, a failed statement) `unavailable`.
fn store_error(shown: &str, error: &postgres::Error) -> Error {
    use postgres::error::SqlState;
    let code = match error.code() {
        Some(state) if *state == SqlState::UNDEFINED_TABLE => ErrorCode::NotConfigured,
        Some(state) if *state == SqlState::UNIQUE_VIOLATION => ErrorCode::AlreadyExists,
        _ => ErrorCode::Unavailable,
    };
    let hint = if code == ErrorCode::NotConfigured {
        ": the catalog's schema is not applied (run `promptpack catalog init`)"
    } else {
        ""
    };
    let detail = error_detail(error);
    Error::new(code, format!("catalog {shown}: {detail}{hint}"))
}

/// What a client error says: the client's Display of a server error is
/// only "db error", so the server's own message, or the cause.
pub(crate) fn error_detail(error: &postgres::Error) -> String {
    match (error.as_db_error(), std::error::Error::source(error)) {
        (Some(db), _) => db.message().to_string(),
        (None, Some(source)) => format!("{error}: {source}"),
        (None, None) => error.to_string(),
    }
}

/// The URL without its password, for messages.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(name, _)| name);
            format!("{scheme}://{user}@{host}{tail}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::without_password;

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(
            without_password("postgres://ada:secret@db:5432/cat"),
            "postgres://ada@db:5432/cat"
        );
        assert_eq!(without_password("postgres://db/cat"), "postgres://db/cat");
    }
}
