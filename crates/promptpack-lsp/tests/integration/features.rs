//! One test per feature, each driving the server over JSON-RPC messages as
//! an editor does, on a copy of `tests/fixtures/tree`:
//!
//! - `templates/tutor/system.md` declares `subject` (text), `level` (a
//!   choice of `beginner`, `expert`) and `question`, and includes `rules`
//!   and the `tone` section of `style`; its `user.md` uses `question` and
//!   `subject`.
//! - `templates/greet/system.md` declares nothing, uses `name`, includes
//!   `outer`, which includes `rules`.
//! - `templates/plain/system.md` declares and uses `topic`, includes nothing.

use crate::support;

use promptpack_lsp::{BuildChecker, Checker, Findings};
use serde_json::{Value, json};
use support::{Editor, check_on_disk, hover_text};

const TUTOR: &str = "templates/tutor/system.md";
const TUTOR_USER: &str = "templates/tutor/user.md";
const GREET: &str = "templates/greet/system.md";

/// Line `n` (0-based) of `text` replaced by `line`.
fn with_line(text: &str, n: usize, line: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    lines[n] = line;
    lines.join("\n")
}

/// Writes the buffer to disk and asserts the server shows what `check`
/// says of the tree on disk, then puts the file back.
fn assert_same_as_check(editor: &mut Editor, relative: &str, text: &str) {
    let path = editor.root.join(relative);
    let saved = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::write(&path, text).expect("the buffer written");
    let expected = check_on_disk(&editor.root);
    std::fs::write(&path, saved).expect("the file put back");
    assert_eq!(
        editor.shown(),
        expected,
        "the server shows what `check` says"
    );
}

#[test]
fn diagnostics_follow_unsaved_edits_with_checks_codes_and_places() {
    let mut editor = Editor::start("tree");
    assert_eq!(editor.shown(), vec![], "the fixture is clean");
    editor.open(TUTOR);
    let original = std::fs::read_to_string(editor.root.join(TUTOR)).expect("the fixture");
    // (what is done, line changed, its new text, code expected, at line)
    let cases: &[(&str, usize, &str, &str, u32)] = &[
        (
            "a typo of a declared name",
            12,
            "You tutor {{subjcet}}.",
            "undeclared_var",
            13,
        ),
        (
            "YAML that does not parse",
            7,
            "  level: {kind: choice, values: [beginner, expert]",
            "invalid_front_matter",
            9,
        ),
        (
            "a text tested as a flag",
            13,
            "{{#if subject}}",
            "kind_mismatch",
            14,
        ),
        (
            "a section the snippet lacks",
            19,
            "{{snippet:style#tones}}",
            "section_not_found",
            20,
        ),
        ("a fence cut by a branch", 14, "```", "broken_fence", 14),
        (
            "a token with spaces",
            16,
            "Start {{ subject }}.",
            "near_miss",
            17,
        ),
        (
            "an unknown front matter key",
            1,
            "descripton: Tutors one subject at a level.",
            "unknown_key",
            2,
        ),
    ];
    for (what, line, new_line, code, at) in cases {
        let text = with_line(&original, *line, new_line);
        editor.replace(TUTOR, &text);
        let shown = editor.shown();
        assert!(
            shown
                .iter()
                .any(|d| d.0 == TUTOR && d.1 == *at && d.3 == *code),
            "{what}: expected {code} at line {at}, got {shown:?}"
        );
        assert_same_as_check(&mut editor, TUTOR, &text);
        editor.replace(TUTOR, &original);
        assert_eq!(
            editor.shown(),
            vec![],
            "{what}: fixed, the file's diagnostics are cleared"
        );
    }
    // A typo comes with its suggestion.
    editor.replace(TUTOR, &with_line(&original, 12, "You tutor {{subjcet}}."));
    let diagnostics = editor.diagnostics();
    let message = diagnostics[TUTOR][0]["message"].as_str().unwrap_or("");
    assert!(message.contains("did you mean `subject`"), "{message}");
    assert_eq!(diagnostics[TUTOR][0]["source"], "promptpack");
    assert_eq!(diagnostics[TUTOR][0]["severity"], 1);
    editor.shutdown();
}

