//! Snapshot suites: the cases of every prompt, and a run that checks them.

#[allow(unused_imports)]
use super::prelude::*;

/// The values a snapshot render uses: `‹name›` for every variable.
///
/// ```
/// assert_eq!(promptpack::testing::placeholder("agentName"), "‹agentName›");
/// ```
pub fn placeholder(name: &str) -> String {
    promptpack_core::vars::placeholder(name)
}

/// The render function of a generated `PromptId`
/// (`PromptId::render_generated`).
pub type RenderFn<Id> = fn(Id, &dyn Fn(&str) -> Option<String>) -> Prompt<Id>;

/// The prompts of a crate as the snapshot helpers see them: the methods
/// every generated `PromptId` has. [`snapshot_prompts!`](crate::snapshot_prompts)
/// builds one; build your own for a hand-written loop:
///
/// ```ignore
/// let prompts = PromptTable::new(
///     &PromptId::ALL,
///     PromptId::as_str,
///     PromptId::variables,
///     PromptId::conditions,
///     PromptId::render_generated,
/// );
/// ```
#[derive(Debug, Clone)]
pub struct PromptTable<Id: 'static> {
    pub(super) ids: Vec<Id>,
    pub(super) name: fn(Id) -> &'static str,
    pub(super) variables: fn(Id) -> &'static [&'static str],
    pub(super) conditions: fn(Id) -> &'static [&'static str],
    pub(super) choices: Option<ChoicesFn<Id>>,
    pub(super) examples: Option<ExampleFn<Id>>,
    pub(super) render: RenderFn<Id>,
}

/// The values of a prompt's first front matter example, by variable name:
/// the generated `PromptId::example`.
pub type ExampleFn<Id> = fn(Id) -> &'static [(&'static str, &'static str)];

/// A value for each compared variable of a prompt.
pub(super) type Chosen = Vec<(&'static str, &'static str)>;

/// The variables a prompt compares with values, each with its values: the
/// generated `PromptId::choices`.
pub type ChoicesFn<Id> = fn(Id) -> &'static [(&'static str, &'static [&'static str])];

impl<Id: Copy + 'static> PromptTable<Id> {
    /// The prompts `ids`, with a function for each piece the snapshots need:
    /// the id as written on disk, the names of its variables, the names of
    /// its conditions (a subset of the variables) and a render that looks
    /// each value up by name (`None` for an absent value or a false
    /// condition).
    pub fn new(
        ids: &[Id],
        name: fn(Id) -> &'static str,
        variables: fn(Id) -> &'static [&'static str],
        conditions: fn(Id) -> &'static [&'static str],
        render: RenderFn<Id>,
    ) -> PromptTable<Id> {
        PromptTable {
            ids: ids.to_vec(),
            name,
            variables,
            conditions,
            choices: None,
            examples: None,
            render,
        }
    }

    /// The values of each prompt's first front matter example (the
    /// generated `PromptId::example`): a snapshot renders them instead of
    /// `‹name›` placeholders, so that it reads like a real prompt.
    pub fn with_examples(mut self, examples: ExampleFn<Id>) -> PromptTable<Id> {
        self.examples = Some(examples);
        self
    }

    /// The variables each prompt compares with values, and their values
    /// (the generated `PromptId::choices`): each value gets a case of its
    /// own.
    pub fn with_choices(mut self, choices: ChoicesFn<Id>) -> PromptTable<Id> {
        self.choices = Some(choices);
        self
    }

    /// The prompt ids, in the order given.
    pub fn ids(&self) -> &[Id] {
        &self.ids
    }
}

/// One rendered case of a snapshot suite: a prompt with some of its
/// conditions on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Case<Id> {
    /// The prompt.
    pub id: Id,
    /// The prompt id as written on disk, e.g. `agent-system`.
    pub prompt: &'static str,
    /// The snapshot name: the prompt id, then `@` and the conditions that are
    /// on joined by `+` (`agent-system@hasTools+memory`); the prompt id alone
    /// when every condition is off. A list longer than 160 bytes becomes
    /// `@<count>-on-<hash>`.
    pub name: String,
    /// The conditions that are on, in the prompt's order.
    pub on: Vec<&'static str>,
    /// The conditions that are off, in the prompt's order.
    pub off: Vec<&'static str>,
    /// The value each compared variable has, in the prompt's order.
    pub choices: Vec<(&'static str, &'static str)>,
    /// The variables whose value the test set with [`Snapshots::value`]
    /// rather than a `‹name›` placeholder, in the prompt's order.
    pub set_by_test: Vec<&'static str>,
    /// The variables whose value came from the prompt's front matter
    /// example (and not from the test), in the prompt's order.
    pub from_example: Vec<&'static str>,
    /// The rendered `system.md`.
    pub system: String,
    /// The rendered `user.md`, when the prompt has one.
    pub user: Option<String>,
    /// The names of the other combinations whose render is identical to
    /// this one's (a condition nested in one that is off changes nothing):
    /// [`SnapshotRun::cases`] folds them into the first, which is
    /// snapshotted once for all of them. Empty from [`Snapshots::cases`].
    pub covers: Vec<String>,
}

