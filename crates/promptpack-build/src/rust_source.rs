//! Writing Rust source as text: string literals, doc comments and lines
//! indented with tabs. The generated file is written directly, not built as
//! tokens and printed: that costs the build script a tenth of the time, and
//! the file is laid out for reading without a formatter.

use std::fmt::Write;

/// Rust source being written, one line at a time, indented with a tab per
/// level (a byte a level: a generated file for thousands of prompts is
/// mostly indentation otherwise).
#[derive(Default)]
pub(crate) struct Source {
    text: String,
    depth: usize,
}

impl Source {
    /// An empty source whose lines start `depth` levels deep.
    pub(crate) fn at_depth(depth: usize) -> Source {
        Source {
            text: String::new(),
            depth,
        }
    }

    /// Writes `line` on a line of its own at the current depth.
    pub(crate) fn line(&mut self, line: impl AsRef<str>) {
        let line = line.as_ref();
        if !line.is_empty() {
            self.text.extend(std::iter::repeat_n('\t', self.depth));
        }
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// Writes `line`, then goes one level deeper (after a `{`).
    pub(crate) fn open(&mut self, line: impl AsRef<str>) {
        self.line(line);
        self.depth += 1;
    }

    /// Goes one level back, then writes `line` (a `}`).
    pub(crate) fn close(&mut self, line: impl AsRef<str>) {
        self.depth = self.depth.saturating_sub(1);
        self.line(line);
    }

    /// Goes one level back, writes `line`, then one level deeper again (a
    /// `} else {`).
    pub(crate) fn close_open(&mut self, line: impl AsRef<str>) {
        self.close(line);
        self.depth += 1;
    }

    /// A `///` line per line of `text`.
    pub(crate) fn doc(&mut self, text: &str) {
        for line in text.lines().flat_map(|l| l.split('\r')) {
            if line.is_empty() {
                self.line("///");
            } else {
                self.line(format!("/// {}", doc_safe(line)));
            }
        }
    }

    /// Everything written so far.
    pub(crate) fn into_string(self) -> String {
        self.text
    }
}

/// `text` as a Rust string literal on one line: quotes, backslashes, line
/// breaks and other control characters escaped.
pub(crate) fn lit(text: &str) -> String {
    literal(text, false)
}

/// `text` as a Rust string literal that keeps its line breaks as they are,
/// so that a template's text reads as it does in the file. A carriage
/// return is still escaped: rustc refuses a bare one in a literal.
pub(crate) fn text_lit(text: &str) -> String {
    literal(text, true)
}

/// `c` as a Rust character literal.
pub(crate) fn char_lit(c: char) -> String {
    match c {
        '\'' => "'\\''".to_string(),
        '"' => "'\"'".to_string(),
        // A character literal refuses a raw tab, which a string takes.
        '\t' => "'\\t'".to_string(),
        c => {
            let quoted = lit(&c.to_string());
            format!("'{}'", &quoted[1..quoted.len() - 1])
        }
    }
}

fn literal(text: &str, raw_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' if raw_newlines => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\t' => out.push('\t'),
            '\r' => out.push_str("\\r"),
            // rustc denies the codepoints that change the direction of text
            // in a literal, by default.
            c if c.is_control() || is_bidi(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Text made fit for a `///` line: rustc rejects a bare CR in a doc comment
/// and by default denies the codepoints that change the direction of text,
/// so those are written escaped (`\u{202e}`), as are line breaks in what
/// must stay one line.
pub(crate) fn doc_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\r' | '\n') || is_bidi(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// A Markdown code fence that `text` cannot close early.
pub(crate) fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_what_rust_refuses() {
        assert_eq!(lit("a\"b\\c\nd\re"), r#""a\"b\\c\nd\re""#);
        assert_eq!(text_lit("a\nb\r\n"), "\"a\nb\\r\n\"");
        assert_eq!(lit("\u{202e}x\u{0}"), r#""\u{202e}x\u{0}""#);
    }

    #[test]
    fn char_literals_escape_as_string_literals_do() {
        assert_eq!(char_lit('a'), "'a'");
        assert_eq!(char_lit('\''), r"'\''");
        assert_eq!(char_lit('"'), "'\"'");
        assert_eq!(char_lit('\n'), r"'\n'");
        assert_eq!(char_lit('\r'), r"'\r'");
        assert_eq!(char_lit('\t'), r"'\t'");
        assert_eq!(char_lit('\\'), r"'\\'");
        assert_eq!(char_lit('\u{202e}'), r"'\u{202e}'");
    }

    #[test]
    fn doc_lines_escape_carriage_returns_and_direction_marks() {
        let mut source = Source::default();
        source.doc("one\r\ntwo\u{2066}\n\nthree\rfour");
        assert_eq!(
            source.into_string(),
            "/// one\n/// two\\u{2066}\n///\n/// three\n/// four\n"
        );
    }

    #[test]
    fn fences_outrun_the_longest_backtick_run() {
        assert_eq!(fence_for("no ticks"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
    }
}
