//! Finds template tokens and near-misses in any text: a template file, a
//! snippet or a rendered prompt. Pure: it knows no files.
//!
//! [`find_tokens`] reports every token the parser accepts (`{{name}}`,
//! `{{snippet:x}}`, `{{#if x}}`, `{{else}}`, `{{/if}}`, `{{schema:response}}`) and every piece of
//! brace syntax that looks meant as a token but is not one, and so reaches the
//! model literally (`{{ name }}`, `{{#each x}}`, `{{snippet: x}}`,
//! `{{next-agent}}`, an unmatched `{{` or `}}`). `promptpack check` warns
//! about the near-misses; the survivor check of the `testing` feature looks
//! for tokens left in rendered output.
//!
//! ```
//! use promptpack_core::scan::{FindingKind, find_tokens};
//! use promptpack_core::syntax::Delimiters;
//! let text = "Hi {{name}}.\n{{ mood }} {{#each items}}";
//! let findings = find_tokens(text, &Delimiters::default());
//! let kinds: Vec<FindingKind> = findings.iter().map(|f| f.kind).collect();
//! assert_eq!(kinds, [FindingKind::Var, FindingKind::Spaced, FindingKind::UnknownBlock]);
//! assert_eq!(findings[0].name(text), Some("name"));
//! assert_eq!((findings[1].line, findings[1].column), (2, 1));
//! assert_eq!(findings[1].suggestion.as_deref(), Some("{{mood}}"));
//! ```

use crate::source_file::Span;
use crate::syntax::{Delimiters, Token, classify, is_snippet_name, is_var_name, token_at};

/// What a [`Finding`] is: a token, or brace syntax that stays literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FindingKind {
    /// A variable token, `{{name}}`.
    Var,
    /// A snippet include, `{{snippet:name}}` or `{{snippet:name#heading}}`.
    Snippet,
    /// A block opening, `{{#if name}}` or `{{#if name == "value"}}`.
    If,
    /// `{{else if name}}` or `{{else if name == "value"}}`.
    ElseIf,
    /// `{{else}}`.
    Else,
    /// `{{/if}}`.
    EndIf,
    /// `{{schema:response}}`: the prompt's response schema, printed.
    Schema,
    /// `{{schema:tools}}`, `{{schema: response}}`: `schema:` followed by
    /// anything but `response`. Not literal text: the parser rejects it as
    /// `invalid_schema`.
    InvalidSchema,
    /// `{{snippet:../x}}`: a snippet name with path characters. Not literal
    /// text: the parser rejects it as `invalid_snippet_name`.
    InvalidSnippetPath,
    /// `{{snippet:name#Some Heading}}`: a section named by something no
    /// heading's slug or id is. Not literal text: the parser rejects it as
    /// `invalid_snippet_name`.
    InvalidSection,
    /// A malformed comparison or `else if`: `{{#if role == teacher}}`. Not
    /// literal text: the parser rejects it as `invalid_condition`.
    InvalidCondition,
    /// A token with stray whitespace inside the delimiters: `{{ name }}`,
    /// `{{# if x}}`, `{{ /if }}`. The suggestion is the token without it.
    Spaced,
    /// A snippet include that is not well formed: `{{snippet: x}}`,
    /// `{{snippet:}}`, `{{snippet x}}`.
    SnippetSyntax,
    /// A schema token that is not well formed and stays text:
    /// `{{schema response}}`, `{{schema :response}}`, `{{ schema:tools }}`.
    /// The suggestion is `{{schema:response}}`.
    SchemaSyntax,
    /// A block the language does not have, or a malformed `#if`:
    /// `{{#each x}}`, `{{/each}}`, `{{#unless x}}`, `{{#if}}`.
    UnknownBlock,
    /// A name with characters variables cannot have: `{{next-agent}}`,
    /// `{{user.name}}`.
    InvalidName,
    /// Anything else between a pair of delimiters on one line:
    /// `{{}}`, `{{> partial}}`, `{{!comment}}`, `{{a b}}`.
    OtherBraces,
    /// A role tag, `{{#user}}`, `{{/assistant}}`, `{{#tool name}}`: the
    /// blocks of a conversation (`messages.md`), literal text anywhere
    /// else, as it always was.
    RoleTag,
    /// An opening delimiter with no closing one after it on its line (before
    /// the next opening delimiter).
    UnmatchedOpen,
    /// A closing delimiter that closes nothing. Common and harmless in JSON
    /// examples (`{"a": {"b": 1}}`), so `check` does not warn about it.
    UnmatchedClose,
}

