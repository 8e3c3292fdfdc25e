//! Table-driven fixtures: every file in `tests/inputs/*.txt` is one case, run
//! through the dynamic API and snapshotted (output or errors alike) in
//! `tests/integration/snapshots/integration__fixtures__cases@<file>.snap`.
//! The case files are read by `promptpack_testkit::case::read_fixture`, the
//! reader the fuzz targets' `parse_case` shares its splitting, headers and
//! escapes with.
//!
//! # Case file format
//!
//! ```text
//! Free text before the first section: what the case is about (ignored).
//! --- templates/greet/system.md
//! Hi {{name}}.
//! --- templates/greet/user.md
//! ...
//! --- snippets/sig.md
//! ...
//! --- vars
//! {"name": "Ada"}
//! --- options
//! mode lenient
//! ```
//!
//! - A section starts at a line beginning with `--- ` and runs to the next
//!   such line or the end of the file. So a body line can never begin with
//!   `--- ` (write it in an `escaped` section as `\u{2d}-- ` if ever needed).
//! - Section targets: `templates/<id>/system.md`, `templates/<id>/user.md`,
//!   `snippets/<name>.md`, `vars` (one JSON value, normally an object; an
//!   empty section means `{}`) and `options`. Anything else is a harness error.
//! - A file section body is taken verbatim: every line of it, each ending in
//!   `\n` (the last line of the case file too, whether or not the file ends in
//!   a newline). The leading and trailing whitespace this gives is removed by
//!   `SourceFile`'s JavaScript-style trim, but it still counts for diagnostic
//!   line numbers: the first body line is line 1 of that source file.
//! - A file section header may end in the flag `escaped`: then, after the
//!   above, `\n`, `\r`, `\t`, `\\` and `\u{XXXX}` in the body are replaced by
//!   the character they name. Case files themselves must not hold `\r`, so
//!   that every CR, BOM or odd space a case uses is visible in the case file.
//! - The path in the header is the path given to `SourceFile::new`, so it is
//!   what diagnostics print. Snippets are passed in case-file order.
//! - Options, one per line (blank lines and `#` comments ignored):
//!   `mode strict|lenient|both` (default strict: `build_prompt`; lenient:
//!   `build_prompt_lenient`; both: strict then lenient), `delimiters OPEN
//!   CLOSE` (default `{{ }}`), `standalone_tags` (lines holding only a block
//!   tag go, with their newline), `render ID…` (render these ids, in this order,
//!   instead of every template sorted by id).
//!
//! # Snapshot format
//!
//! `delimiters rejected:` and the diagnostic when `Delimiters::new` refuses
//! the option; else `load: ok` or `load failed:` and every diagnostic of
//! `Library::from_sources` (templates are passed sorted by id); then per
//! rendered id and mode a `== id (mode) ==` heading, followed by
//! `system:`/`user:` parts or the render's diagnostics. A part is `(none)` (no `user.md`), `(empty)`, or its
//! lines each prefixed with `| `. In parts and diagnostic source lines, control
//! characters other than `\n`, whitespace other than the plain space, the BOM,
//! U+200B and spaces at the end of a line are shown as `⟨U+XXXX⟩` (insta would
//! otherwise fold `\r\n` and hide the rest). A diagnostic is
//! `code path:line:col message`, then its source line with carets under the
//! span, then its help.

use promptpack::{Delimiters, Diagnostic, Library};
use promptpack_testkit::case::{Fixture, read_fixture};
use std::fmt::Write;
use std::path::Path;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Strict,
    Lenient,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Lenient => "lenient",
        }
    }
}

/// The case file at `path`, read by the case format's one reader
/// (`promptpack_testkit::case`, which the fuzz targets read it with too).
fn parse_case(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).expect("case file is UTF-8");
    read_fixture(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether a snapshot would hide or fold `c`, so that it is shown escaped.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || (promptpack_core::source_file::is_js_whitespace(c) && c != ' ')
        || c == '\u{200B}'
}

/// Shows the characters a snapshot would hide or fold, and spaces at the end
/// of the line, as `⟨U+XXXX⟩`.
fn visible(line: &str) -> String {
    let kept = line.trim_end_matches(' ');
    let mut out = String::new();
    for c in kept.chars() {
        if hidden(c) {
            write!(out, "⟨U+{:04X}⟩", c as u32).unwrap();
        } else {
            out.push(c);
        }
    }
    for _ in kept.len()..line.len() {
        out.push_str("⟨U+0020⟩");
    }
    out
}

