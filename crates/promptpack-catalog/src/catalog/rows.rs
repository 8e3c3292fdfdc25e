//! The catalog's statements, each a function over a transaction, and the
//! conversions of their rows into the model. Written once for both stores.

use crate::compile::{Compiled, SnippetText};
use crate::model::{
    Arm, AuditEntry, Draft, Pin, PromptEntry, RegisteredBuild, Role, SnippetRevision, Syntax,
    Timestamp, User, UserAction, UserChange, Version, VersionSummary,
};
use crate::store::{Param, Row, Tx};
use promptpack_core::contract::{Contract, FORMAT};
use promptpack_core::{Error, ErrorCode};
use std::collections::HashMap;

const PROMPT_COLUMNS: &str = "id, name, description, deleted, latest_version, created_at";

pub(crate) fn number(value: i64, what: &str) -> Result<u32, Error> {
    u32::try_from(value).map_err(|_| {
        Error::new(
            ErrorCode::NotConfigured,
            format!("the catalog holds {what} {value}, which is not a version number"),
        )
    })
}

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

pub(crate) fn no_prompt(id: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!(
            "the catalog has no prompt `{id}` (`promptpack catalog import` or `promptpack catalog publish` adds one)"
        ),
    )
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
                Some(version) => Some(VersionSummary {
                    version: number(version, "version")?,
                    content_hash: row.text("content_hash")?,
                    author: row.text("author")?,
                    message: row.text("message")?,
                    created_at: Timestamp(row.int("version_created_at")?),
                }),
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
            .push(Arm {
                version: number(row.int("version")?, "arm version")?,
                weight: number(row.int("weight")?, "arm weight")?,
            });
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

/// A revision row of snippet `name` (its `revision`, `text`,
/// `content_hash`, `author`, `message` and `created_at` columns), checked
/// against its content hash.
fn snippet_revision_row(row: &Row, name: String) -> Result<SnippetRevision, Error> {
    super::verify::checked_snippet(SnippetRevision {
        name,
        revision: number(row.int("revision")?, "snippet revision")?,
        text: row.text("text")?,
        content_hash: row.text("content_hash")?,
        author: row.text("author")?,
        message: row.text("message")?,
        created_at: Timestamp(row.int("created_at")?),
    })
}

/// The columns of a version row, as [`version_row`] reads them.
const VERSION_COLUMNS: &str = "system_text, user_text, front_matter, resolved_system, \
     resolved_user, content_hash, author, message, created_at, \
     delimiter_open, delimiter_close, standalone_tags";

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
    super::verify::checked(Version {
        prompt_id: id.to_string(),
        version,
        system: row.text("system_text")?,
        user: row.opt_text("user_text")?,
        front_matter,
        syntax: Syntax {
            open: row.text("delimiter_open")?,
            close: row.text("delimiter_close")?,
            standalone_tags: row.int("standalone_tags")? != 0,
        },
        pins,
        resolved_system: row.text("resolved_system")?,
        resolved_user: row.opt_text("resolved_user")?,
        content_hash: row.text("content_hash")?,
        author: row.text("author")?,
        message: row.text("message")?,
        created_at: Timestamp(row.int("created_at")?),
    })
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
        let pin = Pin {
            snippet: row.text("snippet")?,
            revision: number(row.int("revision")?, "snippet revision")?,
        };
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

/// The texts of snippet revisions `wanted` (name, revision), in a few
/// statements: each found one by its key.
pub(crate) fn snippet_texts_batch(
    tx: &mut dyn Tx,
    wanted: &[(&str, u32)],
) -> Result<HashMap<(String, u32), SnippetText>, Error> {
    let sql = "SELECT name, revision, text FROM snippet_revisions WHERE (name, revision) IN";
    let mut texts = HashMap::new();
    for row in batched_rows(tx, sql, wanted)? {
        let text = SnippetText {
            name: row.text("name")?,
            revision: number(row.int("revision")?, "snippet revision")?,
            text: row.text("text")?,
        };
        texts.insert((text.name.clone(), text.revision), text);
    }
    Ok(texts)
}

fn pins(tx: &mut dyn Tx, id: &str, version: u32) -> Result<Vec<Pin>, Error> {
    let sql = "SELECT snippet, revision FROM version_pins \
               WHERE prompt_id = $1 AND version = $2 ORDER BY snippet";
    tx.query(sql, &[Param::Text(id), Param::Int(version.into())])?
        .iter()
        .map(|row| {
            Ok(Pin {
                snippet: row.text("snippet")?,
                revision: number(row.int("revision")?, "snippet revision")?,
            })
        })
        .collect()
}

