//! Prompt versions and their pins: reading one, many at once, a prompt's
//! list of them, and appending the next.

use super::changes::notify;
use super::{batched_rows, no_prompt, number};
use crate::compile::Compiled;
use crate::model::{Draft, Pin, Syntax, Timestamp, Version, VersionSummary};
use crate::store::{Param, Row, Tx};
use promptpack_core::{Error, ErrorCode};
use std::collections::HashMap;

/// The columns of a version row, as [`version_row`] reads them.
const VERSION_COLUMNS: &str = "system_text, user_text, messages_text, front_matter, \
     resolved_system, resolved_user, resolved_messages, content_hash, author, message, \
     created_at, delimiter_open, delimiter_close, standalone_tags";

/// Version `version` of prompt `id`, with its pins.
pub(crate) fn version(tx: &mut dyn Tx, id: &str, version: u32) -> Result<Option<Version>, Error> {
    let sql = format!(
        "SELECT {VERSION_COLUMNS} FROM prompt_versions WHERE prompt_id = $1 AND version = $2"
    );
    let params = [Param::Text(id), Param::Int(version.into())];
    let Some(row) = tx.query_opt(&sql, &params)? else {
        return Ok(None);
    };
    let pins = pins(tx, id, version)?;
    version_row(id, version, &row, pins).map(Some)
}

/// A version from a row of [`VERSION_COLUMNS`] and its pins.
fn version_row(id: &str, version: u32, row: &Row, pins: Vec<Pin>) -> Result<Version, Error> {
    let front_matter = serde_json::from_str(&row.text("front_matter")?).map_err(|e| {
        Error::new(
            ErrorCode::NotConfigured,
            format!("the front matter of `{id}` version {version} in the catalog is not JSON: {e}"),
        )
    })?;
    crate::finding::checked(Version {
        prompt_id: id.to_string(),
        version,
        system: row.text("system_text")?,
        user: row.opt_text("user_text")?,
        messages: row.opt_text("messages_text")?,
        front_matter,
        syntax: Syntax {
            open: row.text("delimiter_open")?,
            close: row.text("delimiter_close")?,
            standalone_tags: row.int("standalone_tags")? != 0,
        },
        pins,
        resolved_system: row.text("resolved_system")?,
        resolved_user: row.opt_text("resolved_user")?,
        resolved_messages: row.opt_text("resolved_messages")?,
        content_hash: row.text("content_hash")?,
        author: row.text("author")?,
        message: row.text("message")?,
        created_at: Timestamp(row.int("created_at")?),
    })
}

/// A version as [`versions_batch`] reads it: the error of a row that does
/// not parse is that version's own.
pub(crate) type VersionRow = Result<Version, Error>;

/// Versions `wanted` of live prompts with their pins, in a few statements
/// whatever their number: each found one by (id, version), as `Ok`, or as
/// the error of a row that does not parse. A missing or deleted one is not
/// in the map.
pub(crate) fn versions_batch(
    tx: &mut dyn Tx,
    wanted: &[(&str, u32)],
) -> Result<HashMap<(String, u32), VersionRow>, Error> {
    let pins_sql = "SELECT prompt_id, version, snippet, revision FROM version_pins \
                    WHERE (prompt_id, version) IN";
    let mut pins: HashMap<(String, u32), Vec<Pin>> = HashMap::new();
    for row in batched_rows(tx, pins_sql, wanted)? {
        let key = (
            row.text("prompt_id")?,
            number(row.int("version")?, "version")?,
        );
        let pin = pin_row(&row)?;
        let list = pins.entry(key).or_default();
        // A key asked twice (the padding) gives its pins twice.
        if !list.contains(&pin) {
            list.push(pin);
        }
    }
    let versions_sql = format!(
        "SELECT {VERSION_COLUMNS}, prompt_id, version FROM prompt_versions v \
         WHERE EXISTS (SELECT 1 FROM prompts p WHERE p.id = v.prompt_id AND p.deleted = 0) \
         AND (prompt_id, version) IN"
    );
    let mut versions = HashMap::new();
    for row in batched_rows(tx, &versions_sql, wanted)? {
        let key = (
            row.text("prompt_id")?,
            number(row.int("version")?, "version")?,
        );
        if versions.contains_key(&key) {
            continue;
        }
        let mut pins = pins.remove(&key).unwrap_or_default();
        pins.sort_by(|a, b| a.snippet.cmp(&b.snippet));
        let version = version_row(&key.0, key.1, &row, pins);
        versions.insert(key, version);
    }
    Ok(versions)
}

