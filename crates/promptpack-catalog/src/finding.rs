//! What is wrong with a catalog, one [`Finding`] a thing: what
//! [`Catalog::verify`](crate::Catalog::verify) lists, what a read that meets
//! a damaged row refuses with, and what the judging of a version says of a
//! version whose files do not render its hash. A leaf: the checks that
//! find them (`verify`, `migrate`, the row readers) all read it.

use crate::hash::{text_hash, version_hash};
use crate::model::{SnippetRevision, Version};
use promptpack_core::diagnostics::escape_controls;
use promptpack_core::{Error, ErrorCode};
use serde::Serialize;

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
    /// A version a binary's contract refuses: what a live handle of that
    /// binary would never serve
    /// ([`Catalog::verify_with`](crate::Catalog::verify_with)).
    ContractViolation,
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

pub(crate) fn hash_finding(
    id: &str,
    version: u32,
    resolved_system: &str,
    resolved_user: Option<&str>,
    resolved_messages: Option<&str>,
    stored_hash: &str,
) -> Option<Finding> {
    (version_hash(resolved_system, resolved_user, resolved_messages) != stored_hash).then(|| {
        Finding {
            code: FindingCode::HashMismatch,
            subject: version_subject(id, version),
            message: format!(
                "version {version} of `{}` does not match its content hash {}",
                escape_controls(id),
                short(stored_hash)
            ),
        }
    })
}

pub(crate) fn snippet_finding(
    name: &str,
    revision: u32,
    text: &str,
    stored_hash: &str,
) -> Option<Finding> {
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

pub(crate) fn resolved_finding(id: &str, version: u32, why: &str) -> Finding {
    Finding {
        code: FindingCode::ResolvedMismatch,
        subject: version_subject(id, version),
        message: format!("version {version} of `{}`: {why}", escape_controls(id)),
    }
}

pub(crate) fn version_subject(id: &str, version: u32) -> Subject {
    Subject::Version {
        prompt: id.to_string(),
        version,
    }
}

/// `sha256:` and the first 12 hex digits of a hash, for messages.
pub(crate) fn short(hash: &str) -> String {
    let shown = hash.get(..12).unwrap_or(hash);
    format!("sha256:{}", escape_controls(shown))
}

/// `version`, when its resolved text matches its content hash; `damaged`
/// naming it otherwise. What every read of a version goes through.
pub(crate) fn checked(version: Version) -> Result<Version, Error> {
    match hash_finding(
        &version.prompt_id,
        version.version,
        &version.resolved_system,
        version.resolved_user.as_deref(),
        version.resolved_messages.as_deref(),
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
