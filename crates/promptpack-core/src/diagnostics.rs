//! Renders [`Diagnostic`]s the way rustc does: a headline with the code, the
//! file, line and column, the source line with a caret under the problem, and
//! a help line. The one renderer behind both the build script and the CLI.

use crate::error::{Diagnostic, Error};
use annotate_snippets::{Level, Renderer, Snippet};
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
    let level = match severity {
        Severity::Error => Level::Error,
        Severity::Warning => Level::Warning,
    };
    let code = diagnostic.code.as_str();
    let mut message = level.title(&diagnostic.message).id(code);
    let origin;
    let line_text;
    if let Some(loc) = &diagnostic.location {
        if loc.is_whole_file() {
            // Nothing to point at: name the file or folder, unless the
            // message does already; a `:1:1` would send a reader nowhere.
            if !diagnostic.message.contains(&loc.path) {
                message = message.footer(Level::Note.title(&loc.path));
            }
        } else if loc.line_text.is_empty() {
            // A position on an empty line: name it without an excerpt.
            origin = format!("{}:{}:{}", loc.path, loc.line, loc.column);
            message = message.footer(Level::Note.title(&origin));
        } else {
            let span;
            (line_text, span) = shown_line(&loc.line_text, loc.column, loc.len);
            message = message.snippet(
                Snippet::source(&line_text)
                    .line_start(loc.line)
                    .origin(&loc.path)
                    .annotation(level.span(span)),
            );
        }
    }
    if let Some(help) = &diagnostic.help {
        message = message.footer(Level::Help.title(help));
    }
    let renderer = match style {
        Style::Plain => Renderer::plain(),
        Style::Color => Renderer::styled(),
    };
    renderer.render(message).to_string()
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

/// The line as shown under the headline, and the byte range in it of the
/// span: `len` characters from the 1-based `column`, at least one caret wide.
///
/// One character is shown for each of the line, so that annotate-snippets
/// counts the same columns: whitespace as a space, other control characters
/// as U+FFFD (an escape must not reach the terminal). Its trimming of long
/// lines overflows (a panic in debug builds) when the leading whitespace
/// measures more than the columns up to the span's end: tabs count four
/// there, and a span may lie in the indentation. So tabs are shown as one
/// space, and indentation past the span's end as `·`.
fn shown_line(line: &str, column: usize, len: usize) -> (String, Range<usize>) {
    let mut chars: Vec<char> = line
        .chars()
        .map(|c| {
            if c.is_whitespace() {
                ' '
            } else if c.is_control() {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    let start = column.saturating_sub(1).min(chars.len());
    let end = start.saturating_add(len.max(1)).min(chars.len());
    if chars[..end].iter().all(|c| *c == ' ') {
        for c in chars.iter_mut().skip(end).take_while(|c| **c == ' ') {
            *c = '·';
        }
    }
    let shown: String = chars.iter().collect();
    let byte = |i: usize| chars[..i].iter().map(|c| c.len_utf8()).sum::<usize>();
    let (from, to) = (byte(start), byte(end));
    // An empty span at the end of the line: a caret just past it.
    let to = if to == from { from + 1 } else { to };
    (shown, from..to)
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
