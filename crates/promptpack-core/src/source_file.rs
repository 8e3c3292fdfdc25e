//! One prompt file held in memory: its path, its original text and the part
//! that remains after JavaScript-style trimming. Maps byte offsets back to
//! line and column of the original text.
//!
//! The text is shared (an `Arc`) by the file and every [`Location`] made in
//! it: a location is a span, and its line, column and line text are worked
//! out when asked, from an index built once per file. So a file with many
//! tokens on one long line costs its text once, not once per token.

use crate::error::Location;
#[cfg(feature = "load")]
use crate::error::{Diagnostic, ErrorCode};
use std::sync::{Arc, OnceLock};

/// Byte range of a piece of a [`SourceFile`], as offsets into its original text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A template or snippet file: where it came from and what it says.
///
/// The text is kept as read; [`SourceFile::body`] is the trimmed part that
/// templates are made of, and spans always index the original text so that
/// line and column match what an editor shows. Cloning a file, or making a
/// [`Location`] in it, shares the text rather than copying it.
#[derive(Clone)]
pub struct SourceFile {
    shared: Arc<Shared>,
    body_start: usize,
    body_end: usize,
    /// The YAML between the `---` lines of a front matter block.
    front_matter: Option<Span>,
}

/// What a file and the locations in it share.
pub(crate) struct Shared {
    path: Box<str>,
    text: Box<str>,
    /// Made on the first line or column asked for, so that a file no
    /// diagnostic points into never pays for it.
    index: OnceLock<LineIndex>,
}

/// Where lines start and how many characters precede a byte, so that line,
/// column and line text of any offset take a binary search and a short
/// count, not a walk from the start of the line.
struct LineIndex {
    /// Byte offsets of the line starts; the first is 0.
    line_starts: Vec<usize>,
    /// Characters before each [`BLOCK`]-byte block, and in the whole text;
    /// empty when the text is ASCII, where a byte is a character.
    chars_before: Vec<usize>,
    /// The rare lines (by index) that start with byte order marks or end in
    /// more than one CR: the bytes of the marks and of the CRs. Other lines
    /// have no mark and at most the one CR of a CRLF ending.
    odd_lines: Vec<(usize, usize, usize)>,
}

/// Bytes per block of [`LineIndex::chars_before`]: counting within a block
/// is bounded by it, and the table costs a word per block.
const BLOCK: usize = 256;

const BOM: &str = "\u{FEFF}";

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let chars_before = if text.is_ascii() {
            Vec::new()
        } else {
            // One entry more than there are blocks: the end of a text whose
            // length is a multiple of the block starts a block of its own.
            let mut before = 0;
            let mut table = Vec::with_capacity(text.len() / BLOCK + 1);
            for block in text.as_bytes().chunks(BLOCK) {
                table.push(before);
                before += char_starts(block);
            }
            table.push(before);
            table
        };
        let mut odd_lines = Vec::new();
        for (index, &start) in line_starts.iter().enumerate() {
            let end = line_starts.get(index + 1).map_or(text.len(), |&n| n - 1);
            let line = &text[start..end];
            let marks = line.len() - line.trim_start_matches(BOM).len();
            let crs = line.len() - line.trim_end_matches('\r').len();
            if marks > 0 || crs > 1 {
                odd_lines.push((index, marks, crs));
            }
        }
        LineIndex {
            line_starts,
            chars_before,
            odd_lines,
        }
    }

    /// Characters in `text[..at]`.
    fn chars_upto(&self, text: &str, at: usize) -> usize {
        if self.chars_before.is_empty() {
            return at;
        }
        let block = at / BLOCK;
        self.chars_before[block] + char_starts(&text.as_bytes()[block * BLOCK..at])
    }

    /// The 0-based line of byte `at`.
    fn line_of(&self, at: usize) -> usize {
        self.line_starts
            .partition_point(|&s| s <= at)
            .saturating_sub(1)
    }

    /// The byte range of line `index` without its line ending, and the
    /// byte order marks at its start and the CRs at its end.
    fn line(&self, text: &str, index: usize) -> (usize, usize, usize, usize) {
        let start = self.line_starts[index];
        let end = self
            .line_starts
            .get(index + 1)
            .map_or(text.len(), |&next| next - 1);
        let (marks, crs) = match self.odd_lines.binary_search_by_key(&index, |o| o.0) {
            Ok(i) => (self.odd_lines[i].1, self.odd_lines[i].2),
            Err(_) => (0, usize::from(text[start..end].ends_with('\r'))),
        };
        (start, end, marks, crs)
    }
}

