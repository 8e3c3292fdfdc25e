//! The cases of a snapshot suite: the prompts as the suite sees them
//! ([`PromptTable`]), every combination of their conditions and choices
//! rendered ([`Case`]), their names, and the folding of identical renders.

#[allow(unused_imports)]
use crate::testing::prelude::*;

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
    pub(in crate::testing) ids: Vec<Id>,
    pub(in crate::testing) name: fn(Id) -> &'static str,
    pub(in crate::testing) variables: fn(Id) -> &'static [&'static str],
    pub(in crate::testing) conditions: fn(Id) -> &'static [&'static str],
    pub(in crate::testing) choices: Option<ChoicesFn<Id>>,
    pub(in crate::testing) examples: Option<ExampleFn<Id>>,
    pub(in crate::testing) tools: Option<RequestFn<Id>>,
    pub(in crate::testing) response_format: Option<RequestFn<Id>>,
    pub(in crate::testing) render: RenderFn<Id>,
}

/// The JSON a request sends beside a prompt's messages, when it declares
/// any: the generated `PromptId::tools` and `PromptId::response_format`.
pub type RequestFn<Id> = fn(Id) -> Option<crate::RequestJson>;

/// The values of a prompt's first front matter example, by variable name:
/// the generated `PromptId::example`.
pub type ExampleFn<Id> = fn(Id) -> &'static [(&'static str, &'static str)];

/// A value for each compared variable of a prompt.
pub(in crate::testing) type Chosen = Vec<(&'static str, &'static str)>;

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
            tools: None,
            response_format: None,
            render,
        }
    }

    /// The tools and response format each prompt declares (the generated
    /// `PromptId::tools` and `PromptId::response_format`): part of each of
    /// its snapshots, so that a change to what the model may call or must
    /// answer is reviewed as a change of the prompt is.
    pub fn with_request(
        mut self,
        tools: RequestFn<Id>,
        response_format: RequestFn<Id>,
    ) -> PromptTable<Id> {
        self.tools = Some(tools);
        self.response_format = Some(response_format);
        self
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
    /// For a conversation (`messages.md`), its rendered messages after the
    /// system message, the history among them, in order (as
    /// [`Prompt::messages`](crate::Prompt#structfield.messages)); empty for a
    /// prompt of `system.md` and `user.md`.
    pub messages: Vec<Message>,
    /// The tools the prompt declares, as a request lists them.
    pub tools: Option<crate::RequestJson>,
    /// The response format the prompt declares.
    pub response_format: Option<crate::RequestJson>,
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
            messages: Vec::new(),
            tools: None,
            response_format: None,
            covers: Vec::new(),
        }
    }

    /// The text to snapshot: each part under a `--- system.md ---` or
    /// `--- user.md ---` line; for a conversation, each message after the
    /// system message under a `--- message N: role ---` line (`N` its index
    /// in [`Case::messages`], a tool result's line naming the tool too:
    /// `--- message 2: tool calculator ---`).
    ///
    /// ```
    /// use promptpack::{Message, Role};
    /// let mut case = promptpack::testing::Case::new((), "greet", "Hi ‹name›.");
    /// case.user = Some("Go.".into());
    /// assert_eq!(case.snapshot(), "--- system.md ---\nHi ‹name›.\n\n--- user.md ---\nGo.\n");
    ///
    /// let mut case = promptpack::testing::Case::new((), "ask", "Be brief.");
    /// case.messages = vec![Message::new(Role::User, "2 + 2?"), Message::tool("calc", "4")];
    /// assert_eq!(
    ///     case.snapshot(),
    ///     "--- system.md ---\nBe brief.\n\n--- message 0: user ---\n2 + 2?\n\n\
    ///      --- message 1: tool calc ---\n4\n"
    /// );
    /// ```
    pub fn snapshot(&self) -> String {
        let mut out = format!("--- system.md ---\n{}\n", self.system);
        if let Some(user) = &self.user {
            out.push_str("\n--- user.md ---\n");
            out.push_str(user);
            out.push('\n');
        }
        for (index, message) in self.messages.iter().enumerate() {
            out.push_str(&format!("\n--- {} ---\n", message_part(index, message)));
            out.push_str(&message.content);
            out.push('\n');
        }
        for (part, json) in [
            ("tools", self.tools),
            ("response format", self.response_format),
        ] {
            if let Some(json) = json {
                let value = json.to_value();
                let pretty =
                    serde_json::to_string_pretty(&value).unwrap_or_else(|_| json.to_string());
                out.push_str(&format!("\n--- {part} ---\n{pretty}\n"));
            }
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

    /// Runs both parts, or the system message and each message of a
    /// conversation, through `survivors`; a report is labelled with the case
    /// and the part (`greet, system.md`, `greet, message 2: assistant`).
    pub fn check_survivors(&self, survivors: &Survivors) -> Result<(), Vec<SurvivorReport>> {
        let mut reports = Vec::new();
        for (part, text) in self.parts() {
            if let Err(report) = survivors.check(text) {
                reports.push(report.labelled(format!("{}, {}", self.name, part.label())));
            }
        }
        if reports.is_empty() {
            Ok(())
        } else {
            Err(reports)
        }
    }

    /// Every rendered text of the case with the part it is: `system.md`,
    /// `user.md` when there is one, then each message of a conversation.
    pub(in crate::testing) fn parts(&self) -> Vec<(Part, &str)> {
        let mut parts = vec![(Part::System, self.system.as_str())];
        parts.extend(self.user.as_deref().map(|user| (Part::User, user)));
        parts.extend(self.messages.iter().enumerate().map(|(index, message)| {
            (
                Part::Message(message_part(index, message)),
                message.content.as_str(),
            )
        }));
        parts
    }
}

/// A rendered text of a case: what a survivor report names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::testing) enum Part {
    /// `system.md`.
    System,
    /// `user.md`.
    User,
    /// A message of a conversation, as `message N: role` (see
    /// [`message_part`]).
    Message(String),
}

