use super::*;
use crate::resolve::resolve;
use crate::source_file::SourceFile;
use crate::syntax::Delimiters;
use crate::{SnippetSource, TemplateSource};

fn read(text: &str) -> Read {
    read_front_matter(&SourceFile::new("t/system.md", text), FileRole::Template)
}

/// `code line:col` of each diagnostic.
fn places(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| {
            let at = d.location.as_ref().expect("located");
            format!("{} {}:{}", d.code, at.line(), at.column())
        })
        .collect()
}

#[test]
fn a_file_without_front_matter_is_unchanged() {
    for text in [
        "Hello",
        "--- not a block",
        "---\n\n---\nblank first line: a thematic break",
        "----\na: 1\n----\n",
        " ---\na: 1\n---\n",
        "text\n---\na: 1\n---\n",
        "---\na: 1\nnever closed",
    ] {
        let file = SourceFile::new("a.md", text);
        assert_eq!(file.front_matter(), None, "{text:?}");
        assert_eq!(file.body(), text.trim(), "{text:?}");
    }
}

#[test]
fn the_block_is_cut_before_the_trim_and_lines_still_count() {
    let file = SourceFile::new("a.md", "---\ndescription: Hi\n---\n\n  Hello {{x}}\n");
    assert_eq!(file.body(), "Hello {{x}}");
    assert_eq!(
        file.slice(file.front_matter().expect("block")),
        "description: Hi\n"
    );
    let at = file.location(file.body_span());
    assert_eq!((at.line(), at.column()), (5, 3));
    let crlf = SourceFile::new("a.md", "---\r\ndescription: Hi\r\n...\r\nBody");
    assert_eq!(crlf.body(), "Body");
    let bom = SourceFile::new("a.md", "\u{FEFF}---\ndescription: Hi\n---\nBody");
    assert_eq!(bom.body(), "Body");
    assert_eq!(
        bom.slice(bom.front_matter().expect("block after a BOM")),
        "description: Hi\n"
    );
}

#[test]
fn fields_are_read() {
    let read = read(concat!(
        "---\n",
        "description: Greets a user\n",
        "vars:\n",
        "  name: Who is greeted\n",
        "  formal: {kind: flag, description: Use the formal form, example: true}\n",
        "  title:\n",
        "    kind: optional\n",
        "examples:\n",
        "  basic: {name: Ada, formal: false}\n",
        "  second: {name: Grace}\n",
        "model: {name: gpt-4o, temperature: 0.2}\n",
        "metadata: [1, two]\n",
        "max_tokens: 800\n",
        "---\n",
        "Hi",
    ));
    assert!(read.errors.is_empty(), "{:?}", read.errors);
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let fm = read.front_matter;
    assert_eq!(fm.description.as_deref(), Some("Greets a user"));
    let vars = fm.vars.as_ref().expect("vars");
    let summary: Vec<_> = vars
        .iter()
        .map(|v| {
            (
                v.name.as_str(),
                v.kind,
                v.description.as_deref(),
                v.example.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("name", None, Some("Who is greeted"), None),
            (
                "formal",
                Some(VarKind::Flag),
                Some("Use the formal form"),
                Some(Value::Bool(true))
            ),
            ("title", Some(VarKind::Optional), None, None),
        ]
    );
    assert_eq!(vars[1].at.line(), 5);
    let names: Vec<_> = fm.examples.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["basic", "second"]);
    assert_eq!(fm.max_tokens, Some(800));
    assert_eq!(
        fm.settings_json().to_string(),
        r#"{"model":{"name":"gpt-4o","temperature":0.2},"metadata":[1,"two"]}"#
    );
    let values = fm.example_values(None).expect("first example");
    assert_eq!(
        Value::Object(values).to_string(),
        r#"{"formal":false,"name":"Ada"}"#
    );
    assert!(fm.example_values(Some("missing")).is_none());
}

