//! The prompts table: a prompt's row, adding, deleting and restoring one,
//! and the page of live prompts a list reads (with their latest version
//! and labels).

use super::audit::{Event, audit};
use super::labels::arm_row;
use super::versions::summary_row;
use super::{no_prompt, number};
use crate::model::{Arm, PromptEntry, Timestamp, VersionSummary};
use crate::store::{Param, Row, Tx};
use promptpack_core::{Error, ErrorCode};
use std::collections::HashMap;

const PROMPT_COLUMNS: &str = "id, name, description, deleted, latest_version, created_at";

fn prompt_entry(row: &Row) -> Result<PromptEntry, Error> {
    Ok(PromptEntry {
        id: row.text("id")?,
        name: row.text("name")?,
        description: row.text("description")?,
        deleted: row.int("deleted")? != 0,
        latest_version: number(row.int("latest_version")?, "latest version")?,
        created_at: Timestamp(row.int("created_at")?),
    })
}

/// Prompt `id`, deleted or not; locked for the rest of a write transaction
/// when `lock`.
pub(crate) fn prompt(tx: &mut dyn Tx, id: &str, lock: bool) -> Result<Option<PromptEntry>, Error> {
    let lock = if lock { tx.for_update() } else { "" };
    let sql = format!("SELECT {PROMPT_COLUMNS} FROM prompts WHERE id = $1{lock}");
    tx.query_opt(&sql, &[Param::Text(id)])?
        .map(|row| prompt_entry(&row))
        .transpose()
}

/// Prompt `id`, which must exist and not be deleted.
pub(crate) fn live_prompt(tx: &mut dyn Tx, id: &str, lock: bool) -> Result<PromptEntry, Error> {
    match prompt(tx, id, lock)? {
        Some(prompt) if !prompt.deleted => Ok(prompt),
        Some(_) => Err(Error::new(
            ErrorCode::NotFound,
            format!("prompt `{id}` is deleted (`promptpack catalog restore {id}` brings it back)"),
        )),
        None => Err(no_prompt(id)),
    }
}

/// A live prompt as a page lists it: the prompt, its latest version and
/// its labels.
pub(crate) type ListedRow = (PromptEntry, Option<VersionSummary>, Labels);

/// A prompt's labels, by name, each with its arms.
pub(crate) type Labels = Vec<(String, Vec<Arm>)>;

/// `text` as a LIKE pattern that finds it anywhere: `%` and `_` (and the
/// escape itself) match only themselves.
pub(crate) fn contains_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Live prompts after `cursor`, by id, at most `limit`, with their latest
/// version and every label but `latest` (by name, split arms heaviest
/// first); only those whose id, name or description contains `pattern`'s
/// text when given ([`contains_pattern`]), in any case. Three statements,
/// each walking the prompts' primary key from the cursor, in the caller's
/// one read transaction.
pub(crate) fn live_prompts(
    tx: &mut dyn Tx,
    cursor: &str,
    limit: i64,
    pattern: Option<&str>,
) -> Result<Vec<ListedRow>, Error> {
    // Both sides folded alike: SQLite's LOWER folds ASCII letters,
    // PostgreSQL's those of the column's collation. The page's prompts are
    // the same subquery in the label statements, so no list of ids goes
    // back and forth.
    let filter = if pattern.is_some() {
        " AND (LOWER(p.id) LIKE LOWER($3) ESCAPE '\\' \
         OR LOWER(p.name) LIKE LOWER($3) ESCAPE '\\' \
         OR LOWER(p.description) LIKE LOWER($3) ESCAPE '\\')"
    } else {
        ""
    };
    let mut params = vec![Param::Text(cursor), Param::Int(limit)];
    if let Some(pattern) = pattern {
        params.push(Param::Text(pattern));
    }
    let page = format!(
        "SELECT p.id FROM prompts p WHERE p.deleted = 0 AND p.id > $1{filter} \
         ORDER BY p.id LIMIT $2"
    );
    let sql = format!(
        "SELECT p.id AS id, p.name AS name, p.description AS description, \
         p.deleted AS deleted, p.latest_version AS latest_version, \
         p.created_at AS created_at, v.version AS version, \
         v.content_hash AS content_hash, v.author AS author, v.message AS message, \
         v.created_at AS version_created_at \
         FROM prompts p LEFT JOIN prompt_versions v \
         ON v.prompt_id = p.id AND v.version = p.latest_version \
         WHERE p.deleted = 0 AND p.id > $1{filter} ORDER BY p.id LIMIT $2"
    );
    let mut labels = page_labels(tx, &page, &params)?;
    tx.query(&sql, &params)?
        .iter()
        .map(|row| {
            let prompt = prompt_entry(row)?;
            let current = match row.opt_int("version")? {
                Some(_) => Some(summary_row(row, "version_created_at")?),
                None => None,
            };
            let labels = labels.remove(&prompt.id).unwrap_or_default();
            Ok((prompt, current, labels))
        })
        .collect()
}

