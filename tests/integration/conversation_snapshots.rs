//! Snapshots of a conversation (`system.md` + `messages.md`): each message
//! under its role, the survivor check run on each message and naming it.
//!
//! The prompt is `tests/conversation-sample/` (few-shot turns from a
//! snippet under `{{#if examples}}`, a `kind: messages` history, the new
//! user message). The typed code does not generate conversations yet, so
//! the suite's render goes through `Library`, as a hand-written
//! [`PromptTable`] may.

use promptpack::testing::{Case, PromptTable, SnapshotRun, Snapshots, Survivors};
use promptpack::{Library, Message, MissingVars, Prompt, Role};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::OnceLock;

const VARIABLES: &[&str] = &[
    "product",
    "refundsAllowed",
    "examples",
    "question",
    "history",
];
const CONDITIONS: &[&str] = &["refundsAllowed", "examples"];

/// The prompt root of the sample conversation.
fn sample_dir() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conversation-sample")
}

/// Renders `id` of `library` with each of `variables` looked up by
/// `value`; the history, a list of messages, is one user message saying
/// the history's value (`‹history›`), so a snapshot shows where it goes.
fn render_from(
    library: &Library,
    id: &'static str,
    variables: &[&str],
    value: &dyn Fn(&str) -> Option<String>,
) -> Prompt<&'static str> {
    let mut values = serde_json::Map::new();
    for name in variables {
        // An absent value is an empty one, as a generated struct's default:
        // the render is strict, so a variable the table forgot fails loudly.
        let json = match (*name == "history", value(name)) {
            (true, Some(text)) => serde_json::json!([{ "role": "user", "content": text }]),
            (true, None) => serde_json::json!([]),
            (false, text) => serde_json::Value::String(text.unwrap_or_default()),
        };
        values.insert((*name).to_string(), json);
    }
    let prompt = library
        .render(id, &values, MissingVars::Error)
        .unwrap_or_else(|e| panic!("{id} renders: {e}"));
    Prompt {
        id,
        system: prompt.system,
        user: prompt.user,
        messages: prompt.messages,
        hash: prompt.hash,
        provenance: prompt.provenance,
        exchange: prompt.exchange,
    }
}

fn render_sample(id: &'static str, value: &dyn Fn(&str) -> Option<String>) -> Prompt<&'static str> {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    let library = LIBRARY.get_or_init(|| Library::load(sample_dir()).expect("the sample loads"));
    render_from(library, id, VARIABLES, value)
}

fn sample() -> PromptTable<&'static str> {
    PromptTable::new(
        &["support-chat"],
        |id| id,
        |_| VARIABLES,
        |_| CONDITIONS,
        render_sample,
    )
}

/// The summary a failing run ends with.
fn failure(run: SnapshotRun) -> String {
    let payload = catch_unwind(AssertUnwindSafe(|| run.finish())).expect_err("the run fails");
    payload.downcast::<String>().map(|m| *m).unwrap_or_default()
}

/// `text` with each run of spaces inside a line made one, so that a report
/// row can be matched without its column padding.
fn squeezed(text: &str) -> String {
    text.lines()
        .map(|line| {
            let indent = line.len() - line.trim_start().len();
            let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty()).collect();
            format!("{}{}", &line[..indent], words.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every combination of the conditions, each message under its role; the
/// snapshots are in `snapshots/integration__conversation_snapshots__*.snap`.
#[test]
fn a_conversation_is_snapshotted_message_by_message() {
    let mut run = Snapshots::new().start(sample_dir());
    let cases = run.cases(&sample());
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "support-chat",
            "support-chat@refundsAllowed",
            "support-chat@examples",
            "support-chat@refundsAllowed+examples",
        ]
    );
    let roles: Vec<Role> = cases[2].messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::User,
            Role::User
        ]
    );
    for case in &cases {
        assert_eq!(case.user, None, "a conversation has no user.md");
        run.check(case, module_path!());
    }
    run.finish();
}

#[test]
fn a_snapshot_shows_each_message_under_its_role() {
    let mut case = Case::new("p", "p", "Be brief.");
    case.messages = vec![
        Message::new(Role::User, "What is 2 + 2?"),
        Message::tool("calculator", "4"),
        Message::new(Role::Assistant, "4.\n\nAnything else?"),
    ];
    assert_eq!(
        case.snapshot(),
        "--- system.md ---\nBe brief.\n\
         \n--- message 0: user ---\nWhat is 2 + 2?\n\
         \n--- message 1: tool calculator ---\n4\n\
         \n--- message 2: assistant ---\n4.\n\nAnything else?\n"
    );
    // Two files snapshot as they always did.
    let mut two = Case::new("p", "p", "Be brief.");
    two.user = Some("Go.".into());
    assert_eq!(
        two.snapshot(),
        "--- system.md ---\nBe brief.\n\n--- user.md ---\nGo.\n"
    );
}