impl<Id> Case<Id> {
    /// Prompt `id` (`prompt` on disk) rendered as `system`, with every
    /// condition off: named `prompt`, no `user.md`, every list empty. Set
    /// the fields for anything else.
    pub fn new(id: Id, prompt: &'static str, system: impl Into<String>) -> Case<Id> {
        Case {
            id,
            prompt,
            name: prompt.to_string(),
            on: Vec::new(),
            off: Vec::new(),
            choices: Vec::new(),
            set_by_test: Vec::new(),
            from_example: Vec::new(),
            system: system.into(),
            user: None,
            covers: Vec::new(),
        }
    }

    /// The text to snapshot: each part under a `--- system.md ---` or
    /// `--- user.md ---` line.
    ///
    /// ```
    /// let mut case = promptpack::testing::Case::new((), "greet", "Hi ‹name›.");
    /// case.user = Some("Go.".into());
    /// assert_eq!(case.snapshot(), "--- system.md ---\nHi ‹name›.\n\n--- user.md ---\nGo.\n");
    /// ```
    pub fn snapshot(&self) -> String {
        let mut out = format!("--- system.md ---\n{}\n", self.system);
        if let Some(user) = &self.user {
            out.push_str("\n--- user.md ---\n");
            out.push_str(user);
            out.push('\n');
        }
        out
    }

    /// One line saying what was rendered, for the snapshot's `description`,
    /// and which other combinations the snapshot stands for.
    ///
    /// ```
    /// let mut case = promptpack::testing::Case::new((), "agent-system", "");
    /// case.name = "agent-system@hasTools".into();
    /// case.on = vec!["hasTools"];
    /// case.off = vec!["memory"];
    /// case.set_by_test = vec!["toolList"];
    /// assert_eq!(
    ///     case.description(),
    ///     "agent-system with hasTools on, memory off; values: ‹name› placeholders, toolList set by the test"
    /// );
    /// case.from_example.push("agentName");
    /// assert!(case.description().contains(
    ///     "values: agentName from the example, others ‹name› placeholders, toolList set by the test"
    /// ));
    /// case.covers.push("agent-system@hasTools+memory".into());
    /// assert!(case.description().ends_with(
    ///     "; also covers agent-system@hasTools+memory (identical text)"
    /// ));
    /// ```
    pub fn description(&self) -> String {
        let mut out = self.prompt.to_string();
        let mut conditions = Vec::new();
        if !self.on.is_empty() {
            conditions.push(format!("{} on", self.on.join(", ")));
        }
        if !self.off.is_empty() {
            conditions.push(format!("{} off", self.off.join(", ")));
        }
        conditions.extend(
            self.choices
                .iter()
                .map(|(name, value)| format!("{name} = {value:?}")),
        );
        if !conditions.is_empty() {
            out.push_str(" with ");
            out.push_str(&conditions.join(", "));
        }
        if self.from_example.is_empty() {
            out.push_str("; values: ‹name› placeholders");
        } else {
            out.push_str(&format!(
                "; values: {} from the example, others ‹name› placeholders",
                self.from_example.join(", ")
            ));
        }
        if !self.set_by_test.is_empty() {
            out.push_str(&format!(
                ", {} set by the test",
                self.set_by_test.join(", ")
            ));
        }
        if !self.covers.is_empty() {
            out.push_str(&format!(
                "; also covers {} (identical text)",
                self.covers.join(", ")
            ));
        }
        out
    }

    /// Runs both parts through `survivors`; a report is labelled with the
    /// case and the part.
    pub fn check_survivors(&self, survivors: &Survivors) -> Result<(), Vec<SurvivorReport>> {
        let mut reports = Vec::new();
        let parts = [
            ("system.md", Some(&self.system)),
            ("user.md", self.user.as_ref()),
        ];
        for (part, text) in parts {
            if let Some(text) = text
                && let Err(report) = survivors.check(text)
            {
                reports.push(report.labelled(format!("{}, {part}", self.name)));
            }
        }
        if reports.is_empty() {
            Ok(())
        } else {
            Err(reports)
        }
    }
}

