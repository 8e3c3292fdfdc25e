//! Test helpers (feature `testing`): the survivor check, and snapshots of
//! every prompt of a crate in one line.
//!
//! # Survivors
//!
//! A *survivor* is template syntax left in a rendered text: a token a render
//! should have replaced (`{{name}}`, `{{snippet:x}}`, `{{#if x}}`, …), or a
//! near-miss that was never a token and so reaches the model verbatim
//! (`{{ name }}`, `{{#each x}}`, `{{snippet: x}}`, `{{next-agent}}`, an
//! unmatched `{{`). [`assert_no_survivors`] checks any `&str`, rendered by
//! promptpack or not, and panics with one line per survivor:
//!
//! ```
//! use promptpack::testing::assert_no_survivors;
//! assert_no_survivors("Hello Ada. Answer with {\"type\": \"text\"}.");
//!
//! let result = std::panic::catch_unwind(|| assert_no_survivors("Hello {{name}}."));
//! let message = result.err().and_then(|p| p.downcast::<String>().ok()).unwrap_or_default();
//! assert!(message.contains("1:7  {{name}}  (variable token)"), "{message}");
//! ```
//!
//! The check follows the delimiters: with `<<` and `>>`, `<<name>>` is a
//! survivor and `{{name}}` is plain text ([`assert_no_survivors_with`]).
//! Closing delimiters with nothing to close (`}}` in `{"a": {"b": 1}}`) are
//! never reported: they are everywhere in JSON.
//!
//! ## Deliberate survivors
//!
//! Everything is reported by default, including brace syntax that a prompt
//! shows on purpose, such as a fenced JSON example holding `{{`. A
//! [`Survivors`] checker says what is allowed:
//!
//! ```
//! use promptpack::testing::Survivors;
//! let prompt = "Reply as JSON:\n```json\n{\"template\": \"Hi {{user}}\"}\n```";
//! assert!(Survivors::new().check(prompt).is_err()); // reported by default
//!
//! Survivors::new().allow("{{user}}").assert_none(prompt); // this exact text
//! Survivors::new().allow_fenced_code().assert_none(prompt); // anything in ``` or ~~~ fences
//! ```
//!
//! [`Survivors::allow_kind`] allows a whole [`FindingKind`]. The same three
//! allowances exist on [`Snapshots`] for the snapshot suite.
//!
//! # Snapshots of every prompt
//!
//! [`snapshot_prompts!`](crate::snapshot_prompts) takes the `PromptId` that
//! [`include_prompts!`](crate::include_prompts) generated and writes one
//! [insta](https://insta.rs) snapshot per prompt and combination of its
//! conditions, each also run through the survivor check:
//!
//! ```ignore
//! // tests/prompts.rs
//! use my_agent::PromptId;
//!
//! #[test]
//! fn prompts() {
//!     promptpack::snapshot_prompts!(PromptId);
//! }
//! ```
//!
//! See the macro for what it renders, how the snapshots are named and how to
//! review them.

use crate::library::Prompt;
use promptpack_core::program::StableHasher;
use promptpack_core::scan::find_tokens;
use promptpack_core::syntax::Delimiters;
use promptpack_load::Config;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[doc(hidden)]
pub use insta as __insta;
pub use promptpack_core::scan::{Finding, FindingKind};
pub use promptpack_core::source_file::Span;

/// The default bound on the condition combinations rendered per prompt; see
/// [`Snapshots::max_combinations`].
pub const DEFAULT_MAX_COMBINATIONS: usize = 64;

/// Longest snapshot name, in bytes, before the condition list is replaced by
/// a hash: file names stay well under the usual 255-byte limit.
const MAX_NAME_LEN: usize = 160;

/// Longest survivor text shown in a report, in characters.
const MAX_SHOWN_CHARS: usize = 40;

// ---------------------------------------------------------------------------
// Survivors
// ---------------------------------------------------------------------------