#[test]
fn problems_point_at_their_line_in_the_md_file() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("---\na: [1\n---\n", &["invalid_front_matter 2:4"], &[]),
        (
            "---\ndescription: 3\n---\n",
            &["invalid_front_matter 2:14"],
            &[],
        ),
        ("---\ndescriptoin: x\n---\n", &[], &["unknown_key 2:1"]),
        (
            "---\nvars:\n  x: {kind: number}\n---\n",
            &["invalid_front_matter 3:13"],
            &[],
        ),
        (
            "---\nvars:\n  x: {knd: flag}\n---\n",
            &[],
            &["unknown_key 3:7"],
        ),
        (
            "---\nvars:\n  a-b: y\n---\n",
            &["invalid_front_matter 3:3"],
            &[],
        ),
        (
            "---\nvars:\n  x: {kind: flag, example: yes please}\n---\n",
            &["invalid_front_matter 3:28"],
            &[],
        ),
        (
            "---\nmax_tokens: -3\n---\n",
            &["invalid_front_matter 2:13"],
            &[],
        ),
        ("---\n- a\n---\n", &["invalid_front_matter 2:1"], &[]),
        ("---\na: 1\na: 2\n---\n", &["invalid_front_matter 3:1"], &[]),
    ];
    for (text, errors, warnings) in cases {
        let read = read(text);
        assert_eq!(
            places(&read.errors),
            *errors,
            "errors of {text:?}: {:?}",
            read.errors
        );
        if read.errors.is_empty() || !warnings.is_empty() {
            assert_eq!(places(&read.warnings), *warnings, "warnings of {text:?}");
        }
    }
}

#[test]
fn an_unknown_key_names_the_nearest_known_one() {
    let read = read("---\nmax_token: 3\n---\n");
    let warning = &read.warnings[0];
    assert_eq!(warning.help.as_deref(), Some("did you mean `max_tokens`?"));
}