/// Options of a snapshot suite: the bound on condition combinations, the
/// values, the delimiters and the allowed survivors. Pass one to
/// [`snapshot_prompts!`](crate::snapshot_prompts) as its second argument.
///
/// ```
/// use promptpack::testing::Snapshots;
/// let options = Snapshots::new()
///     .max_combinations(16)
///     .value("toolList", "- search\n- fetch")
///     .allow_fenced_code();
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshots {
    pub(super) max_combinations: usize,
    pub(super) values: BTreeMap<String, String>,
    pub(super) delimiters: Option<Delimiters>,
    /// The delimiters the prompts were compiled with (`PromptId::DELIMITERS`),
    /// for reading the prompt files: the survivor check may use others.
    pub(super) compiled_with: Option<Delimiters>,
    pub(super) allowances: Allowances,
}

impl Default for Snapshots {
    fn default() -> Self {
        Snapshots::new()
    }
}

impl Snapshots {
    /// The defaults: up to [`DEFAULT_MAX_COMBINATIONS`] combinations per
    /// prompt, `‹name›` placeholders, the delimiters of the crate's
    /// `promptpack.toml`, nothing allowed.
    pub fn new() -> Snapshots {
        Snapshots {
            max_combinations: DEFAULT_MAX_COMBINATIONS,
            values: BTreeMap::new(),
            delimiters: None,
            compiled_with: None,
            allowances: Allowances::default(),
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

    /// Checks for survivors written with these delimiters, instead of those
    /// the prompts were compiled with ([`snapshot_prompts!`](crate::snapshot_prompts)
    /// takes them from `PromptId::DELIMITERS`) or, outside that macro, those
    /// of the `promptpack.toml` beside the test crate's `Cargo.toml`.
    #[must_use]
    pub fn delimiters(mut self, delimiters: Delimiters) -> Snapshots {
        self.delimiters = Some(delimiters);
        self
    }

    /// Allows a survivor whose text is exactly `text`; see [`Survivors::allow`].
    #[doc(alias = "ignore")]
    #[must_use]
    pub fn allow(mut self, text: impl Into<String>) -> Snapshots {
        self.allowances.exact.insert(text.into());
        self
    }

    /// Allows every survivor of one kind; see [`Survivors::allow_kind`].
    #[must_use]
    pub fn allow_kind(mut self, kind: FindingKind) -> Snapshots {
        self.allowances.kinds.insert(kind);
        self
    }

    /// Allows every survivor inside a Markdown code fence; see
    /// [`Survivors::allow_fenced_code`].
    #[must_use]
    pub fn allow_fenced_code(mut self) -> Snapshots {
        self.allowances.fenced_code = true;
        self
    }

    /// Every case of every prompt, rendered, in order: prompt by prompt, and
    /// for each the combinations of [`condition_combinations`]. Combinations
    /// that render the same text are all here; [`SnapshotRun::cases`] folds
    /// them into one.
    ///
    /// ```
    /// # #[derive(Clone, Copy)] enum PromptId { Greet }
    /// # impl PromptId {
    /// #     const ALL: [PromptId; 1] = [PromptId::Greet];
    /// #     fn as_str(self) -> &'static str { "greet" }
    /// #     fn variables(self) -> &'static [&'static str] { &["name", "formal"] }
    /// #     fn conditions(self) -> &'static [&'static str] { &["formal"] }
    /// #     fn render_generated(self, v: &dyn Fn(&str) -> Option<String>) -> promptpack::Prompt<PromptId> {
    /// #         let name = v("name").unwrap_or_default();
    /// #         let formal = v("formal").is_some_and(|f| !f.is_empty());
    /// #         let system = if formal { format!("Dear {name}.") } else { format!("Hi {name}.") };
    /// #         promptpack::Prompt { id: self, system, user: None, hash: 0, provenance: Default::default() }
    /// #     }
    /// # }
    /// use promptpack::testing::{PromptTable, Snapshots};
    /// let prompts = PromptTable::new(
    ///     &PromptId::ALL,
    ///     PromptId::as_str,
    ///     PromptId::variables,
    ///     PromptId::conditions,
    ///     PromptId::render_generated,
    /// );
    /// let cases = Snapshots::new().cases(&prompts);
    /// let shown: Vec<_> = cases.iter().map(|c| (c.name.as_str(), c.system.as_str())).collect();
    /// assert_eq!(shown, [("greet", "Hi ‹name›."), ("greet@formal", "Dear ‹name›.")]);
    /// ```
    pub fn cases<Id: Copy + 'static>(&self, prompts: &PromptTable<Id>) -> Vec<Case<Id>> {
        let mut cases = Vec::new();
        for &id in prompts.ids() {
            let prompt = (prompts.name)(id);
            let variables = (prompts.variables)(id);
            let conditions = (prompts.conditions)(id);
            let choices = prompts.choices.map_or(&[][..], |choices| choices(id));
            let example = prompts.examples.map_or(&[][..], |examples| examples(id));
            let example_value = |name: &str| {
                example
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, value)| *value)
            };
            // Every combination of conditions with each compared variable
            // at its first value; then each other value alone, conditions
            // off.
            let first: Chosen = choices
                .iter()
                .filter_map(|(name, values)| Some((*name, *values.first()?)))
                .collect();
            let combinations = condition_combinations(conditions.len(), self.max_combinations);
            let mut runs: Vec<(Vec<bool>, Chosen, bool)> = combinations
                .into_iter()
                .map(|on| (on, first.clone(), false))
                .collect();
            for (i, (_, values)) in choices.iter().enumerate() {
                for value in values.iter().skip(1) {
                    let mut chosen = first.clone();
                    if let Some(slot) = chosen.get_mut(i) {
                        slot.1 = value;
                    }
                    runs.push((vec![false; conditions.len()], chosen, true));
                }
            }
            for (on, chosen, named_by_choice) in runs {
                let is_off = |name: &str| {
                    conditions
                        .iter()
                        .zip(&on)
                        .any(|(c, &is_on)| *c == name && !is_on)
                };
                let values = |name: &str| -> Option<String> {
                    if let Some((_, value)) = chosen.iter().find(|(n, _)| *n == name) {
                        return Some(value.to_string());
                    }
                    if is_off(name) || !(variables.contains(&name) || conditions.contains(&name)) {
                        return None;
                    }
                    let from_example = || example_value(name).map(str::to_string);
                    Some(
                        self.values
                            .get(name)
                            .cloned()
                            .or_else(from_example)
                            .unwrap_or_else(|| placeholder(name)),
                    )
                };
                let rendered = (prompts.render)(id, &values);
                let pick = |want: bool| -> Vec<&'static str> {
                    conditions
                        .iter()
                        .zip(&on)
                        .filter(|(_, is_on)| **is_on == want)
                        .map(|(c, _)| *c)
                        .collect()
                };
                let on_names = pick(true);
                let mut name = case_name(prompt, &on_names);
                if named_by_choice {
                    // `classroom-agent@role=student`: the value that differs
                    // from the first.
                    let differs = chosen.iter().zip(&first).filter(|(c, f)| c != f);
                    for ((var, value), _) in differs {
                        name.push(if name.contains('@') { '+' } else { '@' });
                        name.push_str(&format!("{var}={}", value.replace(' ', "_")));
                    }
                }
                let from_example: Vec<&'static str> = variables
                    .iter()
                    .copied()
                    .filter(|v| {
                        !self.values.contains_key(*v)
                            && !chosen.iter().any(|(n, _)| n == v)
                            && example_value(v).is_some()
                    })
                    .collect();
                cases.push(Case {
                    id,
                    prompt,
                    name,
                    on: on_names,
                    off: pick(false),
                    choices: chosen,
                    set_by_test: variables
                        .iter()
                        .copied()
                        .filter(|v| self.values.contains_key(*v))
                        .collect(),
                    from_example,
                    system: rendered.system,
                    user: rendered.user,
                    covers: Vec::new(),
                });
            }
        }
        cases
    }

    /// Uses `open`/`close` unless [`Snapshots::delimiters`] set others: how
    /// [`snapshot_prompts!`](crate::snapshot_prompts) passes the delimiters
    /// the prompts were compiled with (`PromptId::DELIMITERS`), whether they
    /// came from `promptpack.toml` or a build `Config`. The run also reads
    /// the prompt files with them, to say where a survivor comes from.
    /// Invalid delimiters are ignored, leaving the `promptpack.toml` lookup
    /// of [`Snapshots::start`].
    pub fn default_delimiters(mut self, open: &str, close: &str) -> Snapshots {
        let compiled = Delimiters::new(open, close).ok();
        if self.delimiters.is_none() {
            self.delimiters.clone_from(&compiled);
        }
        self.compiled_with = compiled;
        self
    }

    /// Starts a run: resolves the delimiters (from `promptpack.toml` in
    /// `manifest_dir` unless [`Snapshots::delimiters`] set them), reads the
    /// prompt files there (`templates/`, `snippets/`, or the folders
    /// `promptpack.toml` names) to say where a survivor comes from, reads
    /// insta's environment (`INSTA_UPDATE`, `CI`, `INSTA_FORCE_PASS`,
    /// `INSTA_PENDING_DIR`, `INSTA_WORKSPACE_ROOT`) and collects failures
    /// until [`SnapshotRun::finish`].
    ///
    /// # Panics
    ///
    /// When `promptpack.toml` exists and cannot be read or is not valid, or
    /// `INSTA_UPDATE` has a value insta does not know.
    #[track_caller]
    pub fn start(self, manifest_dir: &str) -> SnapshotRun {
        let config = Config::load(manifest_dir);
        let delimiters = match (&self.delimiters, &config) {
            (Some(d), _) => d.clone(),
            (None, Ok(config)) => config.delimiters_ref().clone(),
            (None, Err(e)) => panic!(
                "promptpack snapshots: cannot read the delimiters from {manifest_dir}/{}: {e}",
                promptpack_load::CONFIG_FILE
            ),
        };
        let config = config.unwrap_or_else(|_| Config::new(manifest_dir));
        let compiled_with = self
            .compiled_with
            .clone()
            .unwrap_or_else(|| config.delimiters_ref().clone());
        let files = PromptFiles::read(&config, compiled_with);
        let store = match Store::from_env(manifest_dir) {
            Ok(store) => store,
            Err(e) => panic!("promptpack snapshots: {e}"),
        };
        let survivors = Survivors {
            delimiters,
            allowances: self.allowances.clone(),
        };
        SnapshotRun {
            options: self,
            survivors,
            files,
            store,
            cases: 0,
            problems: Vec::new(),
            accepted: Vec::new(),
            removed: 0,
        }
    }
}