/// The characters that start in `bytes`: every byte but UTF-8 continuation
/// bytes, so that a block boundary inside a character does no harm.
fn char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// A span of a file, placed: what a [`Location`] computes its line, column
/// and line text from.
#[derive(Clone)]
pub(crate) struct Placed {
    pub(crate) file: Arc<Shared>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A span's line, column and line, as [`Placed::resolve`] finds them.
pub(crate) struct Resolved<'a> {
    /// 1-based.
    pub(crate) line: usize,
    /// 1-based, in characters, byte order marks at the line start not counted.
    pub(crate) column: usize,
    /// In characters, at least 1.
    pub(crate) len: usize,
    /// The line without leading byte order marks and trailing CRs.
    pub(crate) line_text: &'a str,
    /// The span's bytes within `line_text`, clamped to it.
    pub(crate) in_line: std::ops::Range<usize>,
}

impl Placed {
    /// The file's path.
    pub(crate) fn path(&self) -> &str {
        &self.file.path
    }

    /// Line, column, length and line text: a binary search and counts
    /// bounded by [`BLOCK`] and the span, whatever the line's length.
    pub(crate) fn resolve(&self) -> Resolved<'_> {
        let text: &str = &self.file.text;
        let index = self.file.index.get_or_init(|| LineIndex::new(text));
        let start = self.start.min(text.len());
        let line = index.line_of(start);
        let (line_start, line_end, marks, crs) = index.line(text, line);
        // Editors do not show a byte order mark, so it takes no column.
        let counted_from = (line_start + marks).min(start);
        let column = index.chars_upto(text, start) - index.chars_upto(text, counted_from) + 1;
        let end = self.end.clamp(start, line_end);
        let len = (index.chars_upto(text, end) - index.chars_upto(text, start)).max(1);
        let shown_start = (line_start + marks).min(line_end);
        let shown_end = (line_end - crs).max(shown_start);
        let line_text = &text[shown_start..shown_end];
        let in_start = start.clamp(shown_start, shown_end) - shown_start;
        let in_end = end.clamp(shown_start, shown_end) - shown_start;
        Resolved {
            line: line + 1,
            column,
            len,
            line_text,
            in_line: in_start..in_end.max(in_start),
        }
    }
}

impl PartialEq for SourceFile {
    fn eq(&self, other: &Self) -> bool {
        // The line index is a cache: it follows from the text.
        self.path() == other.path()
            && self.text() == other.text()
            && self.body_span() == other.body_span()
    }
}

impl Eq for SourceFile {}

impl std::fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFile")
            .field("path", &self.path())
            .field("text", &self.text())
            .field("body_start", &self.body_start)
            .field("body_end", &self.body_end)
            .finish()
    }
}

impl SourceFile {
    /// A file named `path` (used in diagnostics) with the given contents.
    ///
    /// A file whose first line is `---` and which has a front matter block
    /// there (as pulldown-cmark's metadata-block option finds it) has that
    /// block removed before the trim: the body is what follows its closing
    /// line, and [`SourceFile::front_matter`] is the YAML between.
    #[cfg(feature = "load")]
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        match front_matter_block(&text) {
            Some((yaml, block_end)) => SourceFile::after_block(path, text, Some(yaml), block_end),
            None => SourceFile::after_block(path, text, None, 0),
        }
    }

    /// A text that is not a prompt file (a model's answer, a tool call's
    /// arguments), named `path` in diagnostics: no front matter block is
    /// looked for, so that it needs no Markdown parser and is there without
    /// the `load` feature (the runtime of a typed app, which reads answers
    /// but loads no template). Its body is the whole text, trimmed.
    pub fn plain(path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile::after_block(path, text.into(), None, 0)
    }

    /// `text` whose body starts after byte `after_block` (the end of its
    /// front matter block, `front_matter`, when it has one), trimmed.
    fn after_block(
        path: impl Into<String>,
        text: String,
        front_matter: Option<Span>,
        after_block: usize,
    ) -> SourceFile {
        let rest = &text[after_block..];
        let trimmed_start = rest.trim_start_matches(is_js_whitespace);
        let body_start = text.len() - trimmed_start.len();
        let body_end = body_start + trimmed_start.trim_end_matches(is_js_whitespace).len();
        SourceFile {
            shared: Arc::new(Shared {
                path: path.into().into_boxed_str(),
                text: text.into_boxed_str(),
                index: OnceLock::new(),
            }),
            body_start,
            body_end,
            front_matter,
        }
    }

    /// The span of the YAML of the file's front matter block (between the
    /// `---` lines), when it has one.
    pub fn front_matter(&self) -> Option<Span> {
        self.front_matter
    }

    /// This file with its body narrowed to `span` (a part of the body, such
    /// as one section of a snippet), trimmed as the whole body is. Shares
    /// the text: locations in the narrowed file are those of the whole.
    pub fn with_body(&self, span: Span) -> SourceFile {
        let start = span.start.clamp(self.body_start, self.body_end);
        let end = span.end.clamp(start, self.body_end);
        let piece = &self.text()[start..end];
        let trimmed_start = piece.trim_start_matches(is_js_whitespace);
        let body_start = end - trimmed_start.len();
        let body_end = body_start + trimmed_start.trim_end_matches(is_js_whitespace).len();
        SourceFile {
            shared: Arc::clone(&self.shared),
            body_start,
            body_end,
            front_matter: self.front_matter,
        }
    }

    /// The path given at construction.
    pub fn path(&self) -> &str {
        &self.shared.path
    }

    /// The whole text, untrimmed.
    pub fn text(&self) -> &str {
        &self.shared.text
    }

    /// The text trimmed as JavaScript's `String.prototype.trim` does.
    pub fn body(&self) -> &str {
        &self.text()[self.body_start..self.body_end]
    }

    /// The span of [`SourceFile::body`] within the text.
    pub fn body_span(&self) -> Span {
        Span {
            start: self.body_start,
            end: self.body_end,
        }
    }

    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        &self.text()[span.start..span.end]
    }

    /// The place of a span, for diagnostics: it shares this file's text,
    /// and works out line, column and line text when asked.
    pub fn location(&self, span: Span) -> Location {
        Location::placed(Placed {
            file: Arc::clone(&self.shared),
            start: span.start,
            end: span.end,
        })
    }
}

