//! The whole chain with `<<`/`>>` delimiters, in a crate of its own: the
//! build script compiled the prompts, the typed API renders them, a debug
//! build renders from disk the same bytes, the survivor check and the
//! snapshot suite follow the delimiters of `promptpack.toml`.

use angle_fixture::{GreeterVars, JsonReplyVars, PromptId, build_prompt};
use promptpack::testing::{FindingKind, Snapshots, Survivors, find_survivors};
use promptpack::{Delimiters, Library, MissingVars, TypedVars};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn angle() -> Delimiters {
    Delimiters::new("<<", ">>").expect("valid delimiters")
}

fn greeter(formal: bool) -> GreeterVars<'static> {
    GreeterVars {
        agent_name: "Ada",
        user_name: "Grace",
        tone: "warm",
        formal,
        question: "Where is my order?",
    }
}

#[test]
fn the_build_script_generated_the_prompts() {
    assert_eq!(PromptId::ALL, [PromptId::Greeter, PromptId::JsonReply]);
    assert_eq!(
        PromptId::Greeter.variables(),
        ["agentName", "userName", "tone", "formal", "question"]
    );
    assert_eq!(PromptId::Greeter.conditions(), ["formal"]);
    assert_eq!(PromptId::JsonReply.conditions(), ["strict"]);
    assert_eq!(PromptId::DELIMITERS, ("<<", ">>"));
}

#[test]
fn typed_render_replaces_angle_tokens_and_keeps_braces_literal() {
    let prompt = build_prompt(PromptId::Greeter, greeter(true)).expect("renders");
    assert_eq!(
        prompt.system,
        "You are Ada, helping Grace.\n\
         \n\
         Keep a warm tone.\n\
         Sign every answer as Ada.\n\
         \n\
         \n\
         Address Grace formally.\n\
         \n\
         \n\
         Our docs write placeholders as {{x}}: leave such braces as they are."
    );
    assert_eq!(prompt.user.as_deref(), Some("Where is my order?"));
    let casual = build_prompt(PromptId::Greeter, greeter(false)).expect("renders");
    assert!(casual.system.contains("\nBe casual with Grace.\n"));

    let json = JsonReplyVars {
        product_name: "Orbit",
        agent_name: "Ada",
        strict: false,
    };
    let json = TypedVars::build(&json).expect("renders");
    assert!(json.system.contains(
        "```json\n{\"answer\": \"...\", \"template\": \"Dear {{x}}\", \"nested\": {\"a\": {\"b\": 1}}}\n```"
    ));
    assert!(!json.system.contains("JSON object only"));
}

/// In a debug build `build()` renders from the files on disk (hot reload);
/// `render_system()` is the code generated at build time, what a release
/// build runs. They agree byte for byte.
#[test]
fn the_dev_path_renders_what_the_release_path_renders() {
    for formal in [false, true] {
        let vars = greeter(formal);
        let built = TypedVars::build(&vars).expect("renders");
        assert_eq!(Ok(built.system), vars.render_system(), "formal: {formal}");
        assert_eq!(built.user, vars.render_user().ok(), "formal: {formal}");
        assert_eq!(built.hash, GreeterVars::HASH);
    }
    for strict in [false, true] {
        let vars = JsonReplyVars {
            product_name: "Orbit",
            agent_name: "Ada",
            strict,
        };
        let built = TypedVars::build(&vars).expect("renders");
        assert_eq!(Ok(built.system), vars.render_system(), "strict: {strict}");
        assert_eq!(built.user, None);
    }
}

/// The interpreter reading the folder (as the dev path does) picks the
/// delimiters up from `promptpack.toml` and agrees with the generated code on
/// every combination of conditions.
#[test]
fn the_interpreter_agrees_with_the_generated_code() {
    let library = Library::load(env!("CARGO_MANIFEST_DIR")).expect("the prompts load");
    assert_eq!(library.delimiters(), &angle());
    for case in Snapshots::new().cases(&promptpack::testing::PromptTable::new(
        &PromptId::ALL,
        PromptId::as_str,
        PromptId::variables,
        PromptId::conditions,
        PromptId::render_generated,
    )) {
        let values: HashMap<&str, String> = case
            .id
            .variables()
            .iter()
            .map(|v| {
                let on = !case.off.contains(v);
                (
                    *v,
                    if on {
                        format!("‹{v}›")
                    } else {
                        String::new()
                    },
                )
            })
            .collect();
        let interpreted = library
            .render(case.prompt, &values, MissingVars::Error)
            .expect("renders");
        assert_eq!(interpreted.system, case.system, "{}", case.name);
        assert_eq!(interpreted.user, case.user, "{}", case.name);
    }
}

