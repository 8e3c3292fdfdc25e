//! The template language's surface: delimiters, names, and the scan that
//! turns a file's text into a flat list of items with spans.
//!
//! The scan mirrors the original loader's regular expressions: at every
//! position it tries each token form, and anything that is not exactly a
//! token stays literal text. Blocks are checked for balance here, per file.

use crate::error::{Diagnostic, Error, ErrorCode};
use crate::message::Role;
use crate::source_file::{SourceFile, Span};

/// The strings that open and close a token: `{{` and `}}` by default.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Delimiters {
    open: String,
    close: String,
}

impl Default for Delimiters {
    fn default() -> Self {
        Delimiters {
            open: "{{".to_string(),
            close: "}}".to_string(),
        }
    }
}

impl Delimiters {
    /// Delimiters such as `<<` and `>>`. Both must be non-empty and contain no
    /// whitespace or name characters, or tokens could not be told from text.
    pub fn new(open: &str, close: &str) -> Result<Delimiters, Error> {
        for (which, d) in [("open", open), ("close", close)] {
            let bad = d.is_empty() || d.chars().any(|c| c.is_whitespace() || is_token_char(c));
            if bad {
                return Err(Error::new(
                    ErrorCode::InvalidConfig,
                    format!(
                        "the {which} delimiter {d:?} must be non-empty and hold no whitespace, letters, digits or any of `_ : # / - . \\`"
                    ),
                ));
            }
        }
        Ok(Delimiters {
            open: open.to_string(),
            close: close.to_string(),
        })
    }

    /// The opening delimiter.
    pub fn open(&self) -> &str {
        &self.open
    }

    /// The closing delimiter.
    pub fn close(&self) -> &str {
        &self.close
    }

    /// A variable token as written in a template: `{{name}}`.
    pub fn var_token(&self, name: &str) -> String {
        format!("{}{name}{}", self.open, self.close)
    }
}

/// A name inside a token, with the span of the whole token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The name as written.
    pub name: String,
    /// The span of the whole token, delimiters included.
    pub span: Span,
}

/// A snippet include: `{{snippet:name}}`, or `{{snippet:name#heading}}`
/// for the section under one heading of the snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Include {
    /// The snippet, with the span of the whole token.
    pub name: Name,
    /// For a section include, the heading's slug or explicit id.
    pub section: Option<String>,
}

/// What an `{{#if}}` or `{{else if}}` tests: a variable's truthiness, or
/// whether its value is a given text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The variable, with the span of the whole token.
    pub name: Name,
    /// For `name == "value"`, the value.
    pub equals: Option<String>,
}

/// A role block's opening tag in `messages.md`: `{{#user}}`,
/// `{{#assistant}}`, `{{#system}}`, `{{#tool name}}` or `{{#call name}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageTag {
    /// Who speaks the message.
    pub role: Role,
    /// For a call or a tool result, the tool's name.
    pub name: Option<String>,
    /// The span of the whole tag.
    pub span: Span,
}

/// One piece of a parsed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// Literal text.
    Text(Span),
    /// `{{name}}`.
    Var(Name),
    /// `{{snippet:name}}` or `{{snippet:name#heading}}`.
    Snippet(Include),
    /// `{{#if name}}` or `{{#if name == "value"}}`.
    If(Condition),
    /// `{{else if name}}` or `{{else if name == "value"}}`: the `{{else}}`
    /// of the open block, holding a block of its own that the same
    /// `{{/if}}` closes.
    ElseIf(Condition),
    /// `{{else}}`.
    Else(Span),
    /// `{{/if}}`.
    EndIf(Span),
    /// A role block's opening tag (only in `messages.md`).
    OpenMessage(MessageTag),
    /// A role block's closing tag, `{{/user}}` (only in `messages.md`).
    CloseMessage(Role, Span),
    /// `{{schema:response}}`: the compact description of the prompt's
    /// declared `response` ([`Schema::describe`](crate::schema::Schema::describe)),
    /// spliced in as literal text when the prompt resolves (in a snippet,
    /// the response of the prompt that includes it). The span is the whole
    /// token's.
    Schema(Span),
}

/// A file's items in order. When parsing succeeded, every `If` has exactly one
/// `EndIf` after it, and at most one `Else` between them at its own depth.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// The items, in source order.
    pub items: Vec<Item>,
}

