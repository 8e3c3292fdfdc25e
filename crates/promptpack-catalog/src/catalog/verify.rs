//! Whether a catalog holds what promptpack wrote: the check every read
//! makes of the text it returns (its content hash), and
//! [`Catalog::verify`], which checks everything — every version's hash and
//! resolved text, every pin, every snippet revision, the append-only guards
//! and the applied migrations — and lists what is wrong.

use super::Catalog;
use super::migrate;
use crate::compile::{SnippetText, compile_draft, content_hash, text_hash};
use crate::model::{Draft, Pin, SnippetRevision, Syntax, Version};
use crate::store::{Access, Param, Tx};
use crate::timeouts::Timeouts;
use promptpack_core::diagnostics::escape_controls;
use promptpack_core::print::template_text;
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::{Error, ErrorCode, Settings};
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

/// One thing wrong with a catalog: the store holds what promptpack never
/// writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What kind of wrong.
    pub code: FindingCode,
    /// What it is about.
    pub subject: Subject,
    /// What is wrong, in a sentence that names the subject.
    pub message: String,
}

impl Finding {
    /// The finding as the error a read or a connect refuses with:
    /// `damaged`, pointing at `promptpack catalog verify`.
    pub fn into_error(self) -> Error {
        Error::new(
            ErrorCode::Damaged,
            format!(
                "{}: the catalog was changed outside promptpack; `promptpack catalog verify` lists what is wrong",
                self.message
            ),
        )
    }
}

/// The kinds of [`Finding`], stable for scripts (`--json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingCode {
    /// A version's resolved text does not match its content hash.
    HashMismatch,
    /// A version's files with its pinned snippet revisions do not compile
    /// to the resolved text it stores (or to its pins, or at all).
    ResolvedMismatch,
    /// A version pins a snippet revision the catalog lacks.
    MissingRevision,
    /// A snippet revision's text does not match its content hash.
    SnippetHashMismatch,
    /// An append-only guard (a trigger) is missing, disabled or changed.
    Guard,
    /// An applied migration is recorded with another checksum than the one
    /// this promptpack embeds, with none, twice or not at all.
    Migration,
}

/// What a [`Finding`] is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    /// Version `version` of prompt `prompt`.
    Version {
        /// The prompt's id.
        prompt: String,
        /// The version's number.
        version: u32,
    },
    /// Revision `revision` of snippet `snippet`.
    SnippetRevision {
        /// The snippet's name.
        snippet: String,
        /// The revision's number.
        revision: u32,
    },
    /// The trigger `name` on table `table`.
    Guard {
        /// The trigger's name.
        name: String,
        /// The table it guards.
        table: String,
    },
    /// The migration to schema version `version`, from file `name`.
    Migration {
        /// The schema version it brings the catalog to.
        version: i64,
        /// Its file under `migrations/`.
        name: String,
    },
}

/// `version`, when its resolved text matches its content hash; `damaged`
/// naming it otherwise. What every read of a version goes through.
pub(crate) fn checked(version: Version) -> Result<Version, Error> {
    match hash_finding(
        &version.prompt_id,
        version.version,
        &version.resolved_system,
        version.resolved_user.as_deref(),
        &version.content_hash,
    ) {
        Some(finding) => Err(finding.into_error()),
        None => Ok(version),
    }
}

/// `revision`, when its text matches its content hash; `damaged` naming it
/// otherwise. What every read of a snippet revision goes through.
pub(crate) fn checked_snippet(revision: SnippetRevision) -> Result<SnippetRevision, Error> {
    match snippet_finding(
        &revision.name,
        revision.revision,
        &revision.text,
        &revision.content_hash,
    ) {
        Some(finding) => Err(finding.into_error()),
        None => Ok(revision),
    }
}

/// Checks that `prompt`, compiled from `version`'s files and pinned
/// snippet revisions in `settings` (as a service following a label does),
/// renders the text `version`'s content hash names: a version whose files
/// or snippets were rewritten under an unchanged resolved text is refused.
///
/// # Errors
/// `damaged`, naming the version, when it does not.
pub fn check_compiled(
    version: &Version,
    prompt: &ResolvedPrompt,
    settings: &Settings,
) -> Result<(), Error> {
    let (system, user) = resolved_texts(prompt, settings);
    if content_hash(&system, user.as_deref()) == version.content_hash {
        return Ok(());
    }
    Err(resolved_finding(
        &version.prompt_id,
        version.version,
        "its files and pinned snippets render other text than its content hash names",
    )
    .into_error())
}

/// What `prompt` renders, as a version stores it.
fn resolved_texts(prompt: &ResolvedPrompt, settings: &Settings) -> (String, Option<String>) {
    let delimiters = &settings.delimiters;
    let system = template_text(&prompt.system, &prompt.vars, delimiters);
    let user = prompt
        .user
        .as_ref()
        .map(|user| template_text(user, &prompt.vars, delimiters));
    (system, user)
}

