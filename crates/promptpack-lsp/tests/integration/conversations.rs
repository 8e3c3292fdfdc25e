//! Conversations in the editor, on a copy of `tests/fixtures/conversation`:
//! `templates/support/system.md` uses `product`; its `messages.md` declares
//! the history (`kind: messages`), includes the snippet of turns `refund`
//! under `{{#if examples}}`, places `{{history}}` and asks `{{question}}`
//! in a user message. Role tags are hovered and completed, the history is
//! hovered and led to, and messages.md's mistakes are shown where they
//! are, as `check` shows them.

use crate::support;

use serde_json::{Value, json};
use support::{Editor, check_on_disk, hover_text};

const MESSAGES: &str = "templates/support/messages.md";
const SYSTEM: &str = "templates/support/system.md";
const TURNS: &str = "snippets/refund.md";

#[test]
fn hover_says_what_a_role_tag_is_where_it_is_one() {
    let mut editor = Editor::start("conversation");
    editor.open(MESSAGES);
    // `{{#user}}` on line 9 (0-based 8).
    let user = hover_text(&mut editor, MESSAGES, 8, 4);
    assert!(
        user.starts_with("**`{{#user}}`** opens a **user** message"),
        "{user}"
    );
    assert!(user.contains("`{{/user}}`"), "{user}");
    // A closing tag leads to the tag that opened its message.
    let opened = editor
        .at("textDocument/definition", MESSAGES, 10, 3, json!({}))
        .expect("an answer");
    assert_eq!(
        (
            opened["range"]["start"]["line"].as_u64(),
            opened["range"]["start"]["character"].as_u64(),
            opened["range"]["end"]["character"].as_u64()
        ),
        (Some(8), Some(0), Some(9)),
        "{opened}"
    );
    let close = hover_text(&mut editor, MESSAGES, 10, 3);
    assert!(
        close.starts_with("**`{{/user}}`** closes a **user** message"),
        "{close}"
    );
    // In a snippet of turns, a tool result names its tool.
    editor.open(TURNS);
    let tool = hover_text(&mut editor, TURNS, 3, 5);
    assert!(
        tool.starts_with("**`{{#tool orders}}`** opens a **tool** result")
            && tool.contains("tool `orders` returned"),
        "{tool}"
    );
    // An example call says what its text is.
    editor.open(MESSAGES);
    let original = std::fs::read_to_string(editor.root.join(MESSAGES)).expect("the fixture");
    editor.replace(
        MESSAGES,
        &format!("{original}{{{{#call orders}}}}\n{{}}\n{{{{/call}}}}\n"),
    );
    let call = hover_text(&mut editor, MESSAGES, 11, 4);
    assert!(
        call.starts_with("**`{{#call orders}}`** opens a **call**")
            && call.contains("calling tool `orders`")
            && call.contains("JSON the build checks"),
        "{call}"
    );
    editor.replace(MESSAGES, &original);
    // In system.md a role tag is literal text, and the hover says so.
    editor.open(SYSTEM);
    editor.replace(
        SYSTEM,
        "You answer customers of {{product}}. {{#assistant}}\n",
    );
    let literal = hover_text(&mut editor, SYSTEM, 0, 42);
    assert!(
        literal.starts_with("**`{{#assistant}}`** is literal text here"),
        "{literal}"
    );
    editor.shutdown();
}