impl FindingKind {
    /// Whether this is a token the parser accepts and a render replaces.
    pub const fn is_token(self) -> bool {
        matches!(
            self,
            FindingKind::Var
                | FindingKind::Snippet
                | FindingKind::If
                | FindingKind::ElseIf
                | FindingKind::Else
                | FindingKind::EndIf
                | FindingKind::Schema
        )
    }

    /// Whether this is brace syntax that is not a token and reaches the
    /// output literally ([`FindingKind::InvalidSnippetPath`] is neither: the
    /// parser rejects it, as it does the other invalid kinds).
    pub const fn is_near_miss(self) -> bool {
        !self.is_token()
            && !matches!(
                self,
                FindingKind::InvalidSnippetPath
                    | FindingKind::InvalidSection
                    | FindingKind::InvalidCondition
                    | FindingKind::InvalidSchema
            )
    }

    /// What this kind is, in words, as the survivor check reports it.
    pub const fn description(self) -> &'static str {
        match self {
            FindingKind::Var => "variable token",
            FindingKind::Snippet => "snippet token",
            FindingKind::If => "#if token",
            FindingKind::ElseIf => "else if token",
            FindingKind::InvalidCondition => "malformed condition",
            FindingKind::Else => "else token",
            FindingKind::EndIf => "/if token",
            FindingKind::Schema => "schema token",
            FindingKind::InvalidSchema => "schema token naming no schema",
            FindingKind::SchemaSyntax => "near-miss: malformed schema token",
            FindingKind::InvalidSnippetPath => "snippet token with a path",
            FindingKind::InvalidSection => "snippet token with a malformed section",
            FindingKind::Spaced => "near-miss: spaces inside the delimiters",
            FindingKind::SnippetSyntax => "near-miss: malformed snippet include",
            FindingKind::UnknownBlock => "near-miss: a block promptpack does not have",
            FindingKind::InvalidName => "near-miss: not a variable name",
            FindingKind::OtherBraces => "near-miss: not a token",
            FindingKind::RoleTag => "role tag, a token only in messages.md",
            FindingKind::UnmatchedOpen => "unmatched opening delimiter",
            FindingKind::UnmatchedClose => "unmatched closing delimiter",
        }
    }

    /// A stable snake_case name for this kind, e.g. `"unknown_block"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            FindingKind::Var => "var",
            FindingKind::Snippet => "snippet",
            FindingKind::If => "if",
            FindingKind::ElseIf => "else_if",
            FindingKind::InvalidCondition => "invalid_condition",
            FindingKind::Else => "else",
            FindingKind::EndIf => "end_if",
            FindingKind::Schema => "schema",
            FindingKind::InvalidSchema => "invalid_schema",
            FindingKind::SchemaSyntax => "schema_syntax",
            FindingKind::InvalidSnippetPath => "invalid_snippet_path",
            FindingKind::InvalidSection => "invalid_section",
            FindingKind::Spaced => "spaced",
            FindingKind::SnippetSyntax => "snippet_syntax",
            FindingKind::UnknownBlock => "unknown_block",
            FindingKind::InvalidName => "invalid_name",
            FindingKind::OtherBraces => "other_braces",
            FindingKind::RoleTag => "role_tag",
            FindingKind::UnmatchedOpen => "unmatched_open",
            FindingKind::UnmatchedClose => "unmatched_close",
        }
    }
}