#[test]
fn a_yaml_bomb_is_refused_not_built() {
    let mut text = String::from("---\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..12 {
        let prev = (b'a' + level - 1) as char;
        let this = (b'a' + level) as char;
        text.push_str(&format!("{this}: &{this} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    text.push_str("---\n");
    let read = read(&text);
    assert_eq!(read.errors.len(), 1, "{:?}", read.warnings);
    assert_eq!(read.errors[0].code, ErrorCode::InvalidFrontMatter);
}

fn resolve_one(system: &str, snippets: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    let sources = crate::sources::Sources::from_texts(&[("t", system)], snippets);
    let counted = crate::resolve::resolve_with(
        &sources.templates,
        &sources.snippets,
        &[],
        &crate::Settings {
            delimiters: Delimiters::default(),
            ..Default::default()
        },
    );
    (places(&counted.errors), places(&counted.warnings))
}

#[test]
fn a_contract_refuses_undeclared_names_and_contradicted_kinds() {
    let head = "---\nvars:\n  name: text\n  formal: {kind: flag}\n  title: {kind: optional}\n  tone: {kind: text}\n---\n";
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "{{name}}{{#if formal}}{{title}}{{/if}}{{#if title}}{{/if}}{{tone}}",
            &[],
            &[],
        ),
        ("{{name}}{{nmae}}", &["undeclared_var 8:9"], &[]),
        ("{{formal}}", &["kind_mismatch 8:1"], &[]),
        ("{{#if tone}}x{{/if}}", &["kind_mismatch 8:1"], &[]),
        (
            "{{#if tone == \"warm\"}}x{{/if}}",
            &["kind_mismatch 8:1"],
            &[],
        ),
        (
            "{{name}}",
            &[],
            &["unused_var 4:3", "unused_var 5:3", "unused_var 6:3"],
        ),
    ];
    for (body, errors, warnings) in cases {
        let (found_errors, found_warnings) = resolve_one(&format!("{head}{body}"), &[]);
        assert_eq!(found_errors, *errors, "errors of {body:?}");
        if errors.is_empty() {
            assert_eq!(found_warnings, *warnings, "warnings of {body:?}");
        }
    }
}

#[test]
fn a_declared_kind_overrides_inference_and_snippets_declare_their_own() {
    let templates = [TemplateSource {
        id: "t".into(),
        system: SourceFile::new(
            "t/system.md",
            "---\nvars:\n  title: {kind: optional}\n---\n{{title}} {{snippet:sig}}",
        ),
        user: None,
        messages: None,
    }];
    let snippets = [SnippetSource {
        name: "sig".into(),
        file: SourceFile::new(
            "snippets/sig.md",
            "---\nvars:\n  flagged: {kind: optional}\n---\n{{#if flagged}}!{{/if}}",
        ),
    }];
    let (prompts, errors) = resolve(&templates, &snippets, &Delimiters::default());
    assert!(errors.is_empty(), "{errors:?}");
    let kinds: Vec<_> = prompts[0]
        .vars
        .iter()
        .map(|v| (v.name.as_str(), v.kind()))
        .collect();
    assert_eq!(
        kinds,
        [("title", VarKind::Optional), ("flagged", VarKind::Optional)]
    );
}

#[test]
fn examples_stay_in_step_with_the_variables() {
    let cases: &[(&str, &[&str])] = &[
        (
            "---\nexamples:\n  a: {name: Ada, on: true, role: x}\n---\n{{name}}{{#if on}}{{/if}}{{#if role == \"x\"}}{{/if}}",
            &[],
        ),
        (
            "---\nexamples:\n  a: {nme: Ada}\n---\n{{name}}",
            &["invalid_front_matter 3:3"],
        ),
        (
            "---\nexamples:\n  a: {on: 1}\n---\n{{#if on}}{{/if}}",
            &["invalid_front_matter 3:3"],
        ),
        (
            "---\nexamples:\n  a: {role: y}\n---\n{{#if role == \"x\"}}{{/if}}",
            &["invalid_front_matter 3:3"],
        ),
    ];
    for (text, errors) in cases {
        let (found, _) = resolve_one(text, &[]);
        assert_eq!(found, *errors, "{text:?}");
    }
}

#[test]
fn a_prompts_two_files_merge_and_a_field_set_twice_is_an_error() {
    let templates = [TemplateSource {
        id: "t".into(),
        system: SourceFile::new(
            "t/system.md",
            "---\ndescription: A\nvars:\n  a: x\n---\n{{a}}",
        ),
        user: Some(SourceFile::new(
            "t/user.md",
            "---\ndescription: B\nvars:\n  b: y\n---\n{{b}}",
        )),
        messages: None,
    }];
    let (_, errors) = resolve(&templates, &[], &Delimiters::default());
    assert_eq!(places(&errors), ["invalid_front_matter 2:1"]);
    let templates = [TemplateSource {
        user: Some(SourceFile::new(
            "t/user.md",
            "---\nvars:\n  b: y\n---\n{{b}}",
        )),
        ..templates[0].clone()
    }];
    let (prompts, errors) = resolve(&templates, &[], &Delimiters::default());
    assert!(errors.is_empty(), "{errors:?}");
    let declared: Vec<_> = prompts[0]
        .front_matter
        .vars
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(declared, ["a", "b"]);
}

fn resolve_full(system: &str) -> crate::resolve::Counted {
    let templates = [TemplateSource {
        id: "t".into(),
        system: SourceFile::new("t/system.md", system),
        user: None,
        messages: None,
    }];
    crate::resolve::resolve_with(&templates, &[], &[], &crate::Settings::default())
}

const ROLE: &str = "---\nvars:\n  role: {kind: choice, values: [teacher, student, observer], description: Who speaks, example: student}\n---\n";

#[test]
fn a_choice_declares_its_values_in_order() {
    let read = read(ROLE);
    assert!(read.errors.is_empty(), "{:?}", read.errors);
    let role = read.front_matter.declared("role").expect("declared");
    assert_eq!(role.kind, Some(VarKind::Choice));
    assert_eq!(
        role.values.as_deref(),
        Some(&["teacher".to_string(), "student".into(), "observer".into()][..])
    );
    assert_eq!(role.example, Some(Value::String("student".into())));
    let at = role.value_location(2);
    assert_eq!((at.line(), at.column()), (3, 51));
    // The serialized declaration (what a catalog version stores) keeps them.
    let json = serde_json::to_value(role).expect("serializes");
    assert_eq!(json["kind"], "choice");
    assert_eq!(json["values"][2], "observer");

    let counted = resolve_full(&format!(
        "{ROLE}{{{{#if role == \"student\"}}}}S{{{{else if role == \"teacher\"}}}}T{{{{else}}}}O{{{{/if}}}}"
    ));
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    let var = &counted.prompts[0].vars[0];
    assert_eq!(var.kind(), VarKind::Choice);
    assert_eq!(var.choices, ["teacher", "student", "observer"]);
    assert_eq!(var.compared, ["student", "teacher"]);
}

#[test]
fn a_choice_declaration_of_the_wrong_shape_is_an_error_at_its_place() {
    let cases: &[(&str, &[&str])] = &[
        ("  role: {kind: choice}\n", &["invalid_front_matter 3:3"]),
        ("  role: {values: [a, b]}\n", &["invalid_front_matter 3:10"]),
        (
            "  role: {kind: text, values: [a]}\n",
            &["invalid_front_matter 3:22"],
        ),
        (
            "  role: {kind: choice, values: [a, a]}\n",
            &["invalid_front_matter 3:36"],
        ),
        (
            "  role: {kind: choice, values: []}\n",
            &["invalid_front_matter 3:32"],
        ),
        (
            "  role: {kind: choice, values: a}\n",
            &["invalid_front_matter 3:32"],
        ),
        (
            "  role: {kind: choice, values: [\"a\\\"b\"]}\n",
            &["invalid_front_matter 3:33"],
        ),
        (
            "  role: {kind: choice, values: [a, [b]]}\n",
            &["invalid_front_matter 3:36"],
        ),
        (
            "  role: {kind: choice, values: [a], example: true}\n",
            &["invalid_front_matter 3:46"],
        ),
        (
            "  role: {kind: optional_choice, values: [a, 2.5], example: null}\n",
            &[],
        ),
    ];
    for (vars, errors) in cases {
        let read = read(&format!("---\nvars:\n{vars}---\nHi"));
        assert_eq!(places(&read.errors), *errors, "{vars:?}");
    }
}

#[test]
fn a_comparison_outside_the_declared_values_is_invalid_choice_at_the_comparison() {
    let counted = resolve_full(&format!(
        "{ROLE}{{{{#if role == \"teacher\"}}}}T{{{{else if role == \"obsever\"}}}}O{{{{else if role == \"admin\"}}}}A{{{{/if}}}}"
    ));
    let found: Vec<(String, String, String)> = counted
        .errors
        .iter()
        .map(|d| {
            let at = d.location.as_ref().expect("located");
            (
                format!("{} {}:{}", d.code, at.line(), at.column()),
                d.message.clone(),
                d.help.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "invalid_choice 5:27");
    assert_eq!(
        found[0].1,
        "`{{else if role == \"obsever\"}}` compares `role` with \"obsever\", which is not one of its declared values"
    );
    assert!(
        found[0].2.starts_with("did you mean \"observer\"?"),
        "{}",
        found[0].2
    );
    assert_eq!(found[1].0, "invalid_choice 5:57");
    assert!(
        found[1]
            .2
            .contains("\"teacher\", \"student\", \"observer\""),
        "{}",
        found[1].2
    );
    assert!(counted.prompts.is_empty());
}

#[test]
fn a_declared_value_no_branch_compares_warns_where_it_goes() {
    let with_else = resolve_full(&format!(
        "{ROLE}{{{{#if role == \"teacher\"}}}}T{{{{else if role == \"student\"}}}}S{{{{else}}}}O{{{{/if}}}}"
    ));
    assert!(with_else.errors.is_empty(), "{:?}", with_else.errors);
    assert_eq!(places(&with_else.warnings), ["unhandled_choice 3:51"]);
    assert_eq!(
        with_else.warnings[0].message,
        "value \"observer\" of `role` is declared, but no branch compares with it: it renders the `{{else}}` branch (t/system.md:5:57)"
    );
    let nothing = resolve_full(&format!(
        "{ROLE}Hi {{{{#if role == \"teacher\"}}}}T{{{{/if}}}}"
    ));
    assert_eq!(
        places(&nothing.warnings),
        ["unhandled_choice 3:42", "unhandled_choice 3:51"]
    );
    assert!(
        nothing.warnings[0]
            .message
            .ends_with("it renders nothing of the block (t/system.md:5:4)"),
        "{}",
        nothing.warnings[0].message
    );
    // Printed only: no branch to fall through, nothing to warn of.
    let printed = resolve_full(&format!("{ROLE}{{{{role}}}}"));
    assert!(printed.errors.is_empty() && printed.warnings.is_empty());
    assert_eq!(printed.prompts[0].vars[0].choices.len(), 3);
}

#[test]
fn an_optional_choice_may_be_tested_and_a_choice_may_not() {
    let optional = "---\nvars:\n  role: {kind: optional_choice, values: [teacher, student]}\n---\n{{#if role}}{{#if role == \"teacher\"}}T{{else}}S{{/if}}{{/if}}";
    let counted = resolve_full(optional);
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    assert_eq!(counted.prompts[0].vars[0].kind(), VarKind::OptionalChoice);
    assert_eq!(places(&counted.warnings), ["unhandled_choice 3:51"]);
    let choice = optional.replace("optional_choice", "choice");
    let counted = resolve_full(&choice);
    assert_eq!(places(&counted.errors), ["kind_mismatch 5:1"]);
    assert!(
        counted.errors[0]
            .help
            .as_deref()
            .unwrap_or("")
            .contains("optional_choice"),
        "{:?}",
        counted.errors[0]
    );
}

#[test]
fn without_a_declaration_choices_are_what_is_compared() {
    let counted = resolve_full(
        "{{#if role == \"b\"}}B{{else if role == \"a\"}}A{{/if}}{{#if role == \"c\"}}{{/if}}",
    );
    assert!(counted.errors.is_empty() && counted.warnings.is_empty());
    let var = &counted.prompts[0].vars[0];
    assert_eq!(var.choices, ["b", "a", "c"]);
    assert_eq!(var.compared, var.choices);
    assert_eq!(var.blocks.len(), 2);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Lines a front matter block and the text around it are made of:
    /// fences, YAML of every shape (flow, block, anchors, bad indentation)
    /// and template text.
    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("---".to_string()),
            Just("...".to_string()),
            Just(String::new()),
            "[a-z_]{1,8}: [a-zA-Z0-9 {}\\[\\],:&*\"'-]{0,20}",
            "  [a-z_]{1,8}: [a-zA-Z0-9 {}\\[\\],:\"-]{0,20}",
            "- [a-z0-9{}\\[\\]]{0,10}",
            "[ -~]{0,30}",
            "\\{\\{[a-z#/ =\"]{0,12}\\}\\}",
        ]
    }

    proptest! {
        /// Whatever a file says, reading its front matter never panics,
        /// the block and the body stay inside the text in order, a file
        /// that does not start with a `---` line has no block, and every
        /// problem is located inside the file.
        #[test]
        fn any_file_reads_without_panicking(lines in proptest::collection::vec(line(), 0..14), crlf in any::<bool>()) {
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            let file = SourceFile::new("t/system.md", text.clone());
            let body = file.body_span();
            prop_assert!(body.start <= body.end && body.end <= text.len());
            match file.front_matter() {
                Some(yaml) => {
                    prop_assert!(text.starts_with("---"));
                    prop_assert!(yaml.start <= yaml.end && yaml.end <= body.start);
                }
                None => prop_assert_eq!(file.body(), text.trim_matches(crate::source_file::is_js_whitespace)),
            }
            for role in [FileRole::Template, FileRole::Snippet] {
                let read = read_front_matter(&file, role);
                for d in read.errors.iter().chain(&read.warnings) {
                    let at = d.location.as_ref().expect("located");
                    prop_assert!(at.line() >= 1 && at.line() <= text.lines().count().max(1) + 1, "{d}");
                }
            }
        }
    }
}

/// A snippet's declared choice warns once, at the snippet, however many
/// prompts include it.
#[test]
fn a_snippets_unhandled_value_warns_once() {
    let templates: Vec<TemplateSource> = ["a", "b"]
        .into_iter()
        .map(|id| TemplateSource {
            id: id.into(),
            system: SourceFile::new(format!("{id}/system.md"), "{{snippet:pace}}"),
            user: None,
            messages: None,
        })
        .collect();
    let snippets = [SnippetSource {
        name: "pace".into(),
        file: SourceFile::new(
            "snippets/pace.md",
            "---\nvars:\n  pace: {kind: choice, values: [slow, fast]}\n---\n{{#if pace == \"slow\"}}Slowly.{{/if}}",
        ),
    }];
    let counted =
        crate::resolve::resolve_with(&templates, &snippets, &[], &crate::Settings::default());
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    assert_eq!(places(&counted.warnings), ["unhandled_choice 3:39"]);
    assert_eq!(counted.prompts.len(), 2);
    assert_eq!(counted.prompts[1].vars[0].choices, ["slow", "fast"]);
}

/// The branch a warning names is written as the prompt writes it, in its
/// delimiters.
#[test]
fn an_unhandled_value_names_the_branch_in_the_prompts_delimiters() {
    let templates = [TemplateSource {
        id: "t".into(),
        system: SourceFile::new(
            "t/system.md",
            format!("{ROLE}<<#if role == \"teacher\">>T<<else>>O<</if>>"),
        ),
        user: None,
        messages: None,
    }];
    let settings = crate::Settings {
        delimiters: Delimiters::new("<<", ">>").expect("delimiters"),
        ..Default::default()
    };
    let counted = crate::resolve::resolve_with(&templates, &[], &[], &settings);
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    let messages: Vec<&str> = counted
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].ends_with("it renders the `<<else>>` branch (t/system.md:5:27)"),
        "{messages:?}"
    );
}
