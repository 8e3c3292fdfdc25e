//! Reading one label from the catalog and judging each of its versions:
//! compiled under the version's own syntax, checked against the contract of
//! the binary's vars struct.

use super::served::ServedArm;
use crate::__private::PromptInfo;
use crate::library::Library;
use crate::provenance::{CatalogVersion, Provenance};
use promptpack_catalog::Catalog;
use promptpack_core::contract::check;
use promptpack_core::error::{Error, ErrorCode};
use promptpack_core::pipeline::{Stages, compile};
use std::collections::HashMap;
use std::sync::Arc;

/// What the catalog says of one label of one prompt.
pub(super) enum LabelState {
    /// Its arms, as (version, weight).
    Arms(Vec<(u32, u32)>),
    /// The prompt, or its label, is not in the catalog: serve the embedded
    /// text.
    Absent,
}

/// A failure to read the catalog: the store is away or unusable, as
/// opposed to a version this binary refuses.
#[derive(Debug)]
pub(super) struct StoreError(pub(super) Error);

/// The arms of `label` of prompt `id`.
#[cfg(feature = "live-postgres")]
pub(super) fn label_state(
    catalog: &mut Catalog,
    id: &str,
    label: &str,
) -> Result<LabelState, StoreError> {
    match catalog.label_arms(id, label) {
        Ok(arms) => Ok(LabelState::Arms(
            arms.into_iter()
                .map(|arm| (arm.version, arm.weight))
                .collect(),
        )),
        Err(error) if error.code() == ErrorCode::NotFound => Ok(LabelState::Absent),
        Err(error) => Err(StoreError(error)),
    }
}

/// The arms of `label` of every prompt the catalog has it for, by id: one
/// read for all of them.
pub(super) fn every_label(
    catalog: &mut Catalog,
    label: &str,
) -> Result<HashMap<String, Vec<(u32, u32)>>, StoreError> {
    let labelled = catalog.labelled(label).map_err(StoreError)?;
    Ok(labelled
        .into_iter()
        .map(|(id, arms)| {
            let arms = arms.iter().map(|arm| (arm.version, arm.weight)).collect();
            (id, arms)
        })
        .collect())
}

/// A version as the catalog holds it, with the sources it renders from,
/// or why the catalog cannot give it (a catalog edited by hand).
pub(super) use promptpack_catalog::VersionSources as Fetched;

/// Versions `wanted` of the prompts `prompts` names by index, in one
/// read: by (index, version).
pub(super) fn fetch_versions(
    catalog: &mut Catalog,
    prompts: &[PromptInfo],
    wanted: &[(usize, u32)],
) -> Result<HashMap<(usize, u32), Fetched>, StoreError> {
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    let named: Vec<(String, u32)> = wanted
        .iter()
        .map(|&(index, version)| (prompts[index].id.to_string(), version))
        .collect();
    let answers = catalog.versions_with_sources(&named).map_err(StoreError)?;
    Ok(wanted.iter().copied().zip(answers).collect())
}

/// Version `version` of prompt `info.id`, fetched alone, then judged.
pub(super) fn judge_version(
    catalog: &mut Catalog,
    info: &PromptInfo,
    label: &str,
    version: u32,
    weight: u32,
) -> Result<Result<ServedArm, Error>, StoreError> {
    let wanted = [(info.id.to_string(), version)];
    let fetched = catalog
        .versions_with_sources(&wanted)
        .map_err(StoreError)?
        .pop()
        .unwrap_or_else(|| Err(Error::new(ErrorCode::NotFound, "no answer")));
    Ok(judge(info, label, version, weight, fetched))
}

/// Version `version` of prompt `info.id`, compiled and checked against
/// `info`'s contract: `Err(why)` when this binary cannot render it
/// correctly (it does not compile, its pins are missing, or it leaves the
/// contract).
pub(super) fn judge(
    info: &PromptInfo,
    label: &str,
    version: u32,
    weight: u32,
    fetched: Fetched,
) -> Result<ServedArm, Error> {
    let (stored, sources) = fetched?;
    let settings = stored.syntax.settings()?;
    let compiled = compile(sources, Vec::new(), &settings, Stages::default()).into_result()?;
    let prompt = compiled
        .prompts
        .into_iter()
        .find(|prompt| prompt.id == info.id)
        .ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("version {version} of `{}` holds no template", info.id),
            )
        })?;
    let violations = check(&prompt, &info.contract(), ErrorCode::ContractViolation);
    if let Some(error) = Error::from_diagnostics(violations) {
        return Err(error);
    }
    promptpack_catalog::check_compiled(&stored, &prompt, &settings)?;
    Ok(ServedArm {
        version,
        weight,
        library: Arc::new(Library::from_resolved(vec![prompt], settings.delimiters)),
        provenance: Provenance::Catalog(CatalogVersion {
            prompt: Arc::from(info.id),
            version,
            label: Some(Arc::from(label)),
            arm: None,
            content_hash: Arc::from(stored.content_hash.as_str()),
        }),
    })
}

/// How many earlier versions of a label a start-up tries before it gives
/// up and serves the embedded text.
const FALLBACK_DEPTH: usize = 16;

/// The versions `label` of prompt `id` pointed at before, newest first,
/// each once (every arm of a split): where a binary that refuses what the
/// label points at now looks for the newest version it can render, so that
/// a restart serves what the running process served. For `latest`, the
/// versions themselves, newest first.
pub(super) fn earlier_versions(
    catalog: &mut Catalog,
    id: &str,
    label: &str,
) -> Result<Vec<u32>, StoreError> {
    let history = match catalog.history(id) {
        Ok(history) => history,
        Err(error) if error.code() == ErrorCode::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(StoreError(error)),
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
    versions.truncate(FALLBACK_DEPTH);
    Ok(versions)
}