/// One token or near-miss found by [`find_tokens`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    /// What was found.
    pub kind: FindingKind,
    /// Byte range in the scanned text, delimiters included. For an unmatched
    /// delimiter, the delimiter alone.
    pub span: Span,
    /// Byte range between the delimiters (empty for an unmatched delimiter).
    pub inner: Span,
    /// 1-based line of `span.start`.
    pub line: usize,
    /// 1-based column of `span.start`, in characters.
    pub column: usize,
    /// For a near-miss that has an obvious fix, the token probably meant
    /// (`{{name}}` for `{{ name }}`), written with the scan's delimiters.
    pub suggestion: Option<String>,
}

impl Finding {
    /// The text of the whole finding, given the text that was scanned.
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.span.start..self.span.end).unwrap_or("")
    }

    /// The name a token carries, given the text that was scanned: the
    /// variable of `{{name}}` and `{{#if name}}`, the snippet of
    /// `{{snippet:name}}` and of `{{snippet:name#heading}}`. `None` for other
    /// kinds.
    pub fn name<'t>(&self, text: &'t str) -> Option<&'t str> {
        let inner = text.get(self.inner.start..self.inner.end)?;
        match self.kind {
            FindingKind::Var => Some(inner),
            FindingKind::Snippet => inner
                .strip_prefix("snippet:")
                .map(|target| target.split_once('#').map_or(target, |(name, _)| name)),
            FindingKind::If | FindingKind::ElseIf => inner
                .strip_prefix("#if ")
                .or_else(|| inner.strip_prefix("else if "))
                .map(|test| test.split_once(" == ").map_or(test, |(name, _)| name)),
            _ => None,
        }
    }
}

/// What the well-formed role tag `finding` (a [`FindingKind::RoleTag`])
/// says, given the text that was scanned: `{{#tool lookup}}` opens a tool
/// result of `lookup`, `{{/user}}` closes a user message. `None` for any
/// other finding, and for a malformed role tag (`{{#tool}}`, `{{#user x}}`).
///
/// A free function, not a method of [`Finding`]: `promptpack::testing`
/// re-exports `Finding`, and its API names no type of the compiler's.
///
/// ```
/// use promptpack_core::message::Role;
/// use promptpack_core::scan::{ParsedRoleTag, find_tokens, role_tag};
/// use promptpack_core::syntax::Delimiters;
/// let text = "{{#tool lookup}}\n4\n{{/tool}} {{#user x}}";
/// let tags: Vec<_> = find_tokens(text, &Delimiters::default())
///     .iter()
///     .map(|f| role_tag(f, text))
///     .collect();
/// assert_eq!(
///     tags,
///     [
///         Some(ParsedRoleTag { opens: true, role: Role::Tool, name: Some("lookup") }),
///         Some(ParsedRoleTag { opens: false, role: Role::Tool, name: None }),
///         None,
///     ]
/// );
/// ```
pub fn role_tag<'t>(finding: &Finding, text: &'t str) -> Option<ParsedRoleTag<'t>> {
    if finding.kind != FindingKind::RoleTag {
        return None;
    }
    // The one definition of the token forms says what the tag is.
    match classify(text.get(finding.inner.start..finding.inner.end)?)? {
        Token::OpenMessage(role, name) => Some(ParsedRoleTag {
            opens: true,
            role,
            name,
        }),
        Token::CloseMessage(role) => Some(ParsedRoleTag {
            opens: false,
            role,
            name: None,
        }),
        _ => None,
    }
}

/// A well-formed role tag, as [`role_tag`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedRoleTag<'t> {
    /// `{{#role}}` (true) or `{{/role}}` (false).
    pub opens: bool,
    /// The role it opens or closes.
    pub role: crate::message::Role,
    /// For `{{#tool name}}`, the tool's name.
    pub name: Option<&'t str>,
}

