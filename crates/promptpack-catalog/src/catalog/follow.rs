//! What a service that follows a label reads: the label's arms and the
//! versions they name, in one snapshot, so that a write landing between
//! two reads never makes a good version look missing; and the file a
//! SQLite catalog lives in, to notice it replaced.

use super::{Catalog, VersionSources, missing_revision, pinned_texts, rows, select, with_sources};
use crate::model::{Arm, Selector};
use crate::store::{StoreUrl, Tx};
use promptpack_core::{Error, ErrorCode};
use std::collections::HashMap;
use std::path::PathBuf;

/// How many earlier versions of a label [`Catalog::earlier_versions`]
/// gives at most: a follower tries no more before it gives up and serves
/// its embedded text.
pub const MAX_EARLIER: usize = 16;

/// One prompt of a label, as [`Catalog::labelled_with_sources`] reads it.
#[derive(Debug)]
pub struct LabelledPrompt {
    /// The prompt's id.
    pub id: String,
    /// The label's arms, heaviest first, each with its version and the
    /// sources it renders from, or what is wrong with that version (as
    /// [`Catalog::versions_with_sources`]); `None` for a version the caller
    /// said it holds.
    pub arms: Vec<(Arm, Option<VersionSources>)>,
}

impl Catalog {
    /// The arms of `label` of every live prompt that has it (or of prompt
    /// `only`), by id, heaviest first as [`Catalog::label_arms`]; each arm
    /// with its version and the sources it renders from (or what is wrong
    /// with it, as [`Catalog::versions_with_sources`]), unless `have` (a
    /// prompt id and a version) says the caller holds that version
    /// already. One read transaction: the
    /// versions are those the label points at in the same snapshot, so a
    /// delete or a label move committed meanwhile shows whole, before or
    /// after, never half. A prompt missing from the answer lacks the
    /// label, or is deleted.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read. What is wrong with one
    /// version is its own answer's error.
    pub fn labelled_with_sources(
        &mut self,
        label: &str,
        only: Option<&str>,
        have: &dyn Fn(&str, u32) -> bool,
    ) -> Result<Vec<LabelledPrompt>, Error> {
        self.store.read(&mut |tx| {
            let labelled = match only {
                None => rows::labelled(tx, label)?,
                Some(id) => one_label(tx, id, label)?.into_iter().collect(),
            };
            let wanted: Vec<(String, u32)> = labelled
                .iter()
                .flat_map(|(id, arms)| arms.iter().map(move |arm| (id.clone(), arm.version)))
                .filter(|(id, version)| !have(id, *version))
                .collect();
            let mut answers: HashMap<(String, u32), VersionSources> = wanted
                .iter()
                .cloned()
                .zip(versions_in(tx, &wanted)?)
                .collect();
            Ok(labelled
                .into_iter()
                .map(|(id, arms)| {
                    let arms = arms
                        .into_iter()
                        .map(|arm| {
                            let answer = answers.remove(&(id.clone(), arm.version));
                            (arm, answer)
                        })
                        .collect();
                    LabelledPrompt { id, arms }
                })
                .collect())
        })
    }

    /// The versions `label` of prompt `id` pointed at before, newest
    /// first, each once (every arm of a split), at most [`MAX_EARLIER`]:
    /// where a follower that refuses what the label points at now looks for
    /// the newest version it can render, so that a restart serves what the
    /// running process served. For `latest`, the versions themselves,
    /// newest first. A prompt the catalog lacks has none.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn earlier_versions(&mut self, id: &str, label: &str) -> Result<Vec<u32>, Error> {
        let history = match self.history(id) {
            Ok(history) => history,
            Err(error) if error.code() == ErrorCode::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        let mut versions: Vec<u32> = Vec::new();
        let mut add = |version: u32| {
            if !versions.contains(&version) {
                versions.push(version);
            }
        };
        if label == "latest" {
            history.versions.iter().for_each(|v| add(v.version));
        } else {
            for entry in history.audit.iter().rev() {
                if entry.label.as_deref() != Some(label) {
                    continue;
                }
                if entry.arms.is_empty() {
                    entry.to_version.into_iter().for_each(&mut add);
                } else {
                    let mut arms = entry.arms.clone();
                    arms.sort_by_key(|arm| std::cmp::Reverse(arm.version));
                    arms.iter().for_each(|arm| add(arm.version));
                }
            }
        }
        versions.truncate(MAX_EARLIER);
        Ok(versions)
    }

    /// The SQLite file a catalog URL names, `None` for another store: a
    /// follower watches it, to notice the file replaced under it (a backup
    /// moved over it) and open the new one.
    pub fn sqlite_file(url: &str) -> Option<PathBuf> {
        match StoreUrl::parse(url).ok()? {
            #[cfg(feature = "sqlite")]
            StoreUrl::Sqlite(path) => Some(path),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(_) => None,
        }
    }
}

/// The arms of `label` of prompt `id`; `None` when the prompt is missing
/// or deleted, or lacks the label.
fn one_label(tx: &mut dyn Tx, id: &str, label: &str) -> Result<Option<(String, Vec<Arm>)>, Error> {
    let prompt = match rows::live_prompt(tx, id, false) {
        Ok(prompt) => prompt,
        Err(error) if error.code() == ErrorCode::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    let arms = if label == "latest" {
        if prompt.latest_version == 0 {
            return Ok(None);
        }
        vec![Arm {
            version: prompt.latest_version,
            weight: 1,
        }]
    } else {
        rows::label_arms(tx, id, label)?
    };
    Ok((!arms.is_empty()).then(|| (id.to_string(), arms)))
}

/// Versions `wanted` with their sources, read in `tx`, each pinned
/// snippet revision once: the answers of
/// [`Catalog::versions_with_sources`], in `wanted`'s order.
pub(super) fn versions_in(
    tx: &mut dyn Tx,
    wanted: &[(String, u32)],
) -> Result<Vec<VersionSources>, Error> {
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<(&str, u32)> = wanted.iter().map(|(id, v)| (id.as_str(), *v)).collect();
    let versions = rows::versions_batch(tx, &keys)?;
    let mut pinned: Vec<(&str, u32)> = versions
        .values()
        .flatten()
        .flat_map(|version| version.pins.iter())
        .map(|pin| (pin.snippet.as_str(), pin.revision))
        .collect();
    pinned.sort_unstable();
    pinned.dedup();
    let texts = rows::snippet_texts_batch(tx, &pinned)?;
    let mut answers = Vec::with_capacity(wanted.len());
    for (id, number) in wanted {
        let answer = match versions.get(&(id.clone(), *number)) {
            Some(found) => found.clone().and_then(|version| {
                let snippets = version
                    .pins
                    .iter()
                    .map(|pin| {
                        texts
                            .get(&(pin.snippet.clone(), pin.revision))
                            .cloned()
                            .ok_or_else(|| missing_revision(pin))
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                Ok(with_sources(version, &snippets))
            }),
            // Missing or deleted: alone, as `get` reads it, which says
            // which.
            None => select(tx, id, &Selector::Version(*number)).and_then(|version| {
                let snippets = pinned_texts(tx, &version.pins, &mut HashMap::new())?;
                Ok(with_sources(version, &snippets))
            }),
        };
        match answer {
            Err(error) if error.code() == ErrorCode::Unavailable => return Err(error),
            answer => answers.push(answer),
        }
    }
    Ok(answers)
}