fn write_part(out: &mut String, label: &str, text: Option<&str>) {
    match text {
        None => writeln!(out, "{label}: (none)").unwrap(),
        Some("") => writeln!(out, "{label}: (empty)").unwrap(),
        Some(text) => {
            writeln!(out, "{label}:").unwrap();
            for line in text.split('\n') {
                writeln!(out, "| {}", visible(line)).unwrap();
            }
        }
    }
}

fn write_diagnostic(out: &mut String, d: &Diagnostic) {
    let code = d.code.as_str();
    match &d.location {
        Some(loc) => {
            writeln!(
                out,
                "{code} {}:{}:{} {}",
                loc.path(),
                loc.line(),
                loc.column(),
                d.message
            )
            .unwrap();
            if !loc.line_text().is_empty() || loc.len() > 0 {
                writeln!(out, "  | {}", visible(loc.line_text())).unwrap();
                // One space per character shown before the column, so the
                // carets stay under the span when characters are escaped.
                let pad: String = loc
                    .line_text()
                    .chars()
                    .take(loc.column().saturating_sub(1))
                    .map(|c| if hidden(c) { "        " } else { " " })
                    .collect();
                writeln!(out, "  | {pad}{}", "^".repeat(loc.len().max(1))).unwrap();
            }
        }
        None => writeln!(out, "{code} - {}", d.message).unwrap(),
    }
    if let Some(help) = &d.help {
        writeln!(out, "  = help: {help}").unwrap();
    }
}

fn run_case(path: &Path) -> String {
    let case = parse_case(path);
    let mut out = String::new();

    let mut modes = vec![Mode::Strict];
    let mut delimiters = Delimiters::default();
    let mut standalone_tags = false;
    let mut render_ids: Option<Vec<String>> = None;
    for option in &case.options {
        let words: Vec<&str> = option.split_whitespace().collect();
        match words.as_slice() {
            ["mode", "strict"] => modes = vec![Mode::Strict],
            ["mode", "lenient"] => modes = vec![Mode::Lenient],
            ["mode", "both"] => modes = vec![Mode::Strict, Mode::Lenient],
            ["delimiters", open, close] => match Delimiters::new(open, close) {
                Ok(d) => delimiters = d,
                Err(e) => {
                    writeln!(out, "delimiters rejected:").unwrap();
                    for d in e.diagnostics() {
                        write_diagnostic(&mut out, d);
                    }
                    return out;
                }
            },
            ["standalone_tags"] => standalone_tags = true,
            ["render", ids @ ..] => render_ids = Some(ids.iter().map(|s| s.to_string()).collect()),
            _ => panic!("{}: unknown option `{option}`", path.display()),
        }
    }

    let vars: serde_json::Value = match case.vars.as_deref().map(str::trim) {
        None | Some("") => serde_json::json!({}),
        Some(json) => serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("{}: vars are not JSON: {e}", path.display())),
    };

    let ids: Vec<String> = case.templates.keys().cloned().collect();
    let templates = case.templates.into_values().collect();
    let config = promptpack::Config::new(".")
        .with_standalone_tags(standalone_tags)
        .with_delimiters(delimiters.open(), delimiters.close())
        .expect("delimiters checked above");
    let library = match Library::from_sources(templates, case.snippets, &config) {
        Ok(library) => library,
        Err(e) => {
            writeln!(out, "load failed:").unwrap();
            for d in e.diagnostics() {
                write_diagnostic(&mut out, d);
            }
            return out;
        }
    };
    writeln!(out, "load: ok").unwrap();

    for id in render_ids.unwrap_or(ids) {
        for &mode in &modes {
            writeln!(out, "\n== {id} ({}) ==", mode.name()).unwrap();
            let rendered = match mode {
                Mode::Strict => library.build_prompt(&id, &vars),
                Mode::Lenient => library.build_prompt_lenient(&id, &vars),
            };
            match rendered {
                Ok(prompt) => {
                    assert_eq!(prompt.id, id);
                    write_part(&mut out, "system", Some(&prompt.system));
                    write_part(&mut out, "user", prompt.user.as_deref());
                    for (i, message) in prompt.messages.iter().enumerate() {
                        let heading = format!("message {i}: {}", message.label());
                        write_part(&mut out, &heading, Some(&message.content));
                    }
                }
                Err(e) => {
                    for d in e.diagnostics() {
                        write_diagnostic(&mut out, d);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn cases() {
    insta::glob!("../inputs", "*.txt", |path| {
        insta::assert_snapshot!(run_case(path));
    });
}
