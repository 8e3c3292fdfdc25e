//! Snippets and their revisions: the row readers (a revision checked
//! against its hash, a revision's text alone), single and batched reads,
//! and appending the next revision under the snippet's lock.

use super::{batched_rows, number};
use crate::compile::SnippetText;
use crate::model::{SnippetRevision, Timestamp};
use crate::store::{Param, Row, Tx};
use promptpack_core::{Error, ErrorCode};
use std::collections::HashMap;

/// The newest revision of every snippet, by name, each checked against its
/// content hash.
pub(crate) fn newest_snippet_revisions(tx: &mut dyn Tx) -> Result<Vec<SnippetRevision>, Error> {
    let sql = "SELECT s.name AS name, r.revision AS revision, r.text AS text, \
               r.content_hash AS content_hash, r.author AS author, r.message AS message, \
               r.created_at AS created_at FROM snippets s \
               JOIN snippet_revisions r ON r.name = s.name AND r.revision = s.latest_revision \
               ORDER BY s.name";
    tx.query(sql, &[])?
        .iter()
        .map(|row| snippet_revision_row(row, row.text("name")?))
        .collect()
}

/// Every revision of snippet `name`, newest first, each checked against
/// its content hash.
pub(crate) fn snippet_revisions(
    tx: &mut dyn Tx,
    name: &str,
) -> Result<Vec<SnippetRevision>, Error> {
    let sql = "SELECT revision, text, content_hash, author, message, created_at \
               FROM snippet_revisions WHERE name = $1 ORDER BY revision DESC";
    tx.query(sql, &[Param::Text(name)])?
        .iter()
        .map(|row| snippet_revision_row(row, name.to_string()))
        .collect()
}

/// Revision `revision` of snippet `name`; its newest when `None`.
pub(crate) fn snippet_revision(
    tx: &mut dyn Tx,
    name: &str,
    revision: Option<u32>,
) -> Result<Option<SnippetRevision>, Error> {
    let (sql, params) = match revision {
        Some(revision) => (
            "SELECT revision, text, content_hash, author, message, created_at \
             FROM snippet_revisions WHERE name = $1 AND revision = $2",
            vec![Param::Text(name), Param::Int(revision.into())],
        ),
        None => (
            "SELECT r.revision AS revision, r.text AS text, r.content_hash AS content_hash, \
             r.author AS author, r.message AS message, r.created_at AS created_at \
             FROM snippets s JOIN snippet_revisions r \
             ON r.name = s.name AND r.revision = s.latest_revision WHERE s.name = $1",
            vec![Param::Text(name)],
        ),
    };
    tx.query_opt(sql, &params)?
        .map(|row| snippet_revision_row(&row, name.to_string()))
        .transpose()
}

/// A revision row of snippet `name` (its `revision`, `text`,
/// `content_hash`, `author`, `message` and `created_at` columns), checked
/// against its content hash.
fn snippet_revision_row(row: &Row, name: String) -> Result<SnippetRevision, Error> {
    crate::finding::checked_snippet(SnippetRevision {
        name,
        revision: number(row.int("revision")?, "snippet revision")?,
        text: row.text("text")?,
        content_hash: row.text("content_hash")?,
        author: row.text("author")?,
        message: row.text("message")?,
        created_at: Timestamp(row.int("created_at")?),
    })
}

/// A revision's text alone, from a row's `name`, `revision` and `text`
/// columns: what a compile reads.
fn snippet_text_row(row: &Row) -> Result<SnippetText, Error> {
    Ok(SnippetText {
        name: row.text("name")?,
        revision: number(row.int("revision")?, "snippet revision")?,
        text: row.text("text")?,
    })
}

/// The newest revision of every snippet.
pub(crate) fn current_snippets(tx: &mut dyn Tx) -> Result<Vec<SnippetText>, Error> {
    let sql = "SELECT r.name AS name, r.revision AS revision, r.text AS text FROM snippets s \
               JOIN snippet_revisions r ON r.name = s.name AND r.revision = s.latest_revision \
               ORDER BY s.name";
    tx.query(sql, &[])?.iter().map(snippet_text_row).collect()
}

/// The texts of snippet revisions `wanted` (name, revision), in a few
/// statements: each found one by its key.
pub(crate) fn snippet_texts_batch(
    tx: &mut dyn Tx,
    wanted: &[(&str, u32)],
) -> Result<HashMap<(String, u32), SnippetText>, Error> {
    let sql = "SELECT name, revision, text FROM snippet_revisions WHERE (name, revision) IN";
    let mut texts = HashMap::new();
    for row in batched_rows(tx, sql, wanted)? {
        let text = snippet_text_row(&row)?;
        texts.insert((text.name.clone(), text.revision), text);
    }
    Ok(texts)
}