/// A value is never re-scanned: `<<name>>` in a value reaches the output,
/// and the survivor check for `<<`/`>>` flags it, while the literal `{{x}}`
/// of the template is plain text for these delimiters.
#[test]
fn the_survivor_check_flags_a_surviving_angle_token() {
    let vars = GreeterVars {
        user_name: "<<name>>",
        ..greeter(true)
    };
    let prompt = build_prompt(PromptId::Greeter, vars).expect("renders");
    let text = prompt.system.as_str();
    let found: Vec<_> = find_survivors(text, &angle())
        .iter()
        .map(|f| (f.kind, f.text(text).to_string(), f.line, f.column))
        .collect();
    assert_eq!(
        found,
        [
            (FindingKind::Var, "<<name>>".to_string(), 1, 22),
            (FindingKind::Var, "<<name>>".to_string(), 7, 9),
        ]
    );
    let payload = catch_unwind(|| promptpack::testing::assert_no_survivors_with(text, &angle()))
        .expect_err("survivors fail the assertion");
    let message = payload.downcast::<String>().map(|m| *m).unwrap_or_default();
    assert!(
        message.contains("  1:22  <<name>>  (variable token)\n  7:9   <<name>>  (variable token)"),
        "{message}"
    );

    // The clean render passes with the crate's delimiters; with the default
    // ones, its literal `{{x}}` would be taken for a token.
    let clean = build_prompt(PromptId::Greeter, greeter(true)).expect("renders");
    Survivors::with_delimiters(&angle()).assert_none(&clean.system);
    let braces: Vec<_> = find_survivors(&clean.system, &Delimiters::default())
        .iter()
        .map(|f| f.text(&clean.system).to_string())
        .collect();
    assert_eq!(braces, ["{{x}}"]);
}

/// The one-liner, with the delimiters read from `promptpack.toml`: snapshots
/// land in this crate's `tests/snapshots/`.
#[test]
fn snapshots() {
    promptpack::snapshot_prompts!(PromptId);
}

/// Had the suite checked for `{{`/`}}`, the literal `{{x}}` in both prompts
/// would have failed it: the one-liner really follows `promptpack.toml`.
#[test]
fn the_snapshot_suite_follows_the_configured_delimiters() {
    let prompts = promptpack::testing::PromptTable::new(
        &PromptId::ALL,
        PromptId::as_str,
        PromptId::variables,
        PromptId::conditions,
        PromptId::render_generated,
    );
    let run = Snapshots::new().start(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(run.survivors().delimiters(), &angle());
    // A check given without delimiters of its own keeps the prompts'.
    let allowing = Snapshots::new()
        .survivors(Survivors::new().allow_fenced_code())
        .start(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(allowing.survivors().delimiters(), &angle());

    let mut braces = Snapshots::new()
        .survivors(Survivors::with_delimiters(&Delimiters::default()))
        .start(env!("CARGO_MANIFEST_DIR"));
    for case in braces.cases(&prompts) {
        braces.snapshot(&case, |_| {});
    }
    let payload =
        catch_unwind(AssertUnwindSafe(|| braces.finish())).expect_err("`{{x}}` is flagged");
    let message = payload.downcast::<String>().map(|m| *m).unwrap_or_default();
    // The survivor of both combinations of a prompt is one problem.
    assert!(
        message.starts_with("promptpack snapshots: 2 problems in 4 cases:"),
        "{message}"
    );
    assert!(message.contains("{{x}}  (variable token)"), "{message}");
    // Where `{{x}}` is written: the files are read with the delimiters the
    // prompts were compiled with, in which `{{x}}` is plain text.
    assert!(
        message.contains(
            "1 template token survived in greeter, system.md (also in greeter@formal):\n    \
             templates/greeter/system.md:11:32  (rendered 10:32)  {{x}}"
        ),
        "{message}"
    );
    assert!(
        message.contains("templates/json-reply/system.md:6:37  (rendered 6:37)  {{x}}"),
        "{message}"
    );
}
