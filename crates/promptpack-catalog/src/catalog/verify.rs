//! Whether a catalog holds what promptpack wrote: [`Catalog::verify`],
//! which checks everything — every version's hash and
//! resolved text, every pin, every snippet revision, the append-only guards
//! and the applied migrations — and lists what is wrong.

use super::Catalog;
use super::migrate;
use super::rows::number;
use crate::compile::{Files, SnippetText, pins_of, sources};
use crate::finding::{
    Finding, FindingCode, hash_finding, resolved_finding, snippet_finding, version_subject,
};
use crate::judge::{Verdict, judge, refusal_line};
use crate::model::{Pin, Syntax, Timestamp, Version};
use crate::store::{Param, Tx};
use promptpack_core::contract::Contract;
use promptpack_core::diagnostics::escape_controls;
use promptpack_core::{Error, ErrorCode};
use serde::Serialize;
use std::collections::HashMap;

/// What [`Catalog::verify`] checked, and what it found wrong: nothing when
/// the catalog holds what promptpack wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// How many prompt versions it checked (deleted prompts' too).
    pub versions: u64,
    /// How many snippet revisions it checked.
    pub snippet_revisions: u64,
    /// How many append-only guards (triggers) it looked for.
    pub guards: u64,
    /// How many applied migrations it checked.
    pub migrations: u64,
    /// What is wrong, in the order checked: migrations, guards, snippet
    /// revisions, versions.
    pub findings: Vec<Finding>,
}

impl VerifyReport {
    /// Whether nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.findings.is_empty()
    }
}

impl Catalog {
    /// Checks that the catalog holds what promptpack wrote, in one read:
    /// every version's resolved text against its content hash, and against
    /// what its files with its pinned snippet revisions compile to; every
    /// pin against the snippet revisions there are; every snippet
    /// revision's text against its hash; the append-only guards (the
    /// triggers refusing `UPDATE`, `DELETE` and, on PostgreSQL, `TRUNCATE`)
    /// are in place, enabled and unchanged; every applied migration is
    /// recorded with the checksum of the one this promptpack embeds.
    /// Changes nothing.
    ///
    /// # Errors
    /// `not_configured` when the catalog's schema is not this
    /// promptpack's; `unavailable` when the store cannot be read. What is
    /// wrong with the catalog is the report's [`findings`](VerifyReport::findings).
    pub fn verify(&mut self) -> Result<VerifyReport, Error> {
        self.verify_with(None)
    }

    /// [`Catalog::verify`], and, given a binary's `contract`, every version
    /// of each of its prompts judged against it as a live handle of that
    /// binary judges it: each it would refuse is a finding
    /// ([`FindingCode::ContractViolation`]).
    ///
    /// # Errors
    /// As [`Catalog::verify`].
    pub fn verify_with(&mut self, contract: Option<&Contract>) -> Result<VerifyReport, Error> {
        let migrations = migrate::migrations(self.store.dialect());
        self.store.read(&mut |tx| {
            let mut report = VerifyReport {
                migrations: u64::try_from(migrate::current_schema(tx, migrations)?)
                    .unwrap_or_default(),
                findings: migrate::migration_findings(tx, migrations)?,
                ..VerifyReport::default()
            };
            let (guards, checked) = migrate::guard_findings(tx)?;
            report.findings.extend(guards);
            report.guards = checked;
            let snippets = snippet_revisions(tx, &mut report)?;
            let pins = all_pins(tx)?;
            verify_versions(tx, &snippets, &pins, contract, &mut report)?;
            Ok(report)
        })
    }
}

/// Every snippet revision, its hash checked, by (name, revision).
fn snippet_revisions(
    tx: &mut dyn Tx,
    report: &mut VerifyReport,
) -> Result<HashMap<(String, u32), SnippetText>, Error> {
    let sql = "SELECT name, revision, text, content_hash FROM snippet_revisions \
               ORDER BY name, revision";
    let mut texts = HashMap::new();
    for row in tx.query(sql, &[])? {
        let (name, revision) = (row.text("name")?, number(row.int("revision")?, "revision")?);
        let text = row.text("text")?;
        report.snippet_revisions += 1;
        report.findings.extend(snippet_finding(
            &name,
            revision,
            &text,
            &row.text("content_hash")?,
        ));
        let key = (name.clone(), revision);
        texts.insert(
            key,
            SnippetText {
                name,
                revision,
                text,
            },
        );
    }
    Ok(texts)
}

/// Every version's pins, by (prompt, version), by snippet name.
fn all_pins(tx: &mut dyn Tx) -> Result<HashMap<(String, u32), Vec<Pin>>, Error> {
    let sql = "SELECT prompt_id, version, snippet, revision FROM version_pins \
               ORDER BY prompt_id, version, snippet";
    let mut pins: HashMap<(String, u32), Vec<Pin>> = HashMap::new();
    for row in tx.query(sql, &[])? {
        let key = (
            row.text("prompt_id")?,
            number(row.int("version")?, "version")?,
        );
        pins.entry(key).or_default().push(Pin {
            snippet: row.text("snippet")?,
            revision: number(row.int("revision")?, "revision")?,
        });
    }
    Ok(pins)
}

