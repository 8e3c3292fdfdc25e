//! One verdict on a stored version, wherever it is asked: a version the
//! store holds damaged, one whose files do not compile and one that breaks
//! the binary's contract are refused alike, with the same code, by a
//! running live handle, by the console's builds panel (a viewer's page) and
//! by `catalog verify` against the handle's registered contract
//! (`Catalog::verify_with`, what `promptpack catalog verify --contract`
//! runs). On both stores.

use crate::support;

use promptpack::live::LiveEvent;
use promptpack_catalog::{Catalog, FindingCode, Role, Subject, token_hash};
use promptpack_console::{Server, Settings, new_token};
use promptpack_livetest::before;
use std::time::Duration;
use support::{Store, publish, publish_labelled, registered, rewrite_by_hand, serves, wait_for};

/// A console over the catalog at `url`, on a loopback port; its base URL
/// and a viewer's session cookie.
fn console(catalog: &mut Catalog, url: &str) -> (String, String) {
    let token = new_token();
    catalog
        .add_user("vi", Role::Viewer, &token_hash(&token))
        .expect("a viewer");
    let settings = Settings::new(url.to_string()).listen(([127, 0, 0, 1], 0).into());
    let server = Server::bind(settings).expect("the console binds");
    let base = format!("http://{}", server.local_addr());
    std::thread::spawn(move || server.run());
    let answer = agent()
        .post(format!("{base}/login"))
        .content_type("application/x-www-form-urlencoded")
        .send(format!("token={token}&next=%2F"))
        .expect("the console answers");
    assert_eq!(answer.status(), 303, "signs in");
    let cookie = answer
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("a session cookie")
        .to_string();
    (base, cookie)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// The prompt page's builds panel row of the one registered build: what it
/// serves, as the viewer reads it.
fn builds_panel(base: &str, cookie: &str) -> String {
    let mut answer = agent()
        .get(format!("{base}/prompts/greeter"))
        .header("cookie", cookie)
        .call()
        .expect("the console answers");
    let page = answer.body_mut().read_to_string().expect("a page of text");
    assert_eq!(answer.status(), 200, "{page}");
    let row = page
        .split("<tr>")
        .find(|row| row.contains("verdicts-service"))
        .unwrap_or_else(|| panic!("no row of the registered build in {page}"));
    row.split("</tr>").next().unwrap_or(row).to_string()
}

every_store!(a_version_gets_one_verdict_from_a_handle_the_console_and_verify);
fn a_version_gets_one_verdict_from_a_handle_the_console_and_verify(store: Store) {
    let mut catalog = store.open();
    let good = publish_labelled(&mut catalog, "greeter", "production", "Hi {{name}}.", None);
    let damaged = publish(&mut catalog, "greeter", "Hello {{name}}.", None);
    let broken = publish(&mut catalog, "greeter", "Howdy {{name}}.", None);
    let beyond = publish(&mut catalog, "greeter", "Hey {{name}}, {{mood}}.", None);
    let version = |n: u32| format!("prompt_id = 'greeter' AND version = {n}");
    rewrite_by_hand(
        &store.url,
        &format!(
            "UPDATE prompt_versions SET resolved_system = 'Obey {{{{name}}}}.' WHERE {}",
            version(damaged)
        ),
    );
    rewrite_by_hand(
        &store.url,
        &format!(
            "UPDATE prompt_versions SET system_text = 'Howdy {{{{#if name}}}}' WHERE {}",
            version(broken)
        ),
    );

    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .process_name("verdicts-service")
        .poll_every(Duration::from_millis(50));
    let events = builder.subscribe();
    let _prompts = builder.start().expect("starts");
    wait_for(&events, "the good version", |e| serves(e, "greeter", good));
    let contract = registered(&mut catalog, 1)
        .pop()
        .expect("the handle's build")
        .contract;
    let (base, cookie) = console(&mut catalog, &store.url);
    assert!(
        builds_panel(&base, &cookie).contains(&format!("<td>v{good}</td>")),
        "the panel says the build serves v{good}"
    );

    let report = catalog.verify_with(Some(&contract)).expect("verifies");
    let found = |n: u32| -> Vec<FindingCode> {
        report
            .findings
            .iter()
            .filter(|f| {
                f.subject
                    == Subject::Version {
                        prompt: "greeter".into(),
                        version: n,
                    }
            })
            .map(|f| f.code)
            .collect()
    };
    assert_eq!(found(good), [], "{report:#?}");

    let cases = [
        (damaged, "damaged", FindingCode::HashMismatch),
        (broken, "unclosed_block", FindingCode::ResolvedMismatch),
        (beyond, "contract_violation", FindingCode::ContractViolation),
    ];
    for (number, code, finding) in cases {
        catalog
            .set_label("greeter", "production", number)
            .expect("labels it");
        // The live handle: refused, never served.
        let seen = wait_for(&events, "a verdict", |e| {
            matches!(e, LiveEvent::Refused { .. }) || serves(e, "greeter", number)
        });
        let Some(LiveEvent::Refused { version, error, .. }) = seen.last() else {
            panic!("the handle served v{number}: {seen:#?}")
        };
        assert_eq!(*version, number);
        let refused_code = error
            .diagnostics()
            .first()
            .map_or_else(|| error.code().to_string(), |d| d.code.to_string());
        assert_eq!(refused_code, code, "{error}");
        // The console: the same build refuses it, with the same code.
        let row = builds_panel(&base, &cookie);
        assert!(
            row.contains(&format!("refuses v{number} ({code}:")),
            "the builds panel says the build refuses v{number} with {code}: {row}"
        );
        // Verify, with the build's contract: the version is a finding.
        assert!(
            found(number).contains(&finding),
            "verify finds {finding:?} for v{number}: {report:#?}"
        );
    }
}

every_store!(a_conversation_with_a_history_the_binary_lacks_is_refused);
/// The binary renders `greeter` as two files (`system.md`, `user.md`) with
/// a vars struct of `name` alone: a version that makes it a conversation
/// placing a history is refused by the live handle, with each thing the
/// program lacks said where it is, and the version before keeps serving.
fn a_conversation_with_a_history_the_binary_lacks_is_refused(store: Store) {
    let mut catalog = store.open();
    let good = publish_labelled(&mut catalog, "greeter", "production", "Hi {{name}}.", None);
    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .poll_every(Duration::from_millis(50));
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "the good version", |e| serves(e, "greeter", good));

    let conversation = promptpack_catalog::Draft {
        system: "Hi {{name}}.".into(),
        messages: Some(
            "---\nvars:\n  history: { kind: messages }\n---\n{{history}}\n{{#user}}\nHello, {{name}}.\n{{/user}}"
                .into(),
        ),
        message: "a conversation".into(),
        ..promptpack_catalog::Draft::default()
    };
    let chat = catalog
        .publish("greeter", &conversation, None)
        .expect("the catalog takes it: only a binary's contract refuses it")
        .version;
    catalog
        .set_label("greeter", "production", chat)
        .expect("labels it");
    let seen = wait_for(&events, "a verdict", |e| {
        matches!(e, LiveEvent::Refused { .. }) || serves(e, "greeter", chat)
    });
    let Some(LiveEvent::Refused { version, error, .. }) = seen.last() else {
        panic!("the handle served the conversation v{chat}: {seen:#?}")
    };
    assert_eq!(*version, chat);
    let said: Vec<(String, String, Option<String>)> = error
        .diagnostics()
        .iter()
        .map(|d| {
            (
                d.code.to_string(),
                d.message.clone(),
                d.location.as_ref().map(|l| l.path().to_string()),
            )
        })
        .collect();
    let messages = Some("templates/greeter/messages.md".to_string());
    assert_eq!(
        said,
        [
            (
                "contract_violation".to_string(),
                "prompt `greeter` is a conversation (`system.md`, `messages.md`), but the program's vars struct is of two files (`system.md`, `user.md`)".to_string(),
                messages.clone(),
            ),
            (
                "contract_violation".to_string(),
                "prompt `greeter` needs variable `history`, which the program's vars struct lacks".to_string(),
                messages,
            ),
        ],
        "{error}"
    );
    // What it served before it still serves.
    let prompt = support::greet_ada(&prompts);
    assert_eq!(prompt.system, "Hi Ada.");
    assert_eq!(support::version_of(&prompt.provenance), good);
}

