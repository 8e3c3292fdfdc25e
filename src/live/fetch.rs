//! Reading one label from the catalog and judging each of its versions
//! through the catalog's one judge (`promptpack_catalog::judge_fetched`):
//! compiled under the version's own syntax, its hash checked, checked
//! against the contract of the binary's vars struct.

use super::served::ServedArm;
use crate::__private::PromptInfo;
use crate::library::Library;
use crate::provenance::{CatalogVersion, Provenance};
use promptpack_catalog::{Catalog, CheckedPrompt, Verdict as Judged, judge_fetched};
use promptpack_core::error::Error;
use std::sync::Arc;

/// What the catalog says of one label of one prompt.
pub(super) enum LabelState {
    /// Its arms, each with its version as read in the same snapshot
    /// (`None` for a version the handle holds already).
    Arms(Vec<LabelArm>),
    /// The prompt, or its label, is not in the catalog: serve the embedded
    /// text.
    Absent,
}

/// One arm of a label.
pub(super) struct LabelArm {
    pub(super) version: u32,
    pub(super) weight: u32,
    /// The version's content hash when the upstream names it without
    /// sending the version (a relay's snapshot): a version served with the
    /// same hash is kept.
    pub(super) content_hash: Option<String>,
    pub(super) fetched: Option<Fetched>,
}

/// A failure to read the catalog: the store is away or unusable, as
/// opposed to a version this binary refuses.
#[derive(Debug)]
pub(super) struct StoreError(pub(super) Error);

/// A version as the catalog holds it, with the sources it renders from,
/// or why the catalog cannot give it.
pub(super) use promptpack_catalog::VersionSources as Fetched;

/// What a handle does with one version.
pub(super) enum Verdict {
    /// Serve it.
    Serve(ServedArm),
    /// Never serve it: its own content is wrong (it does not compile, it
    /// leaves the contract, the store holds it damaged). Said once.
    Refuse(Error),
    /// It could not be read this time (gone meanwhile, the store busy):
    /// keep what serves and read it again at the next change or poll.
    Retry(Error),
}

/// The label of every prompt of `prompts` (`only`: of that one, by
/// index), with the versions its arms name that `have` (by index and
/// version) does not hold, in one snapshot of the catalog.
pub(super) fn read_labels(
    catalog: &mut Catalog,
    prompts: &[PromptInfo],
    label: &str,
    only: Option<usize>,
    have: impl Fn(usize, u32) -> bool,
) -> Result<Vec<(usize, LabelState)>, StoreError> {
    let index_of = |id: &str| prompts.iter().position(|prompt| prompt.id == id);
    let only_id = only
        .and_then(|index| prompts.get(index))
        .map(|info| info.id);
    let have = |id: &str, version: u32| index_of(id).is_some_and(|index| have(index, version));
    let labelled = catalog
        .labelled_with_sources(label, only_id, &have)
        .map_err(StoreError)?;
    let mut states: Vec<(usize, LabelState)> = match only {
        Some(index) => vec![(index, LabelState::Absent)],
        None => (0..prompts.len())
            .map(|i| (i, LabelState::Absent))
            .collect(),
    };
    for prompt in labelled {
        let Some(index) = index_of(&prompt.id) else {
            continue;
        };
        let arms = prompt
            .arms
            .into_iter()
            .map(|(arm, fetched)| LabelArm {
                version: arm.version,
                weight: arm.weight,
                content_hash: None,
                fetched,
            })
            .collect();
        if let Some(state) = states.iter_mut().find(|(i, _)| *i == index) {
            state.1 = LabelState::Arms(arms);
        }
    }
    Ok(states)
}

/// Versions `versions` of prompt `id`, in one read, in that order.
pub(super) fn fetch_versions(
    catalog: &mut Catalog,
    id: &str,
    versions: &[u32],
) -> Result<Vec<Fetched>, StoreError> {
    let wanted: Vec<(String, u32)> = versions
        .iter()
        .map(|&version| (id.to_string(), version))
        .collect();
    catalog.versions_with_sources(&wanted).map_err(StoreError)
}

/// Version `version` of prompt `info.id`, as fetched: served when this
/// binary can render it; refused for what its own content holds (it does
/// not compile, it leaves the contract, the store holds it damaged); read
/// again later when the catalog could not give it (deleted or moved
/// meanwhile, the store busy), since that says nothing of the version.
pub(super) fn judge(
    info: &PromptInfo,
    max_render_bytes: usize,
    label: &str,
    weight: u32,
    fetched: Fetched,
) -> Verdict {
    match judge_fetched(fetched, Some(&info.contract())) {
        Ok(Judged::Serve(checked)) => {
            Verdict::Serve(served(*checked, max_render_bytes, label, weight))
        }
        Ok(Judged::Refuse(error)) => Verdict::Refuse(error),
        Err(error) => Verdict::Retry(error),
    }
}

/// The arm serving `checked`.
fn served(checked: CheckedPrompt, max_render_bytes: usize, label: &str, weight: u32) -> ServedArm {
    let CheckedPrompt {
        version,
        prompt,
        settings,
        ..
    } = checked;
    ServedArm {
        version: version.version,
        weight,
        library: Arc::new(
            Library::from_resolved(vec![prompt], settings.delimiters)
                .with_max_render_bytes(max_render_bytes),
        ),
        provenance: Provenance::Catalog(CatalogVersion {
            prompt: Arc::from(version.prompt_id.as_str()),
            version: version.version,
            label: Some(Arc::from(label)),
            arm: None,
            content_hash: Arc::from(version.content_hash.as_str()),
            pins: pins_of(&version.pins),
        }),
    }
}

/// The snippet revisions a version pins, by name, as its provenance
/// holds them.
fn pins_of(pins: &[promptpack_catalog::Pin]) -> Arc<[(Arc<str>, u32)]> {
    let mut pins: Vec<(Arc<str>, u32)> = pins
        .iter()
        .map(|pin| (Arc::from(pin.snippet.as_str()), pin.revision))
        .collect();
    pins.sort();
    Arc::from(pins)
}

/// The versions `label` of prompt `id` pointed at before, newest first
/// ([`Catalog::earlier_versions`]): where a binary that refuses what the
/// label points at now looks for the newest version it can render.
pub(super) fn earlier_versions(
    catalog: &mut Catalog,
    id: &str,
    label: &str,
) -> Result<Vec<u32>, StoreError> {
    catalog.earlier_versions(id, label).map_err(StoreError)
}