/// Every version of prompt `id`, newest first, without texts.
pub(crate) fn versions(tx: &mut dyn Tx, id: &str) -> Result<Vec<VersionSummary>, Error> {
    let sql = "SELECT version, content_hash, author, message, created_at \
               FROM prompt_versions WHERE prompt_id = $1 ORDER BY version DESC";
    tx.query(sql, &[Param::Text(id)])?
        .iter()
        .map(|row| {
            Ok(VersionSummary {
                version: number(row.int("version")?, "version")?,
                content_hash: row.text("content_hash")?,
                author: row.text("author")?,
                message: row.text("message")?,
                created_at: Timestamp(row.int("created_at")?),
            })
        })
        .collect()
}

/// The version label `label` of prompt `id` points at.
pub(crate) fn label(tx: &mut dyn Tx, id: &str, label: &str) -> Result<Option<u32>, Error> {
    let sql = "SELECT version FROM labels WHERE prompt_id = $1 AND label = $2";
    tx.query_opt(sql, &[Param::Text(id), Param::Text(label)])?
        .map(|row| number(row.int("version")?, "label version"))
        .transpose()
}

/// Every label of prompt `id` but `latest`, by name.
pub(crate) fn labels(tx: &mut dyn Tx, id: &str) -> Result<Vec<(String, u32)>, Error> {
    let sql = "SELECT label, version FROM labels WHERE prompt_id = $1 ORDER BY label";
    tx.query(sql, &[Param::Text(id)])?
        .iter()
        .map(|row| {
            let version = number(row.int("version")?, "label version")?;
            Ok((row.text("label")?, version))
        })
        .collect()
}

/// A label of any prompt spelled as `name` but for case (labels are
/// names, so ASCII: `lower` is the same on both stores), if any, when
/// `name` itself is on no prompt: a catalog from before the check that
/// holds both spellings keeps moving each, and gains no third.
pub(crate) fn look_alike_label(tx: &mut dyn Tx, name: &str) -> Result<Option<String>, Error> {
    let sql = "SELECT label FROM labels WHERE lower(label) = $1 AND label <> $2 \
               AND NOT EXISTS (SELECT 1 FROM labels WHERE label = $2) \
               ORDER BY label LIMIT 1";
    let lower = name.to_ascii_lowercase();
    tx.query_opt(sql, &[Param::Text(&lower), Param::Text(name)])?
        .map(|row| row.text("label"))
        .transpose()
}

/// Points `label` of prompt `id` at `version` and records the move.
pub(crate) fn move_label(
    tx: &mut dyn Tx,
    id: &str,
    name: &str,
    version: u32,
    author: &str,
) -> Result<AuditEntry, Error> {
    let from = label(tx, id, name)?;
    point_label(tx, id, name, version)?;
    let event = Event {
        action: "label",
        label: Some(name),
        from_version: from,
        to_version: Some(version),
        arms: &[],
    };
    audit(tx, id, &event, author)
}

/// Points `label` of prompt `id` at `version` alone: a split ends.
fn point_label(tx: &mut dyn Tx, id: &str, name: &str, version: u32) -> Result<(), Error> {
    let sql = "INSERT INTO labels (prompt_id, label, version) VALUES ($1, $2, $3) \
               ON CONFLICT (prompt_id, label) DO UPDATE SET version = excluded.version";
    tx.execute(
        sql,
        &[
            Param::Text(id),
            Param::Text(name),
            Param::Int(version.into()),
        ],
    )?;
    tx.execute(
        "DELETE FROM label_arms WHERE prompt_id = $1 AND label = $2",
        &[Param::Text(id), Param::Text(name)],
    )?;
    Ok(())
}