/// Every survivor in `text` for `delimiters`, in order: tokens and near-misses
/// as [`find_tokens`] classifies them, without unmatched closing delimiters.
/// Nothing is allowed; use [`Survivors`] for that.
///
/// ```
/// use promptpack::Delimiters;
/// use promptpack::testing::FindingKind;
/// use promptpack::testing::find_survivors;
/// let text = "Hi {{name}}.\nSee {{#each items}} and {\"a\": {\"b\": 1}}";
/// let found = find_survivors(text, &Delimiters::default());
/// let kinds: Vec<_> = found.iter().map(|f| (f.kind, f.line, f.column)).collect();
/// assert_eq!(kinds, [(FindingKind::Var, 1, 4), (FindingKind::UnknownBlock, 2, 5)]);
/// ```
pub fn find_survivors(text: &str, delimiters: &Delimiters) -> Vec<Finding> {
    Survivors::with_delimiters(delimiters).find(text)
}

/// Panics when `text` holds a `{{`…`}}` survivor, listing each as
/// `line:col  text  (what it is)`.
///
/// ```
/// promptpack::testing::assert_no_survivors("You are Ada. Reply in JSON: {\"a\": {\"b\": 1}}");
/// ```
///
/// ```should_panic
/// promptpack::testing::assert_no_survivors("You are {{ agentName }}.");
/// ```
#[track_caller]
pub fn assert_no_survivors(text: &str) {
    Survivors::new().assert_none(text);
}

/// Panics when `text` holds a survivor written with `delimiters`, listing
/// each as `line:col  text  (what it is)`.
///
/// ```
/// use promptpack::Delimiters;
/// use promptpack::testing::assert_no_survivors_with;
/// let angle = Delimiters::new("<<", ">>")?;
/// // With `<<`/`>>`, braces are plain text.
/// assert_no_survivors_with("Fill in {{x}} yourself.", &angle);
/// let left = std::panic::catch_unwind(|| assert_no_survivors_with("Hi <<name>>", &angle));
/// assert!(left.is_err());
/// # Ok::<(), promptpack::Error>(())
/// ```
#[track_caller]
pub fn assert_no_survivors_with(text: &str, delimiters: &Delimiters) {
    Survivors::with_delimiters(delimiters).assert_none(text);
}

/// What a [`Survivors`] checker lets through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Allowances {
    exact: BTreeSet<String>,
    kinds: BTreeSet<FindingKind>,
    fenced_code: bool,
}

impl Allowances {
    fn allows(&self, finding: &Finding, found_text: &str, fences: &[Span]) -> bool {
        self.kinds.contains(&finding.kind)
            || self.exact.contains(found_text)
            || (self.fenced_code
                && fences
                    .iter()
                    .any(|f| f.start <= finding.span.start && finding.span.start < f.end))
    }
}

/// A survivor check with its delimiters and what it allows.
///
/// Built with [`Survivors::new`] (`{{`/`}}`) or
/// [`Survivors::with_delimiters`], then allowances:
///
/// - [`allow`](Survivors::allow): a survivor whose text is exactly this, as
///   the report shows it (`{{user}}`, `{{ name }}`; for an unmatched opening
///   delimiter the text is the delimiter alone, `{{`);
/// - [`allow_kind`](Survivors::allow_kind): every survivor of one kind;
/// - [`allow_fenced_code`](Survivors::allow_fenced_code): every survivor
///   inside a Markdown code fence (```` ``` ```` or `~~~`), where prompts keep
///   their JSON and template examples.
///
/// ```
/// use promptpack::testing::FindingKind;
/// use promptpack::testing::Survivors;
/// let text = "Use {{ name }} here, {{snippet:x}} there.";
/// let check = Survivors::new().allow("{{ name }}");
/// let left: Vec<_> = check.find(text).iter().map(|f| f.text(text).to_string()).collect();
/// assert_eq!(left, ["{{snippet:x}}"]);
/// check.allow_kind(FindingKind::Snippet).assert_none(text);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Survivors {
    delimiters: Delimiters,
    allowances: Allowances,
}