/// `[A-Za-z0-9_]`, the characters of variable and condition names.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Characters that may appear between the delimiters of some token form.
/// Letters beyond ASCII are for section names only (a heading's slug keeps
/// them); [`classify`] finds no other token that holds one.
pub(crate) fn is_token_char(c: char) -> bool {
    is_name_char(c)
        || matches!(c, ':' | '#' | '/' | ' ' | '-' | '.' | '\\' | '=' | '"')
        || (!c.is_ascii() && c.is_alphanumeric())
}

/// Characters of a compared value: `"teacher"`, `"gpt-4o"`, `"high school"`.
pub(crate) fn is_literal_char(c: char) -> bool {
    is_name_char(c) || matches!(c, ' ' | '-' | '.')
}

/// Whether `s` is a valid variable name: `[A-Za-z0-9_]+`.
pub fn is_var_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_name_char)
}

/// Whether `s` is a valid snippet name: `[A-Za-z0-9_][A-Za-z0-9_-]*`.
pub fn is_snippet_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(is_name_char) && chars.all(|c| is_name_char(c) || c == '-')
}

/// Whether `s` can name a section: what a heading's slug or explicit id
/// holds, letters (of any script), digits, `-` and `_`.
pub fn is_section_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
}

/// A token form, with the name it holds.
pub(crate) enum Token<'a> {
    Var(&'a str),
    /// The snippet and, for a section include, the section.
    Snippet(&'a str, Option<&'a str>),
    BadSnippet(&'a str),
    /// A valid snippet name with a `#` and something no heading is named
    /// by after it: the name and that something.
    BadSection(&'a str, &'a str),
    If(Test<'a>),
    ElseIf(Test<'a>),
    /// A condition that is neither a name nor `name == "value"`, with what
    /// is wrong with it, and whether it was an `#if` (which opens a block).
    BadCondition(&'static str, bool),
    Else,
    EndIf,
    /// `#user`, `#tool name`: a role block opens (read as such only in a
    /// conversation; literal text elsewhere, as it always was).
    OpenMessage(Role, Option<&'a str>),
    /// `/user`: a role block closes.
    CloseMessage(Role),
    /// A role's tag with something wrong with it (`#tool` without a name,
    /// `#user x`): what is wrong.
    BadMessage(&'static str),
    /// `schema:response`: the prompt's response schema, printed.
    Schema,
    /// `schema:` followed by anything but `response` (`schema:tools`,
    /// `schema: response`): what follows the colon.
    BadSchema(&'a str),
}

/// What follows `schema:` in the one schema token a prompt prints.
pub(crate) const SCHEMA_RESPONSE: &str = "response";

/// The schema token whose inside is `inner`, or `None` when it is none.
/// Only `schema:` exactly claims a token: no template of the original
/// loader held one, so whatever follows the colon is this language's, and a
/// mistake is an error rather than text passed through.
fn schema_token(inner: &str) -> Option<Token<'_>> {
    let target = inner.strip_prefix("schema:")?;
    Some(if target == SCHEMA_RESPONSE {
        Token::Schema
    } else {
        Token::BadSchema(target)
    })
}

/// The role tag whose inside is `inner` (`#user`, `#tool lookup`,
/// `/assistant`), or `None` when it is none.
fn message_token(inner: &str) -> Option<Token<'_>> {
    if let Some(role) = inner.strip_prefix('/').and_then(Role::from_name) {
        return Some(Token::CloseMessage(role));
    }
    let rest = inner.strip_prefix('#')?;
    let (head, name) = match rest.split_once(' ') {
        Some((head, name)) => (head, Some(name)),
        None => (rest, None),
    };
    let role = Role::from_name(head)?;
    Some(match (role.takes_name(), name) {
        (false, None) => Token::OpenMessage(role, None),
        (true, Some(name)) if is_var_name(name) => Token::OpenMessage(role, Some(name)),
        (true, Some(_)) => Token::BadMessage("a tool's name is letters, digits and `_`"),
        (true, None) if role == Role::Call => {
            Token::BadMessage("a call names the tool it calls: `#call name`")
        }
        (true, None) => Token::BadMessage("a tool result names its tool: `#tool name`"),
        (false, Some(_)) => Token::BadMessage("this role's tag takes nothing after the role"),
    })
}

/// The inside of a condition: a name, and the value it is compared with.
pub(crate) struct Test<'a> {
    pub(crate) name: &'a str,
    pub(crate) equals: Option<&'a str>,
}

/// Reads `name` or `name == "value"`. `Err(None)`: not meant as a
/// condition at all; `Err(Some(why))`: a malformed one.
fn test(text: &str) -> Result<Test<'_>, Option<&'static str>> {
    if is_var_name(text) {
        return Ok(Test {
            name: text,
            equals: None,
        });
    }
    let Some((name, value)) = text.split_once(" == ") else {
        return Err((text.contains('=') || text.contains('"'))
            .then_some("write `name == \"value\"`, with one space on each side of `==`"));
    };
    if !is_var_name(name) {
        return Err(Some("the left of `==` must be a variable name"));
    }
    let Some(inner) = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .filter(|v| !v.is_empty())
    else {
        return Err(Some("the value must be a non-empty text in double quotes"));
    };
    if !inner.chars().all(is_literal_char) {
        return Err(Some(
            "a compared value holds letters, digits, spaces, `_`, `-` and `.` only",
        ));
    }
    Ok(Test {
        name,
        equals: Some(inner),
    })
}

/// Recognises a token whose inside is `inner`, or `None` for literal text.
/// The one definition of the token forms: the parser and the scanner of
/// `check` and the survivor check both ask it.
pub(crate) fn classify(inner: &str) -> Option<Token<'_>> {
    // `else` is a keyword before it is a name.
    if inner == "else" {
        return Some(Token::Else);
    }
    if is_var_name(inner) {
        return Some(Token::Var(inner));
    }
    if let Some(target) = inner.strip_prefix("snippet:") {
        return snippet_token(target);
    }
    if let Some(token) = schema_token(inner) {
        return Some(token);
    }
    // Before sections no token held such a letter: any but a section
    // include that does stays text, as it was.
    if !inner.is_ascii() {
        return None;
    }
    if let Some(token) = message_token(inner) {
        return Some(token);
    }
    if let Some(rest) = inner.strip_prefix("#if ") {
        return match test(rest) {
            Ok(t) => Some(Token::If(t)),
            Err(why) => why.map(|why| Token::BadCondition(why, true)),
        };
    }
    if let Some(rest) = inner.strip_prefix("else if") {
        // A new form: the original loader had no `else if`, so a malformed
        // one is an error, never text passed through.
        return Some(match rest.strip_prefix(' ').map(test) {
            Some(Ok(t)) => Token::ElseIf(t),
            Some(Err(why)) => {
                Token::BadCondition(why.unwrap_or("`else if` needs a variable name"), false)
            }
            None => Token::BadCondition("`else if` needs a condition", false),
        });
    }
    (inner == "/if").then_some(Token::EndIf)
}

/// The snippet include whose target (what follows `snippet:`) is `target`.
fn snippet_token(target: &str) -> Option<Token<'_>> {
    let (name, section) = match target.split_once('#') {
        Some((name, section)) => (name, Some(section)),
        None => (target, None),
    };
    if is_snippet_name(name) {
        return Some(match section {
            Some(s) if !is_section_name(s) => Token::BadSection(name, s),
            _ => Token::Snippet(name, section),
        });
    }
    if !target.is_ascii() {
        return None;
    }
    // A name with path characters would reach outside the snippets folder;
    // that is never a typo to pass through silently.
    if target.contains(['/', '\\', '.']) && !target.contains(char::is_whitespace) {
        return Some(Token::BadSnippet(target));
    }
    None
}

/// A token found at an opening delimiter by [`token_at`].
pub(crate) struct TokenAt<'t> {
    /// Which token, with its name.
    pub(crate) token: Token<'t>,
    /// Where its inside ends (the closing delimiter starts there). Only
    /// the scanner, which reports a token's inside, reads it.
    #[cfg(feature = "scan")]
    pub(crate) inner_end: usize,
    /// Where it ends, closing delimiter included.
    pub(crate) end: usize,
}

/// The token whose opening delimiter starts at `at` in `text[..limit]`, or
/// `None` where the text is literal. The one recogniser of tokens in text:
/// the parser and the scanner of `check` and the survivor check both call
/// it.
///
/// Token insides only hold [`is_token_char`]s, which no delimiter holds, so
/// the run looked at stops before the next delimiter: calling this at every
/// delimiter of a text stays linear in the text.
pub(crate) fn token_at<'t>(
    text: &'t str,
    at: usize,
    limit: usize,
    delims: &Delimiters,
) -> Option<TokenAt<'t>> {
    let inner_start = at + delims.open().len();
    let inner_len = text[inner_start..limit]
        .find(|c: char| !is_token_char(c))
        .unwrap_or(limit - inner_start);
    let inner_end = inner_start + inner_len;
    if !text[inner_end..limit].starts_with(delims.close()) {
        return None;
    }
    let token = classify(&text[inner_start..inner_end])?;
    Some(TokenAt {
        token,
        #[cfg(feature = "scan")]
        inner_end,
        end: inner_end + delims.close().len(),
    })
}

