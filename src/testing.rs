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
//! conditions (once for combinations that render the same text), each first
//! run through the survivor check, and prints one summary when something
//! differs:
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
use promptpack_core::source_file::SourceFile;
use promptpack_core::syntax::Delimiters;
use promptpack_load::Config;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

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
            origins: None,
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
    /// Where each survivor's text comes from (`templates/x/system.md:3:11`,
    /// `from a value`), when a snapshot run knows the prompt's files.
    origins: Option<Vec<String>>,
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
    /// The first line and one line per survivor, without the closing hint:
    /// `line:col  text  (what)`, or, with origins, `origin  (rendered
    /// line:col)  text  (what)`.
    fn write_list(&self, f: &mut impl fmt::Write) -> fmt::Result {
        let n = self.findings.len();
        write!(
            f,
            "{n} template token{} survived in {}:",
            if n == 1 { "" } else { "s" },
            self.label.as_deref().unwrap_or("the rendered text")
        )?;
        let rows: Vec<Vec<String>> = self
            .iter()
            .enumerate()
            .map(|(i, (finding, text))| {
                let at = format!("{}:{}", finding.line, finding.column);
                let what = format!("({})", describe(finding));
                match self.origins.as_ref().and_then(|o| o.get(i)) {
                    Some(origin) => {
                        vec![
                            origin.clone(),
                            format!("(rendered {at})"),
                            shown(text),
                            what,
                        ]
                    }
                    None => vec![at, shown(text), what],
                }
            })
            .collect();
        let columns = rows.first().map_or(0, Vec::len);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                rows.iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in rows {
            f.write_str("\n ")?;
            let last = row.len().saturating_sub(1);
            for (c, cell) in row.iter().enumerate() {
                if c == last {
                    write!(f, " {cell}")?;
                } else {
                    let width = widths.get(c).copied().unwrap_or(0);
                    write!(f, " {cell:<width$} ")?;
                }
            }
        }
        Ok(())
    }

    /// What the report says without the rendered positions: the same
    /// survivors in another combination of conditions give the same key.
    fn key(&self) -> Vec<String> {
        self.iter()
            .enumerate()
            .map(|(i, (finding, text))| {
                let origin = self.origins.as_ref().and_then(|o| o.get(i));
                format!(
                    "{} {text} {}",
                    origin.map_or("", String::as_str),
                    describe(finding)
                )
            })
            .collect()
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
    clip(text, MAX_SHOWN_CHARS)
}

/// `text` cut to `max` characters (with `…` when cut), control characters
/// escaped.
fn clip(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
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
    /// The names of the other combinations whose render is identical to
    /// this one's (a condition nested in one that is off changes nothing):
    /// [`SnapshotRun::cases`] folds them into the first, which is
    /// snapshotted once for all of them. Empty from [`Snapshots::cases`].
    pub covers: Vec<String>,
}

impl<Id> Case<Id> {
    /// The text to snapshot: each part under a `--- system.md ---` or
    /// `--- user.md ---` line.
    ///
    /// ```
    /// let case = promptpack::testing::Case {
    ///     id: (), prompt: "greet", name: "greet".into(), on: vec![], off: vec![],
    ///     choices: vec![], set_by_test: vec![], system: "Hi ‹name›.".into(), user: Some("Go.".into()),
    ///     covers: vec![],
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

