//! The set a handle serves: for each generated prompt, the catalog
//! versions that passed the contract check, compiled, or nothing (the
//! embedded text). Replaced whole on each change, never edited in place,
//! so a render sees one set from start to end.

use super::split::{arm_bucket, arm_of, shares};
use crate::library::Library;
use crate::provenance::{CatalogVersion, Provenance};
use std::sync::Arc;

/// One set: an entry per generated prompt, indexed like the generated
/// table.
#[derive(Debug, Clone, Default)]
pub(super) struct Served {
    pub(super) prompts: Vec<Option<Arc<ServedPrompt>>>,
}

impl Served {
    /// Nothing from the catalog yet: every prompt renders its embedded text.
    pub(super) fn embedded(prompts: usize) -> Served {
        Served {
            prompts: vec![None; prompts],
        }
    }
}

/// A prompt served from the catalog: the arms of its label, in version
/// order (one for a label that is not split).
#[derive(Debug)]
pub(super) struct ServedPrompt {
    pub(super) arms: Vec<ServedArm>,
    /// The arm a render without a key takes: the heaviest (the newest of
    /// equals), as the catalog resolves the label.
    heaviest: usize,
    /// Each arm's share of `total`, in the arms' order: their weights,
    /// scaled down when those add up past `u32` (a store written by hand).
    shares: Vec<u32>,
    total: u32,
}

/// One version, compiled and checked.
#[derive(Debug, Clone)]
pub(super) struct ServedArm {
    pub(super) version: u32,
    pub(super) weight: u32,
    /// A library of this one prompt, under the version's syntax.
    pub(super) library: Arc<Library>,
    /// `Provenance::Catalog`, ready to clone into each render's prompt.
    pub(super) provenance: Provenance,
}

impl ServedPrompt {
    /// The arms of one label, in any order. Provenance names the arm's
    /// share only when there are two or more.
    pub(super) fn new(mut arms: Vec<ServedArm>) -> ServedPrompt {
        arms.sort_by_key(|arm| arm.version);
        let (shares, total) = shares(arms.iter().map(|arm| arm.weight));
        let split = arms.len() > 1;
        for (arm, share) in arms.iter_mut().zip(&shares) {
            if let Provenance::Catalog(version) = &mut arm.provenance {
                version.arm = split.then_some((*share, total));
            }
        }
        let heaviest = arms
            .iter()
            .enumerate()
            .max_by_key(|(_, arm)| (arm.weight, arm.version))
            .map_or(0, |(i, _)| i);
        ServedPrompt {
            arms,
            heaviest,
            shares,
            total,
        }
    }

    /// The arm for a render: by the key's bucket when given, else the
    /// heaviest.
    pub(super) fn arm(&self, prompt: &str, key: Option<&str>) -> Option<&ServedArm> {
        let index = match key {
            Some(key) if self.arms.len() > 1 => arm_of(
                self.shares.iter().copied(),
                arm_bucket(prompt, key, self.total),
            ),
            _ => self.heaviest,
        };
        self.arms.get(index)
    }

    /// Whether this serves exactly these (version, weight) arms.
    pub(super) fn is(&self, arms: &[(u32, u32)]) -> bool {
        self.arms.len() == arms.len()
            && self
                .arms
                .iter()
                .all(|arm| arms.contains(&(arm.version, arm.weight)))
    }

    /// The arm serving `version`, to reuse when only the weights change.
    pub(super) fn version(&self, version: u32) -> Option<&ServedArm> {
        self.arms.iter().find(|arm| arm.version == version)
    }

    /// What it serves, for an event.
    pub(super) fn versions(&self) -> Vec<CatalogVersion> {
        self.arms
            .iter()
            .filter_map(|arm| match &arm.provenance {
                Provenance::Catalog(version) => Some(version.clone()),
                _ => None,
            })
            .collect()
    }
}