/// Whether some token (by [`token_at`]) stands in `text`: text that holds
/// one cannot be printed back into a template as literal text.
#[cfg(feature = "load")]
pub(crate) fn holds_token(text: &str, delims: &Delimiters) -> bool {
    text.match_indices(delims.open())
        .any(|(at, _)| token_at(text, at, text.len(), delims).is_some())
}

/// Removes each line that holds a block tag (`{{#if …}}`, `{{else if …}}`,
/// `{{else}}`, `{{/if}}`) and nothing else but spaces and tabs, with its
/// newline, as Mustache does with standalone lines: the block structure
/// stays readable in the file and leaves no blank lines in the prompt. Only
/// the text items around such tags shrink; tokens keep their spans.
pub fn strip_standalone_tags(file: &SourceFile, parsed: &mut Parsed) {
    let text = file.text();
    let body = file.body_span();
    let items = &parsed.items;
    let is_blank = |s: &str| s.chars().all(|c| matches!(c, ' ' | '\t' | '\r'));
    // For each text item, how much to cut from its start and its end.
    let mut cut_start: Vec<usize> = items
        .iter()
        .map(|item| match item {
            Item::Text(span) => span.start,
            _ => 0,
        })
        .collect();
    let mut cut_end: Vec<usize> = items
        .iter()
        .map(|item| match item {
            Item::Text(span) => span.end,
            _ => 0,
        })
        .collect();
    for (i, item) in items.iter().enumerate() {
        let span = match item {
            Item::If(c) | Item::ElseIf(c) => c.name.span,
            Item::Else(span) | Item::EndIf(span) => *span,
            _ => continue,
        };
        let line_start = text[..span.start]
            .rfind('\n')
            .map_or(0, |n| n + 1)
            .max(body.start);
        let line_end = text[span.end..body.end]
            .find('\n')
            .map_or(body.end, |n| span.end + n);
        // Alone on its line: what lies before it on the line is the end of
        // one text item, what follows the start of another, both blank.
        let before_ok = match i.checked_sub(1).map(|p| (p, &items[p])) {
            None => line_start == span.start,
            Some((_, Item::Text(prev))) => {
                prev.start <= line_start && is_blank(&text[line_start..span.start])
            }
            Some(_) => false,
        };
        let after_ok = match items.get(i + 1).map(|next| (i + 1, next)) {
            None => span.end == line_end,
            Some((_, Item::Text(next))) => {
                next.end >= line_end && is_blank(&text[span.end..line_end])
            }
            Some(_) => false,
        };
        if !(before_ok && after_ok) {
            continue;
        }
        if i > 0 {
            cut_end[i - 1] = cut_end[i - 1].min(line_start);
        }
        if let Some(Item::Text(next)) = items.get(i + 1) {
            // The newline goes too, when there is one.
            let through = if line_end < body.end {
                line_end + 1
            } else {
                line_end
            };
            cut_start[i + 1] = cut_start[i + 1].max(through.min(next.end));
        }
    }
    let mut kept = Vec::with_capacity(items.len());
    for (i, item) in parsed.items.drain(..).enumerate() {
        match item {
            Item::Text(_) => {
                let (start, end) = (cut_start[i], cut_end[i]);
                if start < end {
                    kept.push(Item::Text(Span { start, end }));
                }
            }
            other => kept.push(other),
        }
    }
    parsed.items = kept;
}