#[test]
fn an_edit_to_a_snippet_shows_in_the_prompts_that_include_it() {
    let mut editor = Editor::start("tree");
    editor.open("snippets/rules.md");
    editor.replace("snippets/rules.md", "Be {{mood}}.\n{{#if strict}}\n");
    let shown = editor.shown();
    assert!(
        shown
            .iter()
            .any(|d| d.0 == "snippets/rules.md" && d.3 == "unclosed_block"),
        "{shown:?}"
    );
    assert_same_as_check(
        &mut editor,
        "snippets/rules.md",
        "Be {{mood}}.\n{{#if strict}}\n",
    );
    // Closed, `mood` is undeclared in `tutor` (which declares its vars) and
    // fine in `greet` (which declares none).
    editor.replace("snippets/rules.md", "Be {{mood}}.\n");
    let shown = editor.shown();
    assert!(
        shown
            .iter()
            .any(|d| d.3 == "undeclared_var" && d.4.contains("mood")),
        "{shown:?}"
    );
    assert_same_as_check(&mut editor, "snippets/rules.md", "Be {{mood}}.\n");
    // An unsaved new snippet is included as if saved.
    editor.open_text("snippets/extra.md", "More.");
    editor.replace(GREET, "Hello {{name}}.\n{{snippet:extra}}\n");
    editor.open(GREET);
    editor.replace(GREET, "Hello {{name}}.\n{{snippet:extra}}\n");
    let shown = editor.shown();
    assert!(
        !shown.iter().any(|d| d.3 == "snippet_not_found"),
        "{shown:?}"
    );
    editor.shutdown();
}

/// A checker that counts no tokens but says which prompt it was asked of.
struct Counting;

impl Checker for Counting {
    fn check(
        &self,
        config: &promptpack_build::Config,
        sources: promptpack_core::sources::Sources,
    ) -> Findings {
        BuildChecker.check(config, sources)
    }
    fn token_range(
        &self,
        _: &promptpack_build::Config,
        sources: promptpack_core::sources::Sources,
        id: &str,
    ) -> Option<String> {
        Some(format!("{id} of {} prompts", sources.templates.len()))
    }
}

#[test]
fn hover_shows_declarations_uses_snippets_sections_choices_and_token_ranges() {
    let mut editor = Editor::start_with("tree", Box::new(Counting));
    editor.open(TUTOR);
    // A variable: kind, description, example, where it is used.
    let subject = hover_text(&mut editor, TUTOR, 12, 14);
    for part in [
        "`subject`",
        "text",
        "What is taught.",
        "algebra",
        "templates/tutor/system.md:13:13",
        "templates/tutor/user.md:1:23",
    ] {
        assert!(subject.contains(part), "{part} in {subject}");
    }
    // The same from its declaration in front matter.
    assert_eq!(hover_text(&mut editor, TUTOR, 3, 4), subject);
    // A choice compared: its values.
    let level = hover_text(&mut editor, TUTOR, 13, 8);
    assert!(
        level.contains("choice") && level.contains("`beginner`, `expert`"),
        "{level}"
    );
    // A snippet: its text; a section: that section only.
    let rules = hover_text(&mut editor, TUTOR, 18, 12);
    assert!(rules.contains("Be kind and exact."), "{rules}");
    let tone = hover_text(&mut editor, TUTOR, 19, 18);
    assert!(
        tone.contains("Warm and brief.") && !tone.contains("Three sentences"),
        "{tone}"
    );
    // A prompt file's first line: its token range, from the checker.
    let first = hover_text(&mut editor, GREET, 0, 2);
    assert_eq!(first, "**prompt `greet`**: greet of 3 prompts");
    // Plain text elsewhere: nothing.
    let plain = editor
        .at("textDocument/hover", TUTOR, 16, 3, json!({}))
        .expect("an answer");
    assert_eq!(plain, Value::Null);
    editor.shutdown();
}

