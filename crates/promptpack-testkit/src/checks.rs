//! What must hold of anything the library hands out, whatever the input: a
//! diagnostic points into the file it names, a successful parse tiles the
//! body, generated code is Rust that rustc takes. Each check panics, with
//! the reason, when its property does not hold.

use crate::case::Case;
use promptpack_core::resolve::{MAX_EXPANDED_OPS, resolve_with};
use promptpack_core::source_file::SourceFile;
use promptpack_core::syntax::{
    Include, Item, Parsed, is_section_name, is_snippet_name, is_var_name,
};
use promptpack_core::{Diagnostic, ErrorCode, Settings};
use std::collections::HashMap;

/// Panics unless the diagnostic's location lies inside the file it names
/// (a file-level location is line 1, column 1, with an empty line text).
/// `files` maps each path to the file's text, as [`Case::files`] gives it.
///
/// [`Case::files`]: crate::Case::files
pub fn check_location(d: &Diagnostic, files: &HashMap<String, String>) {
    assert!(!d.to_string().is_empty());
    let Some(loc) = &d.location else {
        return;
    };
    let text = files
        .get(loc.path())
        .unwrap_or_else(|| panic!("{d}: the path is none of the files"));
    if loc.len() == 0 {
        assert_eq!(
            (loc.line(), loc.column()),
            (1, 1),
            "{d}: file-level location"
        );
        assert!(loc.line_text().is_empty(), "{d}: file-level location");
        return;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        loc.line() >= 1 && loc.line() <= lines.len(),
        "{d}: line out of range"
    );
    let line = lines[loc.line() - 1];
    assert!(
        loc.column() >= 1 && loc.column() <= line.chars().count() + 1,
        "{d}: column out of range"
    );
    // A byte order mark takes no column and is not shown.
    let shown = line.trim_start_matches('\u{FEFF}').trim_end_matches('\r');
    assert_eq!(loc.line_text(), shown, "{d}: line text");
}

/// Panics unless a successful parse of `file` is well formed: its items tile
/// the trimmed body exactly, in order and without empty items; blocks
/// balance, with `else` only inside one; every name is a valid name.
pub fn check_parsed(file: &SourceFile, parsed: &Parsed) {
    let body = file.body_span();
    let mut at = body.start;
    let mut depth = 0usize;
    for item in &parsed.items {
        let span = match item {
            Item::Text(s)
            | Item::Else(s)
            | Item::EndIf(s)
            | Item::CloseMessage(_, s)
            | Item::Schema(s) => *s,
            Item::Var(n) | Item::Snippet(Include { name: n, .. }) => n.span,
            Item::If(c) | Item::ElseIf(c) => c.name.span,
            Item::OpenMessage(tag) => tag.span,
        };
        assert_eq!(span.start, at, "items must be contiguous");
        assert!(span.end > span.start, "empty item");
        at = span.end;
        match item {
            Item::If(_) => depth += 1,
            Item::EndIf(_) => depth = depth.checked_sub(1).expect("balanced"),
            Item::Else(_) | Item::ElseIf(_) => assert!(depth > 0, "else outside a block"),
            Item::Var(n) => assert!(is_var_name(&n.name), "bad variable name {:?}", n.name),
            Item::Snippet(Include { name: n, section }) => {
                assert!(is_snippet_name(&n.name), "bad snippet name {:?}", n.name);
                if let Some(section) = section {
                    assert!(is_section_name(section), "bad section {section:?}");
                }
            }
            Item::Schema(s) => assert!(
                file.slice(*s).contains("schema:response"),
                "a schema token that is not `schema:response`: {:?}",
                file.slice(*s)
            ),
            Item::Text(_) => {}
            Item::OpenMessage(_) | Item::CloseMessage(..) => {
                panic!("a part's parse read a role tag, which is text there")
            }
        }
    }
    assert_eq!(at, body.end, "items must cover the body");
    assert_eq!(depth, 0, "every block closes");
}

/// Panics unless `code` parses as a Rust file (with `syn`) and holds
/// nothing rustc refuses in a doc comment or literal: no direction-changing
/// codepoint ([`is_bidi_control`]), no CR that does not start a CRLF.
pub fn check_generated_code(code: &str) {
    if let Err(e) = syn::parse_file(code) {
        panic!("generated code does not parse: {e}\n{code}");
    }
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        assert!(!is_bidi_control(c), "bidi control {c:?} in generated code");
        assert!(
            c != '\r' || chars.peek() == Some(&'\n'),
            "bare CR in generated code"
        );
    }
}

/// Codepoints rustc refuses in doc comments and literals by default.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Whether `code` is one the code generator may refuse a tree with that
/// the library loads: a name that cannot become Rust, or two that become one,
/// or code past the generator's size limits.
pub fn refused_by_codegen(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::InvalidId
            | ErrorCode::IdCollision
            | ErrorCode::InvalidVarName
            | ErrorCode::VarCollision
            | ErrorCode::InvalidChoice
            | ErrorCode::TooLarge
    )
}

/// Panics unless resolving `case` took work linear in its input and its
/// output, however its snippets fan out: within
/// [`Counted::step_bound`](promptpack_core::resolve::Counted::step_bound).
/// Returns the steps, for callers that report them.
pub fn check_splice_work(case: &Case) -> u64 {
    let settings = Settings {
        delimiters: case.delimiters.clone(),
        ..Settings::default()
    };
    let counted = resolve_with(&case.templates, &case.snippets, &[], &settings);
    let bound = counted.step_bound(&case.templates, &case.snippets);
    assert!(
        counted.steps <= bound,
        "resolving took {} steps, more than {bound} (parts × input bytes + ops made + \
         parts refused × {MAX_EXPANDED_OPS})",
        counted.steps
    );
    counted.steps
}