impl Default for Survivors {
    fn default() -> Self {
        Survivors::new()
    }
}

impl Survivors {
    /// A check for the default delimiters, `{{` and `}}`, allowing nothing.
    pub fn new() -> Survivors {
        Survivors::with_delimiters(&Delimiters::default())
    }

    /// A check for other delimiters, allowing nothing.
    pub fn with_delimiters(delimiters: &Delimiters) -> Survivors {
        Survivors {
            delimiters: delimiters.clone(),
            allowances: Allowances::default(),
        }
    }

    /// The delimiters this check looks for.
    pub fn delimiters(&self) -> &Delimiters {
        &self.delimiters
    }

    /// Allows a survivor whose whole text is exactly `text`, e.g. `"{{user}}"`
    /// or, for every unmatched opening delimiter, `"{{"`.
    #[doc(alias = "ignore")]
    #[must_use]
    pub fn allow(mut self, text: impl Into<String>) -> Survivors {
        self.allowances.exact.insert(text.into());
        self
    }

    /// Allows every survivor of one kind, e.g. [`FindingKind::UnmatchedOpen`].
    #[must_use]
    pub fn allow_kind(mut self, kind: FindingKind) -> Survivors {
        self.allowances.kinds.insert(kind);
        self
    }

    /// Allows every survivor that starts inside a Markdown fenced code block:
    /// from a line of three or more backticks or tildes (indented by at most
    /// three spaces) to the closing fence of the same character, at least as
    /// long, or to the end of the text.
    #[must_use]
    pub fn allow_fenced_code(mut self) -> Survivors {
        self.allowances.fenced_code = true;
        self
    }

    /// The survivors in `text` that are not allowed, in order.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let fences = if self.allowances.fenced_code {
            fenced_code_blocks(text)
        } else {
            Vec::new()
        };
        find_tokens(text, &self.delimiters)
            .into_iter()
            .filter(|f| f.kind != FindingKind::UnmatchedClose)
            .filter(|f| !self.allowances.allows(f, f.text(text), &fences))
            .collect()
    }

    /// `Ok` when `text` has no survivor that is not allowed; else a report
    /// listing them.
    pub fn check(&self, text: &str) -> Result<(), SurvivorReport> {
        let findings = self.find(text);
        if findings.is_empty() {
            return Ok(());
        }
        let texts = findings.iter().map(|f| f.text(text).to_string()).collect();
        Err(SurvivorReport {
            label: None,
            findings,
            texts,
        })
    }

    /// Panics with the [`SurvivorReport`] when `text` has a survivor that is
    /// not allowed.
    #[track_caller]
    pub fn assert_none(&self, text: &str) {
        if let Err(report) = self.check(text) {
            panic!("{report}");
        }
    }
}

/// The byte ranges of the Markdown fenced code blocks of `text`, fence lines
/// included. An unclosed fence runs to the end.
fn fenced_code_blocks(text: &str) -> Vec<Span> {
    let mut blocks = Vec::new();
    // (fence character, fence length, where the block starts)
    let mut open: Option<(char, usize, usize)> = None;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let line_end = line_start + line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let indent = content.len() - content.trim_start_matches(' ').len();
        let fence = if indent <= 3 {
            fence_run(&content[indent..])
        } else {
            None
        };
        match (open, fence) {
            (None, Some((c, n, rest))) if c == '~' || !rest.contains('`') => {
                open = Some((c, n, line_start));
            }
            (Some((c, n, start)), Some((c2, n2, rest)))
                if c == c2 && n2 >= n && rest.trim().is_empty() =>
            {
                blocks.push(Span {
                    start,
                    end: line_end,
                });
                open = None;
            }
            _ => {}
        }
        line_start = line_end;
    }
    if let Some((_, _, start)) = open {
        blocks.push(Span {
            start,
            end: text.len(),
        });
    }
    blocks
}