/// `invalid_snippet_name` for `{{snippet:name#section}}` whose section is
/// no heading's slug or id: most likely the heading's text, whose slug the
/// help then offers.
fn bad_section(
    file: &SourceFile,
    span: Span,
    name: &str,
    section: &str,
    delims: &Delimiters,
) -> Diagnostic {
    let slug = crate::sections::slug(section);
    let help = if is_section_name(&slug) && slug != section {
        format!(
            "name the heading by its slug: `{}snippet:{name}#{slug}{}`",
            delims.open(),
            delims.close()
        )
    } else {
        "a section is named by its heading's slug (lowercase letters, digits, `-` and `_`) or its `{#id}`".to_string()
    };
    Diagnostic::new(
        ErrorCode::InvalidSnippetName,
        format!(
            "{}: section {section:?} is not a heading's slug or id",
            file.slice(span)
        ),
    )
    .at(file.location(span))
    .with_help(help)
}

/// `invalid_schema` for `{{schema:…}}` naming anything but `response`:
/// what it says, and the one token it may have meant.
fn bad_schema(file: &SourceFile, span: Span, target: &str, delims: &Delimiters) -> Diagnostic {
    let token = format!(
        "{}schema:{SCHEMA_RESPONSE}{}",
        delims.open(),
        delims.close()
    );
    let trimmed = target.trim();
    let why = if trimmed == SCHEMA_RESPONSE {
        "no spaces inside the token".to_string()
    } else if trimmed == "tools" || trimmed == "tool" {
        "a prompt's tools are sent to the model with the request, not printed into its text"
            .to_string()
    } else if trimmed.is_empty() {
        "it names no schema".to_string()
    } else {
        format!("`{trimmed}` is no schema a prompt prints")
    };
    Diagnostic::new(
        ErrorCode::InvalidSchema,
        format!("{} is not a schema token: {why}", file.slice(span)),
    )
    .at(file.location(span))
    .with_help(format!(
        "write `{token}`, which prints the shape of the answer the prompt's front matter declares under `response:`"
    ))
}

