//! Catalog prose on a page (descriptions, messages, help): Markdown code
//! spans (`` `x` ``) shown as code, every other character as text. The
//! prose escapes itself with askama's own HTML escaper, piece by piece, so
//! that nothing from the catalog becomes markup, inside a span or out.

use askama::filters::{Html, HtmlSafe, escape};
use std::fmt;

/// One piece of prose: code or plain text.
struct Piece {
    code: bool,
    text: String,
}

/// Prose split into code spans and text; displays as escaped HTML.
pub(crate) struct Prose(Vec<Piece>);

impl Prose {
    /// `text` with its code spans found as CommonMark finds them: a run of
    /// backticks opens one, the next run of the same length closes it, and
    /// one space is stripped from both ends of what is between (when both
    /// have one). A run with no closing run is text.
    pub(crate) fn of(text: &str) -> Prose {
        let mut pieces = Vec::new();
        let mut plain = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('`') {
            let run = backticks(&rest[at..]);
            let after = &rest[at + run..];
            match closing(after, run) {
                Some(end) => {
                    plain.push_str(&rest[..at]);
                    if !plain.is_empty() {
                        pieces.push(Piece {
                            code: false,
                            text: std::mem::take(&mut plain),
                        });
                    }
                    pieces.push(Piece {
                        code: true,
                        text: code_text(&after[..end]),
                    });
                    rest = &after[end + run..];
                }
                None => {
                    plain.push_str(&rest[..at + run]);
                    rest = after;
                }
            }
        }
        plain.push_str(rest);
        if !plain.is_empty() {
            pieces.push(Piece {
                code: false,
                text: plain,
            });
        }
        Prose(pieces)
    }

    /// Whether there is no text at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.0
            .iter()
            .all(|piece| piece.text.is_empty() && !piece.code)
    }
}

/// The backticks `text` starts with.
fn backticks(text: &str) -> usize {
    text.bytes().take_while(|&b| b == b'`').count()
}

/// Where the first run of exactly `run` backticks in `text` starts.
fn closing(text: &str, run: usize) -> Option<usize> {
    let mut at = 0;
    while let Some(found) = text[at..].find('`') {
        let start = at + found;
        let length = backticks(&text[start..]);
        if length == run {
            return Some(start);
        }
        at = start + length;
    }
    None
}

/// A span's content: line breaks as spaces, one space stripped from each
/// end when both ends have one and it is not all spaces.
fn code_text(inner: &str) -> String {
    let text = inner.replace('\n', " ");
    match text.strip_prefix(' ').and_then(|t| t.strip_suffix(' ')) {
        Some(stripped) if !text.trim().is_empty() => stripped.to_string(),
        _ => text,
    }
}

impl fmt::Display for Prose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for piece in &self.0 {
            let Ok(text) = escape(piece.text.as_str(), Html);
            if piece.code {
                write!(f, "<code>{text}</code>")?;
            } else {
                write!(f, "{text}")?;
            }
        }
        Ok(())
    }
}

/// Its `Display` is HTML, every piece of text escaped: askama writes it as
/// it is.
impl HtmlSafe for Prose {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_become_code_and_the_rest_stays_text() {
        for (text, html) in [
            ("plain", "plain"),
            ("use `name` here", "use <code>name</code> here"),
            ("``a ` b``", "<code>a ` b</code>"),
            ("`` `x` ``", "<code>`x`</code>"),
            ("`  `", "<code>  </code>"),
            ("an ` alone", "an ` alone"),
            ("``not closed`", "``not closed`"),
            ("`a\nb`", "<code>a b</code>"),
            ("", ""),
            (
                "<b>x</b> `<script>alert(1)</script>` & \"q\" 'a'",
                "&#60;b&#62;x&#60;/b&#62; <code>&#60;script&#62;alert(1)&#60;/script&#62;</code> &#38; &#34;q&#34; &#39;a&#39;",
            ),
        ] {
            assert_eq!(Prose::of(text).to_string(), html, "{text:?}");
        }
        assert!(Prose::of("").is_empty());
        assert!(!Prose::of("``").is_empty());
    }
}
