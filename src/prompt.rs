//! A rendered prompt, whichever way it was rendered: by the generated code,
//! a `Library` or a live catalog version.

use crate::provenance::Provenance;

/// A rendered prompt: what to send to the model, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Prompt<Id = String> {
    /// Which prompt this is.
    pub id: Id,
    /// The rendered `system.md`.
    pub system: String,
    /// The rendered `user.md`, when the prompt has one.
    pub user: Option<String>,
    /// Stable content hash of the resolved template (snippets included), for
    /// logging and provenance. The same template gives the same hash in the
    /// generated code, a `Library` and the CLI.
    pub hash: u64,
    /// Where the text came from, as one field for a log line or a trace
    /// span: it displays as `embedded` (generated code), `loaded` (a
    /// `Library`, or the dev hot reload) or `catalog agent-system v3
    /// label=production sha256:…` (a live catalog version).
    pub provenance: Provenance,
}
