//! The survivor check of `promptpack::testing`: every token form and
//! near-miss found where it is, clean text passing, deliberate survivors
//! allowed, and a failing assertion that reads well.

use promptpack::testing::{
    Survivors, assert_no_survivors, assert_no_survivors_with, find_survivors,
};
use promptpack::{Delimiters, Library, SourceFile, TemplateSource};
use promptpack_core::scan::FindingKind;
use std::panic::{UnwindSafe, catch_unwind};

/// What `f` panicked with; fails the test when it did not panic.
fn panic_message(f: impl FnOnce() + UnwindSafe) -> String {
    let payload = catch_unwind(f).expect_err("the assertion should have failed");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast::<&str>()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    }
}

/// `(kind, text, line, column)` of every survivor in `text`.
fn survivors(text: &str, delimiters: &Delimiters) -> Vec<(FindingKind, String, usize, usize)> {
    find_survivors(text, delimiters)
        .iter()
        .map(|f| (f.kind, f.text(text).to_string(), f.line, f.column))
        .collect()
}

fn angle() -> Delimiters {
    Delimiters::new("<<", ">>").expect("valid delimiters")
}

#[test]
fn every_token_form_is_found_with_its_position() {
    use FindingKind::*;
    let text = "Hi {{name}}, see {{snippet:style}}.\n\
                {{#if tools}}yes{{else}}no{{/if}}\n\
                \tébé {{snippet:../secret}}";
    let found = survivors(text, &Delimiters::default());
    let expected = [
        (Var, "{{name}}", 1, 4),
        (Snippet, "{{snippet:style}}", 1, 18),
        (If, "{{#if tools}}", 2, 1),
        (Else, "{{else}}", 2, 17),
        (EndIf, "{{/if}}", 2, 27),
        (InvalidSnippetPath, "{{snippet:../secret}}", 3, 6),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(k, t, l, c)| (*k, t.to_string(), *l, *c))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn every_near_miss_is_found_with_its_position() {
    use FindingKind::*;
    let text = "A {{ name }} B {{#each items}} C {{snippet: style}}\n\
                {{next-agent}} {{user.name}} {{> partial}}\n\
                {{/each}} {{#if}} {{else if x}}\n\
                last {{ unclosed";
    let found = survivors(text, &Delimiters::default());
    let expected = [
        (Spaced, "{{ name }}", 1, 3),
        (UnknownBlock, "{{#each items}}", 1, 16),
        (SnippetSyntax, "{{snippet: style}}", 1, 34),
        (InvalidName, "{{next-agent}}", 2, 1),
        (InvalidName, "{{user.name}}", 2, 16),
        (OtherBraces, "{{> partial}}", 2, 30),
        (UnknownBlock, "{{/each}}", 3, 1),
        (UnknownBlock, "{{#if}}", 3, 11),
        (ElseIf, "{{else if x}}", 3, 19),
        (UnmatchedOpen, "{{", 4, 6),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(k, t, l, c)| (*k, t.to_string(), *l, *c))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn clean_text_passes() {
    let clean = [
        "",
        "You are Ada, an assistant.",
        // Single braces and unmatched closing ones are everywhere in JSON.
        "Respond in JSON, for example `{\"type\": \"text\", \"content\": \"...\"}`.",
        "Nested: {\"a\": {\"b\": {\"c\": 1}}}",
        "Set notation {x | x > 1} and a lone } or {.",
        "Angle text << and >> is not a delimiter here.",
    ];
    for text in clean {
        assert_no_survivors(text);
        assert!(Survivors::new().check(text).is_ok(), "{text}");
    }
}

#[test]
fn the_check_follows_the_delimiters() {
    let text = "Hi <<name>>. Literal {{x}} and {{ y }} stay. <<snippet: s>>";
    let found = survivors(text, &angle());
    assert_eq!(
        found,
        [
            (FindingKind::Var, "<<name>>".to_string(), 1, 4),
            (
                FindingKind::SnippetSyntax,
                "<<snippet: s>>".to_string(),
                1,
                46
            ),
        ]
    );
    assert_no_survivors_with("Literal {{x}} and {{ y }} stay.", &angle());
    let message = panic_message(|| assert_no_survivors_with("Hi <<name>>", &angle()));
    assert!(
        message.contains("1:4  <<name>>  (variable token)"),
        "{message}"
    );
}

/// A value is never re-scanned, so a token inside one reaches the output: the
/// check is what catches it.
#[test]
fn a_token_inside_a_value_survives_the_render_and_is_reported() {
    let library = Library::from_sources(
        vec![TemplateSource {
            id: "greet".into(),
            system: SourceFile::new("templates/greet/system.md", "Hello {{name}}."),
            user: None,
            messages: None,
        }],
        vec![],
        &promptpack::Config::default(),
    )
    .expect("valid template");
    let prompt = library
        .build_prompt("greet", &serde_json::json!({"name": "{{snippet:secret}}"}))
        .expect("renders");
    assert_eq!(prompt.system, "Hello {{snippet:secret}}.");
    let found = survivors(&prompt.system, &Delimiters::default());
    assert_eq!(
        found,
        [(FindingKind::Snippet, "{{snippet:secret}}".to_string(), 1, 7)]
    );
}

const JSON_EXAMPLE_PROMPT: &str = "You fill in templates for {{product}}.\n\
\n\
Answer with JSON like this:\n\
\n\
```json\n\
{\"template\": \"Dear {{\", \"fields\": [\"name\"]}\n\
```\n\
\n\
Keep it short.";

/// A literal `{{` that a prompt shows on purpose, in a fenced JSON example,
/// is reported by default: the check cannot know it is deliberate.
#[test]
fn a_literal_open_delimiter_in_a_fenced_json_example_is_reported() {
    let library = Library::from_sources(
        vec![TemplateSource {
            id: "filler".into(),
            system: SourceFile::new("templates/filler/system.md", JSON_EXAMPLE_PROMPT),
            user: None,
            messages: None,
        }],
        vec![],
        &promptpack::Config::default(),
    )
    .expect("the literal `{{` is plain text to the parser");
    let prompt = library
        .build_prompt("filler", &serde_json::json!({"product": "Orbit"}))
        .expect("renders");
    assert!(prompt.system.contains("\"Dear {{\""));
    let found = survivors(&prompt.system, &Delimiters::default());
    assert_eq!(
        found,
        [(FindingKind::UnmatchedOpen, "{{".to_string(), 6, 20)]
    );
    let message = panic_message(|| assert_no_survivors(&prompt.system));
    assert!(
        message.contains("6:20  {{  (unmatched opening delimiter)"),
        "{message}"
    );
}

#[test]
fn an_allowed_deliberate_survivor_passes() {
    let rendered = JSON_EXAMPLE_PROMPT.replace("{{product}}", "Orbit");
    // Inside a code fence.
    Survivors::new().allow_fenced_code().assert_none(&rendered);
    // By its exact text (for an unmatched delimiter, the delimiter).
    Survivors::new().allow("{{").assert_none(&rendered);
    // By kind.
    Survivors::new()
        .allow_kind(FindingKind::UnmatchedOpen)
        .assert_none(&rendered);

    // An allowance lets through what it names and nothing else.
    let text = "```\n{{ example }}\n```\n{{ example }} outside, and {{left}}";
    let found: Vec<_> = Survivors::new()
        .allow_fenced_code()
        .find(text)
        .iter()
        .map(|f| (f.line, f.text(text).to_string()))
        .collect();
    assert_eq!(
        found,
        [
            (4, "{{ example }}".to_string()),
            (4, "{{left}}".to_string())
        ]
    );
    let found: Vec<_> = Survivors::new()
        .allow("{{ example }}")
        .find(text)
        .iter()
        .map(|f| f.text(text).to_string())
        .collect();
    assert_eq!(found, ["{{left}}"]);
    Survivors::new()
        .allow("{{ example }}")
        .allow("{{left}}")
        .assert_none(text);
    // Allowances are per checker: the same text still fails the plain check.
    assert!(Survivors::new().check(text).is_err());
}

#[test]
fn a_failing_assertion_lists_every_survivor_readably() {
    let text = "You are {{agentName}}.\n\
                {{ mood }} and {{#each tools}}\n\
                {{snippet: style}} ends with {{";
    let message = panic_message(|| assert_no_survivors(text));
    assert_eq!(
        message,
        "5 template tokens survived in the rendered text:\n\
         \x20 1:9   {{agentName}}       (variable token)\n\
         \x20 2:1   {{ mood }}          (near-miss: spaces inside the delimiters; meant {{mood}}?)\n\
         \x20 2:16  {{#each tools}}     (near-miss: a block promptpack does not have)\n\
         \x20 3:1   {{snippet: style}}  (near-miss: malformed snippet include; meant {{snippet:style}}?)\n\
         \x20 3:30  {{                  (unmatched opening delimiter)\n\
         Allow deliberate ones with promptpack::testing::Survivors: allow(\"exact text\"), allow_kind(..) or allow_fenced_code()."
    );
}

#[test]
fn a_report_gives_the_findings_and_can_be_labelled() {
    let text = "one {{a}} two {{b}}";
    let report = Survivors::new()
        .check(text)
        .expect_err("two survivors")
        .labelled("greet, system.md");
    let pairs: Vec<_> = report.iter().map(|(f, t)| (f.column, t)).collect();
    assert_eq!(pairs, [(5, "{{a}}"), (15, "{{b}}")]);
    assert_eq!(report.findings().len(), 2);
    assert!(
        report
            .to_string()
            .starts_with("2 template tokens survived in greet, system.md:\n"),
        "{report}"
    );
    let long = format!("{{{{ {} }}}}", "word ".repeat(20));
    let message = panic_message(|| assert_no_survivors(&long));
    assert!(
        message.contains("1:1  {{ word word word word word word word wo…  (near-miss"),
        "{message}"
    );
}
