//! What a relay and its followers say to each other over HTTP: the JSON
//! of a label's snapshot, of a change, and of a version with the pinned
//! snippet texts it renders from. The relay serves them
//! (`promptpack relay`); a live handle, another relay or a service in any
//! language reads them. The version travels whole, files and pins, so a
//! follower compiles and judges it itself
//! ([`judge_fetched`](crate::judge_fetched)): a relay passes text on and
//! never decides what a binary may render.
//!
//! The routes, under [`RELAY_PREFIX`], each with `Authorization: Bearer
//! TOKEN` of a catalog user (any role):
//!
//! | route | answer |
//! |---|---|
//! | `GET /labels/{label}` | [`Snapshot`], with an `ETag` (its event id); `If-None-Match` answers 304 |
//! | `GET /labels/{label}/events` | `text/event-stream`: [`SNAPSHOT_EVENT`] first unless `Last-Event-ID` can be replayed, then [`CHANGE_EVENT`]s, a comment every few seconds |
//! | `GET /versions/{prompt}/{version}` | [`WireVersion`] |
//! | `GET /labels/{label}/earlier/{prompt}` | [`Earlier`] |
//! | `POST /builds`, `DELETE /builds` | a [`WireBuild`] registered or taken away; 204 |
//! | `GET /me` | the user the token names (`{"name", "role"}`) |

use crate::compile::{Files, SnippetText, sources};
use crate::model::{BuildRegistration, Version};
use crate::{Error, ErrorCode};
use promptpack_core::Sources;
use promptpack_core::contract::Contract;
use serde::{Deserialize, Serialize};

/// Where a relay's routes start: `http://relay:7879/relay/v1/labels/production`.
pub const RELAY_PREFIX: &str = "/relay/v1";

/// The server-sent event that carries a [`Snapshot`]: the whole label, sent
/// first on a stream that cannot be resumed where its reader left it.
pub const SNAPSHOT_EVENT: &str = "snapshot";

/// The server-sent event that carries a [`Change`]: one prompt's arms of
/// the label changed.
pub const CHANGE_EVENT: &str = "change";

/// One arm of a label as a relay serves it: the version, its weight and
/// the content hash, by which a follower that holds the version already
/// knows it need not read it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireArm {
    /// The version.
    pub version: u32,
    /// Its weight relative to the other arms' (1 for a label that is not
    /// split).
    pub weight: u32,
    /// The version's content hash ([`Version::content_hash`]).
    pub content_hash: String,
}

/// A prompt of a label: its arms, heaviest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelledArms {
    /// The prompt's id.
    pub prompt: String,
    /// The label's arms, heaviest first; never empty in a [`Snapshot`].
    pub arms: Vec<WireArm>,
}

/// Every prompt that has a label, and where the relay's history of it
/// stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The label.
    pub label: String,
    /// The id of the last event this snapshot includes: a stream resumed
    /// from it (`Last-Event-ID`) misses nothing, and it is the snapshot's
    /// `ETag`.
    pub event_id: String,
    /// The prompts that have the label, by id. A prompt missing has no
    /// such label (or was deleted): a follower serves its embedded text.
    pub prompts: Vec<LabelledArms>,
}

/// One prompt's arms of a label changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The prompt and its arms now; none when the label was taken away or
    /// the prompt deleted.
    #[serde(flatten)]
    pub labelled: LabelledArms,
    /// The versions the arms name, whole, so that a follower needs no
    /// second request to serve them.
    pub versions: Vec<WireVersion>,
}

/// A version as a relay sends it: the version (its files, pins and
/// hash) and the text of each snippet revision it pins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireVersion {
    /// The version as the catalog holds it.
    pub version: Version,
    /// The text of each snippet revision it pins.
    pub snippets: Vec<PinnedSnippet>,
}

/// The text of one pinned snippet revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedSnippet {
    /// The snippet's name.
    pub name: String,
    /// The revision pinned.
    pub revision: u32,
    /// Its text.
    pub text: String,
}

impl WireVersion {
    /// `version` with `sources`, as
    /// [`Catalog::versions_with_sources`](crate::Catalog::versions_with_sources)
    /// reads them.
    pub fn new(version: Version, sources: &Sources) -> WireVersion {
        let snippets = version
            .pins
            .iter()
            .filter_map(|pin| {
                let snippet = sources.snippets.iter().find(|s| s.name == pin.snippet)?;
                Some(PinnedSnippet {
                    name: pin.snippet.clone(),
                    revision: pin.revision,
                    text: snippet.file.text().to_string(),
                })
            })
            .collect();
        WireVersion { version, snippets }
    }

    /// The version with the sources it renders from, for
    /// [`judge_fetched`](crate::judge_fetched): a snippet it pins that the
    /// relay did not send is `damaged`, as a hash that does not match its
    /// text is when judged.
    pub fn into_fetched(self) -> Result<(Version, Sources), Error> {
        let WireVersion { version, snippets } = self;
        let texts = version
            .pins
            .iter()
            .map(|pin| {
                snippets
                    .iter()
                    .find(|s| s.name == pin.snippet && s.revision == pin.revision)
                    .map(|s| SnippetText {
                        name: s.name.clone(),
                        revision: s.revision,
                        text: s.text.clone(),
                    })
                    .ok_or_else(|| {
                        Error::new(
                            ErrorCode::Damaged,
                            format!(
                                "version {} of `{}` pins snippet `{}` revision {}, which the relay did not send",
                                version.version, version.prompt_id, pin.snippet, pin.revision
                            ),
                        )
                    })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let sources = sources(&version.prompt_id, Files::of_version(&version), &texts);
        Ok((version, sources))
    }
}

/// The versions a label pointed at before, newest first: where a follower
/// that refuses what the label points at now looks for one it can render.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Earlier {
    /// The versions, newest first, each once.
    pub versions: Vec<u32>,
}

/// A build registered through a relay: [`BuildRegistration`] as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireBuild {
    /// The process it runs in.
    pub process: String,
    /// The label it follows.
    pub label: String,
    /// The contract of the binary.
    pub contract: Contract,
}

impl From<BuildRegistration> for WireBuild {
    fn from(build: BuildRegistration) -> WireBuild {
        WireBuild {
            process: build.process,
            label: build.label,
            contract: build.contract,
        }
    }
}

impl From<WireBuild> for BuildRegistration {
    fn from(build: WireBuild) -> BuildRegistration {
        BuildRegistration {
            process: build.process,
            label: build.label,
            contract: build.contract,
        }
    }
}