/// Splits `label` of prompt `id` over `arms` (two or more, distinct
/// versions, the heaviest first) and records it.
pub(crate) fn split_label(
    tx: &mut dyn Tx,
    id: &str,
    name: &str,
    arms: &[Arm],
    author: &str,
) -> Result<AuditEntry, Error> {
    let from = label(tx, id, name)?;
    let heaviest = arms.first().map_or(0, |arm| arm.version);
    point_label(tx, id, name, heaviest)?;
    for arm in arms {
        tx.execute(
            "INSERT INTO label_arms (prompt_id, label, version, weight) VALUES ($1, $2, $3, $4)",
            &[
                Param::Text(id),
                Param::Text(name),
                Param::Int(arm.version.into()),
                Param::Int(arm.weight.into()),
            ],
        )?;
    }
    let event = Event {
        action: "split",
        label: Some(name),
        from_version: from,
        to_version: Some(heaviest),
        arms,
    };
    audit(tx, id, &event, author)
}

/// The arms of `label` of prompt `id`, heaviest first: one of weight 1
/// for a label that is not split, none for a label it does not have.
pub(crate) fn label_arms(tx: &mut dyn Tx, id: &str, name: &str) -> Result<Vec<Arm>, Error> {
    let sql = "SELECT version, weight FROM label_arms WHERE prompt_id = $1 AND label = $2 \
               ORDER BY weight DESC, version";
    let arms = tx
        .query(sql, &[Param::Text(id), Param::Text(name)])?
        .iter()
        .map(|row| {
            Ok(Arm {
                version: number(row.int("version")?, "arm version")?,
                weight: number(row.int("weight")?, "arm weight")?,
            })
        })
        .collect::<Result<Vec<Arm>, Error>>()?;
    if !arms.is_empty() {
        return Ok(arms);
    }
    Ok(label(tx, id, name)?
        .map(|version| vec![Arm { version, weight: 1 }])
        .unwrap_or_default())
}

/// The arms of `name` of every live prompt that has it, by id (heaviest
/// first within a prompt, as [`label_arms`]): what a service following a
/// label reads in one go instead of one query per prompt.
pub(crate) fn labelled(tx: &mut dyn Tx, name: &str) -> Result<Vec<(String, Vec<Arm>)>, Error> {
    let arm = |row: &Row| -> Result<(String, Arm), Error> {
        Ok((
            row.text("prompt_id")?,
            Arm {
                version: number(row.int("version")?, "arm version")?,
                weight: number(row.int("weight")?, "arm weight")?,
            },
        ))
    };
    let targets = if name == "latest" {
        let sql = "SELECT id AS prompt_id, latest_version AS version, 1 AS weight FROM prompts \
                   WHERE deleted = 0 AND latest_version > 0 ORDER BY id";
        tx.query(sql, &[])?
    } else {
        let sql = "SELECT l.prompt_id AS prompt_id, l.version AS version, 1 AS weight \
                   FROM labels l \
                   JOIN prompts p ON p.id = l.prompt_id \
                   WHERE l.label = $1 AND p.deleted = 0 ORDER BY l.prompt_id";
        tx.query(sql, &[Param::Text(name)])?
    };
    let split_sql = "SELECT a.prompt_id AS prompt_id, a.version AS version, \
                     a.weight AS weight FROM label_arms a \
                     JOIN prompts p ON p.id = a.prompt_id \
                     WHERE a.label = $1 AND p.deleted = 0 \
                     ORDER BY a.prompt_id, a.weight DESC, a.version";
    let mut splits: Vec<(String, Arm)> = tx
        .query(split_sql, &[Param::Text(name)])?
        .iter()
        .map(arm)
        .collect::<Result<_, Error>>()?;
    splits.reverse();
    let mut labelled = Vec::new();
    for row in &targets {
        let (id, target) = arm(row)?;
        let mut arms = Vec::new();
        while splits.last().is_some_and(|(split, _)| *split < id) {
            splits.pop();
        }
        while splits.last().is_some_and(|(split, _)| *split == id) {
            arms.extend(splits.pop().map(|(_, arm)| arm));
        }
        if arms.is_empty() {
            arms.push(target);
        }
        labelled.push((id, arms));
    }
    Ok(labelled)
}

/// Arms as the audit keeps them: `3:90,4:10`.
fn arms_text(arms: &[Arm]) -> Option<String> {
    (!arms.is_empty()).then(|| {
        arms.iter()
            .map(|arm| format!("{}:{}", arm.version, arm.weight))
            .collect::<Vec<_>>()
            .join(",")
    })
}

fn parse_arms(text: Option<String>) -> Vec<Arm> {
    text.unwrap_or_default()
        .split(',')
        .filter_map(|arm| {
            let (version, weight) = arm.split_once(':')?;
            Some(Arm {
                version: version.parse().ok()?,
                weight: weight.parse().ok()?,
            })
        })
        .collect()
}