/// A run of three or more backticks or tildes at the start of `line`: the
/// character, the run's length and the rest of the line.
fn fence_run(line: &str) -> Option<(char, usize, &str)> {
    let c = line.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let rest = line.trim_start_matches(c);
    let n = line.len() - rest.len();
    (n >= 3).then_some((c, n, rest))
}

/// The survivors a check found: a readable list when displayed, the findings
/// for a test that wants to look closer.
///
/// ```
/// use promptpack::testing::Survivors;
/// let text = "Dear {{ name }},\n{{snippet:sign-off}}";
/// let report = Survivors::new().check(text).expect_err("two survivors");
/// assert_eq!(report.findings().len(), 2);
/// assert_eq!(
///     report.to_string(),
///     "2 template tokens survived in the rendered text:\n\
///      \x20 1:6  {{ name }}            (near-miss: spaces inside the delimiters; meant {{name}}?)\n\
///      \x20 2:1  {{snippet:sign-off}}  (snippet token)\n\
///      Allow deliberate ones with promptpack::testing::Survivors: allow(\"exact text\"), allow_kind(..) or allow_fenced_code()."
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurvivorReport {
    label: Option<String>,
    findings: Vec<Finding>,
    texts: Vec<String>,
}

impl SurvivorReport {
    /// Each survivor, in order. Their spans index the text that was checked.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Each survivor with its text, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&Finding, &str)> {
        self.findings
            .iter()
            .zip(self.texts.iter().map(String::as_str))
    }

    /// Names what was checked in the report's first line (`in agent-system,
    /// system.md` rather than `in the rendered text`).
    #[must_use]
    pub fn labelled(mut self, label: impl Into<String>) -> SurvivorReport {
        self.label = Some(label.into());
        self
    }
}

impl SurvivorReport {
    /// The first line and one line per survivor, without the closing hint.
    fn write_list(&self, f: &mut impl fmt::Write) -> fmt::Result {
        let n = self.findings.len();
        write!(
            f,
            "{n} template token{} survived in {}:",
            if n == 1 { "" } else { "s" },
            self.label.as_deref().unwrap_or("the rendered text")
        )?;
        let rows: Vec<(String, String, String)> = self
            .iter()
            .map(|(finding, text)| {
                (
                    format!("{}:{}", finding.line, finding.column),
                    shown(text),
                    describe(finding),
                )
            })
            .collect();
        let at_width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let text_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
        for (at, text, what) in rows {
            write!(f, "\n  {at:<at_width$}  {text:<text_width$}  ({what})")?;
        }
        Ok(())
    }
}

impl fmt::Display for SurvivorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_list(f)?;
        write!(
            f,
            "\nAllow deliberate ones with promptpack::testing::Survivors: \
             allow(\"exact text\"), allow_kind(..) or allow_fenced_code()."
        )
    }
}

impl std::error::Error for SurvivorReport {}

/// A survivor's text for a report: at most [`MAX_SHOWN_CHARS`] characters,
/// control characters escaped.
fn shown(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == MAX_SHOWN_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// What a survivor is, in words.
fn describe(finding: &Finding) -> String {
    let what = finding.kind.description();
    match &finding.suggestion {
        Some(s) => format!("{what}; meant {s}?"),
        None => what.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Snapshots
// ---------------------------------------------------------------------------

/// The values a snapshot render uses: `‹name›` for every variable.
///
/// ```
/// assert_eq!(promptpack::testing::placeholder("agentName"), "‹agentName›");
/// ```
pub fn placeholder(name: &str) -> String {
    format!("‹{name}›")
}

/// The render function of a generated `PromptId`
/// (`PromptId::render_generated`).
pub type RenderFn<Id> = fn(Id, &dyn Fn(&str) -> Option<String>) -> Prompt<Id>;

/// The prompts of a crate as the snapshot helpers see them: the methods
/// every generated `PromptId` has. [`snapshot_prompts!`](crate::snapshot_prompts)
/// builds one; build your own for a hand-written loop:
///
/// ```ignore
/// let prompts = Prompts::new(
///     &PromptId::ALL,
///     PromptId::as_str,
///     PromptId::variables,
///     PromptId::conditions,
///     PromptId::render_generated,
/// );
/// ```
#[derive(Debug, Clone)]
pub struct Prompts<Id: 'static> {
    ids: Vec<Id>,
    name: fn(Id) -> &'static str,
    variables: fn(Id) -> &'static [&'static str],
    conditions: fn(Id) -> &'static [&'static str],
    choices: Option<ChoicesFn<Id>>,
    render: RenderFn<Id>,
}

