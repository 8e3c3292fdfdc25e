//! The body of each cargo-fuzz target, as a plain function of the input
//! bytes that panics on a finding. `fuzz/fuzz_targets/<name>.rs` calls
//! `fuzz_<name>`; `tests/fuzz_regressions.rs` replays the files of
//! `fuzz/regressions/<name>/` through [`TARGETS`].

use crate::case::{expanded_size, parse_case};
use crate::checks::{
    check_generated_code, check_location, check_parsed, check_splice_work, refused_by_codegen,
};
use crate::reference::{evaluate_prompt, snippet_trees, tree};
use promptpack::Library;
use promptpack_build::codegen::{DevPaths, generate};
use promptpack_core::diagnostics::{Severity, Style, render_diagnostic};
use promptpack_core::front_matter::{FileRole, read_front_matter};
use promptpack_core::lint::lint_sources;
use promptpack_core::resolve::resolve;
use promptpack_core::scan::find_tokens;
use promptpack_core::source_file::SourceFile;
use promptpack_core::syntax::{Delimiters, parse};
use promptpack_core::{ErrorCode, Settings, Sources};
use std::collections::HashMap;

/// A fuzz target's body: takes the input, panics on a finding.
pub type Target = fn(&[u8]);

/// Every target by name, the name of its folders under `fuzz/`
/// (`fuzz_targets/<name>.rs`, `corpus/<name>/`, `regressions/<name>/`).
pub const TARGETS: &[(&str, Target)] = &[
    ("parse", fuzz_parse),
    ("resolve_render", fuzz_resolve_render),
    ("codegen", fuzz_codegen),
    ("snippet_fanout", fuzz_snippet_fanout),
    ("answer", fuzz_answer),
];

/// The target called `name` in [`TARGETS`].
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
}

/// Beyond this expanded size, splicing snippets is the input's point, not a
/// bug's: [`fuzz_resolve_render`] skips the input.
const MAX_EXPANDED_RENDER: usize = 1 << 22;

/// The same for [`fuzz_codegen`], whose code grows faster than the text.
const MAX_EXPANDED_CODEGEN: usize = 1 << 20;

/// Target `parse`: any text (not UTF-8: skipped), as one file, with several
/// delimiter settings. Parsing never panics; on success its items tile the
/// trimmed body exactly ([`check_parsed`]); on failure every error points
/// into the file and renders; the lint scanner never panics either.
pub fn fuzz_parse(data: &[u8]) {
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
            Ok(parsed) => check_parsed(&file, &parsed),
            Err(errors) => {
                assert!(!errors.is_empty());
                for d in &errors {
                    check_location(d, &files);
                    let _ = render_diagnostic(d, Severity::Error, Style::Plain);
                }
            }
        }
    }
}

/// Target `resolve_render`: a prompt folder in the [case format](crate::case).
/// Linting and loading never panic, and report located errors; a loaded
/// library renders every template exactly as the [reference
/// evaluator](crate::reference) does, leniently (missing values written back
/// as tokens) and strictly (an error naming exactly the missing variables).
pub fn fuzz_resolve_render(data: &[u8]) {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let case = parse_case(input);
    if expanded_size(&case) > MAX_EXPANDED_RENDER {
        return;
    }
    let files = case.files();
    let sources = Sources {
        templates: case.templates.clone(),
        snippets: case.snippets.clone(),
        ..Sources::default()
    };
    let settings = Settings {
        delimiters: case.delimiters.clone(),
        ..Settings::default()
    };
    for lint in lint_sources(&sources, &settings) {
        // Lints may also name a folder, such as a template folder.
        if lint
            .location
            .as_ref()
            .is_some_and(|l| files.contains_key(l.path()))
        {
            check_location(&lint, &files);
        }
        let _ = render_diagnostic(&lint, Severity::Warning, Style::Plain);
    }
    let config = promptpack::Config::default()
        .with_delimiters(case.delimiters.open(), case.delimiters.close())
        .unwrap_or_else(|e| panic!("the case's delimiters were checked when made: {e}"));
    let library =
        match Library::from_sources(case.templates.clone(), case.snippets.clone(), &config) {
            Ok(library) => library,
            Err(e) => {
                for d in e.diagnostics() {
                    check_location(d, &files);
                    let _ = render_diagnostic(d, Severity::Error, Style::Plain);
                }
                return;
            }
        };
    let snippets = snippet_trees(&case.snippets, &case.delimiters);
    for t in &case.templates {
        let mut want_missing: Vec<String> = Vec::new();
        // What `{{schema:response}}` writes: the response either part
        // declares (the library refused a prompt that declares it twice).
        let response = std::iter::once(&t.system)
            .chain(&t.user)
            .find_map(|file| {
                read_front_matter(file, FileRole::Template)
                    .front_matter
                    .response
            })
            .map(|response| response.describe());
        let mut render_part = |file: &SourceFile| {
            let nodes = tree(file, &case.delimiters).unwrap_or_else(|| {
                panic!("the library accepted {} but it does not parse", file.path())
            });
            let r = evaluate_prompt(
                &nodes,
                &snippets,
                &case.vars,
                &case.delimiters,
                response.as_deref(),
            );
            for m in r.missing {
                if !want_missing.contains(&m) {
                    want_missing.push(m);
                }
            }
            r.text
        };
        let want_system = render_part(&t.system);
        let want_user = t.user.as_ref().map(render_part);

        let lenient = library
            .build_prompt_lenient(&t.id, &case.vars)
            .expect("a lenient render never fails");
        assert_eq!(lenient.system, want_system, "system part of {}", t.id);
        assert_eq!(lenient.user, want_user, "user part of {}", t.id);
        match library.build_prompt(&t.id, &case.vars) {
            Ok(strict) => {
                assert!(
                    want_missing.is_empty(),
                    "strict render ignored {want_missing:?}"
                );
                assert_eq!(strict, lenient);
            }
            Err(e) => {
                let missing: Vec<String> = e
                    .diagnostics()
                    .iter()
                    .map(|d| {
                        assert_eq!(d.code, ErrorCode::MissingVar);
                        check_location(d, &files);
                        let prefix = format!("prompt `{}` needs `", t.id);
                        let name = d.message.strip_prefix(&prefix);
                        let name = name.and_then(|n| n.strip_suffix("`, which was not given"));
                        name.unwrap_or_else(|| panic!("unexpected message: {}", d.message))
                            .to_string()
                    })
                    .collect();
                assert_eq!(missing, want_missing, "missing variables of {}", t.id);
            }
        }
    }
}