/// `invalid_utf8` for `bytes`, read from `path`, which are UTF-8 only up to
/// `valid_up_to`: the offset of the first bad byte, its line and column (the
/// valid prefix locates it), and how to fix it; `what` names the file in the
/// help (`the file`, `the values file`). The one such diagnostic for prompt
/// files and values files alike.
#[cfg(feature = "load")]
pub fn invalid_utf8(path: &str, bytes: &[u8], valid_up_to: usize, what: &str) -> Diagnostic {
    let valid = valid_up_to.min(bytes.len());
    let prefix = String::from_utf8_lossy(&bytes[..valid]).into_owned();
    // One caret: an empty span is shown one character wide.
    let location = SourceFile::new(path, prefix).location(Span {
        start: valid,
        end: valid,
    });
    let byte = bytes.get(valid).copied().unwrap_or_default();
    let help = if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        // Windows tools' "Unicode" is UTF-16, marked so: say what it is.
        "the file is UTF-16 (it starts with a UTF-16 byte order mark): save it as UTF-8".to_string()
    } else {
        format!("save {what} as UTF-8")
    };
    Diagnostic::new(
        ErrorCode::InvalidUtf8,
        format!("{path} is not valid UTF-8 (byte 0x{byte:02x} at offset {valid})"),
    )
    .at(location)
    .with_help(help)
}

/// The front matter block at the start of `text`, as pulldown-cmark finds
/// it: the span of its YAML, and where the block (closing line included)
/// ends. Only a first line of `---` can start one, so other files never pay
/// for the Markdown parser.
#[cfg(feature = "load")]
fn front_matter_block(text: &str) -> Option<(Span, usize)> {
    // A file saved with a byte order mark (it is trimmed away like
    // whitespace) may still start with a block after it.
    let bom = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let (yaml, end) = block_at_start(&text[bom..])?;
    let yaml = Span {
        start: yaml.start + bom,
        end: yaml.end + bom,
    };
    Some((yaml, end + bom))
}

