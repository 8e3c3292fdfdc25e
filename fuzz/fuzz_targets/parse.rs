//! Any text, with several delimiter settings: parsing never panics, on
//! success its items tile the trimmed body exactly, on failure every error
//! points into the file; the lint scanner never panics either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptpack::{Delimiters, Item, SourceFile, Style, find_tokens, parse, render_diagnostic};
use promptpack_fuzz::check_location;
use std::collections::HashMap;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let settings = [
        ("{{", "}}"),
        ("<<", ">>"),
        ("$", "$"),
        ("{", "}"),
        ("<%", "%>"),
    ];
    let file = SourceFile::new("f.md", text);
    let files = HashMap::from([("f.md".to_string(), text.to_string())]);
    for (open, close) in settings {
        let delims = Delimiters::new(open, close).expect("valid delimiters");
        let _ = find_tokens(text, &delims);
        match parse(&file, &delims) {
            Ok(parsed) => {
                let body = file.body_span();
                let mut at = body.start;
                let mut depth = 0usize;
                for item in &parsed.items {
                    let span = match item {
                        Item::Text(s) | Item::Else(s) | Item::EndIf(s) => *s,
                        Item::Var(n) | Item::Snippet(n) | Item::If(n) => n.span,
                    };
                    assert_eq!(span.start, at, "items must be contiguous");
                    assert!(span.end > span.start, "empty item");
                    at = span.end;
                    match item {
                        Item::If(_) => depth += 1,
                        Item::EndIf(_) => depth = depth.checked_sub(1).expect("balanced"),
                        Item::Else(_) => assert!(depth > 0, "else outside a block"),
                        Item::Var(n) => assert!(promptpack::is_var_name(&n.name)),
                        Item::Snippet(n) => assert!(promptpack::is_snippet_name(&n.name)),
                        Item::Text(_) => {}
                    }
                }
                assert_eq!(at, body.end, "items must cover the body");
                assert_eq!(depth, 0, "every block closes");
            }
            Err(errors) => {
                assert!(!errors.is_empty());
                for d in &errors {
                    check_location(d, &files);
                    let _ = render_diagnostic(d, promptpack::Severity::Error, Style::Plain);
                }
            }
        }
    }
});