/// The labels of the prompts `page` selects (a statement of their ids),
/// by prompt id, each prompt's by name.
fn page_labels(
    tx: &mut dyn Tx,
    page: &str,
    params: &[Param<'_>],
) -> Result<HashMap<String, Labels>, Error> {
    let targets = tx.query(
        &format!("SELECT prompt_id, label, version FROM labels WHERE prompt_id IN ({page})"),
        params,
    )?;
    let splits = tx.query(
        &format!(
            "SELECT prompt_id, label, version, weight FROM label_arms \
             WHERE prompt_id IN ({page})"
        ),
        params,
    )?;
    let mut arms: HashMap<(String, String), Vec<Arm>> = HashMap::new();
    for row in &splits {
        arms.entry((row.text("prompt_id")?, row.text("label")?))
            .or_default()
            .push(arm_row(row)?);
    }
    let mut labels: HashMap<String, Labels> = HashMap::new();
    for row in &targets {
        let (id, label) = (row.text("prompt_id")?, row.text("label")?);
        let version = number(row.int("version")?, "label version")?;
        let mut split = arms
            .remove(&(id.clone(), label.clone()))
            .unwrap_or_else(|| vec![Arm { version, weight: 1 }]);
        // Heaviest first, the lower version first among equals: as
        // `label_arms` reads them.
        split.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.version.cmp(&b.version)));
        labels.entry(id).or_default().push((label, split));
    }
    for list in labels.values_mut() {
        // By name, bytewise: the order of both stores' ids and labels.
        list.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(labels)
}

/// Adds prompt `id` unless the catalog has one, deleted or not: the new
/// prompt, or `None` when there was one. A concurrent writer adding the
/// same id waits for this one and then finds it there.
pub(crate) fn insert_prompt(
    tx: &mut dyn Tx,
    id: &str,
    name: &str,
    description: &str,
    author: &str,
) -> Result<Option<PromptEntry>, Error> {
    let created_at = Timestamp::now();
    let added = tx.execute(
        "INSERT INTO prompts (id, name, description, deleted, latest_version, created_at) \
         VALUES ($1, $2, $3, 0, 0, $4) ON CONFLICT (id) DO NOTHING",
        &[
            Param::Text(id),
            Param::Text(name),
            Param::Text(description),
            Param::Int(created_at.0),
        ],
    )?;
    if added == 0 {
        return Ok(None);
    }
    audit(tx, id, &Event::of_prompt("create"), author)?;
    Ok(Some(PromptEntry {
        id: id.to_string(),
        name: name.to_string(),
        description: description.to_string(),
        deleted: false,
        latest_version: 0,
        created_at,
    }))
}

/// `already_exists` for prompt `id`, saying how to bring it back when it
/// is deleted.
pub(crate) fn prompt_exists(tx: &mut dyn Tx, id: &str) -> Result<Error, Error> {
    let deleted = prompt(tx, id, false)?.is_some_and(|p| p.deleted);
    let hint = if deleted {
        format!(" (deleted: `promptpack catalog restore {id}` brings it back)")
    } else {
        String::new()
    };
    Ok(Error::new(
        ErrorCode::AlreadyExists,
        format!("the catalog has a prompt `{id}` already{hint}"),
    ))
}

/// Sets prompt `id`'s soft-delete flag and records it.
pub(crate) fn set_deleted(
    tx: &mut dyn Tx,
    id: &str,
    deleted: bool,
    author: &str,
) -> Result<(), Error> {
    tx.execute(
        "UPDATE prompts SET deleted = $2 WHERE id = $1",
        &[Param::Text(id), Param::Int(deleted.into())],
    )?;
    let action = if deleted { "delete" } else { "restore" };
    audit(tx, id, &Event::of_prompt(action), author).map(|_| ())
}