/// Target `codegen`: a prompt folder in the [case format](crate::case).
/// Whatever resolves, the code generator either reports located naming
/// errors, or writes Rust that parses and holds nothing rustc refuses in a
/// doc comment or literal ([`check_generated_code`]).
pub fn fuzz_codegen(data: &[u8]) {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let case = parse_case(input);
    if expanded_size(&case) > MAX_EXPANDED_CODEGEN {
        return;
    }
    let (mut prompts, errors) = resolve(&case.templates, &case.snippets, &case.delimiters);
    if !errors.is_empty() {
        return;
    }
    prompts.sort_by(|a, b| a.id.cmp(&b.id));
    let dev = fixed_dev_paths(&case.delimiters);
    match generate(&prompts, &case.templates, &dev) {
        Ok(code) => check_generated_code(&code),
        Err(e) => {
            let files = case.files();
            for d in e.diagnostics() {
                assert!(refused_by_codegen(d.code), "unexpected {d}");
                assert!(d.location.is_some(), "{d} has no location");
                // Id errors name the folder, not a file.
                if !matches!(d.code, ErrorCode::InvalidId | ErrorCode::IdCollision) {
                    check_location(d, &files);
                }
            }
        }
    }
}

/// Target `snippet_fanout`: the bytes pick a graph of snippets that include
/// later ones several times over (plain, inside both branches of a block,
/// next to text, whitespace, variables or blocks that test false), and a
/// template or two that include them: splices of snippets that
/// may add nothing, exponentially many of them. Resolving takes work linear in the input and the
/// output ([`check_splice_work`]), and what it makes renders as the
/// reference evaluator does ([`fuzz_resolve_render`], when it is small
/// enough to expand).
pub fn fuzz_snippet_fanout(data: &[u8]) {
    let text = fanout_case(data);
    check_splice_work(&parse_case(&text));
    fuzz_resolve_render(text.as_bytes());
}