/// A value for each compared variable of a prompt.
type Chosen = Vec<(&'static str, &'static str)>;

/// The variables a prompt compares with values, each with its values: the
/// generated `PromptId::choices`.
pub type ChoicesFn<Id> = fn(Id) -> &'static [(&'static str, &'static [&'static str])];

impl<Id: Copy + 'static> Prompts<Id> {
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
    ) -> Prompts<Id> {
        Prompts {
            ids: ids.to_vec(),
            name,
            variables,
            conditions,
            choices: None,
            render,
        }
    }

    /// The variables each prompt compares with values, and their values
    /// (the generated `PromptId::choices`): each value gets a case of its
    /// own.
    pub fn with_choices(mut self, choices: ChoicesFn<Id>) -> Prompts<Id> {
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
    /// The rendered `system.md`.
    pub system: String,
    /// The rendered `user.md`, when the prompt has one.
    pub user: Option<String>,
}

impl<Id> Case<Id> {
    /// The text to snapshot: each part under a `--- system.md ---` or
    /// `--- user.md ---` line.
    ///
    /// ```
    /// let case = promptpack::testing::Case {
    ///     id: (), prompt: "greet", name: "greet".into(), on: vec![], off: vec![],
    ///     choices: vec![], set_by_test: vec![], system: "Hi ‹name›.".into(), user: Some("Go.".into()),
    /// };
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

    /// One line saying what was rendered, for the snapshot's `description`.
    ///
    /// ```
    /// let case = promptpack::testing::Case {
    ///     id: (), prompt: "agent-system", name: "agent-system@hasTools".into(),
    ///     on: vec!["hasTools"], off: vec!["memory"], choices: vec![], set_by_test: vec!["toolList"],
    ///     system: String::new(), user: None,
    /// };
    /// assert_eq!(
    ///     case.description(),
    ///     "agent-system with hasTools on, memory off; values: ‹name› placeholders, toolList set by the test"
    /// );
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
        out.push_str("; values: ‹name› placeholders");
        if !self.set_by_test.is_empty() {
            out.push_str(&format!(
                ", {} set by the test",
                self.set_by_test.join(", ")
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
    max_combinations: usize,
    values: BTreeMap<String, String>,
    delimiters: Option<Delimiters>,
    allowances: Allowances,
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
    /// for each the combinations of [`condition_combinations`].
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
    /// #         promptpack::Prompt { id: self, system, user: None, hash: 0 }
    /// #     }
    /// # }
    /// use promptpack::testing::{Prompts, Snapshots};
    /// let prompts = Prompts::new(
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
    pub fn cases<Id: Copy + 'static>(&self, prompts: &Prompts<Id>) -> Vec<Case<Id>> {
        let mut cases = Vec::new();
        for &id in prompts.ids() {
            let prompt = (prompts.name)(id);
            let variables = (prompts.variables)(id);
            let conditions = (prompts.conditions)(id);
            let choices = prompts.choices.map_or(&[][..], |choices| choices(id));
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
                    Some(
                        self.values
                            .get(name)
                            .cloned()
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
                    system: rendered.system,
                    user: rendered.user,
                });
            }
        }
        cases
    }

