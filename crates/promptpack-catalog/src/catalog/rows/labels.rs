//! Labels and their split arms: where a label points, moving and
//! splitting one (each recorded in the audit), and every prompt's arms of
//! one label at once.

use super::audit::{Event, audit};
use super::number;
use crate::model::{Arm, AuditEntry};
use crate::store::{Param, Row, Tx};
use promptpack_core::Error;

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
        .map(arm_row)
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
    let arm =
        |row: &Row| -> Result<(String, Arm), Error> { Ok((row.text("prompt_id")?, arm_row(row)?)) };
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

/// An arm from a row's `version` and `weight` columns.
pub(super) fn arm_row(row: &Row) -> Result<Arm, Error> {
    Ok(Arm {
        version: number(row.int("version")?, "arm version")?,
        weight: number(row.int("weight")?, "arm weight")?,
    })
}