/// Parses the trimmed body of `file` into items, checking that blocks balance.
/// Every problem found is returned; on any, the items are not to be used.
/// Role tags (`{{#user}}`) are literal text here, as they always were: only
/// a conversation reads them ([`parse_conversation`]).
pub fn parse(file: &SourceFile, delims: &Delimiters) -> Result<Parsed, Vec<Diagnostic>> {
    parse_in(file, delims, false)
}

/// Parses a conversation, `messages.md`: as [`parse`], and its role blocks
/// too, each tag's own line going with it (the newline after an opening
/// tag and the one before a closing tag), so that a message's content is
/// the lines between. Whether the blocks make whole messages is for the
/// resolver, which sees snippets and conditions too.
pub fn parse_conversation(
    file: &SourceFile,
    delims: &Delimiters,
) -> Result<Parsed, Vec<Diagnostic>> {
    let mut parsed = parse_in(file, delims, true)?;
    trim_message_tags(file, &mut parsed);
    Ok(parsed)
}

/// Cuts the newline that ends an opening role tag's line and the one that
/// ends the line before a closing tag (with that line's trailing spaces):
/// a message holds the lines between its tags, exactly.
fn trim_message_tags(file: &SourceFile, parsed: &mut Parsed) {
    let text = file.text();
    let mut items = std::mem::take(&mut parsed.items);
    for i in 0..items.len() {
        let after_open = i > 0 && matches!(items[i - 1], Item::OpenMessage(_));
        let before_close = matches!(items.get(i + 1), Some(Item::CloseMessage(..)));
        let Item::Text(span) = &mut items[i] else {
            continue;
        };
        if after_open {
            let line = &text[span.start..span.end];
            let blank = line.len() - line.trim_start_matches([' ', '\t']).len();
            let rest = &line[blank..];
            if let Some(newline) = ["\r\n", "\n"].iter().find(|n| rest.starts_with(**n)) {
                span.start += blank + newline.len();
            }
        }
        if before_close {
            let line = &text[span.start..span.end];
            let kept = line.trim_end_matches([' ', '\t']);
            if let Some(cut) = kept.strip_suffix('\n') {
                span.end = span.start + cut.strip_suffix('\r').unwrap_or(cut).len();
            }
        }
    }
    items.retain(|item| !matches!(item, Item::Text(span) if span.start >= span.end));
    parsed.items = items;
}

