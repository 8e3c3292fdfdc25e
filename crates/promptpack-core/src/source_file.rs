//! One prompt file held in memory: its path, its original text and the part
//! that remains after JavaScript-style trimming. Maps byte offsets back to
//! line and column of the original text.

use crate::error::Location;
use std::sync::OnceLock;

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
/// line and column match what an editor shows.
#[derive(Clone)]
pub struct SourceFile {
    path: String,
    text: String,
    body_start: usize,
    body_end: usize,
    /// Byte offsets of the line starts, made on the first [`SourceFile::location`]
    /// call, so that locating many tokens of a big file stays linear.
    line_starts: OnceLock<Vec<usize>>,
}

impl PartialEq for SourceFile {
    fn eq(&self, other: &Self) -> bool {
        // The line index is a cache: it follows from the text.
        self.path == other.path && self.text == other.text
    }
}

impl Eq for SourceFile {}

impl std::fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFile")
            .field("path", &self.path)
            .field("text", &self.text)
            .field("body_start", &self.body_start)
            .field("body_end", &self.body_end)
            .finish()
    }
}

impl SourceFile {
    /// A file named `path` (used in diagnostics) with the given contents.
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let trimmed_start = text.trim_start_matches(is_js_whitespace);
        let body_start = text.len() - trimmed_start.len();
        let body_end = body_start + trimmed_start.trim_end_matches(is_js_whitespace).len();
        SourceFile {
            path: path.into(),
            text,
            body_start,
            body_end,
            line_starts: OnceLock::new(),
        }
    }

    /// The path given at construction.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The whole text, untrimmed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text trimmed as JavaScript's `String.prototype.trim` does.
    pub fn body(&self) -> &str {
        &self.text[self.body_start..self.body_end]
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
        &self.text[span.start..span.end]
    }

    /// Line, column and line text of a span, for diagnostics.
    pub fn location(&self, span: Span) -> Location {
        let start = span.start.min(self.text.len());
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        // The last line start at or before `start`; the first is 0.
        let index = starts.partition_point(|&s| s <= start).saturating_sub(1);
        let line_start = starts[index];
        let line_end = starts
            .get(index + 1)
            .map_or(self.text.len(), |&next| next - 1);
        let line = index + 1;
        // Editors do not show a byte order mark, so it takes no column.
        let before = self.text[line_start..start].trim_start_matches('\u{FEFF}');
        let column = before.chars().count() + 1;
        let end = span.end.clamp(start, line_end);
        let len = self.text[start..end].chars().count().max(1);
        let line_text = self.text[line_start..line_end]
            .trim_start_matches('\u{FEFF}')
            .trim_end_matches('\r')
            .to_string();
        Location {
            path: self.path.clone(),
            line,
            column,
            len,
            line_text,
        }
    }
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
        assert_eq!((loc.line, loc.column, loc.len), (4, 3, 5));
        assert_eq!(loc.line_text, "  {{x}}");
    }
}
