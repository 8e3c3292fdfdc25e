//! Snapshot suites: their options ([`Snapshots`]), the cases of every prompt
//! (`cases`) and a run that checks them (`run`).

#[allow(unused_imports)]
use super::prelude::*;

mod cases;
mod run;

pub use cases::*;
pub use run::*;

/// Options of a snapshot suite: the bound on condition combinations, the
/// values and the survivor check. Pass one to
/// [`snapshot_prompts!`](crate::snapshot_prompts) as its second argument.
///
/// ```
/// use promptpack::testing::{Snapshots, Survivors};
/// let options = Snapshots::new()
///     .max_combinations(16)
///     .value("toolList", "- search\n- fetch")
///     .survivors(Survivors::new().allow_fenced_code());
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshots {
    pub(super) max_combinations: usize,
    pub(super) values: BTreeMap<String, String>,
    /// What the survivor check allows, and its delimiters when chosen
    /// ([`Survivors::with_delimiters`]).
    pub(super) survivors: Survivors,
    /// The delimiters the prompts were compiled with (`PromptId::DELIMITERS`),
    /// for reading the prompt files, and for the survivor check unless it
    /// chose others.
    pub(super) compiled_with: Option<Delimiters>,
}

impl Default for Snapshots {
    fn default() -> Self {
        Snapshots::new()
    }
}

impl Snapshots {
    /// The defaults: up to [`DEFAULT_MAX_COMBINATIONS`] combinations per
    /// prompt, `‹name›` placeholders, a survivor check for the delimiters
    /// the prompts were compiled with that allows nothing.
    pub fn new() -> Snapshots {
        Snapshots {
            max_combinations: DEFAULT_MAX_COMBINATIONS,
            values: BTreeMap::new(),
            survivors: Survivors::new(),
            compiled_with: None,
        }
    }

    /// A prompt whose conditions have at most `max` combinations is rendered
    /// under every one of them; a prompt with more is rendered with every
    /// condition off, with each one alone, and with every one on.
    #[must_use]
    pub fn max_combinations(mut self, max: usize) -> Snapshots {
        self.max_combinations = max;
        self
    }

    /// Renders variable `name` as `value` instead of `‹name›`. For a
    /// condition, the value is used where it is on; an empty value makes it
    /// false there too.
    #[must_use]
    pub fn value(mut self, name: impl Into<String>, value: impl Into<String>) -> Snapshots {
        self.values.insert(name.into(), value.into());
        self
    }

    /// Checks each case with `survivors`: what it allows
    /// ([`Survivors::allow`], [`Survivors::allow_kind`],
    /// [`Survivors::allow_fenced_code`]) is allowed in every case. Made with
    /// [`Survivors::new`], it looks for the delimiters the prompts were
    /// compiled with ([`snapshot_prompts!`](crate::snapshot_prompts) takes
    /// them from `PromptId::DELIMITERS`) or, outside that macro, those of the
    /// `promptpack.toml` beside the test crate's `Cargo.toml`; made with
    /// [`Survivors::with_delimiters`], for those.
    ///
    /// ```
    /// use promptpack::Delimiters;
    /// use promptpack::testing::{FindingKind, Snapshots, Survivors};
    /// let allowing = Snapshots::new().survivors(
    ///     Survivors::new().allow("{{user}}").allow_kind(FindingKind::UnmatchedOpen),
    /// );
    /// // Prompts written with `<<`/`>>`, checked for braces as well.
    /// let braces = Snapshots::new().survivors(Survivors::with_delimiters(&Delimiters::default()));
    /// # let _ = (allowing, braces);
    /// ```
    #[must_use]
    pub fn survivors(mut self, survivors: Survivors) -> Snapshots {
        self.survivors = survivors;
        self
    }

    /// The delimiters the prompts were compiled with, `open`/`close`: how
    /// [`snapshot_prompts!`](crate::snapshot_prompts) passes
    /// `PromptId::DELIMITERS`, whether they came from `promptpack.toml` or a
    /// build `Config`. The run reads the prompt files with them, to say where
    /// a survivor comes from, and checks for them unless
    /// [`Snapshots::survivors`] chose others. Invalid delimiters are
    /// ignored, leaving the `promptpack.toml` lookup of [`Snapshots::start`].
    pub fn default_delimiters(mut self, open: &str, close: &str) -> Snapshots {
        self.compiled_with = Delimiters::new(open, close).ok();
        self
    }
}