    /// One line saying what was rendered, for the snapshot's `description`,
    /// and which other combinations the snapshot stands for.
    ///
    /// ```
    /// let mut case = promptpack::testing::Case {
    ///     id: (), prompt: "agent-system", name: "agent-system@hasTools".into(),
    ///     on: vec!["hasTools"], off: vec!["memory"], choices: vec![], set_by_test: vec!["toolList"],
    ///     system: String::new(), user: None, covers: vec![],
    /// };
    /// assert_eq!(
    ///     case.description(),
    ///     "agent-system with hasTools on, memory off; values: ‹name› placeholders, toolList set by the test"
    /// );
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
        out.push_str("; values: ‹name› placeholders");
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
    max_combinations: usize,
    values: BTreeMap<String, String>,
    delimiters: Option<Delimiters>,
    /// The delimiters the prompts were compiled with (`PromptId::DELIMITERS`),
    /// for reading the prompt files: the survivor check may use others.
    compiled_with: Option<Delimiters>,
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

/// Folds each case whose rendered text (both parts) is that of an earlier
/// case of the same prompt into the earlier one's [`Case::covers`].
fn fold_identical<Id>(cases: Vec<Case<Id>>) -> Vec<Case<Id>> {
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
/// let prompts = Prompts::new(&PromptId::ALL, PromptId::as_str, PromptId::variables,
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
    options: Snapshots,
    survivors: Survivors,
    files: PromptFiles,
    store: Store,
    cases: usize,
    problems: Vec<Problem>,
    /// Snapshots written as accepted `.snap` files.
    accepted: Vec<PathBuf>,
    /// Pending `.snap.new` files removed.
    removed: usize,
}

/// One entry of a run's summary.
#[derive(Debug)]
enum Problem {
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
const MAX_NAMED_CASES: usize = 6;

impl Problem {
    fn text(&self) -> String {
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
    pub fn cases<Id: Copy + 'static>(&self, prompts: &Prompts<Id>) -> Vec<Case<Id>> {
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
    fn record_survivors<Id>(&mut self, case: &Case<Id>) -> bool {
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

    fn remove_pending(&mut self, path: &Path) {
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
fn changed(old: &str, new: &str) -> (String, String) {
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

// ---------------------------------------------------------------------------
// Snapshot files, as insta reads and writes them
// ---------------------------------------------------------------------------

/// insta's `INSTA_UPDATE` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Update {
    Auto,
    Always,
    New,
    Unseen,
    No,
    Force,
}

/// Where a new or changed snapshot goes.
enum Write {
    /// The `.snap` itself.
    Accepted,
    /// A `.snap.new` beside it, for review.
    Pending,
    /// Nowhere, and why.
    Nothing(&'static str),
}

impl Update {
    fn on_difference(self, exists: bool) -> Write {
        match self {
            Update::Auto if is_ci() => Write::Nothing("CI is set"),
            Update::Auto | Update::New => Write::Pending,
            Update::Unseen if exists => Write::Pending,
            Update::Always | Update::Force | Update::Unseen => Write::Accepted,
            Update::No => Write::Nothing("INSTA_UPDATE=no"),
        }
    }

    fn why_accepted(self) -> &'static str {
        match self {
            Update::Force => "INSTA_UPDATE=force",
            Update::Unseen => "new ones, INSTA_UPDATE=unseen",
            _ => "INSTA_UPDATE=always",
        }
    }
}

/// Whether insta takes this for a CI run: it then writes nothing by default.
fn is_ci() -> bool {
    match std::env::var("CI").ok().as_deref() {
        Some("false" | "0" | "") => false,
        None => std::env::var_os("TF_BUILD").is_some(),
        Some(_) => true,
    }
}

/// What a run reads from insta's environment.
#[derive(Debug)]
struct Store {
    manifest_dir: PathBuf,
    update: Update,
    force_pass: bool,
    pending_dir: Option<PathBuf>,
    workspace_root: Option<PathBuf>,
    references: Option<PathBuf>,
}

/// Where one case's snapshot lives.
struct Target {
    workspace: PathBuf,
    snap: PathBuf,
    pending: PathBuf,
    /// The calling file, as the snapshot's `source`.
    source: String,
}

impl Store {
    fn from_env(manifest_dir: &str) -> Result<Store, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let update = match var("INSTA_UPDATE").as_deref() {
            None | Some("auto") => Update::Auto,
            Some("always" | "1") => Update::Always,
            Some("new") => Update::New,
            Some("unseen") => Update::Unseen,
            Some("no") => Update::No,
            Some("force") => Update::Force,
            Some(other) => {
                return Err(format!(
                    "INSTA_UPDATE={other} is not one of auto, always, new, unseen, no, force"
                ));
            }
        };
        Ok(Store {
            manifest_dir: PathBuf::from(manifest_dir),
            update,
            force_pass: var("INSTA_FORCE_PASS").is_some_and(|v| v != "0"),
            pending_dir: var("INSTA_PENDING_DIR").map(PathBuf::from),
            workspace_root: var("INSTA_WORKSPACE_ROOT").map(PathBuf::from),
            references: var("INSTA_SNAPSHOT_REFERENCES_FILE").map(PathBuf::from),
        })
    }

    /// The folder `file!()` paths are relative to: the cargo workspace,
    /// found as the nearest folder at or above the crate's in which `file`
    /// exists.
    fn workspace(&self, file: &str) -> PathBuf {
        if let Some(root) = &self.workspace_root {
            return root.clone();
        }
        self.manifest_dir
            .ancestors()
            .find(|dir| dir.join(file).is_file())
            .unwrap_or(&self.manifest_dir)
            .to_path_buf()
    }

    /// Where insta keeps the snapshot `name` asserted in `file`, module
    /// `module_path`, with the insta settings bound now.
    fn target(&self, name: &str, file: &str, module_path: &str) -> Target {
        let workspace = self.workspace(file);
        let settings = insta::Settings::clone_current();
        let mut file_name = String::new();
        if settings.prepend_module_to_snapshot() {
            file_name.push_str(&module_path.replace("::", "__"));
            file_name.push_str("__");
        }
        let name = match settings.snapshot_suffix() {
            Some(suffix) => format!("{name}@{suffix}"),
            None => name.to_string(),
        };
        file_name.push_str(&name.replace(['/', '\\'], "__"));
        file_name.push_str(".snap");
        let folder = Path::new(file).parent().unwrap_or(Path::new(""));
        let snap = workspace
            .join(folder)
            .join(settings.snapshot_path())
            .join(file_name);
        let pending_snap = match &self.pending_dir {
            Some(dir) => snap
                .strip_prefix(&workspace)
                .map_or_else(|_| snap.clone(), |relative| dir.join(relative)),
            None => snap.clone(),
        };
        let mut pending = pending_snap.into_os_string();
        pending.push(".new");
        Target {
            source: file.replace('\\', "/"),
            workspace,
            snap,
            pending: PathBuf::from(pending),
        }
    }

    /// Tells `cargo insta test --unreferenced` that the snapshot is in use,
    /// as insta's own assertion does.
    fn remember(&self, snap: &Path) {
        if let Some(references) = &self.references {
            let line = format!("{}\n", snap.display());
            let file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(references);
            if let Ok(mut file) = file {
                // Best effort, as in insta.
                let _ = std::io::Write::write_all(&mut file, line.as_bytes());
            }
        }
    }

    /// `path` for the summary: relative to the workspace where it is inside.
    fn shown(&self, path: &Path, workspace: &Path) -> String {
        path.strip_prefix(workspace)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// Snapshot text as insta compares and stores it: trailing whitespace
/// trimmed, line endings `\n`.
fn normalized(text: &str) -> String {
    text.trim_end().replace("\r\n", "\n")
}

/// The stored snapshot's text, normalized; `None` when there is none.
fn stored_snapshot(path: &Path) -> Result<Option<String>, String> {
    if !path.is_file() {
        return Ok(None);
    }
    let snapshot = insta::Snapshot::from_file(path).map_err(|e| e.to_string())?;
    Ok(snapshot.as_text().map(|text| normalized(&text.to_string())))
}

/// A snapshot file as insta writes it: the metadata (`assertion_line` only
/// in a pending `.snap.new`), `---`, the text.
fn snap_file(source: &str, line: Option<u32>, description: &str, text: &str) -> String {
    let mut out = format!("---\nsource: {}\n", yaml_string(source));
    if let Some(line) = line {
        out.push_str(&format!("assertion_line: {line}\n"));
    }
    out.push_str(&format!("description: {}\n---\n", yaml_string(description)));
    out.push_str(text);
    out.push('\n');
    out
}

fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(path, text)
}

/// A YAML scalar as insta's emitter writes it: plain when that reads back
/// as the same string, else double-quoted with escapes.
fn yaml_string(value: &str) -> String {
    let special_start = value
        .starts_with(['&', '*', '?', '|', '-', '<', '>', '=', '!', '%', '@', '.'])
        || value.starts_with(' ')
        || value.starts_with("0x");
    let special_char = value.contains(|c: char| {
        matches!(
            c,
            ':' | '{'
                | '}'
                | '['
                | ']'
                | ','
                | '#'
                | '`'
                | '"'
                | '\''
                | '\\'
                | '\0'..='\x06'
                | '\t'
                | '\n'
                | '\r'
                | '\x0e'..='\x1a'
                | '\x1c'..='\x1f'
        )
    });
    let keyword = [
        "yes", "Yes", "YES", "no", "No", "NO", "True", "TRUE", "true", "False", "FALSE", "false",
        "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~",
    ]
    .contains(&value);
    let number = value.parse::<i64>().is_ok() || value.parse::<f64>().is_ok();
    if !(value.is_empty()
        || value.ends_with(' ')
        || special_start
        || special_char
        || keyword
        || number)
    {
        return value.to_string();
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\0'..='\x1f' | '\x7f' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// Where a survivor comes from
// ---------------------------------------------------------------------------

/// The prompt files of a crate, read once per run to say where a survivor's
/// text comes from.
struct PromptFiles {
    /// The delimiters the prompts were compiled with.
    delimiters: Delimiters,
    /// `system.md` and `user.md` of each template folder, by prompt id.
    templates: BTreeMap<String, (SourceFile, Option<SourceFile>)>,
    /// Each snippet file, by the name it is included by.
    snippets: BTreeMap<String, SourceFile>,
}

impl fmt::Debug for PromptFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptFiles")
            .field("delimiters", &self.delimiters)
            .field("templates", &self.templates.keys().collect::<Vec<_>>())
            .field("snippets", &self.snippets.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl PromptFiles {
    /// What can be read of the folders `config` points at; a file that
    /// cannot be read is simply not there.
    fn read(config: &Config, delimiters: Delimiters) -> PromptFiles {
        let (sources, _problems) = promptpack_load::read_sources(config);
        PromptFiles {
            delimiters,
            templates: sources
                .templates
                .into_iter()
                .map(|t| (t.id, (t.system, t.user)))
                .collect(),
            snippets: sources
                .snippets
                .into_iter()
                .map(|s| (s.name, s.file))
                .collect(),
        }
    }

    /// The files a part of a prompt is made of: the part, then the snippets
    /// it includes, and theirs, in order of first inclusion.
    fn chain(&self, prompt: &str, user: bool) -> Vec<&SourceFile> {
        let Some((system, user_file)) = self.templates.get(prompt) else {
            return Vec::new();
        };
        let part = if user {
            user_file.as_ref()
        } else {
            Some(system)
        };
        let mut chain: Vec<&SourceFile> = part.into_iter().collect();
        let mut seen = BTreeSet::new();
        let mut i = 0;
        while let Some(file) = chain.get(i).copied() {
            for token in find_tokens(file.text(), &self.delimiters) {
                if token.kind == FindingKind::Snippet
                    && let Some(name) = token.name(file.text())
                    && seen.insert(name.to_string())
                    && let Some(snippet) = self.snippets.get(name)
                {
                    chain.push(snippet);
                }
            }
            i += 1;
        }
        chain
    }

    /// For each survivor of `rendered` (a part of `prompt`), the
    /// `file:line:col` its text comes from, or `from a value`; `None` when
    /// the part's file was not found.
    ///
    /// The text comes from the first place in the part, else in a snippet,
    /// where it is written other than as a token the render replaces.
    /// Where it is written several times, the place written as the same
    /// kind of survivor and with the most of its line around it as in the
    /// rendered text wins, and one not given to an earlier survivor.
    fn origins(
        &self,
        prompt: &str,
        user: bool,
        rendered: &str,
        findings: &[Finding],
    ) -> Option<Vec<String>> {
        let chain = self.chain(prompt, user);
        if chain.is_empty() {
            return None;
        }
        let scanned: Vec<Vec<Finding>> = chain
            .iter()
            .map(|file| find_tokens(file.text(), &self.delimiters))
            .collect();
        let mut used = BTreeSet::new();
        let origins = findings
            .iter()
            .map(|finding| {
                let needle = finding.text(rendered);
                // ((same kind, context, unused), file, offset)
                let mut best: Option<((bool, usize, bool), usize, usize)> = None;
                for (i, (file, tokens)) in chain.iter().zip(&scanned).enumerate() {
                    let text = file.text();
                    for (start, _) in text.match_indices(needle).filter(|_| !needle.is_empty()) {
                        let end = start + needle.len();
                        let replaced = tokens
                            .iter()
                            .any(|t| t.kind.is_token() && t.span.start < end && start < t.span.end);
                        if replaced {
                            continue;
                        }
                        let same_kind = tokens.iter().any(|t| {
                            t.span.start == start && t.span.end == end && t.kind == finding.kind
                        });
                        let context = shared_context(rendered, finding.span, text, start, end);
                        let score = (same_kind, context, !used.contains(&(i, start)));
                        if best.as_ref().is_none_or(|(s, ..)| score > *s) {
                            best = Some((score, i, start));
                        }
                    }
                }
                match best {
                    Some((_, i, start)) => {
                        used.insert((i, start));
                        let end = start + needle.len();
                        let at = chain[i].location(Span { start, end });
                        format!("{}:{}:{}", at.path, at.line, at.column)
                    }
                    None => "from a value".to_string(),
                }
            })
            .collect();
        Some(origins)
    }
}

/// How many characters around a survivor on its line (before it, and after
/// it) are the same in the rendered text and at `start..end` of a file.
fn shared_context(rendered: &str, span: Span, file: &str, start: usize, end: usize) -> usize {
    fn line_start(text: &str, at: usize) -> usize {
        text[..at].rfind('\n').map_or(0, |i| i + 1)
    }
    fn line_end(text: &str, at: usize) -> usize {
        text[at..].find('\n').map_or(text.len(), |i| at + i)
    }
    let before_rendered = &rendered[line_start(rendered, span.start)..span.start];
    let before_file = &file[line_start(file, start)..start];
    let after_rendered = &rendered[span.end..line_end(rendered, span.end)];
    let after_file = &file[end..line_end(file, end)];
    let before = before_rendered
        .chars()
        .rev()
        .zip(before_file.chars().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let after = after_rendered
        .chars()
        .zip(after_file.chars())
        .take_while(|(a, b)| a == b)
        .count();
    before + after
}

// ---------------------------------------------------------------------------
// Quiet panics
// ---------------------------------------------------------------------------

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

thread_local! {
    /// Whether this thread is running a case, whose panic is kept for the
    /// summary rather than printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// How many cases run quietly now, on any thread, and the hook that was in
/// place before the first of them.
static QUIET_HOOK: Mutex<(usize, Option<Arc<PanicHook>>)> = Mutex::new((0, None));

/// While it lives, panics on this thread print nothing; panics elsewhere go
/// to the hook that was in place. The hook is put back when the last one
/// ends.
struct QuietPanics;

impl QuietPanics {
    fn enter() -> QuietPanics {
        let mut state = QUIET_HOOK.lock().unwrap_or_else(PoisonError::into_inner);
        if state.0 == 0 {
            let previous: Arc<PanicHook> = Arc::new(std::panic::take_hook());
            let forward = Arc::clone(&previous);
            std::panic::set_hook(Box::new(move |info| {
                if !QUIET.with(Cell::get) {
                    forward(info);
                }
            }));
            state.1 = Some(previous);
        }
        state.0 += 1;
        QUIET.with(|quiet| quiet.set(true));
        QuietPanics
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        QUIET.with(|quiet| quiet.set(false));
        let mut state = QUIET_HOOK.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 = state.0.saturating_sub(1);
        // The hook cannot be changed while this thread panics; the quiet one
        // then stays, forwarding every panic, and is replaced next time.
        if state.0 > 0 || std::thread::panicking() {
            return;
        }
        drop(std::panic::take_hook());
        if let Some(previous) = state.1.take() {
            match Arc::try_unwrap(previous) {
                Ok(hook) => std::panic::set_hook(hook),
                Err(shared) => std::panic::set_hook(Box::new(move |info| shared(info))),
            }
        }
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
/// `prompts__agent-system@hasTools+memory.snap` with those two on.
/// Combinations that render the same text (a condition nested in one that
/// is off) share the snapshot of the first of them, whose description names
/// the others ([`Case::covers`]).
///
/// Each case is first checked for template tokens that survived the render
/// ([`Survivors`]), written with the delimiters the prompts were compiled
/// with (`PromptId::DELIMITERS`). A survivor is reported with the file,
/// line and column its text comes from (`templates/agent-system/system.md:3:11`,
/// or `from a value`) and its place in the rendered text; a case with
/// survivors is not snapshotted, so that no run accepts one.
///
/// Every case runs even when some fail, and nothing is printed while they
/// do; the test then fails once, with one summary listing each new or
/// changed snapshot and each survivor. To accept new or changed snapshots,
/// run `cargo insta review` (from `cargo install cargo-insta`) after the
/// test, or `cargo insta test --review`, or set `INSTA_UPDATE=always`, which
/// also removes the `.snap.new` files an earlier run left. When the `CI`
/// environment variable is set, nothing is written and a new or changed
/// snapshot fails the test, so the snapshots in the repository are the
/// contract. See [`SnapshotRun::check`] for the files and the `INSTA_*`
/// variables it follows.
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
/// as a dev-dependency); the snapshot files are insta's, so `cargo insta`
/// reviews them, but the test crate needs no insta of its own.
///
/// It is a macro so that the snapshot files are named and placed by the
/// calling file and module, as insta's own macros do.
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
            run.check(&case, ::core::module_path!());
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
    fn yaml_strings_as_insta_writes_them() {
        assert_eq!(yaml_string("tests/angle.rs"), "tests/angle.rs");
        assert_eq!(yaml_string("‹name› placeholders"), "‹name› placeholders");
        assert_eq!(yaml_string("a; values: b"), "\"a; values: b\"");
        assert_eq!(yaml_string("say \"hi\"\tnow"), "\"say \\\"hi\\\"\\tnow\"");
        assert_eq!(yaml_string("a\u{1}b"), "\"a\\u0001b\"");
        for quoted in ["", "true", "off", "12", "1.5", "-x", "@x", ".x", "x "] {
            assert_eq!(yaml_string(quoted), format!("\"{quoted}\""), "{quoted:?}");
        }
    }

    #[test]
    fn a_difference_names_its_first_line() {
        assert_eq!(
            changed("a\nb\nc", "a\nB\nc"),
            (
                "changed at line 2".to_string(),
                "\n  - b\n  + B".to_string()
            )
        );
        assert_eq!(
            changed("a", "a\nb"),
            (
                "changed at line 2".to_string(),
                "\n  - (nothing)\n  + b".to_string()
            )
        );
    }

    #[test]
    fn context_counts_what_surrounds_the_text_on_its_line() {
        let rendered = "Hi.\nTalk with {{ x }} now";
        let span = Span { start: 14, end: 21 };
        assert_eq!(&rendered[span.start..span.end], "{{ x }}");
        let file = "Talk with {{ x }} later\nOr {{ x }}";
        assert_eq!(shared_context(rendered, span, file, 10, 17), 11);
        assert_eq!(shared_context(rendered, span, file, 27, 34), 1);
    }

    #[test]
    fn snapshot_files_are_where_insta_puts_them() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut store = Store::from_env(root).expect("a valid environment");
        store.workspace_root = None;
        store.pending_dir = None;
        let target = store.target("greet@a/b", "src/testing.rs", "promptpack::testing::tests");
        let folder = Path::new(root).join("src").join("snapshots");
        assert_eq!(target.workspace, Path::new(root));
        assert_eq!(
            target.snap,
            folder.join("promptpack__testing__tests__greet@a__b.snap")
        );
        assert_eq!(
            target.pending,
            folder.join("promptpack__testing__tests__greet@a__b.snap.new")
        );
        assert_eq!(target.source, "src/testing.rs");
        store.pending_dir = Some(PathBuf::from("/pending"));
        let target = store.target("greet", "src/testing.rs", "m");
        assert_eq!(
            target.pending,
            Path::new("/pending/src/snapshots/m__greet.snap.new")
        );
    }

    #[test]
    fn shown_text_is_short_and_escaped() {
        assert_eq!(shown("{{a\tb}}"), "{{a\\tb}}");
        let long = format!("{{{{{}}}}}", "x".repeat(60));
        assert_eq!(shown(&long).chars().count(), MAX_SHOWN_CHARS + 1);
        assert!(shown(&long).ends_with('…'));
    }
}