/// [`front_matter_block`] of a text that starts where the block would.
#[cfg(feature = "load")]
fn block_at_start(text: &str) -> Option<(Span, usize)> {
    use pulldown_cmark::{Event, MetadataBlockKind, Options, Parser, Tag, TagEnd};
    let first_line = text.split_inclusive('\n').next()?;
    if first_line.trim_end_matches(['\n', '\r', ' ', '\t']) != "---" {
        return None;
    }
    // A block ends at its first closing line, so the parser needs the text
    // up to that line only: a long prompt after it is not parsed twice.
    let mut candidate_end = text.len();
    let mut at = first_line.len();
    for line in text[at..].split_inclusive('\n') {
        at += line.len();
        let bare = line.trim_end_matches(['\n', '\r', ' ', '\t']);
        if bare == "---" || bare == "..." {
            candidate_end = at;
            break;
        }
    }
    let head = &text[..candidate_end];
    let mut events =
        Parser::new_ext(head, Options::ENABLE_YAML_STYLE_METADATA_BLOCKS).into_offset_iter();
    let (Event::Start(Tag::MetadataBlock(MetadataBlockKind::YamlStyle)), block) = events.next()?
    else {
        return None;
    };
    if block.start != 0 {
        return None;
    }
    let mut yaml: Option<Span> = None;
    for (event, range) in events {
        match event {
            Event::Text(_) => {
                let span = yaml.get_or_insert(Span {
                    start: range.start,
                    end: range.end,
                });
                span.end = span.end.max(range.end);
            }
            Event::End(TagEnd::MetadataBlock(_)) => break,
            _ => {}
        }
    }
    let yaml = yaml.unwrap_or(Span {
        start: first_line.len(),
        end: first_line.len(),
    });
    Some((yaml, block.end.min(head.len())))
}

/// The characters JavaScript's `trim()` removes: its WhiteSpace and
/// LineTerminator sets. Unlike Rust's `char::is_whitespace` this includes the
/// byte order mark U+FEFF and excludes U+0085.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_like_javascript() {
        let f = SourceFile::new("a.md", "\u{FEFF}\u{3000} body \u{85}\n\r\t");
        assert_eq!(f.body(), "body \u{85}");
    }

    #[test]
    fn locates_in_original_text() {
        let f = SourceFile::new("a.md", "\n\n  ab\r\n  {{x}}\n");
        let at = f.text().find("{{x}}").unwrap();
        let loc = f.location(Span {
            start: at,
            end: at + 5,
        });
        assert_eq!((loc.line(), loc.column(), loc.len()), (4, 3, 5));
        assert_eq!(loc.line_text(), "  {{x}}");
    }

    /// Line, column, length and line text as a walk from the line start
    /// finds them: what the index must agree with.
    fn walked(text: &str, span: Span) -> (usize, usize, usize, String) {
        let start = span.start.min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start]
            .trim_start_matches('\u{FEFF}')
            .chars()
            .count()
            + 1;
        let end = span.end.clamp(start, line_end);
        let len = text[start..end].chars().count().max(1);
        let line_text = text[line_start..line_end]
            .trim_start_matches('\u{FEFF}')
            .trim_end_matches('\r');
        (line, column, len, line_text.to_string())
    }

    proptest::proptest! {
        #[test]
        fn the_index_agrees_with_a_walk(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("\n".to_string()),
                    proptest::strategy::Just("\r".to_string()),
                    proptest::strategy::Just("\u{FEFF}".to_string()),
                    proptest::strategy::Just("é".to_string()),
                    proptest::strategy::Just("日本".to_string()),
                    "[a-z{} ]{0,300}",
                ],
                0..40,
            ),
            a in 0usize..5000,
            b in 0usize..5000,
        ) {
            let text: String = pieces.concat();
            let at = |i: usize| {
                let mut i = i.min(text.len());
                while !text.is_char_boundary(i) {
                    i -= 1;
                }
                i
            };
            let span = Span { start: at(a.min(b)), end: at(a.max(b)) };
            let file = SourceFile::new("a.md", text.as_str());
            let loc = file.location(span);
            let found = (loc.line(), loc.column(), loc.len(), loc.line_text().to_string());
            proptest::prop_assert_eq!(found, walked(&text, span));
        }
    }

    /// Every location in a file shares its text: a long line with many
    /// tokens is held once, not once per token, and a location's size does
    /// not grow with the line.
    #[test]
    fn locations_share_the_text() {
        let line: String = (0..20_000).map(|i| format!("{{{{v{i}}}}} é ")).collect();
        let file = SourceFile::new("a.md", format!("intro\n{line}\n"));
        let locations: Vec<Location> = file
            .text()
            .match_indices("{{")
            .map(|(at, _)| {
                file.location(Span {
                    start: at,
                    end: at + 2,
                })
            })
            .collect();
        assert_eq!(Arc::strong_count(&file.shared), 1 + locations.len());
        assert!(std::mem::size_of::<Location>() <= 4 * std::mem::size_of::<usize>());
        let text = file.text().as_bytes().as_ptr_range();
        for loc in [&locations[0], &locations[19_999]] {
            assert!(
                text.contains(&loc.line_text().as_ptr()),
                "a copy of the line"
            );
        }
        let last = &locations[19_999];
        let column = line.rfind("{{").map(|i| line[..i].chars().count() + 1);
        assert_eq!((last.line(), Some(last.column())), (2, column));
    }
}