/// Every token and near-miss in `text`, in order, written with `delims`.
///
/// Tokens are recognised exactly as the parser does: the opening delimiter,
/// one of the token forms with no extra whitespace, the closing delimiter.
/// Where a delimiter starts a token in the middle of a run (`{{{x}}}`), the
/// token is reported and the extra characters are left alone. Everything
/// else between an opening delimiter and the next closing one on the same
/// line is classified as a near-miss; an opening delimiter that no closing
/// one follows on its line, and a closing one outside any token, are
/// reported as unmatched.
///
/// Runs in time linear in the length of `text`, however many delimiters it
/// holds.
pub fn find_tokens(text: &str, delims: &Delimiters) -> Vec<Finding> {
    let mut scanner = Scanner::new(text, delims);
    scanner.run();
    let mut findings = scanner.findings;
    findings.sort_by_key(|f| f.span.start);
    let mut lines = LineCounter::default();
    for f in &mut findings {
        (f.line, f.column) = lines.advance(text, f.span.start);
    }
    findings
}

/// The first position at or after some point where a pattern occurs, kept
/// between queries whose start only grows, so that all queries together scan
/// the text once.
struct NextMatch {
    /// The last query's start and its answer.
    last: Option<(usize, Option<usize>)>,
}

impl NextMatch {
    fn new() -> NextMatch {
        NextMatch { last: None }
    }

    /// The first occurrence of `pattern` in `text` at or after `from`.
    fn find(&mut self, text: &str, pattern: &str, from: usize) -> Option<usize> {
        let fresh = match self.last {
            Some((last_from, Some(at))) => last_from <= from && from <= at,
            Some((last_from, None)) => last_from <= from,
            None => false,
        };
        if !fresh {
            let at = text
                .get(from..)
                .and_then(|rest| rest.find(pattern))
                .map(|i| from + i);
            self.last = Some((from, at));
        }
        self.last.and_then(|(_, at)| at)
    }
}