/// Which conditions are on, for each case of a prompt with `n` conditions:
/// all `2^n` combinations when that is at most `max` (ordered as binary
/// counting, the first condition the lowest bit), else every condition off,
/// each one alone, and every one on.
///
/// ```
/// use promptpack::testing::condition_combinations;
/// assert_eq!(condition_combinations(0, 64), [Vec::<bool>::new()]);
/// assert_eq!(condition_combinations(2, 64).len(), 4);
/// assert_eq!(condition_combinations(6, 64).len(), 64);
/// assert_eq!(condition_combinations(7, 64).len(), 9); // none, 7 alone, all
/// ```
pub fn condition_combinations(n: usize, max: usize) -> Vec<Vec<bool>> {
    let every = u32::try_from(n)
        .ok()
        .and_then(|bits| 1usize.checked_shl(bits))
        .filter(|&count| count <= max);
    if let Some(count) = every {
        return (0..count)
            .map(|mask| (0..n).map(|bit| mask >> bit & 1 == 1).collect())
            .collect();
    }
    let mut out: Vec<Vec<bool>> = vec![vec![false; n]];
    for i in 0..n {
        out.push((0..n).map(|bit| bit == i).collect());
    }
    out.push(vec![true; n]);
    let mut seen = BTreeSet::new();
    out.retain(|c| seen.insert(c.clone()));
    out
}