/// Adds snippet `name` with no revision unless it exists, and locks its row
/// until the transaction ends, so that a writer reading its newest revision
/// next reads one no other writer is replacing. The time it is now.
pub(crate) fn lock_snippet(tx: &mut dyn Tx, name: &str) -> Result<Timestamp, Error> {
    let now = Timestamp::now();
    tx.execute(
        "INSERT INTO snippets (name, latest_revision, created_at) VALUES ($1, 0, $2) \
         ON CONFLICT (name) DO NOTHING",
        &[Param::Text(name), Param::Int(now.0)],
    )?;
    let lock = tx.for_update();
    tx.query(
        &format!("SELECT latest_revision FROM snippets WHERE name = $1{lock}"),
        &[Param::Text(name)],
    )?;
    Ok(now)
}

/// Appends revision N+1 of snippet `name` (creating the snippet at its
/// first revision) and returns it. The snippet's row is locked until the
/// transaction ends, so that concurrent publishers take turns.
pub(crate) fn insert_snippet_revision(
    tx: &mut dyn Tx,
    name: &str,
    text: &str,
    content_hash: &str,
    author: &str,
    message: &str,
) -> Result<SnippetRevision, Error> {
    let created_at = lock_snippet(tx, name)?;
    let row = tx.query_opt(
        "UPDATE snippets SET latest_revision = latest_revision + 1 WHERE name = $1 \
         RETURNING latest_revision",
        &[Param::Text(name)],
    )?;
    let revision = match row {
        Some(row) => number(row.int("latest_revision")?, "snippet revision")?,
        None => {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!("snippet `{name}` vanished mid-write"),
            ));
        }
    };
    tx.execute(
        "INSERT INTO snippet_revisions (name, revision, text, content_hash, author, message, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            Param::Text(name),
            Param::Int(revision.into()),
            Param::Text(text),
            Param::Text(content_hash),
            Param::Text(author),
            Param::Text(message),
            Param::Int(created_at.0),
        ],
    )?;
    Ok(SnippetRevision {
        name: name.to_string(),
        revision,
        text: text.to_string(),
        content_hash: content_hash.to_string(),
        author: author.to_string(),
        message: message.to_string(),
        created_at,
    })
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use crate::catalog::rows::scratch::Scratch;

    /// Every reader of a snippet's newest revision, one by one, all at
    /// once, batched or as text alone, names the same revisions.
    #[test]
    fn the_readers_of_the_newest_revisions_agree() {
        let mut scratch = Scratch::new();
        for (name, text) in [("a", "one"), ("a", "two"), ("b", "three")] {
            scratch
                .catalog
                .publish_snippet(name, text, "written")
                .expect("published");
        }
        let newest = vec![
            ("a".to_string(), 2, "two".to_string()),
            ("b".to_string(), 1, "three".to_string()),
        ];
        let of_text = |t: &SnippetText| (t.name.clone(), t.revision, t.text.clone());
        let of_revision = |r: &SnippetRevision| (r.name.clone(), r.revision, r.text.clone());
        let read = scratch
            .read(&mut |tx| {
                let current: Vec<_> = current_snippets(tx)?.iter().map(of_text).collect();
                let revisions: Vec<_> = newest_snippet_revisions(tx)?
                    .iter()
                    .map(of_revision)
                    .collect();
                let mut one_by_one = Vec::new();
                for name in ["a", "b", "c"] {
                    one_by_one.extend(snippet_revision(tx, name, None)?.as_ref().map(of_revision));
                }
                // Asked twice, asked for one there is not: each found one once.
                let wanted = [("b", 1), ("a", 2), ("a", 2), ("c", 1)];
                let mut batch: Vec<_> = snippet_texts_batch(tx, &wanted)?
                    .values()
                    .map(of_text)
                    .collect();
                batch.sort();
                let history: Vec<u32> = snippet_revisions(tx, "a")?
                    .iter()
                    .map(|r| r.revision)
                    .collect();
                Ok((current, revisions, one_by_one, batch, history))
            })
            .expect("read");
        let (current, revisions, one_by_one, batch, history) = read;
        for (reader, got) in [
            ("current_snippets", current),
            ("newest_snippet_revisions", revisions),
            ("snippet_revision", one_by_one),
            ("snippet_texts_batch", batch),
        ] {
            assert_eq!(got, newest, "{reader}");
        }
        assert_eq!(history, [2, 1], "newest first");
    }
}