#[test]
fn the_history_is_hovered_and_led_to_its_declaration() {
    let mut editor = Editor::start("conversation");
    editor.open(MESSAGES);
    let history = hover_text(&mut editor, MESSAGES, 7, 4);
    for part in [
        "**`history`**: messages",
        "The chat so far.",
        "the history: a list of messages",
        "templates/support/messages.md:8:3",
    ] {
        assert!(history.contains(part), "{part} in {history}");
    }
    let declared = editor
        .at("textDocument/definition", MESSAGES, 7, 4, json!({}))
        .expect("an answer");
    assert_eq!(
        editor.relative(declared["uri"].as_str().unwrap_or("")),
        MESSAGES
    );
    assert_eq!(
        (
            declared["range"]["start"]["line"].as_u64(),
            declared["range"]["start"]["character"].as_u64()
        ),
        (Some(2), Some(2)),
        "`history:` under `vars:`"
    );
    // A variable of the prompt used in messages.md is one of the prompt's:
    // `product` of system.md is found from the snippet's prompt scope too.
    let question = hover_text(&mut editor, MESSAGES, 9, 4);
    assert!(
        question.contains("templates/support/messages.md:10:3"),
        "{question}"
    );
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
fn role_tags_are_completed_in_messages_md_and_the_open_one_closed() {
    let mut editor = Editor::start("conversation");
    let original = std::fs::read_to_string(editor.root.join(MESSAGES)).expect("the fixture");
    editor.open(MESSAGES);
    let complete = |editor: &mut Editor, file: &str, text: &str, line: u32, character: u32| {
        editor.replace(file, text);
        labels(
            &editor
                .at("textDocument/completion", file, line, character, json!({}))
                .expect("items"),
        )
    };
    // Between messages (line 12, after the last `{{/user}}`).
    let between = format!("{original}{{{{#");
    let items = complete(&mut editor, MESSAGES, &between, 11, 3);
    for expected in ["#user", "#assistant", "#system", "#tool ", "#call ", "#if "] {
        assert!(
            items.contains(&expected.to_string()),
            "{expected} in {items:?}"
        );
    }
    assert!(
        !items.iter().any(|l| l.starts_with('/') && l != "/if"),
        "nothing is open: {items:?}"
    );
    // Inside an open assistant message, its closing tag comes first.
    let open = format!("{original}{{{{#assistant}}}}\nSure.\n{{{{/");
    let items = complete(&mut editor, MESSAGES, &open, 13, 3);
    assert_eq!(
        items.first().map(String::as_str),
        Some("/assistant"),
        "{items:?}"
    );
    assert!(!items.contains(&"/user".to_string()), "{items:?}");
    // Inside a message, the prompt's variables: a declared history alone
    // makes no contract of the others, so those used are offered too.
    let inside = original.replace("{{question}}", "{{question}} {{");
    let items = complete(&mut editor, MESSAGES, &inside, 9, 15);
    for expected in ["history", "question", "product", "examples"] {
        assert!(
            items.contains(&expected.to_string()),
            "{expected} in {items:?}"
        );
    }
    // In system.md role tags are text: none is offered.
    editor.open(SYSTEM);
    let items = complete(&mut editor, SYSTEM, "Hello {{#", 0, 9);
    assert!(items.contains(&"#if ".to_string()), "{items:?}");
    assert!(!items.contains(&"#user".to_string()), "{items:?}");
    // `messages` is a kind a declaration can take.
    editor.replace(MESSAGES, &original);
    let kinds = complete(
        &mut editor,
        MESSAGES,
        &original.replace(
            "  history: {kind: messages, description: The chat so far.}",
            "  history:\n    kind: ",
        ),
        3,
        10,
    );
    assert!(kinds.contains(&"messages".to_string()), "{kinds:?}");
    editor.shutdown();
}

#[test]
fn messages_md_shows_its_errors_and_lints_where_they_are() {
    let mut editor = Editor::start("conversation");
    assert_eq!(editor.shown(), vec![], "the fixture is clean");
    let original = std::fs::read_to_string(editor.root.join(MESSAGES)).expect("the fixture");
    editor.open(MESSAGES);
    let body = "{{history}}\n{{#user}}\n{{question}}\n{{/user}}\n";
    let front = original.replace(body, "");
    // (what is done, new messages.md, code expected, at line)
    let cases: &[(&str, String, &str, u32)] = &[
        (
            "text between messages",
            format!("{front}Hello there.\n{body}"),
            "text_outside_message",
            8,
        ),
        (
            "a message inside another",
            format!(
                "{front}{{{{#user}}}}\n{{{{#assistant}}}}\nx\n{{{{/assistant}}}}\n{{{{/user}}}}\n"
            ),
            "invalid_message",
            9,
        ),
        (
            "an empty message",
            format!("{front}{body}{{{{#user}}}}\n{{{{/user}}}}\n"),
            "empty_message",
            12,
        ),
        (
            "a tool result with no call before it",
            format!("{front}{{{{#tool orders}}}}\nfound\n{{{{/tool}}}}\n{body}"),
            "unpaired_call",
            8,
        ),
        (
            "an example call of a tool the prompt does not declare",
            format!(
                "{front}{{{{#call orders}}}}\n{{}}\n{{{{/call}}}}\n{{{{#tool orders}}}}\nfound\n{{{{/tool}}}}\n{body}"
            ),
            "invalid_call",
            8,
        ),
        (
            "an example call whose arguments do not fit",
            format!(
                "{}{{{{#call orders}}}}\n{{\"order\": \"17\"}}\n{{{{/call}}}}\n{{{{#tool orders}}}}\nfound\n{{{{/tool}}}}\n{body}",
                front.replacen(
                    "\n---\n",
                    "\ntools:\n  orders:\n    description: Finds an order\n    parameters:\n      order: integer, its number\n---\n",
                    1
                )
            ),
            "invalid_call",
            14,
        ),
        (
            "the assistant's turn last",
            format!("{front}{body}{{{{#assistant}}}}\nSure.\n{{{{/assistant}}}}\n"),
            "ends_with_assistant",
            12,
        ),
    ];
    for (what, text, code, at) in cases {
        editor.replace(MESSAGES, text);
        let found = editor.shown();
        assert!(
            found
                .iter()
                .any(|d| d.0 == MESSAGES && d.1 == *at && d.3 == *code),
            "{what}: expected {code} at line {at}, got {found:?}"
        );
        // What the server shows is what `check` says of the file saved.
        let path = editor.root.join(MESSAGES);
        std::fs::write(&path, text).expect("the buffer written");
        let on_disk = check_on_disk(&editor.root);
        std::fs::write(&path, &original).expect("the file put back");
        assert_eq!(found, on_disk, "{what}: the server shows what `check` says");
        editor.replace(MESSAGES, &original);
        assert_eq!(editor.shown(), vec![], "{what}: fixed, cleared");
    }
    editor.shutdown();
}