/// What an audit entry says happened.
pub(crate) struct Event<'a> {
    pub action: &'a str,
    pub label: Option<&'a str>,
    pub from_version: Option<u32>,
    pub to_version: Option<u32>,
    pub arms: &'a [Arm],
}

impl Event<'_> {
    /// An event of the prompt itself: `create`, `delete`, `restore`.
    pub(crate) fn of_prompt(action: &str) -> Event<'_> {
        Event {
            action,
            label: None,
            from_version: None,
            to_version: None,
            arms: &[],
        }
    }
}

/// Appends an entry to the audit history of prompt `id`.
pub(crate) fn audit(
    tx: &mut dyn Tx,
    id: &str,
    event: &Event<'_>,
    author: &str,
) -> Result<AuditEntry, Error> {
    let Event {
        action,
        label,
        from_version,
        to_version,
        arms,
    } = *event;
    let created_at = Timestamp::now();
    let arms_text = arms_text(arms);
    let sql = "INSERT INTO audit (prompt_id, action, label, from_version, to_version, author, created_at, arms) \
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq";
    let row = tx.query_opt(
        sql,
        &[
            Param::Text(id),
            Param::Text(action),
            Param::OptText(label),
            Param::OptInt(from_version.map(i64::from)),
            Param::OptInt(to_version.map(i64::from)),
            Param::Text(author),
            Param::Int(created_at.0),
            Param::OptText(arms_text.as_deref()),
        ],
    )?;
    notify(tx, id, to_version)?;
    let seq = row
        .map(|row| row.int("seq"))
        .transpose()?
        .unwrap_or_default();
    Ok(AuditEntry {
        seq,
        action: action.to_string(),
        label: label.map(str::to_string),
        from_version,
        to_version,
        arms: arms.to_vec(),
        author: author.to_string(),
        created_at,
    })
}

/// The audit history of prompt `id`, oldest first.
pub(crate) fn audit_history(tx: &mut dyn Tx, id: &str) -> Result<Vec<AuditEntry>, Error> {
    let sql = "SELECT seq, action, label, from_version, to_version, author, created_at, arms \
               FROM audit WHERE prompt_id = $1 ORDER BY seq";
    tx.query(sql, &[Param::Text(id)])?
        .iter()
        .map(|row| {
            let version = |column: &str| -> Result<Option<u32>, Error> {
                row.opt_int(column)?
                    .map(|v| number(v, "version"))
                    .transpose()
            };
            Ok(AuditEntry {
                seq: row.int("seq")?,
                action: row.text("action")?,
                label: row.opt_text("label")?,
                from_version: version("from_version")?,
                to_version: version("to_version")?,
                arms: parse_arms(row.opt_text("arms")?),
                author: row.text("author")?,
                created_at: Timestamp(row.int("created_at")?),
            })
        })
        .collect()
}

/// The newest revision of every snippet.
pub(crate) fn current_snippets(tx: &mut dyn Tx) -> Result<Vec<SnippetText>, Error> {
    let sql = "SELECT r.name AS name, r.revision AS revision, r.text AS text FROM snippets s \
               JOIN snippet_revisions r ON r.name = s.name AND r.revision = s.latest_revision \
               ORDER BY s.name";
    tx.query(sql, &[])?
        .iter()
        .map(|row| {
            Ok(SnippetText {
                name: row.text("name")?,
                revision: number(row.int("revision")?, "snippet revision")?,
                text: row.text("text")?,
            })
        })
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
         delimiter_open, delimiter_close, standalone_tags) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
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
        front_matter: compiled.front_matter.clone(),
        syntax: draft.syntax.clone(),
        pins: compiled.pins.clone(),
        resolved_system: compiled.resolved_system.clone(),
        resolved_user: compiled.resolved_user.clone(),
        content_hash: compiled.content_hash.clone(),
        author: author.to_string(),
        message: draft.message.clone(),
        created_at,
    })
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

/// The channel PostgreSQL announces every change of a prompt on, for the
/// services that follow a label ([`Listener`](crate::Listener)).
pub const CHANGES_CHANNEL: &str = "promptpack_catalog";

