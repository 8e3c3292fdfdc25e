//! A rendered prompt, whichever way it was rendered: by the generated code,
//! a `Library` or a live catalog version.

use crate::provenance::Provenance;
use std::fmt;

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
    /// generated code, a `Library` and the CLI, and it displays as
    /// `promptpack list` shows it (16 hex digits), so a log line can be
    /// matched against `list`.
    pub hash: PromptHash,
    /// Where the text came from, as one field for a log line or a trace
    /// span: it displays as `embedded` (generated code), `loaded` (a
    /// `Library`, or the dev hot reload) or `catalog agent-system v3
    /// label=production sha256:…` (a live catalog version).
    pub provenance: Provenance,
}

/// The content hash of a resolved template: what [`Prompt::hash`] holds.
/// It displays (and debugs) as 16 lowercase hex digits, as `promptpack
/// list` and `promptpack render --json` show it.
///
/// ```
/// use promptpack::PromptHash;
/// assert_eq!(PromptHash::from(0xbeef).to_string(), "000000000000beef");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PromptHash(u64);

impl PromptHash {
    /// The hash `value`, as the generated code holds it.
    pub const fn new(value: u64) -> PromptHash {
        PromptHash(value)
    }

    /// The hash as a number.
    pub fn value(self) -> u64 {
        self.0
    }
}

impl From<u64> for PromptHash {
    fn from(value: u64) -> PromptHash {
        PromptHash(value)
    }
}

impl fmt::Display for PromptHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for PromptHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