impl Catalog {
    /// Connects to the catalog at `url` to [`verify`](Catalog::verify) it:
    /// as [`Catalog::connect_with`], but a recorded migration checksum that
    /// differs is left for `verify` to list instead of refused.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be reached; `not_configured`
    /// when there is no catalog there.
    pub fn connect_to_verify(url: &str, timeouts: &Timeouts) -> Result<Catalog, Error> {
        Catalog::connect_unchecked(url, Access::Read, timeouts)
    }

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
        let migrations = self.store.migrations();
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
            verify_versions(tx, &snippets, &pins, &mut report)?;
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
        let (name, revision) = (row.text("name")?, number(row.int("revision")?)?);
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
        let key = (row.text("prompt_id")?, number(row.int("version")?)?);
        pins.entry(key).or_default().push(Pin {
            snippet: row.text("snippet")?,
            revision: number(row.int("revision")?)?,
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
    report: &mut VerifyReport,
) -> Result<(), Error> {
    let sql = "SELECT prompt_id, version, system_text, user_text, delimiter_open, \
               delimiter_close, standalone_tags, resolved_system, resolved_user, content_hash \
               FROM prompt_versions WHERE prompt_id > $1 OR (prompt_id = $1 AND version > $2) \
               ORDER BY prompt_id, version LIMIT $3";
    let mut after = (String::new(), 0i64);
    loop {
        let rows = tx.query(
            sql,
            &[Param::Text(&after.0), Param::Int(after.1), Param::Int(PAGE)],
        )?;
        for row in &rows {
            let stored = StoredVersion {
                id: row.text("prompt_id")?,
                version: number(row.int("version")?)?,
                draft: Draft {
                    system: row.text("system_text")?,
                    user: row.opt_text("user_text")?,
                    message: String::new(),
                    syntax: Syntax {
                        open: row.text("delimiter_open")?,
                        close: row.text("delimiter_close")?,
                        standalone_tags: row.int("standalone_tags")? != 0,
                    },
                },
                resolved_system: row.text("resolved_system")?,
                resolved_user: row.opt_text("resolved_user")?,
                content_hash: row.text("content_hash")?,
            };
            report.versions += 1;
            let key = (stored.id.clone(), stored.version);
            let pinned = pins.get(&key).map_or(&[][..], Vec::as_slice);
            report
                .findings
                .extend(version_findings(&stored, pinned, snippets));
            after = (stored.id, i64::from(stored.version));
        }
        if rows.len() < PAGE as usize {
            return Ok(());
        }
    }
}

/// A version's row, as `verify` reads it.
struct StoredVersion {
    id: String,
    version: u32,
    draft: Draft,
    resolved_system: String,
    resolved_user: Option<String>,
    content_hash: String,
}

/// What is wrong with one version: its hash, its pins, what its files with
/// its pins compile to.
fn version_findings(
    stored: &StoredVersion,
    pins: &[Pin],
    snippets: &HashMap<(String, u32), SnippetText>,
) -> Vec<Finding> {
    let (id, number) = (stored.id.as_str(), stored.version);
    let mut findings: Vec<Finding> = hash_finding(
        id,
        number,
        &stored.resolved_system,
        stored.resolved_user.as_deref(),
        &stored.content_hash,
    )
    .into_iter()
    .collect();
    let mut pinned = Vec::with_capacity(pins.len());
    for pin in pins {
        match snippets.get(&(pin.snippet.clone(), pin.revision)) {
            Some(text) => pinned.push(text.clone()),
            None => findings.push(Finding {
                code: FindingCode::MissingRevision,
                subject: version_subject(id, number),
                message: format!(
                    "version {number} of `{}` pins revision {} of snippet `{}`, which the catalog lacks",
                    escape_controls(id),
                    pin.revision,
                    escape_controls(&pin.snippet)
                ),
            }),
        }
    }
    if pinned.len() < pins.len() {
        // It cannot compile without them: said once, above.
        return findings;
    }
    let why = match compile_draft(id, &stored.draft, &pinned, None) {
        Err(error) => Some(format!(
            "does not compile from its files and pinned snippets ({})",
            error.code()
        )),
        Ok(compiled)
            if compiled.resolved_system != stored.resolved_system
                || compiled.resolved_user != stored.resolved_user =>
        {
            Some("its files and pinned snippets compile to other text than it stores".to_string())
        }
        Ok(compiled) if compiled.pins != pins => {
            Some("its files include other snippets than it pins".to_string())
        }
        Ok(_) => None,
    };
    findings.extend(why.map(|why| resolved_finding(id, number, &why)));
    findings
}

fn hash_finding(
    id: &str,
    version: u32,
    resolved_system: &str,
    resolved_user: Option<&str>,
    stored_hash: &str,
) -> Option<Finding> {
    (content_hash(resolved_system, resolved_user) != stored_hash).then(|| Finding {
        code: FindingCode::HashMismatch,
        subject: version_subject(id, version),
        message: format!(
            "version {version} of `{}` does not match its content hash {}",
            escape_controls(id),
            short(stored_hash)
        ),
    })
}

fn snippet_finding(name: &str, revision: u32, text: &str, stored_hash: &str) -> Option<Finding> {
    (text_hash(text) != stored_hash).then(|| Finding {
        code: FindingCode::SnippetHashMismatch,
        subject: Subject::SnippetRevision {
            snippet: name.to_string(),
            revision,
        },
        message: format!(
            "revision {revision} of snippet `{}` does not match its content hash {}",
            escape_controls(name),
            short(stored_hash)
        ),
    })
}

fn resolved_finding(id: &str, version: u32, why: &str) -> Finding {
    Finding {
        code: FindingCode::ResolvedMismatch,
        subject: version_subject(id, version),
        message: format!("version {version} of `{}`: {why}", escape_controls(id)),
    }
}

fn version_subject(id: &str, version: u32) -> Subject {
    Subject::Version {
        prompt: id.to_string(),
        version,
    }
}

/// `sha256:` and the first 12 hex digits of a hash, for messages.
fn short(hash: &str) -> String {
    let shown = hash.get(..12).unwrap_or(hash);
    format!("sha256:{}", escape_controls(shown))
}

fn number(value: i64) -> Result<u32, Error> {
    u32::try_from(value).map_err(|_| {
        Error::new(
            ErrorCode::Damaged,
            format!("the catalog holds {value} where a version or revision number belongs"),
        )
    })
}