/// Announces a change of prompt `id` (and the version it concerns) on
/// [`CHANGES_CHANNEL`]; PostgreSQL delivers it when the transaction
/// commits, and never when it rolls back. SQLite has no such thing: its
/// followers poll [`Catalog::change_marker`](crate::Catalog::change_marker).
fn notify(tx: &mut dyn Tx, id: &str, version: Option<u32>) -> Result<(), Error> {
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

const USER_COLUMNS: &str = "name, role, created_by, created_at";

/// A console user from a row of [`USER_COLUMNS`].
pub(crate) fn user_row(row: &Row) -> Result<User, Error> {
    let role = row.text("role")?;
    Ok(User {
        name: row.text("name")?,
        // The schema's CHECK admits only the three; a row that says
        // otherwise was written by hand.
        role: role
            .parse()
            .map_err(|_| hand_written("a console user of role", &role))?,
        created_by: row.text("created_by")?,
        created_at: Timestamp(row.int("created_at")?),
    })
}

/// Adds a console user; `None` when the name or the token hash is taken
/// (the caller tells which apart).
pub(crate) fn insert_user(
    tx: &mut dyn Tx,
    name: &str,
    role: Role,
    token_hash: &str,
    created_by: &str,
) -> Result<Option<User>, Error> {
    let created_at = Timestamp::now();
    // No conflict target: either unique key (name, token hash) refuses
    // the row quietly, on both stores, instead of failing the transaction.
    let added = tx.execute(
        "INSERT INTO console_users (name, role, token_hash, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        &[
            Param::Text(name),
            Param::Text(role.as_str()),
            Param::Text(token_hash),
            Param::Text(created_by),
            Param::Int(created_at.0),
        ],
    )?;
    if added == 0 {
        return Ok(None);
    }
    audit_user(tx, name, UserAction::Add, role, created_by, created_at)?;
    Ok(Some(User {
        name: name.to_string(),
        role,
        created_by: created_by.to_string(),
        created_at,
    }))
}

/// The console user named `name`.
pub(crate) fn user(tx: &mut dyn Tx, name: &str) -> Result<Option<User>, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM console_users WHERE name = $1");
    tx.query_opt(&sql, &[Param::Text(name)])?
        .map(|row| user_row(&row))
        .transpose()
}

/// The console user whose token hashes to `token_hash`.
pub(crate) fn user_by_token_hash(tx: &mut dyn Tx, token_hash: &str) -> Result<Option<User>, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM console_users WHERE token_hash = $1");
    tx.query_opt(&sql, &[Param::Text(token_hash)])?
        .map(|row| user_row(&row))
        .transpose()
}

/// Every console user, by name.
pub(crate) fn users(tx: &mut dyn Tx) -> Result<Vec<User>, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM console_users ORDER BY name");
    tx.query(&sql, &[])?.iter().map(user_row).collect()
}

/// Removes the console user named `name` and every session of theirs,
/// recorded as removed by `author`; whether there was one.
pub(crate) fn delete_user(tx: &mut dyn Tx, name: &str, author: &str) -> Result<bool, Error> {
    let Some(user) = user(tx, name)? else {
        return Ok(false);
    };
    // Explicitly, not only by the foreign key's cascade: a name added
    // again must not find its old sessions signed in.
    super::sessions::delete_user_sessions(tx, name)?;
    tx.execute(
        "DELETE FROM console_users WHERE name = $1",
        &[Param::Text(name)],
    )?;
    audit_user(
        tx,
        name,
        UserAction::Remove,
        user.role,
        author,
        Timestamp::now(),
    )?;
    Ok(true)
}

/// Appends a change of the console's users to their audit.
fn audit_user(
    tx: &mut dyn Tx,
    name: &str,
    action: UserAction,
    role: Role,
    author: &str,
    at: Timestamp,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO console_user_audit (user_name, action, role, author, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
        &[
            Param::Text(name),
            Param::Text(action.as_str()),
            Param::Text(role.as_str()),
            Param::Text(author),
            Param::Int(at.0),
        ],
    )?;
    Ok(())
}

/// Every change of the console's users, oldest first.
pub(crate) fn user_history(tx: &mut dyn Tx) -> Result<Vec<UserChange>, Error> {
    let rows = tx.query(
        "SELECT user_name, action, role, author, created_at FROM console_user_audit ORDER BY seq",
        &[],
    )?;
    rows.iter()
        .map(|row| {
            let action = match row.text("action")?.as_str() {
                "add" => UserAction::Add,
                "remove" => UserAction::Remove,
                other => return Err(hand_written("a console user audit action", other)),
            };
            let role = row.text("role")?;
            Ok(UserChange {
                user: row.text("user_name")?,
                action,
                role: role
                    .parse()
                    .map_err(|_| hand_written("a console user of role", &role))?,
                author: row.text("author")?,
                at: Timestamp(row.int("created_at")?),
            })
        })
        .collect()
}