fn parse_in(
    file: &SourceFile,
    delims: &Delimiters,
    conversation: bool,
) -> Result<Parsed, Vec<Diagnostic>> {
    let text = file.text();
    let body = file.body_span();
    let (open, close) = (delims.open(), delims.close());
    let mut items = Vec::new();
    let mut errors = Vec::new();
    // Open blocks: the `#if` token and whether an else was seen.
    let mut open_blocks: Vec<(Span, bool)> = Vec::new();
    let mut text_start = body.start;
    let mut pos = body.start;

    while let Some(found) = text[pos..body.end].find(open) {
        let at = pos + found;
        let found = token_at(text, at, body.end, delims).filter(|t| {
            conversation
                || !matches!(
                    t.token,
                    Token::OpenMessage(..) | Token::CloseMessage(_) | Token::BadMessage(_)
                )
        });
        let Some(TokenAt { token, end, .. }) = found else {
            // Not a token here; a token may still start inside the delimiter
            // (`{{{x}}}`), so move on by one character only.
            pos = at + text[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        if text_start < at {
            items.push(Item::Text(Span {
                start: text_start,
                end: at,
            }));
        }
        let span = Span { start: at, end };
        let name = |n: &str| Name {
            name: n.to_string(),
            span,
        };
        match token {
            Token::Var(n) => items.push(Item::Var(name(n))),
            Token::Snippet(n, section) => items.push(Item::Snippet(Include {
                name: name(n),
                section: section.map(str::to_string),
            })),
            Token::BadSection(n, section) => {
                errors.push(bad_section(file, span, n, section, delims));
            }
            Token::BadSnippet(n) => errors.push(
                Diagnostic::new(
                    ErrorCode::InvalidSnippetName,
                    format!(
                        "snippet name {n:?} is not a plain name and would leave the snippets folder"
                    ),
                )
                .at(file.location(span))
                .with_help("snippet names are `[A-Za-z0-9_][A-Za-z0-9_-]*`"),
            ),
            Token::If(t) => {
                open_blocks.push((span, false));
                items.push(Item::If(Condition {
                    name: name(t.name),
                    equals: t.equals.map(str::to_string),
                }));
            }
            Token::ElseIf(t) => match open_blocks.last() {
                Some((_, false)) => items.push(Item::ElseIf(Condition {
                    name: name(t.name),
                    equals: t.equals.map(str::to_string),
                })),
                Some((_, true)) => errors.push(
                    Diagnostic::new(
                        ErrorCode::StrayElse,
                        format!(
                            "`{open}else if …{close}` after the `{open}else{close}` of its block"
                        ),
                    )
                    .at(file.location(span)),
                ),
                None => errors.push(
                    Diagnostic::new(
                        ErrorCode::StrayElse,
                        format!("`{open}else if …{close}` outside any `{open}#if …{close}` block"),
                    )
                    .at(file.location(span)),
                ),
            },
            Token::BadCondition(why, opens_block) => {
                errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidCondition,
                        format!("{} is not a condition promptpack reads", file.slice(span)),
                    )
                    .at(file.location(span))
                    .with_help(why),
                );
                // Its `{{/if}}` is no stray: one error, not two.
                if opens_block {
                    open_blocks.push((span, false));
                }
            }
            Token::Else => match open_blocks.last_mut() {
                Some((_, seen_else @ false)) => {
                    *seen_else = true;
                    items.push(Item::Else(span));
                }
                Some((_, true)) => errors.push(
                    Diagnostic::new(
                        ErrorCode::StrayElse,
                        format!(
                            "a second `{open}else{close}` in the same `{open}#if{close}` block"
                        ),
                    )
                    .at(file.location(span)),
                ),
                None => errors.push(
                    Diagnostic::new(
                        ErrorCode::StrayElse,
                        format!("`{open}else{close}` outside any `{open}#if …{close}` block"),
                    )
                    .at(file.location(span)),
                ),
            },
            Token::OpenMessage(role, tool) => items.push(Item::OpenMessage(MessageTag {
                role,
                name: tool.map(str::to_string),
                span,
            })),
            Token::CloseMessage(role) => items.push(Item::CloseMessage(role, span)),
            Token::BadMessage(why) => errors.push(
                Diagnostic::new(
                    ErrorCode::InvalidMessage,
                    format!("{} is not a role tag promptpack reads", file.slice(span)),
                )
                .at(file.location(span))
                .with_help(why),
            ),
            Token::Schema => items.push(Item::Schema(span)),
            Token::BadSchema(target) => errors.push(bad_schema(file, span, target, delims)),
            Token::EndIf => {
                if open_blocks.pop().is_some() {
                    items.push(Item::EndIf(span));
                } else {
                    errors.push(
                        Diagnostic::new(
                            ErrorCode::StrayClose,
                            format!("`{open}/if{close}` without an open `{open}#if …{close}`"),
                        )
                        .at(file.location(span)),
                    );
                }
            }
        }
        text_start = end;
        pos = end;
    }
    if text_start < body.end {
        items.push(Item::Text(Span {
            start: text_start,
            end: body.end,
        }));
    }
    for (span, _) in open_blocks {
        errors.push(
            Diagnostic::new(
                ErrorCode::UnclosedBlock,
                format!("{} is never closed", file.slice(span)),
            )
            .at(file.location(span))
            .with_help(format!("add `{open}/if{close}` in the same file")),
        );
    }
    if errors.is_empty() {
        Ok(Parsed { items })
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str, delims: &Delimiters) -> Result<Vec<Item>, Vec<Diagnostic>> {
        parse(&SourceFile::new("templates/t/system.md", text), delims).map(|p| p.items)
    }

    #[test]
    fn the_schema_token_is_an_item_of_its_own() {
        let parsed = items("A {{schema:response}} B", &Delimiters::default());
        assert_eq!(
            parsed,
            Ok(vec![
                Item::Text(Span { start: 0, end: 2 }),
                Item::Schema(Span { start: 2, end: 21 }),
                Item::Text(Span { start: 21, end: 23 }),
            ])
        );
        let angle = Delimiters::new("<<", ">>").unwrap_or_default();
        let parsed = items("<<schema:response>> {{schema:response}}", &angle);
        assert_eq!(
            parsed,
            Ok(vec![
                Item::Schema(Span { start: 0, end: 19 }),
                Item::Text(Span { start: 19, end: 39 }),
            ])
        );
    }

    #[test]
    fn schema_followed_by_anything_else_is_an_error_that_names_the_token() {
        for (text, why) in [
            ("{{schema:tools}}", "sent to the model with the request"),
            ("{{schema: response}}", "no spaces inside the token"),
            ("{{schema:response }}", "no spaces inside the token"),
            ("{{schema:respons}}", "`respons` is no schema"),
            ("{{schema:}}", "it names no schema"),
            ("{{schema:response#x}}", "`response#x` is no schema"),
        ] {
            let errors = items(text, &Delimiters::default()).expect_err(text);
            assert_eq!(errors.len(), 1, "{text}: {errors:?}");
            let error = &errors[0];
            assert_eq!(error.code, ErrorCode::InvalidSchema, "{text}");
            assert!(error.message.starts_with(text), "{text}: {}", error.message);
            assert!(error.message.contains(why), "{text}: {}", error.message);
            assert!(
                error
                    .help
                    .as_deref()
                    .is_some_and(|h| h.contains("`{{schema:response}}`")),
                "{text}: {:?}",
                error.help
            );
        }
        let angle = Delimiters::new("<<", ">>").unwrap_or_default();
        let errors = items("<<schema:tools>>", &angle).expect_err("an error");
        assert!(
            errors[0]
                .help
                .as_deref()
                .is_some_and(|h| h.contains("`<<schema:response>>`")),
            "{errors:?}"
        );
    }

    #[test]
    fn only_the_exact_schema_prefix_is_claimed() {
        // Spaced, capitalised or colon-less forms stay literal text, as
        // every unknown token always was (the scanner warns of them).
        for text in [
            "{{ schema:response }}",
            "{{Schema:response}}",
            "{{schema response}}",
            "{{schema :response}}",
        ] {
            let parsed = items(text, &Delimiters::default()).expect(text);
            assert_eq!(
                parsed,
                vec![Item::Text(Span {
                    start: 0,
                    end: text.len()
                })],
                "{text}"
            );
        }
        // `schema` alone is a variable's name, as it always was.
        let parsed = items("{{schema}}", &Delimiters::default()).expect("a variable");
        assert!(matches!(&parsed[..], [Item::Var(n)] if n.name == "schema"));
    }

    #[test]
    fn a_described_schema_holds_a_token_only_when_a_delimiter_opens_one() {
        let d = Delimiters::default();
        assert!(!holds_token("{\n  \"a\": {}\n}", &d));
        assert!(holds_token("{\n  \"a\": string // use {{name}}\n}", &d));
        let single = Delimiters::new("{", "}").unwrap_or_default();
        assert!(!holds_token(
            "{\n  \"a\": {\n    \"b\": string\n  }\n}",
            &single
        ));
        assert!(holds_token("\"a\": string // {x}", &single));
    }
}