/// The snapshot name of a case; see [`Case::name`].
pub(super) fn case_name(prompt: &str, on: &[&str]) -> String {
    if on.is_empty() {
        return prompt.to_string();
    }
    let joined = on.join("+");
    if prompt.len() + 1 + joined.len() <= MAX_NAME_LEN {
        return format!("{prompt}@{joined}");
    }
    // Stable across platforms and releases, as snapshot names must be.
    let mut hasher = StableHasher::default();
    hasher.write(joined.as_bytes());
    let hash = hasher.finish();
    format!("{prompt}@{}-on-{hash:016x}", on.len())
}

/// Folds each case whose rendered text (both parts) is that of an earlier
/// case of the same prompt into the earlier one's [`Case::covers`].
pub(super) fn fold_identical<Id>(cases: Vec<Case<Id>>) -> Vec<Case<Id>> {
    let mut kept: Vec<Case<Id>> = Vec::with_capacity(cases.len());
    let mut first: BTreeMap<(&'static str, String, Option<String>), usize> = BTreeMap::new();
    for case in cases {
        let key = (case.prompt, case.system.clone(), case.user.clone());
        match first.get(&key) {
            Some(&i) => kept[i].covers.push(case.name),
            None => {
                first.insert(key, kept.len());
                kept.push(case);
            }
        }
    }
    kept
}

/// A snapshot suite in progress: checks each case for survivors, compares it
/// with its stored snapshot, writes new and changed ones where insta would,
/// and fails at the end, once, with every failure.
///
/// [`snapshot_prompts!`](crate::snapshot_prompts) expands to this; write it
/// out to choose the prompts or the options case by case:
///
/// ```ignore
/// let prompts = PromptTable::new(&PromptId::ALL, PromptId::as_str, PromptId::variables,
///     PromptId::conditions, PromptId::render_generated);
/// let mut run = Snapshots::new().start(env!("CARGO_MANIFEST_DIR"));
/// for case in run.cases(&prompts) {
///     run.check(&case, module_path!());
/// }
/// run.finish();
/// ```
///
/// Nothing is printed while the run goes on: [`SnapshotRun::finish`] prints
/// one summary.
#[derive(Debug)]
pub struct SnapshotRun {
    pub(super) options: Snapshots,
    pub(super) survivors: Survivors,
    pub(super) files: PromptFiles,
    pub(super) store: Store,
    pub(super) cases: usize,
    pub(super) problems: Vec<Problem>,
    /// Snapshots written as accepted `.snap` files.
    pub(super) accepted: Vec<PathBuf>,
    /// Pending `.snap.new` files removed.
    pub(super) removed: usize,
}

/// One entry of a run's summary.
#[derive(Debug)]
pub(super) enum Problem {
    /// About one case: `name: what happened`, maybe with detail lines.
    Case(String),
    /// The same survivors in one part of a prompt, in one case or more.
    Survivors {
        part: &'static str,
        key: (&'static str, Vec<String>),
        /// The first case's report, with its rendered positions.
        report: SurvivorReport,
        cases: Vec<String>,
    },
}

/// How many other cases a grouped survivor entry names before `and N more`.
pub(super) const MAX_NAMED_CASES: usize = 6;

impl Problem {
    pub(super) fn text(&self) -> String {
        match self {
            Problem::Case(text) => text.clone(),
            Problem::Survivors {
                part,
                report,
                cases,
                ..
            } => {
                let (first, others) = cases.split_first().map_or(("", &[][..]), |(f, o)| (f, o));
                let mut label = format!("{first}, {part}");
                if !others.is_empty() {
                    let named: Vec<&str> = others
                        .iter()
                        .take(MAX_NAMED_CASES)
                        .map(String::as_str)
                        .collect();
                    label.push_str(&format!(" (also in {}", named.join(", ")));
                    if others.len() > MAX_NAMED_CASES {
                        label.push_str(&format!(
                            " and {} more cases",
                            others.len() - MAX_NAMED_CASES
                        ));
                    }
                    label.push(')');
                }
                let mut text = String::new();
                // Writing to a String cannot fail.
                let _ = report.clone().labelled(label).write_list(&mut text);
                text
            }
        }
    }
}

impl SnapshotRun {
    /// Every case of every prompt (see [`Snapshots::cases`]), with the
    /// combinations that render the same text as an earlier one of the same
    /// prompt folded into it ([`Case::covers`]): each distinct text is
    /// snapshotted once, named by the first combination that produced it.
    pub fn cases<Id: Copy + 'static>(&self, prompts: &PromptTable<Id>) -> Vec<Case<Id>> {
        fold_identical(self.options.cases(prompts))
    }

    /// The survivor check of this run.
    pub fn survivors(&self) -> &Survivors {
        &self.survivors
    }

    /// Checks `case`: first for survivors (a case with survivors is reported
    /// and not snapshotted, so that no run accepts one), then against its
    /// stored snapshot, as `insta::assert_snapshot!(case.name, case.snapshot())`
    /// with the case's [`description`](Case::description) would in the
    /// calling file and module (`module_path!()`), but without printing or
    /// panicking: a difference is recorded for [`SnapshotRun::finish`].
    ///
    /// The file is insta's, where insta puts it (next to the calling file,
    /// in `snapshots/` or the `snapshot_path` of the bound
    /// `insta::Settings`, named `<module>__<case>.snap`), and what is written
    /// follows `INSTA_UPDATE` as insta does: a `.snap.new` to review with
    /// `cargo insta review` by default, nothing on CI or with `no`, the
    /// `.snap` itself with `always` or `force` (or `unseen` for a new one),
    /// removing the case's leftover `.snap.new`. A passing case's leftover
    /// `.snap.new`, and those of the combinations it [covers](Case::covers),
    /// are removed as well.
    #[track_caller]
    pub fn check<Id>(&mut self, case: &Case<Id>, module_path: &str) {
        let caller = std::panic::Location::caller();
        let (file, line) = (caller.file(), caller.line());
        self.cases += 1;
        for covered in &case.covers {
            let target = self.store.target(covered, file, module_path);
            self.remove_pending(&target.pending);
        }
        let target = self.store.target(&case.name, file, module_path);
        if self.record_survivors(case) {
            self.remove_pending(&target.pending);
            return;
        }
        self.store.remember(&target.snap);
        let new = normalized(&case.snapshot());
        let (old, unreadable) = match stored_snapshot(&target.snap) {
            Ok(old) => (old, None),
            Err(e) => (None, Some(e)),
        };
        let description = case.description();
        if old.as_deref() == Some(new.as_str()) {
            self.remove_pending(&target.pending);
            if self.store.update == Update::Force {
                let text = snap_file(&target.source, None, &description, &new);
                if let Err(e) = write_file(&target.snap, &text) {
                    let shown = self.store.shown(&target.snap, &target.workspace);
                    self.problems.push(Problem::Case(format!(
                        "{}: cannot write {shown}: {e}",
                        case.name
                    )));
                }
            }
            return;
        }
        let (what, detail) = match (&old, unreadable) {
            (Some(old), _) => changed(old, &new),
            (None, Some(e)) => (format!("stored snapshot unreadable ({e})"), String::new()),
            (None, None) => ("new snapshot".to_string(), String::new()),
        };
        let fail = |text: String| (!self.store.force_pass).then_some(Problem::Case(text));
        let problem = match self.store.update.on_difference(old.is_some()) {
            Write::Accepted => {
                let text = snap_file(&target.source, None, &description, &new);
                match write_file(&target.snap, &text) {
                    Ok(()) => {
                        self.remove_pending(&target.pending);
                        self.accepted.push(target.snap.clone());
                        None
                    }
                    Err(e) => {
                        let shown = self.store.shown(&target.snap, &target.workspace);
                        Some(Problem::Case(format!(
                            "{}: {what}, cannot write {shown}: {e}",
                            case.name
                        )))
                    }
                }
            }
            Write::Pending => {
                let text = snap_file(&target.source, Some(line), &description, &new);
                let shown = self.store.shown(&target.pending, &target.workspace);
                match write_file(&target.pending, &text) {
                    Ok(()) => fail(format!(
                        "{}: {what}, pending review in {shown}{detail}",
                        case.name
                    )),
                    Err(e) => Some(Problem::Case(format!(
                        "{}: {what}, cannot write {shown}: {e}",
                        case.name
                    ))),
                }
            }
            Write::Nothing(why) => fail(format!(
                "{}: {what}, not written ({why}){detail}",
                case.name
            )),
        };
        self.problems.extend(problem);
    }

    /// Runs `assert` on `case` with insta settings that describe the case
    /// (and omit the expression), after the survivor check: a case with
    /// survivors is reported and `assert` is not called. A panic in `assert`
    /// (a snapshot that does not match) is recorded, not propagated, so that
    /// every case runs, and its message is kept for the summary instead of
    /// being printed: a quiet panic hook stands in for the current one on
    /// this thread while `assert` runs.
    ///
    /// Use it for a snapshot of your own making; for the prompt text itself
    /// [`SnapshotRun::check`] is quieter still: what insta's own macro prints
    /// when a snapshot differs (a diff, "Stopped on the first failure") it
    /// prints from inside `assert`, where it cannot be silenced.
    pub fn snapshot<Id>(&mut self, case: &Case<Id>, assert: impl FnOnce(&Case<Id>)) {
        self.cases += 1;
        if self.record_survivors(case) {
            return;
        }
        let mut settings = insta::Settings::clone_current();
        settings.set_description(case.description());
        settings.set_omit_expression(true);
        let outcome = {
            let _quiet = QuietPanics::enter();
            catch_unwind(AssertUnwindSafe(|| settings.bind(|| assert(case))))
        };
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("the assertion panicked");
            self.problems
                .push(Problem::Case(format!("{}: {message}", case.name)));
        }
    }

    /// Records the survivors of both parts of `case`, with where their text
    /// comes from; `true` when there were any.
    pub(super) fn record_survivors<Id>(&mut self, case: &Case<Id>) -> bool {
        let mut found = false;
        let parts = [
            ("system.md", Some(&case.system)),
            ("user.md", case.user.as_ref()),
        ];
        for (part, text) in parts {
            let Some(text) = text else { continue };
            let Err(mut report) = self.survivors.check(text) else {
                continue;
            };
            found = true;
            report.origins =
                self.files
                    .origins(case.prompt, part == "user.md", text, &report.findings);
            let key = (case.prompt, report.key());
            let same = self.problems.iter_mut().find_map(|p| match p {
                Problem::Survivors {
                    part: p,
                    key: k,
                    cases,
                    ..
                } if *p == part && *k == key => Some(cases),
                _ => None,
            });
            match same {
                Some(cases) => cases.push(case.name.clone()),
                None => self.problems.push(Problem::Survivors {
                    part,
                    key,
                    report,
                    cases: vec![case.name.clone()],
                }),
            }
        }
        found
    }

    pub(super) fn remove_pending(&mut self, path: &Path) {
        if std::fs::remove_file(path).is_ok() {
            self.removed += 1;
        }
    }

    /// Passes quietly when every case passed (saying on stderr what it
    /// accepted or cleaned up, if anything); otherwise prints one summary on
    /// stderr, each failed case and each survivor once, and fails the test
    /// with it, without a second message or a backtrace.
    ///
    /// # Panics
    ///
    /// When a snapshot did not match, a case has a survivor that is not
    /// allowed, or there were no cases at all. The panic payload is the
    /// summary.
    #[track_caller]
    pub fn finish(self) {
        if self.cases == 0 {
            panic!("promptpack snapshots: no prompts to snapshot (is `PromptId::ALL` empty?)");
        }
        let mut notes = Vec::new();
        if !self.accepted.is_empty() {
            let n = self.accepted.len();
            notes.push(format!(
                "Accepted {n} snapshot{} ({}).",
                if n == 1 { "" } else { "s" },
                self.store.update.why_accepted()
            ));
        }
        if self.removed > 0 {
            let n = self.removed;
            notes.push(format!(
                "Removed {n} leftover .snap.new file{}.",
                if n == 1 { "" } else { "s" }
            ));
        }
        if self.problems.is_empty() {
            if !notes.is_empty() {
                eprintln!("promptpack snapshots: {}", notes.join(" "));
            }
            return;
        }
        let n = self.problems.len();
        let mut message = format!(
            "promptpack snapshots: {n} problem{} in {} case{}:",
            if n == 1 { "" } else { "s" },
            self.cases,
            if self.cases == 1 { "" } else { "s" },
        );
        for problem in &self.problems {
            message.push_str("\n- ");
            message.push_str(&problem.text().replace('\n', "\n  "));
        }
        if self.problems.iter().any(|p| matches!(p, Problem::Case(_))) {
            message.push_str(
                "\nReview new and changed snapshots with `cargo insta review` (or accept them all \
                 with INSTA_UPDATE=always).",
            );
        }
        if self
            .problems
            .iter()
            .any(|p| matches!(p, Problem::Survivors { .. }))
        {
            message.push_str(
                "\nA case with survivors is not snapshotted. Allow deliberate survivors with \
                 Snapshots::allow(\"exact text\"), allow_kind(..) or allow_fenced_code().",
            );
        }
        for note in notes {
            message.push('\n');
            message.push_str(&note);
        }
        eprintln!("{message}");
        // Not `panic!`: the panic hook would print the summary a second
        // time, with a backtrace of this function.
        std::panic::resume_unwind(Box::new(message));
    }
}

/// What a difference was, for the summary: `changed at line N` and the two
/// lines, or `new snapshot`.
pub(super) fn changed(old: &str, new: &str) -> (String, String) {
    let (mut old_lines, mut new_lines) = (old.lines(), new.lines());
    let mut line = 1;
    loop {
        match (old_lines.next(), new_lines.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (a, b) => {
                let side = |l: Option<&str>| l.map_or("(nothing)".to_string(), |l| clip(l, 100));
                return (
                    format!("changed at line {line}"),
                    format!("\n  - {}\n  + {}", side(a), side(b)),
                );
            }
        }
    }
}
