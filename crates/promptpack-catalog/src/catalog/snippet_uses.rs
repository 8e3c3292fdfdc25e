//! What a snippet's page reads: every revision of a snippet, and which
//! versions of which live prompts pin which of its revisions.

use super::Catalog;
use super::rows::number;
use crate::model::SnippetRevision;
use crate::store::Param;
use promptpack_core::Error;

/// A version of a live prompt that pins a snippet, and the revision it pins.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnippetUse {
    /// The prompt's id.
    pub prompt_id: String,
    /// The version.
    pub version: u32,
    /// The snippet's revision that version renders with.
    pub revision: u32,
}

impl Catalog {
    /// Every revision of snippet `name`, newest first, each checked
    /// against its content hash; none for a snippet the catalog lacks.
    ///
    /// # Errors
    /// `damaged` for a revision whose text does not match its hash;
    /// `unavailable` when the store cannot be read.
    pub fn snippet_revisions(&mut self, name: &str) -> Result<Vec<SnippetRevision>, Error> {
        self.store
            .read(&mut |tx| super::rows::snippet_revisions(tx, name))
    }

    /// Every version of a live prompt that pins snippet `name` (directly or
    /// through another snippet), by prompt id, newest version first.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn snippet_uses(&mut self, name: &str) -> Result<Vec<SnippetUse>, Error> {
        self.store.read(&mut |tx| {
            let sql = "SELECT v.prompt_id AS prompt_id, v.version AS version, \
                       v.revision AS revision FROM version_pins v \
                       JOIN prompts p ON p.id = v.prompt_id \
                       WHERE v.snippet = $1 AND p.deleted = 0 \
                       ORDER BY v.prompt_id, v.version DESC";
            tx.query(sql, &[Param::Text(name)])?
                .iter()
                .map(|row| {
                    Ok(SnippetUse {
                        prompt_id: row.text("prompt_id")?,
                        version: number(row.int("version")?, "version")?,
                        revision: number(row.int("revision")?, "snippet revision")?,
                    })
                })
                .collect()
        })
    }
}