    /// Uses `open`/`close` unless [`Snapshots::delimiters`] set others: how
    /// [`snapshot_prompts!`](crate::snapshot_prompts) passes the delimiters
    /// the prompts were compiled with (`PromptId::DELIMITERS`), whether they
    /// came from `promptpack.toml` or a build `Config`. Invalid delimiters
    /// are ignored, leaving the `promptpack.toml` lookup of [`Snapshots::start`].
    pub fn default_delimiters(mut self, open: &str, close: &str) -> Snapshots {
        if self.delimiters.is_none() {
            self.delimiters = Delimiters::new(open, close).ok();
        }
        self
    }

    /// Starts a run: resolves the delimiters (from `promptpack.toml` in
    /// `manifest_dir` unless [`Snapshots::delimiters`] set them) and
    /// collects failures until [`SnapshotRun::finish`].
    ///
    /// # Panics
    ///
    /// When `promptpack.toml` exists and cannot be read or is not valid.
    #[track_caller]
    pub fn start(self, manifest_dir: &str) -> SnapshotRun {
        let delimiters = match self.delimiters.clone() {
            Some(d) => d,
            None => match Config::load(manifest_dir) {
                Ok(config) => config.delimiters_ref().clone(),
                Err(e) => panic!(
                    "promptpack snapshots: cannot read the delimiters from {manifest_dir}/{}: {e}",
                    promptpack_load::CONFIG_FILE
                ),
            },
        };
        let survivors = Survivors {
            delimiters,
            allowances: self.allowances.clone(),
        };
        SnapshotRun {
            options: self,
            survivors,
            cases: 0,
            failures: Vec::new(),
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
fn case_name(prompt: &str, on: &[&str]) -> String {
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

/// A snapshot suite in progress: snapshots each case through a closure that
/// calls insta (so that insta sees the test's own file and module), checks it
/// for survivors, and fails at the end with every failure at once.
///
/// [`snapshot_prompts!`](crate::snapshot_prompts) expands to this; write it
/// out to change how a case is snapshotted:
///
/// ```ignore
/// let prompts = Prompts::new(&PromptId::ALL, PromptId::as_str, PromptId::variables,
///     PromptId::conditions, PromptId::render_generated);
/// let mut run = Snapshots::new().start(env!("CARGO_MANIFEST_DIR"));
/// for case in run.cases(&prompts) {
///     run.snapshot(&case, |case| insta::assert_snapshot!(case.name.as_str(), case.snapshot()));
/// }
/// run.finish();
/// ```
#[derive(Debug)]
pub struct SnapshotRun {
    options: Snapshots,
    survivors: Survivors,
    cases: usize,
    failures: Vec<String>,
}

impl SnapshotRun {
    /// Every case of every prompt; see [`Snapshots::cases`].
    pub fn cases<Id: Copy + 'static>(&self, prompts: &Prompts<Id>) -> Vec<Case<Id>> {
        self.options.cases(prompts)
    }

    /// The survivor check of this run.
    pub fn survivors(&self) -> &Survivors {
        &self.survivors
    }

    /// Runs `assert` on `case` with insta settings that describe the case
    /// (and omit the expression), then the survivor check. A panic in
    /// `assert` (a snapshot that does not match) is recorded, not
    /// propagated, so that every case runs and insta writes every pending
    /// snapshot in one go.
    pub fn snapshot<Id>(&mut self, case: &Case<Id>, assert: impl FnOnce(&Case<Id>)) {
        self.cases += 1;
        let mut settings = insta::Settings::clone_current();
        settings.set_description(case.description());
        settings.set_omit_expression(true);
        let outcome = catch_unwind(AssertUnwindSafe(|| settings.bind(|| assert(case))));
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("the assertion panicked");
            self.failures.push(format!("{}: {message}", case.name));
        }
        if let Err(reports) = case.check_survivors(&self.survivors) {
            for report in reports {
                // The hint is said once, at the end.
                let mut list = String::new();
                if report.write_list(&mut list).is_ok() {
                    self.failures.push(list);
                }
            }
        }
    }

    /// Panics when a case failed, listing every failure; passes silently
    /// otherwise.
    ///
    /// # Panics
    ///
    /// When a snapshot did not match, a case has a survivor that is not
    /// allowed, or there were no cases at all.
    #[track_caller]
    pub fn finish(self) {
        if self.cases == 0 {
            panic!("promptpack snapshots: no prompts to snapshot (is `PromptId::ALL` empty?)");
        }
        if self.failures.is_empty() {
            return;
        }
        let mut message = format!(
            "promptpack snapshots: {} problem{} in {} case{}:",
            self.failures.len(),
            if self.failures.len() == 1 { "" } else { "s" },
            self.cases,
            if self.cases == 1 { "" } else { "s" },
        );
        for failure in &self.failures {
            message.push_str("\n- ");
            message.push_str(&failure.replace('\n', "\n  "));
        }
        message.push_str(
            "\nReview changed snapshots with `cargo insta review` (or accept them all with \
             INSTA_UPDATE=always). Allow deliberate survivors with \
             Snapshots::allow(\"exact text\"), allow_kind(..) or allow_fenced_code().",
        );
        panic!("{message}");
    }
}

/// Snapshots every prompt of a crate, in one line of a test.
///
/// ```ignore
/// // tests/prompts.rs
/// use my_agent::PromptId; // or `promptpack::include_prompts!();` here
///
/// #[test]
/// fn prompts() {
///     promptpack::snapshot_prompts!(PromptId);
/// }
/// ```
///
/// `PromptId` is the enum [`include_prompts!`](crate::include_prompts)
/// generates. Each prompt is rendered through the generated code (never from
/// disk) with every variable set to a placeholder, `‹agentName›`, under every
/// combination of its conditions (all of them up to 64 per prompt; beyond,
/// every condition off, every one on and each one alone). Each case is one
/// named [insta](https://insta.rs) snapshot, next to the test in
/// `snapshots/`: `prompts__agent-system.snap` with every condition off,
/// `prompts__agent-system@hasTools+memory.snap` with those two on. Each is
/// also checked for template tokens that survived the render
/// ([`Survivors`]), written with the delimiters the prompts were compiled
/// with (`PromptId::DELIMITERS`).
///
/// Every case runs even when some fail; the test then fails once, listing
/// them all (insta's "Stopped on the first failure" note, printed with each
/// failed snapshot, does not hold here: the suite goes on). To accept new or changed snapshots, run `cargo insta review`
/// (from `cargo install cargo-insta`) after the test, or
/// `cargo insta test --review`, or set `INSTA_UPDATE=always`. When the `CI`
/// environment variable is set, insta writes nothing and fails on a new or
/// changed snapshot, so the snapshots in the repository are the contract.
///
/// A second argument, a [`Snapshots`], changes the options:
///
/// ```ignore
/// promptpack::snapshot_prompts!(
///     PromptId,
///     promptpack::testing::Snapshots::new()
///         .value("toolList", "- search")
///         .allow_fenced_code()
/// );
/// ```
///
/// The test crate needs promptpack with the `testing` feature (usually
/// as a dev-dependency); insta itself is reached through promptpack, though
/// `cargo insta` is handy for reviewing.
///
/// It is a macro so that insta's own macro expands in the test: insta
/// names and places snapshot files by the calling file and module.
///
/// ```no_run
/// # #[derive(Clone, Copy)] enum PromptId { Greet }
/// # impl PromptId {
/// #     const ALL: [PromptId; 1] = [PromptId::Greet];
/// #     const DELIMITERS: (&'static str, &'static str) = ("{{", "}}");
/// #     fn as_str(self) -> &'static str { "greet" }
/// #     fn variables(self) -> &'static [&'static str] { &["name"] }
/// #     fn conditions(self) -> &'static [&'static str] { &[] }
/// #     fn choices(self) -> &'static [(&'static str, &'static [&'static str])] { &[] }
/// #     fn render_generated(self, v: &dyn Fn(&str) -> Option<String>) -> promptpack::Prompt<PromptId> {
/// #         let system = format!("Hi {}.", v("name").unwrap_or_default());
/// #         promptpack::Prompt { id: self, system, user: None, hash: 0 }
/// #     }
/// # }
/// promptpack::snapshot_prompts!(PromptId);
/// promptpack::snapshot_prompts!(PromptId, promptpack::testing::Snapshots::new().max_combinations(8));
/// ```
#[macro_export]
macro_rules! snapshot_prompts {
    ($id:ty $(,)?) => {
        $crate::snapshot_prompts!($id, $crate::testing::Snapshots::new())
    };
    ($id:ty, $options:expr $(,)?) => {{
        let prompts = $crate::testing::Prompts::<$id>::new(
            &<$id>::ALL,
            <$id>::as_str,
            <$id>::variables,
            <$id>::conditions,
            <$id>::render_generated,
        )
        .with_choices(<$id>::choices);
        let options: $crate::testing::Snapshots = $options;
        let (open, close) = <$id>::DELIMITERS;
        let mut run = options
            .default_delimiters(open, close)
            .start(::core::env!("CARGO_MANIFEST_DIR"));
        for case in run.cases(&prompts) {
            run.snapshot(&case, |case| {
                $crate::testing::__insta::assert_snapshot!(case.name.as_str(), case.snapshot());
            });
        }
        run.finish();
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_enumerate_up_to_the_bound() {
        assert_eq!(
            condition_combinations(2, 64),
            [
                vec![false, false],
                vec![true, false],
                vec![false, true],
                vec![true, true]
            ]
        );
        assert_eq!(condition_combinations(6, 64).len(), 64);
        let beyond = condition_combinations(7, 64);
        assert_eq!(beyond.len(), 9);
        assert_eq!(beyond[0], vec![false; 7]);
        assert_eq!(beyond[8], vec![true; 7]);
        assert_eq!(beyond[3].iter().filter(|b| **b).count(), 1);
        // A tiny bound never duplicates a case.
        assert_eq!(condition_combinations(1, 1), [vec![false], vec![true]]);
        assert_eq!(condition_combinations(200, 64).len(), 202);
    }

    #[test]
    fn case_names() {
        assert_eq!(case_name("agent-system", &[]), "agent-system");
        assert_eq!(
            case_name("agent-system", &["hasTools", "memory"]),
            "agent-system@hasTools+memory"
        );
        let long: Vec<&str> = vec!["aVeryLongConditionNameIndeed"; 8];
        let name = case_name("p", &long);
        assert!(name.starts_with("p@8-on-"), "{name}");
        assert_eq!(name.len(), "p@8-on-".len() + 16);
        assert_eq!(name, case_name("p", &long));
    }

    #[test]
    fn fences() {
        let text = "a\n```json\n{{x}}\n```\nb {{y}}\n  ~~~~\n{{z}}\n~~~\n````\nopen";
        let blocks = fenced_code_blocks(text);
        let shown: Vec<&str> = blocks.iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(
            shown,
            ["```json\n{{x}}\n```\n", "  ~~~~\n{{z}}\n~~~\n````\nopen"]
        );
        // A closing fence must be as long as the opening one and bare.
        let text = "````\n```\n{{x}}\n```` \nafter";
        let blocks = fenced_code_blocks(text);
        assert_eq!(blocks.len(), 1);
        assert_eq!(&text[blocks[0].end..], "after");
        // Four spaces of indent is no fence; backticks in a backtick info string neither.
        assert!(fenced_code_blocks("    ```\n{{x}}").is_empty());
        assert!(fenced_code_blocks("``` a`b\n{{x}}").is_empty());
    }

    #[test]
    fn shown_text_is_short_and_escaped() {
        assert_eq!(shown("{{a\tb}}"), "{{a\\tb}}");
        let long = format!("{{{{{}}}}}", "x".repeat(60));
        assert_eq!(shown(&long).chars().count(), MAX_SHOWN_CHARS + 1);
        assert!(shown(&long).ends_with('…'));
    }
}