/// A value the schema's CHECK refuses, so written by hand around it.
fn hand_written(what: &str, value: &str) -> Error {
    Error::new(
        ErrorCode::NotConfigured,
        format!("the catalog holds {what} `{value}`, which is not one"),
    )
}

/// Registers a build: inserts it, or refreshes its `last_seen` (and, when
/// its contract changed, the contract and `first_seen`).
pub(crate) fn upsert_build(
    tx: &mut dyn Tx,
    process: &str,
    label: &str,
    contract_hash: &str,
    contract: &str,
    now: Timestamp,
) -> Result<(), Error> {
    // Every SET reads the row as it was, on both stores: first_seen
    // compares the old hash. An unchanged contract keeps its stored text
    // rather than writing the same again.
    tx.execute(
        "INSERT INTO registered_builds (process, label, contract_hash, contract, first_seen, last_seen) \
         VALUES ($1, $2, $3, $4, $5, $5) \
         ON CONFLICT (process, label) DO UPDATE SET \
         first_seen = CASE WHEN registered_builds.contract_hash = excluded.contract_hash \
             THEN registered_builds.first_seen ELSE excluded.first_seen END, \
         contract = CASE WHEN registered_builds.contract_hash = excluded.contract_hash \
             THEN registered_builds.contract ELSE excluded.contract END, \
         contract_hash = excluded.contract_hash, \
         last_seen = excluded.last_seen",
        &[
            Param::Text(process),
            Param::Text(label),
            Param::Text(contract_hash),
            Param::Text(contract),
            Param::Int(now.0),
        ],
    )?;
    Ok(())
}

/// Deletes the registration of `process` following `label`: how many
/// went (0 or 1).
pub(crate) fn delete_build(tx: &mut dyn Tx, process: &str, label: &str) -> Result<u64, Error> {
    tx.execute(
        "DELETE FROM registered_builds WHERE process = $1 AND label = $2",
        &[Param::Text(process), Param::Text(label)],
    )
}

/// Deletes the registrations last seen before `cutoff`.
pub(crate) fn expire_builds(tx: &mut dyn Tx, cutoff: Timestamp) -> Result<u64, Error> {
    tx.execute(
        "DELETE FROM registered_builds WHERE last_seen < $1",
        &[Param::Int(cutoff.0)],
    )
}

/// The registrations last seen at or after `since`, by process and label.
/// One whose contract is of another format than this promptpack reads (a
/// newer promptpack's) is left out: it is not this promptpack's to show.
pub(crate) fn builds(tx: &mut dyn Tx, since: Timestamp) -> Result<Vec<RegisteredBuild>, Error> {
    let sql = "SELECT process, label, contract_hash, contract, first_seen, last_seen \
               FROM registered_builds WHERE last_seen >= $1 ORDER BY process, label";
    let mut builds = Vec::new();
    for row in tx.query(sql, &[Param::Int(since.0)])? {
        let (process, label) = (row.text("process")?, row.text("label")?);
        let text = row.text("contract")?;
        let contract_hash = row.text("contract_hash")?;
        let damaged = |why: String| {
            Error::new(
                ErrorCode::Damaged,
                format!(
                    "the registered build of `{process}` (label `{label}`) {why}: the catalog was changed outside promptpack"
                ),
            )
        };
        if crate::hash::text_hash(&text) != contract_hash {
            return Err(damaged("holds a contract other than its hash names".into()));
        }
        let contract = match Contract::from_json("the registered contract", &text) {
            Ok(contract) => contract,
            Err(error) => {
                let format = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|json| json.get("format").and_then(serde_json::Value::as_u64));
                if format.is_some_and(|format| format != u64::from(FORMAT)) {
                    continue;
                }
                return Err(damaged(error.to_string()));
            }
        };
        builds.push(RegisteredBuild {
            process,
            label,
            contract_hash,
            contract,
            first_seen: Timestamp(row.int("first_seen")?),
            last_seen: Timestamp(row.int("last_seen")?),
        });
    }
    Ok(builds)
}