struct Scanner<'a> {
    text: &'a str,
    delims: &'a Delimiters,
    open: &'a str,
    close: &'a str,
    findings: Vec<Finding>,
    next_open: NextMatch,
    next_close: NextMatch,
    next_newline: NextMatch,
    /// Byte ranges consumed by findings, in order; closing delimiters outside
    /// them are unmatched.
    covered: Vec<Span>,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, delims: &'a Delimiters) -> Scanner<'a> {
        Scanner {
            text,
            delims,
            open: delims.open(),
            close: delims.close(),
            findings: Vec::new(),
            next_open: NextMatch::new(),
            next_close: NextMatch::new(),
            next_newline: NextMatch::new(),
            covered: Vec::new(),
        }
    }

    fn char_len_at(&self, at: usize) -> usize {
        self.text[at..].chars().next().map_or(1, char::len_utf8)
    }

    fn run(&mut self) {
        let text = self.text;
        let mut pos = 0;
        while let Some(found) = text[pos..].find(self.open) {
            let at = pos + found;
            let inner_start = at + self.open.len();
            // Exactly what the parser takes for a token.
            if let Some(found) = token_at(text, at, text.len(), self.delims) {
                let kind = token_kind(found.token);
                self.push(kind, at, inner_start, found.inner_end, found.end, None);
                pos = found.end;
                continue;
            }
            // Not a token. If another opening delimiter overlaps this one
            // (`{{{x}}}`), the extra character is plain text: move on by one.
            let step = self.char_len_at(at);
            let next_open = self.next_open.find(text, self.open, at + step);
            if next_open.is_some_and(|n| n < inner_start) {
                pos = at + step;
                continue;
            }
            let close = self.next_close.find(text, self.close, inner_start);
            let newline = self.next_newline.find(text, "\n", inner_start);
            let matched = close
                .filter(|&c| next_open.is_none_or(|n| c < n) && newline.is_none_or(|nl| c < nl));
            match matched {
                Some(c) => {
                    let end = c + self.close.len();
                    let (kind, suggestion) = self.near_miss(&text[inner_start..c]);
                    self.push(kind, at, inner_start, c, end, suggestion);
                    pos = end;
                }
                None => {
                    self.push(
                        FindingKind::UnmatchedOpen,
                        at,
                        inner_start,
                        inner_start,
                        inner_start,
                        None,
                    );
                    pos = inner_start;
                }
            }
        }
        self.unmatched_closes();
    }

    fn push(
        &mut self,
        kind: FindingKind,
        start: usize,
        inner_start: usize,
        inner_end: usize,
        end: usize,
        suggestion: Option<String>,
    ) {
        self.covered.push(Span { start, end });
        self.findings.push(Finding {
            kind,
            span: Span { start, end },
            inner: Span {
                start: inner_start,
                end: inner_end,
            },
            line: 0,
            column: 0,
            suggestion,
        });
    }

    /// Reports the closing delimiters in the gaps between findings.
    fn unmatched_closes(&mut self) {
        let text = self.text;
        let mut gaps = Vec::with_capacity(self.covered.len() + 1);
        let mut gap_start = 0;
        for span in &self.covered {
            gaps.push((gap_start, span.start));
            gap_start = span.end;
        }
        gaps.push((gap_start, text.len()));
        for (start, end) in gaps {
            let gap = &text[start..end];
            for (i, _) in gap.match_indices(self.close) {
                let at = start + i;
                let end = at + self.close.len();
                self.findings.push(Finding {
                    kind: FindingKind::UnmatchedClose,
                    span: Span { start: at, end },
                    inner: Span { start: at, end: at },
                    line: 0,
                    column: 0,
                    suggestion: None,
                });
            }
        }
    }

    /// Classifies what stands between a pair of delimiters that is not a token.
    fn near_miss(&self, inner: &str) -> (FindingKind, Option<String>) {
        let suggest = |token: &str| Some(format!("{}{token}{}", self.open, self.close));
        let trimmed = inner.trim();
        if trimmed.is_empty() {
            return (FindingKind::OtherBraces, None);
        }
        if trimmed != inner
            && classify(trimmed)
                .map(token_kind)
                .is_some_and(FindingKind::is_token)
        {
            return (FindingKind::Spaced, suggest(trimmed));
        }
        if let Some(rest) = trimmed.strip_prefix("schema")
            && (rest.is_empty() || rest.starts_with([':', ' ', '\t']))
        {
            return (FindingKind::SchemaSyntax, suggest("schema:response"));
        }
        if let Some(rest) = trimmed.strip_prefix("snippet") {
            let name = rest.trim_start().strip_prefix(':').unwrap_or(rest).trim();
            let fix = is_snippet_name(name)
                .then(|| suggest(&format!("snippet:{name}")))
                .flatten();
            return (FindingKind::SnippetSyntax, fix);
        }
        if let Some(rest) = trimmed.strip_prefix('#') {
            let rest = rest.trim_start();
            if let Some(name) = rest
                .strip_prefix("if")
                .filter(|n| n.starts_with(char::is_whitespace))
            {
                let name = name.trim();
                if is_var_name(name) {
                    return (FindingKind::Spaced, suggest(&format!("#if {name}")));
                }
            }
            return (FindingKind::UnknownBlock, None);
        }
        if let Some(rest) = trimmed.strip_prefix('/') {
            if rest.trim() == "if" {
                return (FindingKind::Spaced, suggest("/if"));
            }
            return (FindingKind::UnknownBlock, None);
        }
        let first_word = trimmed.split_whitespace().next().unwrap_or("");
        if first_word == "else" {
            return (FindingKind::UnknownBlock, None);
        }
        let name_like = trimmed
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '$' | '@'));
        if name_like {
            return (FindingKind::InvalidName, None);
        }
        (FindingKind::OtherBraces, None)
    }
}