/// The [case](crate::case) that [`fuzz_snippet_fanout`] makes of `data`:
/// snippets `s0`, `s1`, … where each includes only later ones (so no
/// cycle), read from the bytes as they come; missing bytes read as 0.
pub fn fanout_case(data: &[u8]) -> String {
    let mut bytes = data.iter().copied();
    let mut next = move || usize::from(bytes.next().unwrap_or(0));
    let count = 2 + next() % 40;
    let mut out = String::new();
    for i in 0..count {
        out.push_str(&format!("--- snippets/s{i}.md\n"));
        let later = count - i - 1;
        let include = |next: &mut dyn FnMut() -> usize| match later {
            0 => String::new(),
            _ => format!("{{{{snippet:s{}}}}}", i + 1 + next() % later),
        };
        for _ in 0..next() % 5 {
            let piece = match next() % 8 {
                0 => {
                    let one = include(&mut next);
                    one.repeat(1 + next() % 3)
                }
                1 => {
                    let (a, b) = (include(&mut next), include(&mut next));
                    format!("{{{{#if c}}}}{a}{{{{else}}}}{b}{{{{/if}}}}")
                }
                2 => format!("{{{{#if c == \"a\"}}}}{}{{{{/if}}}}", include(&mut next)),
                3 => [" ", "\n", "\r\n", "x"][next() % 4].to_string(),
                4 => "{{v}}".to_string(),
                5 => "{{#if off}}{{/if}}".to_string(),
                _ => include(&mut next),
            };
            out.push_str(&piece);
        }
        out.push('\n');
    }
    out.push_str("--- templates/t/system.md\nS {{snippet:s0}}\n");
    if next() % 2 == 1 {
        out.push_str(&format!(
            "--- templates/t/user.md\n{{{{snippet:s{}}}}} U\n",
            next() % count
        ));
    }
    out.push_str("--- vars\n{\"c\": true, \"v\": \"V\"}\n");
    out
}

/// The dev paths generated code records, fixed under `/crate` rather than
/// the checkout's, so that generated code and its snapshots are the same
/// wherever the tests run; the default render bound.
pub fn fixed_dev_paths(delimiters: &Delimiters) -> DevPaths {
    DevPaths {
        root: "/crate".into(),
        templates: "/crate/templates".into(),
        snippets: "/crate/snippets".into(),
        open: delimiters.open().into(),
        close: delimiters.close().into(),
        standalone_tags: false,
        max_render_bytes: promptpack_core::render::DEFAULT_MAX_RENDER_BYTES,
    }
}

/// The response an [`fuzz_answer`] input is read against when it declares
/// none: every kind of the notation, nested, optional and listed.
const ANSWER_RESPONSE: &str = "---
response:
  reply: string, what the customer reads
  category: [billing, shipping, other]
  urgent: boolean
  score: number
  count?: integer
  steps: string[]
  refund?(object, when one is due):
    amount: number
    lines(array):
      sku: string
      quantity: integer
---
";

/// Target `answer`: a model's answer (any text; not UTF-8: skipped), read
/// against a response of every kind of the notation, nested, optional and
/// listed, or against the `response` an input that
/// starts with a front matter block declares (the text after the block is
/// the answer). Reading never panics; a refusal is located in the answer's
/// text and renders; what it accepts, written back as JSON, reads again to
/// the same value.
pub fn fuzz_answer(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (declaration, answer) = match text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
    {
        Some((block, answer)) => (format!("---\n{block}\n---\n"), answer),
        None => (ANSWER_RESPONSE.to_string(), text),
    };
    let file = SourceFile::new("templates/p/system.md", &declaration);
    let read = read_front_matter(&file, FileRole::Template);
    let Some(response) = read.front_matter.response else {
        return;
    };
    let files = HashMap::from([("answer".to_string(), answer.to_string())]);
    match promptpack_core::answer::read_answer(answer, &response) {
        Ok(value) => {
            let again = promptpack_core::answer::read_answer(&value.to_string(), &response)
                .unwrap_or_else(|e| panic!("{value} was read, but not when written back: {e}"));
            assert_eq!(again, value, "read back differently");
        }
        Err(error) => {
            assert!(!error.diagnostics().is_empty(), "a refusal says why");
            for d in error.diagnostics() {
                check_location(d, &files);
                let _ = render_diagnostic(d, Severity::Error, Style::Plain);
            }
        }
    }
    for tool_arguments in [answer, "{}"] {
        let tool = promptpack_core::schema::Tool::new(
            "t",
            None,
            response.clone(),
            promptpack_core::Location::file("t"),
        );
        let _ = promptpack_core::answer::read_arguments(tool_arguments, &tool);
    }
}

#[cfg(test)]
mod tests {
    use super::fuzz_answer;

    /// The target's checks hold on answers it accepts and refuses, against
    /// its own response and one an input declares.
    #[test]
    fn the_answer_target_reads_accepted_and_refused_answers() {
        let accepted = r#"Here: ```json
{"reply": "ok", "category": "other", "urgent": false, "score": 1.5, "count": 2.0,
 "steps": ["a"], "refund": {"amount": 3, "lines": [{"sku": "x", "quantity": 1}]}}
```"#;
        for input in [
            accepted,
            "{\"reply\": 3",
            "not json at all",
            "---\nresponse:\n  a: [x, y]\n---\n{\"a\": \"x\"}",
            "---\nresponse:\n  a: strng\n---\n{}",
            "\u{feff}\n\n   {\"reply\": \"é\"",
        ] {
            fuzz_answer(input.as_bytes());
        }
    }
}