impl Part {
    /// How a report and a snapshot name the part.
    pub(in crate::testing) fn label(&self) -> &str {
        match self {
            Part::System => "system.md",
            Part::User => "user.md",
            Part::Message(label) => label,
        }
    }
}

/// `message N: role` (a tool result's with the tool's name: `message 2:
/// tool calculator`; see [`Message::label`]): the index is the message's in
/// [`Case::messages`], as the fixture harness numbers them, so a report and
/// the snapshot agree.
pub(in crate::testing) fn message_part(index: usize, message: &Message) -> String {
    format!("message {index}: {}", message.label())
}

impl Snapshots {
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
    /// #         promptpack::Prompt { id: self, system, user: None, messages: Vec::new(), hash: Default::default(), provenance: Default::default(), exchange: promptpack::Exchange::NONE }
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
                    messages: rendered.messages,
                    tools: prompts.tools.and_then(|tools| tools(id)),
                    response_format: prompts.response_format.and_then(|format| format(id)),
                    covers: Vec::new(),
                });
            }
        }
        cases
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
pub(in crate::testing) fn case_name(prompt: &str, on: &[&str]) -> String {
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

/// The rendered texts a case is folded by: its prompt, both parts and its
/// messages.
type FoldKey = (&'static str, String, Option<String>, Vec<Message>);

/// Folds each case whose rendered text (both parts, or every message) is
/// that of an earlier case of the same prompt into the earlier one's
/// [`Case::covers`].
pub(in crate::testing) fn fold_identical<Id>(cases: Vec<Case<Id>>) -> Vec<Case<Id>> {
    let mut kept: Vec<Case<Id>> = Vec::with_capacity(cases.len());
    let mut first: std::collections::HashMap<FoldKey, usize> = std::collections::HashMap::new();
    for case in cases {
        let key = (
            case.prompt,
            case.system.clone(),
            case.user.clone(),
            case.messages.clone(),
        );
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
