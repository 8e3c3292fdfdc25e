//! The catalog's statements, each a function over a transaction, and the
//! conversions of their rows into the model. Written once for both stores,
//! one file per family of tables; the row helpers they share are here.

mod audit;
mod builds;
mod changes;
mod labels;
mod prompts;
mod snippets;
mod users;
mod versions;

pub(crate) use audit::audit_history;
pub(crate) use builds::{builds, delete_build, expire_builds, upsert_build};
pub use changes::CHANGES_CHANNEL;
pub(crate) use changes::change_marker;
pub(crate) use labels::{
    label, label_arms, labelled, labels, look_alike_label, move_label, split_label,
};
pub(crate) use prompts::{
    contains_pattern, insert_prompt, live_prompt, live_prompts, prompt, prompt_exists, set_deleted,
};
pub(crate) use snippets::{
    current_snippets, insert_snippet_revision, lock_snippet, newest_snippet_revisions,
    snippet_revision, snippet_revisions, snippet_texts_batch,
};
pub(crate) use users::{
    delete_user, insert_user, user, user_by_token_hash, user_history, user_row, users,
};
pub(crate) use versions::{insert_version, version, versions, versions_batch};

use crate::store::{Param, Row, Tx};
use promptpack_core::{Error, ErrorCode};

/// A version, revision or weight number from a column's value.
pub(crate) fn number(value: i64, what: &str) -> Result<u32, Error> {
    u32::try_from(value).map_err(|_| {
        Error::new(
            ErrorCode::NotConfigured,
            format!("the catalog holds {what} {value}, which is not a version number"),
        )
    })
}

/// A value the schema's CHECK refuses, so written by hand around it.
fn hand_written(what: &str, value: &str) -> Error {
    Error::new(
        ErrorCode::NotConfigured,
        format!("the catalog holds {what} `{value}`, which is not one"),
    )
}

/// How many keys one batched read asks for: fixed, so that each batched
/// statement has one text (PostgreSQL prepares it once per connection); a
/// shorter list repeats its last key.
const BATCH: usize = 64;

/// The rows `sql` selects for `keys` (text, number), `BATCH` at a time:
/// `sql` ends with a column pair and `IN`, followed here by the list.
fn batched_rows(tx: &mut dyn Tx, sql: &str, keys: &[(&str, u32)]) -> Result<Vec<Row>, Error> {
    let list: Vec<String> = (0..BATCH)
        .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
        .collect();
    let sql = format!("{sql} ({})", list.join(", "));
    let mut rows = Vec::new();
    for chunk in keys.chunks(BATCH) {
        let Some(&(last_text, last_number)) = chunk.last() else {
            continue;
        };
        let mut params = Vec::with_capacity(2 * BATCH);
        for i in 0..BATCH {
            let (text, number) = chunk.get(i).copied().unwrap_or((last_text, last_number));
            params.push(Param::Text(text));
            params.push(Param::Int(number.into()));
        }
        rows.extend(tx.query(&sql, &params)?);
    }
    Ok(rows)
}

/// A catalog in a SQLite file of its own, for the row readers' tests.
#[cfg(all(test, feature = "sqlite"))]
pub(super) mod scratch {
    use crate::Catalog;
    use crate::store::Tx;
    use promptpack_core::Error;

    /// A new catalog, and the folder that holds its file (removed with it).
    pub(crate) struct Scratch {
        dir: tempfile::TempDir,
        pub catalog: Catalog,
    }

    impl Scratch {
        pub fn new() -> Scratch {
            let dir = tempfile::tempdir().expect("a scratch folder");
            let url = format!("sqlite:{}", dir.path().join("catalog.db").display());
            let catalog = Catalog::open(&url).expect("a new catalog");
            Scratch { dir, catalog }
        }

        /// `work` in one write transaction of the catalog's store.
        pub fn write<T>(
            &mut self,
            work: &mut dyn FnMut(&mut dyn Tx) -> Result<T, Error>,
        ) -> Result<T, Error> {
            self.catalog.store.write(work)
        }

        /// `work` in one read transaction of the catalog's store.
        pub fn read<T>(
            &mut self,
            work: &mut dyn FnMut(&mut dyn Tx) -> Result<T, Error>,
        ) -> Result<T, Error> {
            self.catalog.store.read(work)
        }

        /// Runs `sql` on the file as a hand at a SQLite shell could, past
        /// the schema's CHECKs: the rows no promptpack writes.
        pub fn by_hand(&self, sql: &str) {
            let file = self.dir.path().join("catalog.db");
            let connection = rusqlite::Connection::open(&file).expect("the catalog's file");
            connection
                .execute_batch(&format!("PRAGMA ignore_check_constraints = ON; {sql}"))
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }
}

/// `not_found`: no live prompt `id`.
pub(crate) fn no_prompt(id: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!(
            "the catalog has no prompt `{id}` (`promptpack catalog import` or `promptpack catalog publish` adds one)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::number;
    use promptpack_core::ErrorCode;

    #[test]
    fn a_number_is_a_u32_or_a_refusal_naming_what_it_is() {
        let cases: [(i64, Option<u32>); 5] = [
            (0, Some(0)),
            (7, Some(7)),
            (i64::from(u32::MAX), Some(u32::MAX)),
            (-1, None),
            (i64::from(u32::MAX) + 1, None),
        ];
        for (value, wanted) in cases {
            match (number(value, "arm weight"), wanted) {
                (Ok(read), Some(wanted)) => assert_eq!(read, wanted, "{value}"),
                (Err(error), None) => {
                    assert_eq!(error.code(), ErrorCode::NotConfigured, "{value}");
                    let message = error.to_string();
                    assert!(
                        message.contains(&format!("the catalog holds arm weight {value}")),
                        "{message}"
                    );
                }
                (read, wanted) => panic!("{value}: read {read:?}, wanted {wanted:?}"),
            }
        }
    }
}
