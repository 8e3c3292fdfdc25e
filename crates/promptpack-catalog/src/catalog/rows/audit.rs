//! The audit history of prompts: what each write records, and reading it
//! back.

use super::changes::notify;
use super::number;
use crate::model::{Arm, AuditEntry, Timestamp};
use crate::store::{Param, Tx};
use promptpack_core::Error;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_keep_through_the_audits_text() {
        let arm = |version, weight| Arm { version, weight };
        let cases: [(&[Arm], Option<&str>); 3] = [
            (&[], None),
            (&[arm(3, 1)], Some("3:1")),
            (&[arm(3, 90), arm(4, 10)], Some("3:90,4:10")),
        ];
        for (arms, text) in cases {
            assert_eq!(arms_text(arms).as_deref(), text);
            assert_eq!(parse_arms(text.map(str::to_string)), arms);
        }
    }

    #[test]
    fn an_arm_the_audit_cannot_read_is_left_out() {
        let arms = parse_arms(Some("3:x,4:10,5,:1,".into()));
        assert_eq!(
            arms,
            [Arm {
                version: 4,
                weight: 10
            }]
        );
    }
}
