//! The builds that registered in the catalog (live handles of running
//! services, each with the contract of its binary): which would refuse a
//! version, and what each serves.

use crate::pages::prose::Prose;
use crate::pages::when::When;
use crate::verdicts::Verdicts;
use promptpack_catalog::{Arm, Catalog, Error, RegisteredBuild, Timestamp};
use std::time::Duration;

/// How long ago a build must have been seen to be shown.
pub(crate) const SEEN_WITHIN: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a build may go unseen before it is stale: shown as such, and
/// not counted among the builds a move would reach. A running handle
/// registers about every minute; one that stops takes its registration
/// away, so a registration this old is of a process that ended without a
/// word (killed, or its handle never dropped) or that lost the catalog.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(5 * 60);

/// [`STALE_AFTER`] in words, for the pages.
pub(crate) const STALE_AFTER_TEXT: &str = "5 minutes";

/// Whether `build` was last seen longer than [`STALE_AFTER`] before `now`.
pub(crate) fn is_stale(build: &RegisteredBuild, now: Timestamp) -> bool {
    let after = i64::try_from(STALE_AFTER.as_millis()).unwrap_or(i64::MAX);
    now.0.saturating_sub(build.last_seen.0) > after
}

/// A build as the prompt page shows it.
pub(crate) struct BuildView {
    pub(crate) process: String,
    pub(crate) label: String,
    pub(crate) serves: Prose,
    pub(crate) contract: String,
    pub(crate) last_seen: When,
    pub(crate) stale: bool,
}

/// Why `build`'s binary refuses version `version` of prompt `id`, as its
/// live handle judges it (`promptpack_catalog::judge`: the store holds it
/// damaged, it does not compile, it breaks the contract — its first
/// diagnostic, `code: message`), or `None` when it serves it.
pub(crate) fn refusal(
    catalog: &mut Catalog,
    verdicts: &Verdicts,
    id: &str,
    version: u32,
    build: &RegisteredBuild,
) -> Result<Option<String>, Error> {
    let Some(contract) = build.contract.prompts.get(id) else {
        return Ok(Some(format!("its binary has no prompt `{id}`")));
    };
    let key = (format!("{id}\0{version}"), build.contract_hash.clone());
    if let Some(verdict) = verdicts.get(&key) {
        return Ok(verdict);
    }
    let verdict = catalog.judge(id, version, Some(contract))?.refusal();
    verdicts.put(key, verdict.clone());
    Ok(verdict)
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
    verdicts: &Verdicts,
    id: &str,
    labels: &[(String, Vec<Arm>)],
) -> Result<Vec<BuildView>, Error> {
    let mut views = Vec::new();
    let now = Timestamp::now();
    for build in registered(catalog, id)? {
        let arms = labels
            .iter()
            .find(|(label, _)| *label == build.label)
            .map(|(_, arms)| arms.clone())
            .unwrap_or_default();
        let mut serves = Vec::new();
        for arm in &arms {
            let verdict = refusal(catalog, verdicts, id, arm.version, &build)?;
            serves.push(match verdict {
                None => format!("v{}", arm.version),
                Some(reason) => format!("refuses v{} ({reason})", arm.version),
            });
        }
        if serves.is_empty() {
            serves.push("its compiled prompt (the label is not set)".to_string());
        }
        views.push(BuildView {
            serves: Prose::of(&serves.join(", ")),
            contract: build.contract_hash.chars().take(12).collect(),
            last_seen: When::of(build.last_seen),
            stale: is_stale(&build, now),
            process: build.process,
            label: build.label,
        });
    }
    Ok(views)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_is_stale_past_the_bound_and_not_before() {
        let build = |last_seen| RegisteredBuild {
            process: "p".to_string(),
            label: "production".to_string(),
            contract_hash: String::new(),
            contract: promptpack_catalog::Contract::from_json(
                "c",
                r#"{"format": 1, "prompts": {}}"#,
            )
            .expect("a contract"),
            first_seen: Timestamp(0),
            last_seen: Timestamp(last_seen),
        };
        let bound = i64::try_from(STALE_AFTER.as_millis()).expect("a bound");
        let now = Timestamp(10 * bound);
        assert!(!is_stale(&build(now.0), now));
        assert!(!is_stale(&build(now.0 - bound), now));
        assert!(is_stale(&build(now.0 - bound - 1), now));
        // A clock behind the catalog's is no reason to call a build stale.
        assert!(!is_stale(&build(now.0 + bound), now));
        assert!(is_stale(&build(i64::MIN), now));
    }
}
