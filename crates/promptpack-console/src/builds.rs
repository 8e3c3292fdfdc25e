//! The builds that registered in the catalog (live handles of running
//! services, each with the contract of its binary): which would refuse a
//! version, and what each serves.

use crate::preview::library_of;
use promptpack_catalog::{Arm, Catalog, Contract, Error, ErrorCode, RegisteredBuild, Selector};
use promptpack_core::contract::check;
use std::collections::HashMap;
use std::time::Duration;

/// How long ago a build must have been seen to be shown.
pub(crate) const SEEN_WITHIN: Duration = Duration::from_secs(24 * 60 * 60);

/// A build as the prompt page shows it.
pub(crate) struct BuildView {
    pub(crate) process: String,
    pub(crate) label: String,
    pub(crate) serves: String,
    pub(crate) contract: String,
    pub(crate) last_seen: String,
}

/// Why `contract` refuses version `version` of prompt `id` (its first
/// `contract_violation`, naming the variable), or `None` when it takes it.
pub(crate) fn refusal(
    catalog: &mut Catalog,
    id: &str,
    version: u32,
    contract: &Contract,
) -> Result<Option<String>, Error> {
    let Some(compiled) = contract.prompts.get(id) else {
        return Ok(Some(format!("its binary has no prompt `{id}`")));
    };
    let version = catalog.get(id, &Selector::Version(version))?;
    let library = library_of(catalog, &version)?;
    let Some(prompt) = library.resolved(id) else {
        return Ok(Some(format!(
            "version {} does not compile",
            version.version
        )));
    };
    Ok(check(prompt, compiled, ErrorCode::ContractViolation)
        .first()
        .map(|d| format!("{}: {}", d.code, d.message)))
}

/// The registered builds whose binaries have prompt `id`.
pub(crate) fn registered(catalog: &mut Catalog, id: &str) -> Result<Vec<RegisteredBuild>, Error> {
    Ok(catalog
        .builds(SEEN_WITHIN)?
        .into_iter()
        .filter(|build| build.contract.prompts.contains_key(id))
        .collect())
}

/// What each registered build of prompt `id` serves, given the prompt's
/// labels and their arms.
pub(crate) fn builds_of(
    catalog: &mut Catalog,
    id: &str,
    labels: &[(String, Vec<Arm>)],
) -> Result<Vec<BuildView>, Error> {
    let mut verdicts: HashMap<(String, u32), Option<String>> = HashMap::new();
    let mut views = Vec::new();
    for build in registered(catalog, id)? {
        let arms = labels
            .iter()
            .find(|(label, _)| *label == build.label)
            .map(|(_, arms)| arms.clone())
            .unwrap_or_default();
        let mut serves = Vec::new();
        for arm in &arms {
            let key = (build.contract_hash.clone(), arm.version);
            let verdict = match verdicts.get(&key) {
                Some(verdict) => verdict.clone(),
                None => {
                    let verdict = refusal(catalog, id, arm.version, &build.contract)?;
                    verdicts.insert(key, verdict.clone());
                    verdict
                }
            };
            serves.push(match verdict {
                None => format!("v{}", arm.version),
                Some(reason) => format!("refuses v{} ({reason})", arm.version),
            });
        }
        if serves.is_empty() {
            serves.push("its compiled prompt (the label is not set)".to_string());
        }
        views.push(BuildView {
            serves: serves.join(", "),
            contract: build.contract_hash.chars().take(12).collect(),
            last_seen: build.last_seen.to_string(),
            process: build.process,
            label: build.label,
        });
    }
    Ok(views)
}
