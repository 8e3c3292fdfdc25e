//! The survivor check: template tokens and near-misses left in rendered text.

#[allow(unused_imports)]
use super::prelude::*;

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
pub(super) struct Allowances {
    pub(super) exact: BTreeSet<String>,
    pub(super) kinds: BTreeSet<FindingKind>,
    pub(super) fenced_code: bool,
}

impl Allowances {
    pub(super) fn allows(&self, finding: &Finding, found_text: &str, fences: &[Span]) -> bool {
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
    pub(super) delimiters: Delimiters,
    /// Whether the delimiters were chosen ([`Survivors::with_delimiters`]),
    /// not defaulted: a snapshot suite checks for the prompts' own unless
    /// they were.
    pub(super) chose_delimiters: bool,
    pub(super) allowances: Allowances,
}

impl Default for Survivors {
    fn default() -> Self {
        Survivors::new()
    }
}

impl Survivors {
    /// A check for the default delimiters, `{{` and `}}`, allowing nothing.
    /// Given to a snapshot suite ([`Snapshots::survivors`]), it checks for
    /// the delimiters the prompts were compiled with instead.
    pub fn new() -> Survivors {
        Survivors {
            chose_delimiters: false,
            ..Survivors::with_delimiters(&Delimiters::default())
        }
    }

    /// A check for these delimiters, allowing nothing; in a snapshot suite
    /// too, whatever the prompts were compiled with.
    pub fn with_delimiters(delimiters: &Delimiters) -> Survivors {
        Survivors {
            delimiters: delimiters.clone(),
            chose_delimiters: true,
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

    /// Allows every survivor that starts inside a Markdown fenced code block,
    /// as CommonMark reads one: from a line of three or more backticks or
    /// tildes (indented by at most three spaces, or inside a list item or
    /// block quote) to the closing fence of the same character, at least as
    /// long, or to the end of the text (or of the list item or block quote).
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

/// The byte ranges of the Markdown fenced code blocks of `text`, as
/// CommonMark reads them, fence lines included (whole lines, so a survivor
/// on a fence line is inside). An unclosed fence runs to the end of the
/// text, or of the list item or block quote it is in.
pub(super) fn fenced_code_blocks(text: &str) -> Vec<Span> {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag};
    Parser::new(text)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => Some(range),
            _ => None,
        })
        .map(|range| {
            // pulldown-cmark's range starts at the fence, and stops before
            // a closing fence's newline.
            let start = text[..range.start].rfind('\n').map_or(0, |n| n + 1);
            let rest = &text[range.end..];
            let newline = if text[..range.end].ends_with('\n') {
                0
            } else if rest.starts_with("\r\n") {
                2
            } else {
                usize::from(rest.starts_with('\n'))
            };
            Span {
                start,
                end: range.end + newline,
            }
        })
        .collect()
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
    pub(super) label: Option<String>,
    pub(super) findings: Vec<Finding>,
    pub(super) texts: Vec<String>,
    /// Where each survivor's text comes from (`templates/x/system.md:3:11`,
    /// `from a value`), when a snapshot run knows the prompt's files.
    pub(super) origins: Option<Vec<String>>,
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
    pub(super) fn write_list(&self, f: &mut impl fmt::Write) -> fmt::Result {
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
    pub(super) fn key(&self) -> Vec<String> {
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
pub(super) fn shown(text: &str) -> String {
    clip(text, MAX_SHOWN_CHARS)
}

/// `text` cut to `max` characters (with `…` when cut), control characters
/// escaped.
pub(super) fn clip(text: &str, max: usize) -> String {
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
pub(super) fn describe(finding: &Finding) -> String {
    let what = finding.kind.description();
    match &finding.suggestion {
        Some(s) => format!("{what}; meant {s}?"),
        None => what.to_string(),
    }
}