/// The token form `inner` is, as the parser classifies it; `None` when it
/// is no token.
fn token_kind(token: Token<'_>) -> FindingKind {
    match token {
        Token::Var(_) => FindingKind::Var,
        Token::Snippet(..) => FindingKind::Snippet,
        Token::BadSnippet(_) => FindingKind::InvalidSnippetPath,
        Token::BadSection(..) => FindingKind::InvalidSection,
        Token::If(_) => FindingKind::If,
        Token::ElseIf(_) => FindingKind::ElseIf,
        Token::BadCondition(..) => FindingKind::InvalidCondition,
        Token::Else => FindingKind::Else,
        Token::EndIf => FindingKind::EndIf,
        Token::OpenMessage(..) | Token::CloseMessage(_) | Token::BadMessage(_) => {
            FindingKind::RoleTag
        }
        Token::Schema => FindingKind::Schema,
        Token::BadSchema(_) => FindingKind::InvalidSchema,
    }
}

/// Turns increasing byte offsets into line and column, scanning the text once.
#[derive(Default)]
struct LineCounter {
    pos: usize,
    line: usize,
    column: usize,
}

impl LineCounter {
    fn advance(&mut self, text: &str, to: usize) -> (usize, usize) {
        if self.line == 0 {
            (self.line, self.column) = (1, 1);
        }
        let to = to.min(text.len());
        if to > self.pos {
            let piece = text.get(self.pos..to).unwrap_or("");
            match piece.rfind('\n') {
                Some(last) => {
                    self.line += piece.matches('\n').count();
                    self.column = piece[last + 1..].chars().count() + 1;
                }
                None => self.column += piece.chars().count(),
            }
            self.pos = to;
        }
        (self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(FindingKind, &str)> {
        find_tokens(text, &Delimiters::default())
            .iter()
            .map(|f| (f.kind, f.text(text)))
            .collect()
    }

    #[test]
    fn finds_every_token_form() {
        use FindingKind::*;
        let text = "{{a}} {{snippet:b-c}} {{#if d}}x{{else}}y{{/if}} {{snippet:e#über-f}}";
        assert_eq!(
            kinds(text),
            [
                (Var, "{{a}}"),
                (Snippet, "{{snippet:b-c}}"),
                (If, "{{#if d}}"),
                (Else, "{{else}}"),
                (EndIf, "{{/if}}"),
                (Snippet, "{{snippet:e#über-f}}")
            ]
        );
        let found = find_tokens(text, &Delimiters::default());
        let names: Vec<_> = found.iter().map(|f| f.name(text)).collect();
        assert_eq!(
            names,
            [Some("a"), Some("b-c"), Some("d"), None, None, Some("e")]
        );
    }

    #[test]
    fn classifies_near_misses() {
        use FindingKind::*;
        let cases = [
            ("{{ name }}", Spaced, Some("{{name}}")),
            ("{{#if  x}}", Spaced, Some("{{#if x}}")),
            ("{{# if x}}", Spaced, Some("{{#if x}}")),
            ("{{ /if }}", Spaced, Some("{{/if}}")),
            ("{{snippet: x}}", SnippetSyntax, Some("{{snippet:x}}")),
            ("{{snippet x}}", SnippetSyntax, Some("{{snippet:x}}")),
            ("{{snippet:}}", SnippetSyntax, None),
            ("{{schema:response}}", Schema, None),
            ("{{ schema:response }}", Spaced, Some("{{schema:response}}")),
            ("{{schema:response }}", InvalidSchema, None),
            ("{{schema:tools}}", InvalidSchema, None),
            ("{{schema: response}}", InvalidSchema, None),
            ("{{schema:respons}}", InvalidSchema, None),
            (
                "{{schema response}}",
                SchemaSyntax,
                Some("{{schema:response}}"),
            ),
            (
                "{{schema :response}}",
                SchemaSyntax,
                Some("{{schema:response}}"),
            ),
            (
                "{{ schema:tools }}",
                SchemaSyntax,
                Some("{{schema:response}}"),
            ),
            ("{{schema}}", Var, None),
            ("{{#each items}}", UnknownBlock, None),
            ("{{/each}}", UnknownBlock, None),
            ("{{#if}}", UnknownBlock, None),
            ("{{else if x}}", ElseIf, None),
            ("{{#if x == y}}", InvalidCondition, None),
            ("{{elif x}}", OtherBraces, None),
            ("{{next-agent}}", InvalidName, None),
            ("{{user.name}}", InvalidName, None),
            ("{{}}", OtherBraces, None),
            ("{{> partial}}", OtherBraces, None),
            ("{{snippet:../x}}", InvalidSnippetPath, None),
            ("{{snippet:x#Two Words}}", InvalidSection, None),
            ("{{snippet:x#}}", InvalidSection, None),
            ("{{é}}", InvalidName, None),
            ("{{#if a == \"é\"}}", UnknownBlock, None),
        ];
        for (text, kind, suggestion) in cases {
            let found = find_tokens(text, &Delimiters::default());
            assert_eq!(found.len(), 1, "{text}: {found:?}");
            assert_eq!(found[0].kind, kind, "{text}");
            assert_eq!(
                found[0].span,
                Span {
                    start: 0,
                    end: text.len()
                },
                "{text}"
            );
            assert_eq!(found[0].suggestion.as_deref(), suggestion, "{text}");
        }
    }

    #[test]
    fn unmatched_delimiters() {
        use FindingKind::*;
        assert_eq!(kinds("a {{ b"), [(UnmatchedOpen, "{{")]);
        assert_eq!(
            kinds("a {{ b\n}}"),
            [(UnmatchedOpen, "{{"), (UnmatchedClose, "}}")]
        );
        assert_eq!(
            kinds("{{ {{x}} }}"),
            [
                (UnmatchedOpen, "{{"),
                (Var, "{{x}}"),
                (UnmatchedClose, "}}")
            ]
        );
        assert_eq!(kinds(r#"{"a": {"b": 1}}"#), [(UnmatchedClose, "}}")]);
        assert_eq!(kinds("{{{x}}}"), [(Var, "{{x}}")]);
        assert_eq!(kinds("{{x}}}}"), [(Var, "{{x}}"), (UnmatchedClose, "}}")]);
        assert_eq!(kinds("{{{{"), [(UnmatchedOpen, "{{")]);
    }

    #[test]
    fn other_delimiters() {
        use FindingKind::*;
        let delims = Delimiters::new("<<", ">>").unwrap_or_default();
        let text = "<<a>> {{b}} << c >> <<#each x>>";
        let found: Vec<_> = find_tokens(text, &delims)
            .into_iter()
            .map(|f| (f.kind, f.suggestion))
            .collect();
        assert_eq!(
            found,
            [
                (Var, None),
                (Spaced, Some("<<c>>".to_string())),
                (UnknownBlock, None)
            ]
        );
    }

    #[test]
    fn lines_and_columns() {
        let text = "é {{a}}\r\n\nxx {{ b }} {{c}}";
        let found = find_tokens(text, &Delimiters::default());
        let at: Vec<_> = found.iter().map(|f| (f.line, f.column)).collect();
        assert_eq!(at, [(1, 3), (3, 4), (3, 12)]);
    }

    /// Texts made of one delimiter-like piece 100,000 times are scanned;
    /// quadratic work on them would never end, which the hang guard (not a
    /// measure: minutes where the scan takes milliseconds) turns into a
    /// failure. Their growth belongs in the bench.
    #[test]
    fn linear_on_many_delimiters() {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for piece in [
                "{{",
                "{{ ",
                "}}",
                "{{a",
                "{{ a }}",
                "{{{{}}",
                "{{\n",
                "{{snippet: ",
            ] {
                let text = piece.repeat(100_000);
                let found = find_tokens(&text, &Delimiters::default());
                let _ = sender.send((piece, found.len()));
            }
        });
        for _ in 0..8 {
            let (piece, found) = receiver
                .recv_timeout(std::time::Duration::from_secs(600))
                .expect("the scan of repeated delimiters ends");
            assert!(found > 0, "{piece:?}");
        }
    }
}
