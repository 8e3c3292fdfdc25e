//! Where a rendered prompt's text came from, so that an answer can be
//! traced to the exact text that produced it.

use std::fmt;
use std::sync::Arc;

/// Where a [`Prompt`](crate::Prompt)'s text came from. Its `Display` is
/// one token-free line for a log or a trace span: `embedded`, `loaded`, or
/// `catalog agent-system v3 label=production sha256:9f2c…` (with
/// `arm=10/100` after the label when the label is split, and
/// `pins=footer@3,tone@1` at the end when the version pins snippet
/// revisions).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provenance {
    /// The text compiled into the program: generated code.
    #[default]
    Embedded,
    /// A [`Library`](crate::Library) read at run time: the files on disk
    /// (`Library::load`, the dev hot reload) or sources given in memory.
    Loaded,
    /// A version of a prompt catalog.
    Catalog(CatalogVersion),
}

/// The catalog version a prompt was rendered from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CatalogVersion {
    /// The prompt's id in the catalog.
    pub prompt: Arc<str>,
    /// The version number.
    pub version: u32,
    /// The label that chose it, when one did.
    pub label: Option<Arc<str>>,
    /// When the label is split between versions, this arm's weight and the
    /// weights' total (`Some((10, 100))`: one request in ten).
    pub arm: Option<(u32, u32)>,
    /// The SHA-256 of the version's resolved text, lowercase hex.
    pub content_hash: Arc<str>,
    /// The snippet revisions the version renders with, as the catalog
    /// pinned them when it was published: each snippet's name and
    /// revision, sorted by name; empty when it includes no snippet.
    /// Shared, so that a prompt's provenance clones without copying them.
    pub pins: Arc<[(Arc<str>, u32)]>,
}

impl CatalogVersion {
    /// Version `version` of prompt `prompt`, whose resolved text has the
    /// SHA-256 `content_hash`; no label, no arm and no pins (set the
    /// fields for a version a label chose, or that pins snippets).
    pub fn new(
        prompt: impl Into<Arc<str>>,
        version: u32,
        content_hash: impl Into<Arc<str>>,
    ) -> CatalogVersion {
        CatalogVersion {
            prompt: prompt.into(),
            version,
            label: None,
            arm: None,
            content_hash: content_hash.into(),
            pins: Arc::from([]),
        }
    }

    /// The pins as one text, `name@revision` by name, comma-separated
    /// (`footer@3,tone@1`), as `promptpack catalog` lists them; empty when
    /// there are none.
    pub fn pins_text(&self) -> String {
        let mut text = String::new();
        for (i, (snippet, revision)) in self.pins.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(snippet);
            text.push('@');
            text.push_str(&revision.to_string());
        }
        text
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Provenance::Embedded => f.write_str("embedded"),
            Provenance::Loaded => f.write_str("loaded"),
            Provenance::Catalog(version) => {
                write!(f, "catalog {} v{}", version.prompt, version.version)?;
                if let Some(label) = &version.label {
                    write!(f, " label={label}")?;
                }
                if let Some((weight, total)) = version.arm {
                    write!(f, " arm={weight}/{total}")?;
                }
                write!(f, " sha256:{}", version.content_hash)?;
                if !version.pins.is_empty() {
                    write!(f, " pins={}", version.pins_text())?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_reads_as_one_log_field() {
        assert_eq!(Provenance::default().to_string(), "embedded");
        assert_eq!(Provenance::Loaded.to_string(), "loaded");
        let catalog = Provenance::Catalog(CatalogVersion {
            prompt: "agent-system".into(),
            version: 3,
            label: Some("production".into()),
            arm: None,
            content_hash: "9f2c".into(),
            pins: Arc::from([]),
        });
        assert_eq!(
            catalog.to_string(),
            "catalog agent-system v3 label=production sha256:9f2c"
        );
        let arm = Provenance::Catalog(CatalogVersion {
            prompt: "agent-system".into(),
            version: 4,
            label: Some("production".into()),
            arm: Some((10, 100)),
            content_hash: "77aa".into(),
            pins: Arc::from([(Arc::from("footer"), 3), (Arc::from("tone"), 1)]),
        });
        assert_eq!(
            arm.to_string(),
            "catalog agent-system v4 label=production arm=10/100 sha256:77aa pins=footer@3,tone@1"
        );
    }
}