/// How many versions one statement reads: their texts are held only that
/// long.
const PAGE: i64 = 100;

/// Checks every version, a page at a time, in (prompt, version) order.
fn verify_versions(
    tx: &mut dyn Tx,
    snippets: &HashMap<(String, u32), SnippetText>,
    pins: &HashMap<(String, u32), Vec<Pin>>,
    contract: Option<&Contract>,
    report: &mut VerifyReport,
) -> Result<(), Error> {
    let sql = "SELECT prompt_id, version, system_text, user_text, messages_text, \
               delimiter_open, delimiter_close, standalone_tags, resolved_system, resolved_user, \
               resolved_messages, content_hash \
               FROM prompt_versions WHERE prompt_id > $1 OR (prompt_id = $1 AND version > $2) \
               ORDER BY prompt_id, version LIMIT $3";
    let mut after = (String::new(), 0i64);
    loop {
        let rows = tx.query(
            sql,
            &[Param::Text(&after.0), Param::Int(after.1), Param::Int(PAGE)],
        )?;
        for row in &rows {
            let key = (
                row.text("prompt_id")?,
                number(row.int("version")?, "version")?,
            );
            let pinned = pins.get(&key).map_or(&[][..], Vec::as_slice);
            let stored = Version {
                prompt_id: key.0,
                version: key.1,
                system: row.text("system_text")?,
                user: row.opt_text("user_text")?,
                messages: row.opt_text("messages_text")?,
                syntax: Syntax {
                    open: row.text("delimiter_open")?,
                    close: row.text("delimiter_close")?,
                    standalone_tags: row.int("standalone_tags")? != 0,
                },
                pins: pinned.to_vec(),
                resolved_system: row.text("resolved_system")?,
                resolved_user: row.opt_text("resolved_user")?,
                resolved_messages: row.opt_text("resolved_messages")?,
                content_hash: row.text("content_hash")?,
                // Not read: nothing below looks at them.
                front_matter: serde_json::Value::Null,
                author: String::new(),
                message: String::new(),
                created_at: Timestamp(0),
            };
            report.versions += 1;
            after = (stored.prompt_id.clone(), i64::from(stored.version));
            let contract = contract.and_then(|c| c.prompts.get(&stored.prompt_id));
            report
                .findings
                .extend(version_findings(stored, snippets, contract));
        }
        if rows.len() < PAGE as usize {
            return Ok(());
        }
    }
}

/// What is wrong with one version: its hash, its pins, and what judging
/// it finds (as a live handle judges it, against `contract` when given).
fn version_findings(
    stored: Version,
    snippets: &HashMap<(String, u32), SnippetText>,
    contract: Option<&promptpack_core::contract::PromptContract>,
) -> Vec<Finding> {
    let (id, number) = (stored.prompt_id.clone(), stored.version);
    let hash_wrong = hash_finding(
        &id,
        number,
        &stored.resolved_system,
        stored.resolved_user.as_deref(),
        stored.resolved_messages.as_deref(),
        &stored.content_hash,
    );
    let mut findings: Vec<Finding> = hash_wrong.iter().cloned().collect();
    let mut pinned = Vec::with_capacity(stored.pins.len());
    for pin in &stored.pins {
        match snippets.get(&(pin.snippet.clone(), pin.revision)) {
            Some(text) => pinned.push(text.clone()),
            None => findings.push(Finding {
                code: FindingCode::MissingRevision,
                subject: version_subject(&id, number),
                message: format!(
                    "version {number} of `{}` pins revision {} of snippet `{}`, which the catalog lacks",
                    escape_controls(&id),
                    pin.revision,
                    escape_controls(&pin.snippet)
                ),
            }),
        }
    }
    if pinned.len() < stored.pins.len() {
        // It cannot compile without them: said once, above.
        return findings;
    }
    let sources = sources(&id, Files::of_version(&stored), &pinned);
    let pins = stored.pins.clone();
    let why = match judge(stored, sources, contract) {
        Verdict::Refuse(error) if error.code() == ErrorCode::ContractViolation => {
            findings.push(Finding {
                code: FindingCode::ContractViolation,
                subject: version_subject(&id, number),
                message: format!(
                    "version {number} of `{}` is refused by the contract: {}",
                    escape_controls(&id),
                    refusal_line(&error)
                ),
            });
            None
        }
        // Its stored text does not match its hash (said above) but its
        // files render what the hash names: the stored text is what changed.
        Verdict::Refuse(error) if error.code() == ErrorCode::Damaged && hash_wrong.is_none() => {
            Some("its files and pinned snippets compile to other text than it stores".to_string())
        }
        Verdict::Refuse(error) if error.code() == ErrorCode::Damaged => None,
        Verdict::Refuse(error) => Some(format!(
            "does not compile from its files and pinned snippets ({})",
            error.code()
        )),
        Verdict::Serve(_) if hash_wrong.is_some() => {
            Some("its files and pinned snippets compile to other text than it stores".to_string())
        }
        Verdict::Serve(checked) if pins_of(&checked.prompt, &pinned) != pins => {
            Some("its files include other snippets than it pins".to_string())
        }
        Verdict::Serve(_) => None,
    };
    findings.extend(why.map(|why| resolved_finding(&id, number, &why)));
    findings
}
