//! How followers learn of a change: PostgreSQL's notification on every
//! write, and the marker SQLite's followers poll.

use crate::store::{Param, Tx};
use promptpack_core::Error;

/// The channel PostgreSQL announces every change of a prompt on, for the
/// services that follow a label ([`Listener`](crate::Listener)).
pub const CHANGES_CHANNEL: &str = "promptpack_catalog";

/// Announces a change of prompt `id` (and the version it concerns) on
/// [`CHANGES_CHANNEL`]; PostgreSQL delivers it when the transaction
/// commits, and never when it rolls back. SQLite has no such thing: its
/// followers poll [`Catalog::change_marker`](crate::Catalog::change_marker).
pub(super) fn notify(tx: &mut dyn Tx, id: &str, version: Option<u32>) -> Result<(), Error> {
    if tx.dialect() != crate::store::Dialect::Postgres {
        return Ok(());
    }
    let payload = format!("{id} {}", version.unwrap_or(0));
    tx.execute(
        "SELECT pg_notify($1, $2)",
        &[Param::Text(CHANGES_CHANNEL), Param::Text(&payload)],
    )?;
    Ok(())
}

/// What every write changes: the newest audit entry and the sum of the
/// prompts' newest version numbers.
pub(crate) fn change_marker(tx: &mut dyn Tx) -> Result<(i64, i64), Error> {
    let row = tx.query_opt(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM audit) AS audit, \
                (SELECT CAST(COALESCE(SUM(latest_version), 0) AS BIGINT) FROM prompts) AS versions",
        &[],
    )?;
    match row {
        Some(row) => Ok((row.int("audit")?, row.int("versions")?)),
        None => Ok((0, 0)),
    }
}