fn target(answer: &Value) -> (String, u64, u64) {
    let uri = answer["uri"].as_str().unwrap_or("");
    let file = uri
        .rsplit_once("/tree-")
        .map_or(uri, |(_, f)| f)
        .to_string();
    (
        file,
        answer["range"]["start"]["line"].as_u64().unwrap_or(99),
        answer["range"]["start"]["character"].as_u64().unwrap_or(99),
    )
}

#[test]
fn go_to_definition_leads_to_snippets_headings_and_declarations() {
    let mut editor = Editor::start("tree");
    editor.open(TUTOR);
    let rules = editor
        .at("textDocument/definition", TUTOR, 18, 12, json!({}))
        .expect("an answer");
    assert_eq!(
        editor.relative(rules["uri"].as_str().unwrap_or("")),
        "snippets/rules.md"
    );
    assert_eq!(target(&rules).1, 0);
    let tone = editor
        .at("textDocument/definition", TUTOR, 19, 18, json!({}))
        .expect("an answer");
    assert_eq!(
        editor.relative(tone["uri"].as_str().unwrap_or("")),
        "snippets/style.md"
    );
    assert_eq!(target(&tone).1, 2, "the `## Tone` line");
    let subject = editor
        .at("textDocument/definition", TUTOR_USER, 0, 24, json!({}))
        .expect("an answer");
    assert_eq!(
        editor.relative(subject["uri"].as_str().unwrap_or("")),
        TUTOR
    );
    assert_eq!(
        (target(&subject).1, target(&subject).2),
        (3, 2),
        "`subject:` under `vars:`"
    );
    // A variable nobody declares has no definition.
    let name = editor
        .at("textDocument/definition", GREET, 0, 9, json!({}))
        .expect("an answer");
    assert_eq!(name, Value::Null);
    editor.shutdown();
}

