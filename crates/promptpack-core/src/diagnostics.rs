//! Renders [`Diagnostic`]s the way rustc does: a headline with the code, the
//! file, line and column, the source line with a caret under the problem, and
//! a help line. The one renderer behind both the build script and the CLI.

use crate::error::{Diagnostic, Error};
use std::borrow::Cow;
use std::ops::Range;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Severity {
    /// Fails the build or the check.
    Error,
    /// Worth fixing; fails only `check --deny-warnings`.
    Warning,
}

/// Whether to colour the output with ANSI escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Style {
    /// Plain text, for logs, files and tests.
    Plain,
    /// Coloured, for a terminal.
    Color,
}

/// Renders one diagnostic, rustc style, without a trailing newline:
///
/// ```text
/// error[unclosed_block]: {{#if hasTools}} is never closed
///  --> templates/director/system.md:12:5
///    |
/// 12 |     {{#if hasTools}}
///    |     ^^^^^^^^^^^^^^^^
///    |
///    = help: add `{{/if}}` in the same file
/// ```
pub fn render_diagnostic(diagnostic: &Diagnostic, severity: Severity, style: Style) -> String {
    let paint = Paint(style);
    let (level, level_color, mark) = match severity {
        Severity::Error => ("error", RED, '^'),
        Severity::Warning => ("warning", YELLOW, '-'),
    };
    let title = escape_controls(&diagnostic.message);
    let mut out = format!(
        "{}: {}",
        paint.bold(
            level_color,
            &format!("{level}[{}]", diagnostic.code.as_str())
        ),
        paint.bold("", &title)
    );
    let mut footers: Vec<(&str, &str, Cow<'_, str>)> = Vec::new();
    // The footers' indent: under the gutter of the line numbers when a
    // source line is shown, else one space.
    let mut indent = " ".to_string();
    if let Some(loc) = &diagnostic.location {
        let path = escape_controls(loc.path());
        match loc.resolved() {
            None => {
                // Nothing to point at: name the file or folder, unless the
                // message does already; a `:1:1` would send a reader nowhere.
                if !diagnostic.message.contains(loc.path()) {
                    footers.push(("note", GREEN, path));
                }
            }
            Some(at) if at.line_text.is_empty() => {
                // A position on an empty line: name it without an excerpt.
                let origin = format!("{path}:{}:{}", at.line, at.column);
                footers.push(("note", GREEN, Cow::Owned(origin)));
            }
            Some(at) => {
                let (line_text, span) = shown_line(at.line_text, at.in_line);
                let number = at.line.to_string();
                let gutter = " ".repeat(number.len());
                let bar = paint.bold(BLUE, "|");
                let before = width(&line_text[..span.start]);
                // An empty span at the end of a line has a caret just past it.
                let marks = mark
                    .to_string()
                    .repeat(line_text.get(span).map_or(0, width).max(1));
                out.push_str(&format!(
                    "\n{gutter}{} {path}:{}:{}",
                    paint.bold(BLUE, "-->"),
                    at.line,
                    at.column
                ));
                out.push_str(&format!("\n{gutter} {bar}"));
                out.push_str(&format!(
                    "\n{} {line_text}",
                    paint.bold(BLUE, &format!("{number} |"))
                ));
                out.push_str(&format!(
                    "\n{gutter} {bar} {}{}",
                    " ".repeat(before),
                    paint.bold(level_color, &marks)
                ));
                out.push_str(&format!("\n{gutter} {bar}"));
                indent = format!("{gutter} ");
            }
        }
    }
    if let Some(help) = &diagnostic.help {
        footers.push(("help", CYAN, escape_controls(help)));
    }
    for (kind, color, text) in footers {
        out.push_str(&format!(
            "\n{indent}{}{}: {text}",
            paint.bold(BLUE, "= "),
            paint.bold(color, kind)
        ));
    }
    out
}

/// The colours of the parts of a diagnostic, as rustc's: ANSI escapes.
const RED: &str = "\u{1b}[91m";
const YELLOW: &str = "\u{1b}[33m";
const BLUE: &str = "\u{1b}[94m";
const CYAN: &str = "\u{1b}[96m";
const GREEN: &str = "\u{1b}[92m";

/// Paints text bold and in a colour, or leaves it plain.
#[derive(Clone, Copy)]
struct Paint(Style);

impl Paint {
    fn bold(self, color: &str, text: &str) -> String {
        match self.0 {
            Style::Plain => text.to_string(),
            Style::Color => format!("\u{1b}[1m{color}{text}\u{1b}[0m"),
        }
    }
}

/// Columns `text` takes on a terminal: a wide (CJK) character two, so that
/// the caret stays under its token.
fn width(text: &str) -> usize {
    use unicode_width::UnicodeWidthChar;
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` with its control characters escaped as Rust writes them (`\u{1b}`,
/// `\n`): messages and paths hold names from the files and the command line,
/// and an escape sequence in a folder name or an id must not reach the
/// terminal, nor a line break or carriage return fake a line of output. The
/// source line under the headline is cleaned apart, where it is shown.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Renders every diagnostic of an error, separated by blank lines.
pub fn render_error(error: &Error, style: Style) -> String {
    error
        .diagnostics()
        .iter()
        .map(|d| render_diagnostic(d, Severity::Error, style))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The most columns of a line shown under the headline: a longer line is
/// cut to a window around the caret, marked with `…` where it is cut, so
/// that a diagnostic costs the same on a line of a megabyte as on a short one.
const WINDOW: usize = 100;

/// Of [`WINDOW`], the columns kept before the caret when the line goes on
/// past the window on both sides.
const BEFORE: usize = 30;

/// The most columns of caret shown: a longer span is cut, and `…` follows.
const CARET: usize = 60;

/// The line as shown under the headline, and the byte range in it of the
/// span `in_line` (bytes of `line`), at least one caret wide.
///
/// A line longer than [`WINDOW`] columns is shown as a window of it around
/// the span; only that window is ever walked. One character is shown for
/// each of the window: whitespace as a space (a tab as one, so the caret
/// line below counts the same columns), other control characters as U+FFFD
/// (an escape must not reach the terminal). When the span lies in the
/// indentation, the indentation past it is shown as `·`, so that a caret
/// under blank space still points at something visible.
fn shown_line(line: &str, in_line: Range<usize>) -> (String, Range<usize>) {
    let floor = |mut i: usize| {
        i = i.min(line.len());
        while !line.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = floor(in_line.start);
    let end = floor(in_line.end).max(start);
    // An empty span points at the character after it, if there is one.
    let end = if end == start {
        line[start..]
            .chars()
            .next()
            .map_or(start, |c| start + c.len_utf8())
    } else {
        end
    };
    let (from, caret_end, to) = if line.len() <= WINDOW {
        (0, end, line.len())
    } else {
        let (caret_end, caret) = forward(line, start, CARET, end);
        let (to, after) = forward(line, caret_end, WINDOW - BEFORE - caret, line.len());
        let budget = WINDOW - caret - after;
        let (from, before) = back(line, start, budget);
        // A caret near the start leaves room after it.
        let (to, _) = forward(line, to, budget - before, line.len());
        (from, caret_end, to)
    };
    let mut chars: Vec<char> = Vec::new();
    if from > 0 {
        chars.push('…');
    }
    let shown = |c: char| {
        if c.is_whitespace() {
            ' '
        } else if c.is_control() {
            '\u{FFFD}'
        } else {
            c
        }
    };
    chars.extend(line[from..start].chars().map(shown));
    let caret_from = chars.len();
    chars.extend(line[start..caret_end].chars().map(shown));
    let caret_to = chars.len();
    chars.extend(line[caret_end..to].chars().map(shown));
    if to < line.len() {
        chars.push('…');
    }
    if chars[..caret_to].iter().all(|c| *c == ' ') {
        for c in chars.iter_mut().skip(caret_to).take_while(|c| **c == ' ') {
            *c = '·';
        }
    }
    let text: String = chars.iter().collect();
    let byte = |i: usize| chars[..i].iter().map(|c| c.len_utf8()).sum::<usize>();
    let (from, to) = (byte(caret_from), byte(caret_to));
    // An empty span at the end of the line: a caret just past it.
    let to = if to == from { from + 1 } else { to };
    (text, from..to)
}

/// The byte `at` moved forward by up to `most` characters, not past
/// `limit`, and how many it moved.
fn forward(line: &str, at: usize, most: usize, limit: usize) -> (usize, usize) {
    let mut moved = 0;
    let mut here = at;
    for c in line[at..limit.max(at)].chars().take(most) {
        here += c.len_utf8();
        moved += 1;
    }
    (here, moved)
}

/// The byte `at` moved back by up to `most` characters, and how many it moved.
fn back(line: &str, at: usize, most: usize) -> (usize, usize) {
    let mut moved = 0;
    let mut here = at;
    for c in line[..at].chars().rev().take(most) {
        here -= c.len_utf8();
        moved += 1;
    }
    (here, moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorCode, Location, SourceFile, Span};

    /// A whole-file location names the file (or nothing, when the message
    /// does), never a `:1:1` that points nowhere.
    #[test]
    fn a_whole_file_has_no_position() {
        let named = Diagnostic::new(
            ErrorCode::MissingSystem,
            "template folder `x` has no system.md",
        )
        .at(Location::file("templates/x"));
        let shown = render_diagnostic(&named, Severity::Error, Style::Plain);
        assert!(shown.contains("= note: templates/x"), "{shown}");
        assert!(!shown.contains(":1:1"), "{shown}");
        let in_message = Diagnostic::new(
            ErrorCode::Io,
            "cannot read the templates folder ./templates",
        )
        .at(Location::file("./templates"));
        let shown = render_diagnostic(&in_message, Severity::Error, Style::Plain);
        assert!(!shown.contains("note"), "{shown}");
    }

    /// A long line is shown as a window around the caret: the output does
    /// not grow with the line, the caret stays under its token and the
    /// headline keeps the line's own column.
    #[test]
    fn a_long_line_shows_a_window() {
        let line: String = (0..20_000).map(|i| format!("{{{{v{i}}}}}")).collect();
        let file = SourceFile::new("templates/a/system.md", format!("é{line}\n"));
        for (token, column) in [("{{v0}}", 2), ("{{v10000}}", 0), ("{{v19999}}", 0)] {
            let at = file.text().find(token).unwrap_or(0);
            let column = if column == 0 {
                file.text()[..at].chars().count() + 1
            } else {
                column
            };
            let d = Diagnostic::new(ErrorCode::StrayElse, "a message").at(file.location(Span {
                start: at,
                end: at + token.len(),
            }));
            let shown = render_diagnostic(&d, Severity::Error, Style::Plain);
            assert!(shown.len() < 400, "{} bytes:\n{shown}", shown.len());
            assert!(
                shown.contains(&format!("--> templates/a/system.md:1:{column}\n")),
                "{shown}"
            );
            let lines: Vec<&str> = shown.lines().collect();
            let source = lines
                .iter()
                .find(|l| l.starts_with("1 |"))
                .copied()
                .unwrap_or("");
            let carets = lines
                .iter()
                .find(|l| l.contains('^'))
                .copied()
                .unwrap_or("");
            let under = source.find(token).map(|b| source[..b].chars().count());
            assert_eq!(under, carets.find('^'), "{shown}");
            assert_eq!(carets.matches('^').count(), token.len(), "{shown}");
            assert_eq!(source.starts_with("1 | …"), column > 40, "{shown}");
            assert!(source.ends_with('…') || token == "{{v19999}}", "{shown}");
        }
        // A span longer than the window: its caret is cut, not the headline.
        let d = Diagnostic::new(ErrorCode::StrayElse, "a message").at(file.location(Span {
            start: 2,
            end: file.text().len(),
        }));
        let shown = render_diagnostic(&d, Severity::Error, Style::Plain);
        assert!(
            shown.len() < 400 && shown.contains("system.md:1:2\n"),
            "{shown}"
        );
    }

    /// An id or a folder name holding an escape sequence, a bell, a carriage
    /// return or a line break is shown escaped, in the message, the note
    /// and the help alike: nothing from a file name or an argument drives
    /// the terminal.
    #[test]
    fn control_characters_are_escaped() {
        let hostile = "q\u{1b}[31mred\u{7}\r\nfake\u{9b}";
        let file = SourceFile::new(format!("templates/{hostile}/system.md"), "x {{#if a}}\n");
        let located = file.location(Span { start: 2, end: 11 });
        let whole = Location::file(format!("templates/{hostile}"));
        for location in [located, whole] {
            let d = Diagnostic::new(ErrorCode::StrayElse, format!("no prompt named `{hostile}`"))
                .at(location)
                .with_help(format!("did you mean `{hostile}`?"));
            for style in [Style::Plain, Style::Color] {
                let shown = render_diagnostic(&d, Severity::Error, style);
                assert!(!shown.contains(['\u{7}', '\r', '\u{9b}']), "{shown:?}");
                if style == Style::Plain {
                    assert!(!shown.contains('\u{1b}'), "{shown:?}");
                }
                assert!(!shown.contains("\nfake"), "{shown:?}");
                assert!(
                    shown.contains("q\\u{1b}[31mred\\u{7}\\r\\nfake\\u{9b}"),
                    "{shown:?}"
                );
            }
        }
    }

    /// A wide character takes two columns on a terminal: the caret after
    /// it moves two, so it stays under its token.
    #[test]
    fn the_caret_counts_display_columns() {
        let file = SourceFile::new("templates/a/system.md", "你好 {{#if x}}\n");
        let at = file.text().find("{{#if").unwrap_or(0);
        let d = Diagnostic::new(ErrorCode::UnclosedBlock, "never closed").at(file.location(Span {
            start: at,
            end: at + 9,
        }));
        let shown = render_diagnostic(&d, Severity::Error, Style::Plain);
        assert!(shown.contains("--> templates/a/system.md:1:4"), "{shown}");
        assert!(shown.contains("\n  |      ^^^^^^^^^\n"), "{shown}");
    }

    #[test]
    fn points_a_caret_at_the_token() {
        let file = SourceFile::new("templates/a/system.md", "intro\n  {{#if x}} ü\n");
        let at = file.text().find("{{#if").unwrap_or(0);
        let d = Diagnostic::new(ErrorCode::UnclosedBlock, "{{#if x}} is never closed")
            .at(file.location(Span {
                start: at,
                end: at + 9,
            }))
            .with_help("add `{{/if}}`");
        let shown = render_diagnostic(&d, Severity::Error, Style::Plain);
        assert!(
            shown.starts_with("error[unclosed_block]: {{#if x}} is never closed"),
            "{shown}"
        );
        assert!(shown.contains("--> templates/a/system.md:2:3"), "{shown}");
        assert!(shown.contains("2 |   {{#if x}} ü"), "{shown}");
        assert!(shown.contains("  ^^^^^^^^^"), "{shown}");
        assert!(shown.contains("help: add `{{/if}}`"), "{shown}");
    }
}
