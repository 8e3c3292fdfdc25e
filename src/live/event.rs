//! What a live handle tells its subscribers: [`LiveEvent`].

use crate::provenance::CatalogVersion;
use promptpack_core::error::Error;
use std::fmt;

/// What happened to a [`Prompts`](super::Prompts) handle, as sent to
/// [`Prompts::subscribe`](super::Prompts::subscribe) and
/// [`Builder::subscribe`](super::Builder::subscribe): for logs, metrics and
/// dev servers. Each is sent once, when it happens, not on every render.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LiveEvent {
    /// Prompt `prompt` now serves `versions` (one per arm of a split label,
    /// in version order), or its embedded text when `versions` is empty
    /// (the label or the prompt is gone from the catalog).
    Updated {
        /// The prompt id.
        prompt: String,
        /// What serves it now.
        versions: Vec<CatalogVersion>,
    },
    /// The label of `prompt` points at a `version` this binary cannot render
    /// correctly: `error` says why (`contract_violation` naming the
    /// variable, or the code of a template that does not compile). What
    /// served before keeps serving.
    Refused {
        /// The prompt id.
        prompt: String,
        /// The refused version.
        version: u32,
        /// Why, with the location in the version's text.
        error: Error,
    },
    /// The catalog cannot be reached (at start, or lost while running,
    /// including a server that stops answering: within the poll interval
    /// plus [`Builder::timeouts`](super::Builder::timeouts)'s `io`), or the
    /// relay a handle follows (a stream that ends, or that sends nothing
    /// for [`Builder::relay_stall`](super::Builder::relay_stall); a token
    /// it does not accept is `not_configured`): what was loaded keeps
    /// serving, the embedded text where nothing was, and the handle
    /// reconnects with jittered backoff.
    StoreDown {
        /// What failed.
        error: Error,
    },
    /// The catalog (or relay) is reachable again after a
    /// [`LiveEvent::StoreDown`], and every label has been re-read.
    StoreBack,
    /// The catalog, which could not be reached since the start, is
    /// reachable for the first time, and every label has been read.
    StoreUp,
}

impl fmt::Display for LiveEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiveEvent::Updated { prompt, versions } if versions.is_empty() => {
                write!(f, "{prompt}: serving the embedded text")
            }
            LiveEvent::Updated { prompt, versions } => {
                write!(f, "{prompt}: serving")?;
                for (i, version) in versions.iter().enumerate() {
                    let separator = if i == 0 { " " } else { ", " };
                    write!(f, "{separator}v{}", version.version)?;
                    if let Some((weight, total)) = version.arm {
                        write!(f, " ({weight}/{total})")?;
                    }
                }
                Ok(())
            }
            LiveEvent::Refused {
                prompt,
                version,
                error,
            } => write!(f, "{prompt}: refused v{version}: {error}"),
            LiveEvent::StoreDown { error } => write!(f, "catalog down: {error}"),
            LiveEvent::StoreBack => f.write_str("catalog reachable again"),
            LiveEvent::StoreUp => f.write_str("catalog reachable"),
        }
    }
}
