//! The repository's own snapshot suite: every sample prompt (`templates/`,
//! `snippets/`) under every combination of its conditions, one insta
//! snapshot per case (`tests/snapshots/snapshots_sample__<case>.snap`), each
//! checked for surviving template tokens. `sample_prompts` is the one line a
//! user writes; the other tests pin down what it does.

use promptpack::testing::{Case, Prompts, Snapshots};
use std::panic::{AssertUnwindSafe, catch_unwind};

promptpack::include_prompts!();

#[test]
fn sample_prompts() {
    promptpack::snapshot_prompts!(PromptId);
}

fn prompts() -> Prompts<PromptId> {
    Prompts::new(
        &PromptId::ALL,
        PromptId::as_str,
        PromptId::variables,
        PromptId::conditions,
        PromptId::render_generated,
    )
    .with_choices(PromptId::choices)
}

fn names(cases: &[Case<PromptId>]) -> Vec<&str> {
    cases.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn every_combination_of_conditions_is_a_case() {
    let cases = Snapshots::new().cases(&prompts());
    assert_eq!(
        names(&cases),
        [
            "agent-system",
            "agent-system@hasTools",
            "agent-system@memory",
            "agent-system@hasTools+memory",
            "classroom-agent",
            "classroom-agent@role=assistant",
            "classroom-agent@role=student",
            "code-review",
            "code-review@strictMode",
            "director",
            "director@allowEnding",
            "support_triage",
            "support_triage@is_priority_customer",
        ]
    );
    let both = &cases[3];
    assert_eq!(both.id, PromptId::AgentSystem);
    assert_eq!(
        (both.on.as_slice(), both.off.len()),
        (&["hasTools", "memory"][..], 0)
    );
    assert!(
        both.system
            .contains("You are ‹agentName›, an assistant working with ‹userName›.")
    );
    assert!(
        both.system
            .contains("## Tools\nYou can call tools. Available right now:\n‹toolList›\n")
    );
    assert!(
        both.system
            .contains("## What you remember about ‹userName›\n‹memory›")
    );
    let none = &cases[0];
    assert!(none.system.contains("## No tools") && !none.system.contains("‹memory›"));
    // A prompt with a user part snapshots both.
    // Each value of a compared variable is a case, its text the value's.
    let student = &cases[6];
    assert_eq!(student.choices, [("role", "student")]);
    assert!(student.system.contains("## As a student"));
    assert!(!student.system.contains("## As the teacher"));
    assert!(cases[4].system.contains("## As the teacher"));
    let director = &cases[9];
    assert_eq!(
        director
            .user
            .as_deref()
            .map(|u| u.ends_with("Who speaks next?")),
        Some(true)
    );
    assert!(
        director
            .snapshot()
            .contains("\n--- user.md ---\n## Agents\n‹agentRoster›\n")
    );
}

/// Each case equals the typed API's render with the same values.
#[test]
fn a_case_is_what_the_typed_api_renders() {
    let cases = Snapshots::new().cases(&prompts());
    let tools = cases
        .iter()
        .find(|c| c.name == "agent-system@hasTools")
        .expect("case exists");
    let typed = AgentSystemVars {
        agent_name: "‹agentName›",
        user_name: "‹userName›",
        has_tools: true,
        tool_list: "‹toolList›",
        memory: None,
        state_context: "‹stateContext›",
    };
    assert_eq!(tools.system, typed.render_system());
}

#[test]
fn values_set_by_the_test_replace_placeholders() {
    let cases = Snapshots::new()
        .value("toolList", "- search\n- fetch")
        .value("memory", "")
        .cases(&prompts());
    let both = cases
        .iter()
        .find(|c| c.name == "agent-system@hasTools+memory")
        .expect("case exists");
    assert!(
        both.system
            .contains("Available right now:\n- search\n- fetch\n")
    );
    // An empty value makes its condition false even where it is on.
    assert!(!both.system.contains("What you remember"));
    assert_eq!(both.set_by_test, ["toolList", "memory"]);
    assert!(
        both.description()
            .ends_with("toolList, memory set by the test")
    );
}

#[test]
fn the_bound_keeps_none_each_alone_and_all() {
    let cases = Snapshots::new().max_combinations(1).cases(&prompts());
    // With at most one combination, a prompt with two conditions gets four
    // cases anyway (none, each alone, all), a prompt with one gets two.
    assert_eq!(cases.len(), 13);
    let cases = Snapshots::new().max_combinations(2).cases(&prompts());
    assert_eq!(
        names(&cases)[..4],
        [
            "agent-system",
            "agent-system@hasTools",
            "agent-system@memory",
            "agent-system@hasTools+memory"
        ]
    );
}

/// Every case runs even when some fail; the run then fails once, naming
/// each failed snapshot and each survivor with its case and part.
#[test]
fn a_run_reports_every_failure_at_the_end() {
    let options = Snapshots::new().value("stateContext", "resume at {{step}}");
    let mut run = options.start(env!("CARGO_MANIFEST_DIR"));
    let mut seen = Vec::new();
    for case in run.cases(&prompts()) {
        run.snapshot(&case, |case| {
            seen.push(case.name.clone());
            assert!(case.prompt != "director", "pretend the snapshot changed");
        });
    }
    assert_eq!(seen.len(), 13);
    let payload = catch_unwind(AssertUnwindSafe(|| run.finish())).expect_err("the run fails");
    let message = payload.downcast::<String>().map(|m| *m).unwrap_or_default();
    assert!(
        message.starts_with("promptpack snapshots: 6 problems in 13 cases:\n"),
        "{message}"
    );
    assert!(
        message.contains(
            "- 1 template token survived in agent-system@hasTools+memory, system.md:\n    17:11  {{step}}  (variable token)"
        ),
        "{message}"
    );
    assert!(
        message.contains("- director: pretend the snapshot changed\n- director@allowEnding: pretend the snapshot changed\n"),
        "{message}"
    );
    assert!(message.contains("cargo insta review"), "{message}");
}

/// An allowed survivor does not fail the run.
#[test]
fn a_run_passes_with_the_survivor_allowed() {
    let options = Snapshots::new()
        .value("stateContext", "resume at {{step}}")
        .allow("{{step}}");
    let mut run = options.start(env!("CARGO_MANIFEST_DIR"));
    for case in run.cases(&prompts()) {
        run.snapshot(&case, |_| {});
    }
    run.finish();
}