fn pins(tx: &mut dyn Tx, id: &str, version: u32) -> Result<Vec<Pin>, Error> {
    let sql = "SELECT snippet, revision FROM version_pins \
               WHERE prompt_id = $1 AND version = $2 ORDER BY snippet";
    tx.query(sql, &[Param::Text(id), Param::Int(version.into())])?
        .iter()
        .map(pin_row)
        .collect()
}

/// A pin from a row's `snippet` and `revision` columns.
fn pin_row(row: &Row) -> Result<Pin, Error> {
    Ok(Pin {
        snippet: row.text("snippet")?,
        revision: number(row.int("revision")?, "snippet revision")?,
    })
}

/// Every version of prompt `id`, newest first, without texts.
pub(crate) fn versions(tx: &mut dyn Tx, id: &str) -> Result<Vec<VersionSummary>, Error> {
    let sql = "SELECT version, content_hash, author, message, created_at \
               FROM prompt_versions WHERE prompt_id = $1 ORDER BY version DESC";
    tx.query(sql, &[Param::Text(id)])?
        .iter()
        .map(|row| summary_row(row, "created_at"))
        .collect()
}

/// A version without its texts, from a row's `version`, `content_hash`,
/// `author` and `message` columns and its time in column `created_at`
/// (a join names it apart from the prompt's own).
pub(super) fn summary_row(row: &Row, created_at: &str) -> Result<VersionSummary, Error> {
    Ok(VersionSummary {
        version: number(row.int("version")?, "version")?,
        content_hash: row.text("content_hash")?,
        author: row.text("author")?,
        message: row.text("message")?,
        created_at: Timestamp(row.int(created_at)?),
    })
}

/// Appends version N+1 of prompt `id`, which the caller has locked, and
/// returns it. The number comes from the prompt's row, incremented in the
/// same transaction: a rolled-back publish leaves no gap.
pub(crate) fn insert_version(
    tx: &mut dyn Tx,
    id: &str,
    draft: &Draft,
    compiled: &Compiled,
    author: &str,
) -> Result<Version, Error> {
    let created_at = Timestamp::now();
    let row = tx.query_opt(
        "UPDATE prompts SET latest_version = latest_version + 1, \
         description = COALESCE($2, description) WHERE id = $1 RETURNING latest_version",
        &[
            Param::Text(id),
            Param::OptText(compiled.description.as_deref()),
        ],
    )?;
    let version = match row {
        Some(row) => number(row.int("latest_version")?, "version")?,
        None => return Err(no_prompt(id)),
    };
    let front_matter = compiled.front_matter.to_string();
    tx.execute(
        "INSERT INTO prompt_versions (prompt_id, version, system_text, user_text, front_matter, \
         resolved_system, resolved_user, content_hash, author, message, created_at, \
         delimiter_open, delimiter_close, standalone_tags, messages_text, resolved_messages) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        &[
            Param::Text(id),
            Param::Int(version.into()),
            Param::Text(&draft.system),
            Param::OptText(draft.user.as_deref()),
            Param::Text(&front_matter),
            Param::Text(&compiled.resolved_system),
            Param::OptText(compiled.resolved_user.as_deref()),
            Param::Text(&compiled.content_hash),
            Param::Text(author),
            Param::Text(&draft.message),
            Param::Int(created_at.0),
            Param::Text(&draft.syntax.open),
            Param::Text(&draft.syntax.close),
            Param::Int(draft.syntax.standalone_tags.into()),
            Param::OptText(draft.messages.as_deref()),
            Param::OptText(compiled.resolved_messages.as_deref()),
        ],
    )?;
    for pin in &compiled.pins {
        tx.execute(
            "INSERT INTO version_pins (prompt_id, version, snippet, revision) VALUES ($1, $2, $3, $4)",
            &[
                Param::Text(id),
                Param::Int(version.into()),
                Param::Text(&pin.snippet),
                Param::Int(pin.revision.into()),
            ],
        )?;
    }
    notify(tx, id, Some(version))?;
    Ok(Version {
        prompt_id: id.to_string(),
        version,
        system: draft.system.clone(),
        user: draft.user.clone(),
        messages: draft.messages.clone(),
        front_matter: compiled.front_matter.clone(),
        syntax: draft.syntax.clone(),
        pins: compiled.pins.clone(),
        resolved_system: compiled.resolved_system.clone(),
        resolved_user: compiled.resolved_user.clone(),
        resolved_messages: compiled.resolved_messages.clone(),
        content_hash: compiled.content_hash.clone(),
        author: author.to_string(),
        message: draft.message.clone(),
        created_at,
    })
}