/// Combinations whose messages are the same fold into one; those whose
/// messages differ (and nothing else does) stay apart.
#[test]
fn cases_fold_by_their_messages_too() {
    let run = Snapshots::new()
        .value("refundsAllowed", "")
        .start(sample_dir());
    let cases = run.cases(&sample());
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    // With `refundsAllowed` empty it is false even when on: only `examples`,
    // which changes the messages alone, makes a case of its own.
    assert_eq!(names, ["support-chat", "support-chat@examples"]);
    assert_eq!(cases[0].system, cases[1].system);
    assert_eq!(cases[0].covers, ["support-chat@refundsAllowed"]);
}

/// A token in a value reaches a message: the case is not snapshotted and the
/// report names the message (its index and role) it survived in.
#[test]
fn a_token_surviving_in_a_message_fails_the_run_naming_the_message() {
    let mut run = Snapshots::new()
        .value("question", "Where is order {{order_id}}?")
        .start(sample_dir());
    let mut snapshotted = 0;
    for case in run.cases(&sample()) {
        run.snapshot(&case, |_| snapshotted += 1);
    }
    assert_eq!(snapshotted, 0, "every case holds the survivor");
    let message = failure(run);
    assert!(
        message.starts_with(
            "promptpack snapshots: 2 problems in 4 cases:\n\
             - 1 template token survived in support-chat, message 1: user \
             (also in support-chat@refundsAllowed):\n"
        ),
        "{message}"
    );
    assert!(
        message.contains(
            "- 1 template token survived in support-chat@examples, message 5: user \
             (also in support-chat@refundsAllowed+examples):\n"
        ),
        "{message}"
    );
    assert!(
        squeezed(&message).contains("from a value (rendered 1:16) {{order_id}} (variable token)"),
        "{message}"
    );
    // The case's own check says the same, message by message.
    let case = Snapshots::new()
        .value("question", "{{order_id}}")
        .cases(&sample())
        .remove(0);
    let reports = case
        .check_survivors(&Survivors::new())
        .expect_err("a survivor");
    let labels: Vec<String> = reports.iter().map(|r| r.to_string()).collect();
    assert_eq!(labels.len(), 1);
    assert!(
        labels[0].starts_with("1 template token survived in support-chat, message 1: user:"),
        "{}",
        labels[0]
    );
}

/// A near-miss written in `messages.md` (or a snippet of turns) survives in
/// its message and is traced to its line there; the role tags around it,
/// tokens of the conversation, are not survivors.
#[test]
fn a_survivor_in_a_message_points_at_messages_md() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conversation-survivor");
    let files = [
        ("templates/tutor/system.md", "You teach {{topic}}.\n"),
        (
            "templates/tutor/messages.md",
            "{{#user}}\nShow a loop.\n{{/user}}\n{{#assistant}}\n\
             Write {{#each items}} as a for loop.\n{{/assistant}}\n\
             {{#user}}\n{{question}}\n{{/user}}\n",
        ),
    ];
    for (path, text) in files {
        promptpack_testkit::files::write(&dir, path, text);
    }
    let library = Library::load(&dir).expect("the tutor loads");
    // `PromptTable` takes plain functions and this library is a local: the
    // case is made by hand from one render.
    let prompt = render_from(&library, "tutor", &["topic", "question"], &|name| {
        Some(format!("‹{name}›"))
    });
    let mut case = Case::new("tutor", "tutor", prompt.system);
    case.messages = prompt.messages;
    let mut run = Snapshots::new().start(dir.to_str().expect("a UTF-8 path"));
    run.snapshot(&case, |_| {
        panic!("a case with a survivor is not snapshotted")
    });
    let message = failure(run);
    assert!(
        squeezed(&message).contains(
            "1 template token survived in tutor, message 1: assistant:\n    \
             templates/tutor/messages.md:5:7 (rendered 1:7) {{#each items}} \
             (near-miss: a block promptpack does not have)"
        ),
        "{message}"
    );
    assert!(!message.contains("message 0"), "{message}");
}
