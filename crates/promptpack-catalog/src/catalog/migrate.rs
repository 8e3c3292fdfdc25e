//! The schema's versions: the migrations each store embeds, applied in one
//! write transaction on `init` and on first use, and the check that a
//! database holds the schema this promptpack reads.

use crate::store::{Param, Store, Tx};
use promptpack_core::{Error, ErrorCode};

const SCHEMA_TABLE: &str = "CREATE TABLE IF NOT EXISTS promptpack_schema (version BIGINT NOT NULL)";

/// Applies every migration the database lacks; the schema version after.
pub(crate) fn migrate(store: &mut Store) -> Result<i64, Error> {
    let migrations = store.migrations();
    let lock = store.migration_lock();
    let latest = migrations.last().map_or(0, |m| m.version);
    store.write(&mut |tx| {
        if let Some(lock) = lock {
            tx.batch(lock)?;
        }
        tx.batch(SCHEMA_TABLE)?;
        let current = applied(tx)?;
        if current > latest {
            return Err(newer(current, latest));
        }
        for migration in migrations.iter().filter(|m| m.version > current) {
            tx.batch(migration.sql)?;
            tx.execute(
                "INSERT INTO promptpack_schema (version) VALUES ($1)",
                &[Param::Int(migration.version)],
            )?;
        }
        Ok(latest)
    })
}

/// Checks, without changing anything, that the database holds the schema
/// this promptpack reads and writes.
pub(crate) fn check_schema(store: &mut Store) -> Result<i64, Error> {
    let latest = store.migrations().last().map_or(0, |m| m.version);
    let current = store.read(&mut |tx| applied(tx))?;
    match current {
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