fn places(editor: &Editor, answer: &Value) -> Vec<(String, u64, u64)> {
    let mut found: Vec<(String, u64, u64)> = answer
        .as_array()
        .map(|list| {
            list.iter()
                .map(|l| {
                    let (_, line, character) = target(l);
                    (
                        editor.relative(l["uri"].as_str().unwrap_or("")),
                        line,
                        character,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn references_find_every_include_of_a_snippet_and_every_use_of_a_variable() {
    let mut editor = Editor::start("tree");
    editor.open("snippets/rules.md");
    let from_include = editor
        .at(
            "textDocument/references",
            TUTOR,
            18,
            12,
            json!({"context": {"includeDeclaration": true}}),
        )
        .expect("an answer");
    let expected = vec![
        ("snippets/outer.md".to_string(), 0, 20),
        (TUTOR.to_string(), 18, 10),
    ];
    assert_eq!(places(&editor, &from_include), expected);
    let from_snippet = editor
        .at(
            "textDocument/references",
            "snippets/rules.md",
            0,
            3,
            json!({"context": {"includeDeclaration": true}}),
        )
        .expect("an answer");
    assert_eq!(places(&editor, &from_snippet), expected);
    let subject = editor
        .at(
            "textDocument/references",
            TUTOR,
            14,
            22,
            json!({"context": {"includeDeclaration": true}}),
        )
        .expect("an answer");
    assert_eq!(
        places(&editor, &subject),
        vec![
            (TUTOR.to_string(), 3, 2),
            (TUTOR.to_string(), 12, 12),
            (TUTOR.to_string(), 14, 21),
            (TUTOR_USER.to_string(), 0, 22)
        ]
    );
    let without = editor
        .at(
            "textDocument/references",
            TUTOR,
            14,
            22,
            json!({"context": {"includeDeclaration": false}}),
        )
        .expect("an answer");
    assert_eq!(places(&editor, &without).len(), 3);
    editor.shutdown();
}

fn labels(answer: &Value) -> Vec<String> {
    answer
        .as_array()
        .map(|l| {
            l.iter()
                .map(|i| i["label"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn completion_offers_variables_snippets_sections_values_keywords_and_keys() {
    let mut editor = Editor::start("tree");
    let original = std::fs::read_to_string(editor.root.join(TUTOR)).expect("the fixture");
    editor.open(TUTOR);
    let complete = |editor: &mut Editor, line: usize, typed: &str| {
        editor.replace(TUTOR, &with_line(&original, line, typed));
        let character = typed.chars().map(char::len_utf16).sum::<usize>() as u32;
        labels(
            &editor
                .at(
                    "textDocument/completion",
                    TUTOR,
                    line as u32,
                    character,
                    json!({}),
                )
                .expect("items"),
        )
    };
    let vars = complete(&mut editor, 16, "Start {{");
    for expected in ["subject", "level", "question", "#if ", "/if", "snippet:"] {
        assert!(
            vars.contains(&expected.to_string()),
            "{expected} in {vars:?}"
        );
    }
    assert_eq!(
        complete(&mut editor, 16, "Start {{snippet:"),
        ["outer", "rules", "style"]
    );
    assert_eq!(
        complete(&mut editor, 16, "Start {{snippet:style#"),
        ["style", "tone", "length"]
    );
    assert_eq!(
        complete(&mut editor, 13, "{{#if level == \""),
        ["beginner", "expert"]
    );
    assert_eq!(
        complete(&mut editor, 13, "{{#if "),
        ["subject", "level", "question"]
    );
    let top = complete(&mut editor, 1, "ma");
    assert!(
        top.contains(&"max_tokens".to_string()) && top.contains(&"vars".to_string()),
        "{top:?}"
    );
    assert_eq!(
        complete(&mut editor, 4, "    kind: "),
        [
            "text",
            "flag",
            "optional",
            "choice",
            "optional_choice",
            "messages"
        ]
    );
    // Outside a token: nothing.
    assert!(complete(&mut editor, 16, "Start from").is_empty());
    editor.shutdown();
}

#[test]
fn rename_changes_every_use_the_declaration_and_the_examples() {
    let mut editor = Editor::start("tree");
    editor.open(TUTOR);
    editor.open(TUTOR_USER);
    let prepared = editor
        .at("textDocument/prepareRename", TUTOR, 12, 14, json!({}))
        .expect("a range");
    assert_eq!(prepared["start"], json!({"line": 12, "character": 12}));
    let edit = editor
        .at(
            "textDocument/rename",
            TUTOR,
            12,
            14,
            json!({"newName": "topic"}),
        )
        .expect("an edit");
    let changes = edit["changes"].as_object().expect("changes by file");
    let mut edited: Vec<(String, u64, u64)> = Vec::new();
    for (uri, edits) in changes {
        for e in edits.as_array().into_iter().flatten() {
            assert_eq!(e["newText"], "topic");
            let start = &e["range"]["start"];
            edited.push((
                editor.relative(uri),
                start["line"].as_u64().unwrap_or(0),
                start["character"].as_u64().unwrap_or(0),
            ));
        }
    }
    edited.sort();
    assert_eq!(
        edited,
        vec![
            (TUTOR.to_string(), 3, 2),
            (TUTOR.to_string(), 10, 10),
            (TUTOR.to_string(), 12, 12),
            (TUTOR.to_string(), 14, 21),
            (TUTOR_USER.to_string(), 0, 22),
        ]
    );
    let note = editor
        .notifications
        .iter()
        .find(|n| n.method == "window/showMessage")
        .expect("a note");
    assert!(
        note.params["message"]
            .as_str()
            .unwrap_or("")
            .contains("field of the generated vars struct")
    );
    // Applied, the tree is as clean as before.
    let text = std::fs::read_to_string(editor.root.join(TUTOR)).expect("the fixture");
    let user = std::fs::read_to_string(editor.root.join(TUTOR_USER)).expect("the fixture");
    editor.replace(TUTOR, &text.replace("subject", "topic"));
    editor.replace(TUTOR_USER, &user.replace("subject", "topic"));
    assert_eq!(editor.shown(), vec![]);
    // Not a variable name: refused, nothing changed.
    let refused = editor.at(
        "textDocument/rename",
        TUTOR,
        12,
        13,
        json!({"newName": "next-topic"}),
    );
    assert!(refused.is_err_and(|e| {
        e["message"]
            .as_str()
            .unwrap_or("")
            .contains("not a variable name")
    }));
    editor.shutdown();
}

/// The code actions the server offers for every diagnostic of `file`, at
/// the first one's range, as an editor's light bulb asks.
fn quick_fixes(editor: &mut Editor, file: &str) -> Value {
    let diagnostics = editor.diagnostics()[file].clone();
    let params = json!({
        "textDocument": {"uri": editor.uri(file)},
        "range": diagnostics[0]["range"],
        "context": {"diagnostics": diagnostics},
    });
    editor
        .request("textDocument/codeAction", params)
        .expect("actions")
}

#[test]
fn quick_fixes_correct_a_typo_and_declare_a_variable() {
    let mut editor = Editor::start("tree");
    let original = std::fs::read_to_string(editor.root.join(TUTOR)).expect("the fixture");
    editor.open(TUTOR);
    for (line, typed, fixed) in [
        (12, "You tutor {{subjcet}}.", "You tutor {{subject}}."),
        (18, "{{snippet:rulez}}", "{{snippet:rules}}"),
        (
            13,
            "{{#if level == \"expret\"}}",
            "{{#if level == \"expert\"}}",
        ),
    ] {
        let text = with_line(&original, line, typed);
        editor.replace(TUTOR, &text);
        let actions = quick_fixes(&mut editor, TUTOR);
        let action = &actions[0];
        assert_eq!(action["kind"], "quickfix", "{actions}");
        let edit = &action["edit"]["changes"][editor.uri(TUTOR)][0];
        let start = edit["range"]["start"]["character"].as_u64().unwrap_or(0) as usize;
        let end = edit["range"]["end"]["character"].as_u64().unwrap_or(0) as usize;
        let new_text = edit["newText"].as_str().unwrap_or("");
        let applied = format!("{}{}{}", &typed[..start], new_text, &typed[end..]);
        assert_eq!(applied, fixed, "{action}");
    }
    // An undeclared variable: declared under `vars:`, and the error is gone.
    let text = with_line(&original, 16, "Start from {{basics}}.");
    editor.replace(TUTOR, &text);
    let actions = quick_fixes(&mut editor, TUTOR);
    let declare = actions
        .as_array()
        .and_then(|l| {
            l.iter()
                .find(|a| a["title"].as_str().unwrap_or("").starts_with("Declare"))
        })
        .expect("a declare action");
    let edit = &declare["edit"]["changes"][editor.uri(TUTOR)][0];
    assert_eq!(edit["range"]["start"], json!({"line": 3, "character": 0}));
    let mut lines: Vec<&str> = text.split('\n').collect();
    let inserted = edit["newText"]
        .as_str()
        .unwrap_or("")
        .trim_end_matches('\n')
        .to_string();
    lines.insert(3, &inserted);
    editor.replace(TUTOR, &lines.join("\n"));
    assert_eq!(editor.shown(), vec![]);
    editor.shutdown();
}

#[test]
fn nothing_an_editor_sends_crashes_the_server() {
    let mut editor = Editor::start("tree");
    // An edit of a buffer never opened: ignored, said in the log.
    editor.edit(TUTOR, (0, 0), (0, 0), "x");
    // Edits past the end and with swapped ends: clamped.
    editor.open(GREET);
    editor.edit(GREET, (40, 3), (99, 99), "\n{{#if x}}");
    editor.edit(GREET, (0, 5), (0, 0), "Hi");
    let shown = editor.shown();
    assert!(
        shown
            .iter()
            .any(|d| d.0 == GREET && d.3 == "unclosed_block"),
        "{shown:?}"
    );
    // Positions past the end and inside surrogate pairs.
    editor.replace(GREET, "😀😀 {{name}}\n");
    for (line, character) in [(0, 1), (0, 3), (0, 400), (70, 2)] {
        assert!(
            editor
                .at("textDocument/hover", GREET, line, character, json!({}))
                .is_ok()
        );
        assert!(
            editor
                .at("textDocument/completion", GREET, line, character, json!({}))
                .is_ok()
        );
    }
    // A huge buffer: refused with a diagnostic, the file on disk checked.
    let huge = "x".repeat(promptpack_lsp::MAX_DOCUMENT_BYTES + 1);
    editor.replace(GREET, &huge);
    let shown = editor.shown();
    assert!(
        shown.iter().any(|d| d.0 == GREET && d.3 == "too_large"),
        "{shown:?}"
    );
    // Params of the wrong shape, an unknown method, a file outside the tree.
    let bad = editor.request("textDocument/hover", json!({"textDocument": 3}));
    assert!(bad.is_err_and(|e| e["code"] == -32602));
    let unknown = editor.request("textDocument/semanticTokens/full", json!({}));
    assert!(unknown.is_err_and(|e| e["code"] == -32601));
    let outside = editor.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///elsewhere/x.md"}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(outside, Ok(Value::Null));
    editor.notify("textDocument/didOpen", json!({"nonsense": true}));
    // Still serving.
    editor.replace(GREET, "Hello {{name}}.\n{{snippet:outer}}\n");
    assert_eq!(editor.shown(), vec![]);
    editor.shutdown();
}

#[test]
fn requests_before_initialize_are_refused_and_the_handshake_still_works() {
    let (_dir, root) = support::fixture("tree");
    let (server_side, client) = lsp_server::Connection::memory();
    let server = std::thread::spawn(move || {
        let options = promptpack_lsp::Options { root: Some(root) };
        promptpack_lsp::run(&server_side, options, &BuildChecker)
    });
    let early = lsp_server::Request::new(1.into(), "textDocument/hover".to_string(), json!({}));
    client
        .sender
        .send(early.into())
        .expect("the server listens");
    let answer = client.receiver.recv().expect("an answer");
    let lsp_server::Message::Response(response) = answer else {
        panic!("expected a response, got {answer:?}");
    };
    assert_eq!(
        response.error.map(|e| e.code),
        Some(-32002),
        "server not initialized"
    );
    let init = lsp_server::Request::new(
        2.into(),
        "initialize".to_string(),
        json!({"capabilities": {}}),
    );
    client.sender.send(init.into()).expect("the server listens");
    let lsp_server::Message::Response(response) = client.receiver.recv().expect("an answer") else {
        panic!("expected the initialize answer");
    };
    let capabilities = &response.result.expect("a result")["capabilities"];
    for provider in [
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "completionProvider",
        "renameProvider",
        "codeActionProvider",
    ] {
        assert!(!capabilities[provider].is_null(), "{provider}");
    }
    let initialized = lsp_server::Notification::new("initialized".to_string(), json!({}));
    client
        .sender
        .send(initialized.into())
        .expect("the server listens");
    drop(client);
    assert!(server.join().expect("no panic").is_ok());
}

#[test]
fn outside_a_prompt_root_the_first_prompt_file_opened_shows_where_it_is() {
    let mut editor = Editor::start_in("tree", Box::new(BuildChecker), None);
    // No root above the workspace folder: nothing checked, nothing reported.
    assert_eq!(editor.shown(), vec![]);
    let text = "Hello {{name}}.\n{{#if x}}\n";
    editor.open_text(GREET, text);
    let shown = editor.shown();
    assert!(
        shown
            .iter()
            .any(|d| d.0 == GREET && d.3 == "unclosed_block"),
        "{shown:?}"
    );
    assert_same_as_check(&mut editor, GREET, text);
    editor.shutdown();
}

/// The prompts the server checked last: `None` for the whole tree.
fn checked_last(editor: &Editor) -> Option<String> {
    let note = editor
        .notifications
        .iter()
        .rev()
        .find(|n| {
            n.method == "window/logMessage"
                && n.params["message"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("checked")
        })
        .expect("a check was logged");
    let message = note.params["message"].as_str().unwrap_or("");
    message.strip_prefix("checked again: ").map(str::to_string)
}

#[test]
fn an_edit_rechecks_only_the_prompts_it_can_change() {
    let mut editor = Editor::start("tree");
    assert_eq!(editor.shown(), vec![]);
    assert_eq!(
        checked_last(&editor),
        None,
        "the first check is of the whole tree"
    );
    // `style` is included by `tutor` only; `rules` by `tutor` and, through
    // `outer`, by `greet`; `plain` includes nothing.
    for (file, text, checked) in [
        (
            "snippets/style.md",
            "# Style\n\n## Tone\n\nWarm.\n",
            "tutor",
        ),
        ("snippets/rules.md", "Be kind.\n", "greet, tutor"),
        ("snippets/outer.md", "Briefly: {{snippet:rules}}\n", "greet"),
        (
            "templates/plain/system.md",
            "---\nvars:\n  topic: What.\n---\nOn {{topic}}.\n",
            "plain",
        ),
    ] {
        editor.open(file);
        editor.replace(file, text);
        assert_eq!(editor.shown(), vec![], "{file}");
        assert_eq!(checked_last(&editor).as_deref(), Some(checked), "{file}");
    }
    // An error in a snippet shows in the prompts that include it, from a
    // check of those alone, as the whole check shows it.
    editor.replace("snippets/rules.md", "Be {{mood}}.\n");
    let shown = editor.shown();
    assert_eq!(checked_last(&editor).as_deref(), Some("greet, tutor"));
    assert!(shown.iter().any(|d| d.3 == "undeclared_var"), "{shown:?}");
    assert_same_as_check(&mut editor, "snippets/rules.md", "Be {{mood}}.\n");
    assert!(
        editor.parts_added_up(),
        "the parts added up to the whole check"
    );
    editor.shutdown();
}

/// `{{schema:response}}`: hovered, it shows the response it prints (or
/// says the prompt declares none); completed after `schema:` and offered
/// among the keywords; a prompt without a response shows `invalid_schema`
/// at the token, as `check` does.
#[test]
fn the_schema_token_is_hovered_completed_and_checked() {
    let mut editor = Editor::start("tree");
    editor.open(GREET);
    let with_response = "---\nresponse:\n  reply: string, what the user reads\n---\nHello {{name}}.\n{{schema:response}}\n{{snippet:outer}}\n";
    editor.replace(GREET, with_response);
    let shown = hover_text(&mut editor, GREET, 5, 4);
    assert!(
        shown.contains("```ts\n{\n  \"reply\": string // what the user reads\n}\n```"),
        "{shown}"
    );
    assert_same_as_check(&mut editor, GREET, with_response);
    let complete = |editor: &mut Editor, typed: &str| {
        editor.replace(GREET, &with_line(with_response, 5, typed));
        let character = typed.chars().map(char::len_utf16).sum::<usize>() as u32;
        labels(
            &editor
                .at("textDocument/completion", GREET, 5, character, json!({}))
                .expect("items"),
        )
    };
    assert_eq!(complete(&mut editor, "{{schema:"), ["response"]);
    assert!(
        complete(&mut editor, "{{").contains(&"schema:response".to_string()),
        "offered among the keywords"
    );
    let without = "Hello {{name}}.\n{{schema:response}}\n{{snippet:outer}}\n";
    editor.replace(GREET, without);
    let shown = hover_text(&mut editor, GREET, 1, 4);
    assert!(
        shown.contains("prompt `greet` declares no `response:`"),
        "{shown}"
    );
    assert_same_as_check(&mut editor, GREET, without);
    let codes: Vec<(u32, String)> = editor
        .shown()
        .into_iter()
        .map(|(_, line, _, code, _)| (line, code))
        .collect();
    assert_eq!(codes, [(2, "invalid_schema".to_string())]);
    editor.shutdown();
}