every_store!(a_response_the_binary_could_not_read_is_refused);
/// The binary reads `triage`'s answers into its generated type (a category
/// of `bug` or `billing`, a summary) and calls to `lookup`: a version that
/// adds an optional field serves, and its answers still read into the
/// binary's type; one that adds a required field, or widens the enum, is
/// refused by the live handle at the field, and the version before keeps
/// serving.
fn a_response_the_binary_could_not_read_is_refused(store: Store) {
    let triage = |fields: &str| {
        format!(
            "---\ntools:\n  lookup:\n    description: Finds an order by its number\n    parameters:\n      order: string\nresponse:\n{fields}---\nTriage the ticket."
        )
    };
    let compiled = "  category: [bug, billing]\n  summary: string, the ticket in one line\n";
    let mut catalog = store.open();
    let first = publish_labelled(
        &mut catalog,
        "triage",
        "production",
        &triage(compiled),
        None,
    );
    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .poll_every(Duration::from_millis(50));
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "the compiled shape", |e| {
        serves(e, "triage", first)
    });

    let optional = publish(
        &mut catalog,
        "triage",
        &triage(&format!("{compiled}  order?: string, the order named\n")),
        None,
    );
    catalog
        .set_label("triage", "production", optional)
        .expect("labels it");
    wait_for(&events, "an optional field added", |e| {
        serves(e, "triage", optional)
    });
    // The version asks for `order`; the binary's type reads past it.
    let answer = r#"{"category": "bug", "summary": "Crash on save", "order": "A-18"}"#;
    let read = before::TriageResponse::parse(answer).expect("the binary reads the new answers");
    assert_eq!(read.category, before::TriageResponseCategory::Bug);

    for (fields, named) in [
        (format!("{compiled}  mood: string\n"), "$.mood"),
        (
            compiled.replace("[bug, billing]", "[bug, billing, other]"),
            "$.category",
        ),
    ] {
        let refused = publish(&mut catalog, "triage", &triage(&fields), None);
        catalog
            .set_label("triage", "production", refused)
            .expect("labels it");
        let seen = wait_for(&events, "a verdict", |e| {
            matches!(e, LiveEvent::Refused { .. }) || serves(e, "triage", refused)
        });
        let Some(LiveEvent::Refused { version, error, .. }) = seen.last() else {
            panic!("the handle served v{refused}, whose answers it could not read: {seen:#?}")
        };
        assert_eq!(*version, refused);
        let first = &error.diagnostics()[0];
        assert_eq!(first.code.to_string(), "contract_violation", "{error}");
        assert!(first.message.contains(named), "{named}: {error}");
        assert_eq!(
            first.location.as_ref().map(|l| l.path()),
            Some("templates/triage/system.md"),
            "{error}"
        );
        // What it served before it still serves.
        assert_eq!(
            support::version_of(&prompts.serving(before::PromptId::Triage)),
            optional
        );
    }
}
