//! `Error`'s `Display`: what `{e}` shows, one line per diagnostic with its
//! help on that line, as the build's `cargo::error` line shows it.

use promptpack_core::{Diagnostic, Error, ErrorCode, Location};

#[test]
fn display_keeps_each_diagnostics_help_on_its_line() {
    let cases: Vec<(Error, &str)> = vec![
        (
            Error::unknown_prompt("agent-sytem", ["agent-system", "director"]),
            "unknown_prompt: no prompt named `agent-sytem` (help: did you mean `agent-system`? \
             The prompts are: agent-system, director)",
        ),
        (
            Error::from(Diagnostic::new(ErrorCode::Io, "cannot read x")),
            "io: cannot read x",
        ),
        (
            Error::from_diagnostics(vec![
                Diagnostic::new(ErrorCode::UnclosedBlock, "{{#if formal}} is never closed")
                    .at(Location::file("templates/closer/system.md"))
                    .with_help("add `{{/if}}` in the same file"),
                Diagnostic::new(ErrorCode::MissingVar, "no value for `name`"),
            ])
            .expect("two diagnostics"),
            "templates/closer/system.md:1:1: unclosed_block: {{#if formal}} is never closed \
             (help: add `{{/if}}` in the same file)\nmissing_var: no value for `name`",
        ),
    ];
    for (error, shown) in cases {
        assert_eq!(error.to_string(), shown);
    }
}
