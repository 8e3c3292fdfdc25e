//! The repository's own snapshot suite: every sample prompt (`templates/`,
//! `snippets/`) under every combination of its conditions, one insta
//! snapshot per case (`tests/snapshots/snapshots_sample__<case>.snap`), each
//! checked for surviving template tokens. `sample_prompts` is the one line a
//! user writes; the other tests pin down what it does. Those that depend on
//! insta's environment (`INSTA_UPDATE`, `CI`) or look at what a run prints
//! run `child_run` in a child process of their own, with snapshot files in a
//! temporary folder.

use promptpack::testing::{Case, FindingKind, PromptTable, SnapshotRun, Snapshots, Survivors};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

promptpack::include_prompts!();

#[test]
fn sample_prompts() {
    promptpack::snapshot_prompts!(PromptId);
}

fn prompts() -> PromptTable<PromptId> {
    PromptTable::new(
        &PromptId::ALL,
        PromptId::as_str,
        PromptId::variables,
        PromptId::conditions,
        PromptId::render_generated,
    )
    .with_choices(PromptId::choices)
    .with_request(PromptId::tools, PromptId::response_format)
}

fn names<Id>(cases: &[Case<Id>]) -> Vec<&str> {
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
            "support-chat",
            "support-chat@showExamples",
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
    assert_eq!(typed.render_system().as_ref(), Ok(&tools.system));
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
    assert_eq!(cases.len(), 15);
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
    // The four agent-system cases hold the survivor: they are reported and
    // not snapshotted.
    assert_eq!(seen.len(), 11);
    assert!(!seen.iter().any(|name| name.starts_with("agent-system")));
    let message = failure(run);
    // The same survivor in the four cases is one problem, said once, where
    // its text comes from first.
    assert!(
        message.starts_with("promptpack snapshots: 3 problems in 15 cases:\n"),
        "{message}"
    );
    assert!(
        message.contains(
            "- 1 template token survived in agent-system, system.md (also in agent-system@hasTools, \
             agent-system@memory, agent-system@hasTools+memory):\n    from a value  (rendered 13:11)  {{step}}  (variable token)"
        ),
        "{message}"
    );
    assert!(
        message.contains("- director: pretend the snapshot changed\n- director@allowEnding: pretend the snapshot changed\n"),
        "{message}"
    );
    assert!(message.contains("cargo insta review"), "{message}");
}

/// The run checks with the `Survivors` it was given, not a copy of its
/// allowances: both find the same survivors in any text, and the summary's
/// hint names that API.
#[test]
fn a_run_checks_with_the_survivors_it_was_given() {
    let given = Survivors::new()
        .allow("{{step}}")
        .allow_kind(FindingKind::UnmatchedOpen)
        .allow_fenced_code();
    let run = Snapshots::new()
        .survivors(given.clone())
        .start(env!("CARGO_MANIFEST_DIR"));
    let text = "{{step}} {{ step }} {{\n```\n{{x}}\n```\n{{y}} {{snippet:z}}";
    let left = |check: &Survivors| -> Vec<String> {
        check
            .find(text)
            .iter()
            .map(|f| f.text(text).to_string())
            .collect()
    };
    assert_eq!(
        left(run.survivors()),
        ["{{ step }}", "{{y}}", "{{snippet:z}}"]
    );
    assert_eq!(left(run.survivors()), left(&given));

    let mut failing = Snapshots::new()
        .value("stateContext", "resume at {{step}}")
        .start(env!("CARGO_MANIFEST_DIR"));
    for case in failing.cases(&prompts()) {
        failing.snapshot(&case, |_| {});
    }
    let message = failure(failing);
    assert!(
        message.contains("Snapshots::survivors(Survivors::new().allow(\"exact text\"))"),
        "{message}"
    );
}

/// An allowed survivor does not fail the run.
#[test]
fn a_run_passes_with_the_survivor_allowed() {
    let options = Snapshots::new()
        .value("stateContext", "resume at {{step}}")
        .survivors(Survivors::new().allow("{{step}}"));
    let mut run = options.start(env!("CARGO_MANIFEST_DIR"));
    for case in run.cases(&prompts()) {
        run.snapshot(&case, |_| {});
    }
    run.finish();
}

/// The summary a failing run ends with.
fn failure(run: SnapshotRun) -> String {
    let payload = catch_unwind(AssertUnwindSafe(|| run.finish())).expect_err("the run fails");
    payload.downcast::<String>().map(|m| *m).unwrap_or_default()
}

/// `text` with each run of spaces made one, so that a report row can be
/// matched without its column padding.
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

/// A prompt folder of the tests' own: a three-line snippet above a
/// near-miss, a near-miss inside the snippet, and a condition nested in
/// another (off with its parent, it changes nothing).
mod lesson {
    use promptpack::testing::PromptTable;
    use promptpack::{Library, MissingVars, Prompt};
    use std::collections::HashMap;
    use std::path::Path;
    use std::sync::OnceLock;

    pub const SYSTEM: &str = "# Tutor\n\
        {{snippet:style}}\n\
        Talk with {{ audience }} about {{topic}}.\n\
        {{#if outer}}Outer part.{{#if inner}} Inner part.{{/if}}{{/if}}\n";
    pub const STYLE: &str = "## Style\nNever write {{#each}} loops.\nBe brief.\n";
    const VARIABLES: &[&str] = &["topic", "outer", "inner"];
    const CONDITIONS: &[&str] = &["outer", "inner"];

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Lesson {
        Lesson,
    }

    /// `templates/lesson/system.md` and `snippets/style.md`, in the target
    /// folder. Child processes write the same bytes, so a file is only
    /// written when it differs.
    pub fn dir() -> &'static Path {
        static DIR: OnceLock<&'static Path> = OnceLock::new();
        DIR.get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lesson-prompt");
            for (path, text) in [
                ("templates/lesson/system.md", SYSTEM),
                ("snippets/style.md", STYLE),
            ] {
                if std::fs::read_to_string(dir.join(path)).ok().as_deref() != Some(text) {
                    promptpack_testkit::files::write(&dir, path, text);
                }
            }
            Box::leak(dir.into_boxed_path())
        })
    }

    fn render(id: Lesson, value: &dyn Fn(&str) -> Option<String>) -> Prompt<Lesson> {
        static LIBRARY: OnceLock<Library> = OnceLock::new();
        let library = LIBRARY.get_or_init(|| Library::load(dir()).expect("the lesson loads"));
        let values: HashMap<&str, String> = VARIABLES
            .iter()
            .map(|v| (*v, value(v).unwrap_or_default()))
            .collect();
        let prompt = library
            .render("lesson", &values, MissingVars::Error)
            .expect("renders");
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

    pub fn prompts() -> PromptTable<Lesson> {
        PromptTable::new(
            &[Lesson::Lesson],
            |_| "lesson",
            |_| VARIABLES,
            |_| CONDITIONS,
            render,
        )
    }

    pub fn dir_str() -> &'static str {
        dir().to_str().expect("a UTF-8 path")
    }
}

/// Combinations whose render is identical collapse into the first, which
/// says which others it stands for.
#[test]
fn identical_renders_collapse_into_the_first_combination() {
    let lesson = lesson::prompts();
    let every = Snapshots::new().cases(&lesson);
    assert_eq!(
        names(&every),
        [
            "lesson",
            "lesson@outer",
            "lesson@inner",
            "lesson@outer+inner"
        ]
    );
    assert_eq!(
        every[0].system, every[2].system,
        "inner alone changes nothing"
    );
    let run = Snapshots::new().start(lesson::dir_str());
    let cases = run.cases(&lesson);
    assert_eq!(
        names(&cases),
        ["lesson", "lesson@outer", "lesson@outer+inner"]
    );
    assert_eq!(cases[0].covers, ["lesson@inner"]);
    assert!(cases[1].covers.is_empty() && cases[2].covers.is_empty());
    assert!(
        cases[0]
            .description()
            .ends_with("; also covers lesson@inner (identical text)"),
        "{}",
        cases[0].description()
    );
    // The sample prompts have no two identical renders.
    let samples = Snapshots::new().start(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(samples.cases(&prompts()).len(), 15);
}

/// A survivor is reported where its text comes from (the template or the
/// snippet, line and column in that file; or a value), then where it is in
/// the rendered text; the same survivors in several cases are one entry.
#[test]
fn survivors_point_at_the_file_they_come_from() {
    let prompts = lesson::prompts();
    let mut run = Snapshots::new()
        .value("topic", "{{step}}")
        .start(lesson::dir_str());
    let mut snapshotted = 0;
    for case in run.cases(&prompts) {
        run.snapshot(&case, |_| snapshotted += 1);
    }
    assert_eq!(snapshotted, 0, "every case holds survivors");
    let message = squeezed(&failure(run));
    assert!(
        message.starts_with(
            "promptpack snapshots: 1 problem in 3 cases:\n\
             - 3 template tokens survived in lesson, system.md (also in lesson@outer, lesson@outer+inner):\n\
             \x20   snippets/style.md:2:13 (rendered 3:13) {{#each}} (near-miss: a block promptpack does not have)\n\
             \x20   templates/lesson/system.md:3:11 (rendered 5:11) {{ audience }} (near-miss: spaces inside the delimiters; meant {{audience}}?)\n\
             \x20   from a value (rendered 5:32) {{step}} (variable token)\n"
        ),
        "{message}"
    );
}

/// Where the prompt's files are not beside the crate, the rendered position
/// is all there is.
#[test]
fn without_the_files_a_survivor_has_its_rendered_position() {
    let empty = tempfile::tempdir().expect("a temporary folder");
    let mut run = Snapshots::new().start(empty.path().to_str().expect("UTF-8"));
    for case in run.cases(&lesson::prompts()).into_iter().take(1) {
        run.snapshot(&case, |_| {});
    }
    let message = failure(run);
    assert!(
        message.contains("2 template tokens survived in lesson, system.md:\n    3:13  {{#each}}"),
        "{message}"
    );
    assert!(!message.contains("from a value"), "{message}");
}

// ---------------------------------------------------------------------------
// Runs in a child process: insta's environment, files and output
// ---------------------------------------------------------------------------

const CHILD_SCENARIO: &str = "PROMPTPACK_TEST_SCENARIO";
const CHILD_DIR: &str = "PROMPTPACK_TEST_SNAPSHOT_DIR";

/// What a child process runs: a snapshot run writing into the folder
/// `PROMPTPACK_TEST_SNAPSHOT_DIR`. Does nothing when run otherwise.
#[test]
#[ignore = "run in a child process by the tests below, with an environment of its own"]
fn child_run() {
    let (Ok(scenario), Ok(dir)) = (std::env::var(CHILD_SCENARIO), std::env::var(CHILD_DIR)) else {
        return;
    };
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.bind(|| match scenario.as_str() {
        "samples" => promptpack::snapshot_prompts!(PromptId),
        "samples-with-a-survivor" => promptpack::snapshot_prompts!(
            PromptId,
            Snapshots::new().value("stateContext", "resume at {{step}}")
        ),
        "lesson" => {
            let mut run = Snapshots::new()
                .survivors(Survivors::new().allow("{{ audience }}").allow("{{#each}}"))
                .start(lesson::dir_str());
            for case in run.cases(&lesson::prompts()) {
                run.check(&case, module_path!());
            }
            run.finish();
        }
        "panicking-cases" => {
            let mut run = Snapshots::new().start(env!("CARGO_MANIFEST_DIR"));
            for case in run.cases(&prompts()) {
                run.snapshot(&case, |case| {
                    assert!(case.prompt != "director", "pretend the snapshot changed");
                });
            }
            // The panic hook is back once the cases ran.
            let after = catch_unwind(|| panic!("a panic after the cases"));
            assert!(after.is_err());
            run.finish();
        }
        other => panic!("unknown scenario {other}"),
    });
}

/// Runs `child_run` in a child process with `scenario`, its snapshots in
/// `dir`, insta's environment cleared but for `env`. Whether it passed, and
/// everything it printed.
fn run_child(scenario: &str, dir: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let mut command = std::process::Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args([
            "child_run",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_SCENARIO, scenario)
        .env(CHILD_DIR, dir)
        .env("RUST_BACKTRACE", "0");
    for var in [
        "CI",
        "TF_BUILD",
        "INSTA_UPDATE",
        "INSTA_FORCE_PASS",
        "INSTA_PENDING_DIR",
        "INSTA_WORKSPACE_ROOT",
        "INSTA_SNAPSHOT_REFERENCES_FILE",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let output = command.output().expect("the child runs");
    let mut printed = String::from_utf8_lossy(&output.stdout).into_owned();
    printed.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.success(), printed)
}

/// The file names in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the snapshot folder")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// The committed snapshot of a sample case, as insta wrote it.
fn committed(name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "snapshots",
        &format!("snapshots_sample__{name}.snap"),
    ]
    .iter()
    .collect();
    std::fs::read_to_string(path).expect("a committed snapshot")
}

const SAMPLE_CASES: [&str; 15] = [
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
    "support-chat",
    "support-chat@showExamples",
    "support_triage",
    "support_triage@is_priority_customer",
];

/// A first run (no snapshots yet) prints one short summary, each case once,
/// and nothing per case: no insta diff, no "Stopped on the first failure",
/// no panic message or backtrace. Every case is written for review, as
/// insta writes it.
#[test]
fn a_first_run_prints_one_summary() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (passed, printed) = run_child("samples", dir.path(), &[("RUST_BACKTRACE", "1")]);
    assert!(!passed, "{printed}");
    assert_eq!(
        printed.matches("promptpack snapshots:").count(),
        1,
        "{printed}"
    );
    assert!(
        printed.contains("promptpack snapshots: 15 problems in 15 cases:\n"),
        "{printed}"
    );
    for name in SAMPLE_CASES {
        let line = format!("- {name}: new snapshot, pending review in ");
        assert_eq!(printed.matches(&line).count(), 1, "{name}: {printed}");
    }
    for noise in [
        "Stopped on the first failure",
        "snapshot assertion",
        "panicked",
        "stack backtrace",
    ] {
        assert!(!printed.contains(noise), "{noise}: {printed}");
    }
    // The summary: a heading, a line per case, a hint. The rest is the
    // test harness's.
    let summary = printed
        .lines()
        .skip_while(|l| !l.starts_with("promptpack snapshots:"))
        .take_while(|l| !l.is_empty())
        .count();
    assert_eq!(summary, 17, "{printed}");
    let lines = printed.lines().count();
    assert!(lines <= 30, "{lines} lines:\n{printed}");

    let expected: Vec<String> = SAMPLE_CASES
        .iter()
        .map(|name| format!("snapshots_sample__{name}.snap.new"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(files_in(dir.path()), expected);
    for name in SAMPLE_CASES {
        let pending = dir
            .path()
            .join(format!("snapshots_sample__{name}.snap.new"));
        let text = std::fs::read_to_string(&pending).expect("pending snapshot");
        // What insta writes: its .snap with the assertion line for review.
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("---"));
        assert_eq!(lines.next(), Some("source: tests/snapshots_sample.rs"));
        assert!(
            lines
                .next()
                .is_some_and(|l| l.starts_with("assertion_line: "))
        );
        let without_line: String = text
            .lines()
            .filter(|l| !l.starts_with("assertion_line: "))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(without_line, committed(name), "{name}");
        let read = insta::Snapshot::from_file(&pending).expect("insta reads it");
        assert_eq!(read.metadata().source(), Some("tests/snapshots_sample.rs"));
        assert!(read.metadata().assertion_line().is_some());
    }
}

/// A closure that panics in a case (a snapshot assertion of one's own)
/// prints nothing then: its message is in the summary, once. The panic hook
/// is back after the cases.
#[test]
fn panics_in_cases_are_kept_for_the_summary() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (passed, printed) = run_child("panicking-cases", dir.path(), &[]);
    assert!(!passed, "{printed}");
    assert_eq!(
        printed.matches("pretend the snapshot changed").count(),
        2,
        "{printed}"
    );
    assert!(
        printed.contains(
            "- director: pretend the snapshot changed\n- director@allowEnding: pretend the snapshot changed\n"
        ),
        "{printed}"
    );
    assert_eq!(printed.matches("panicked").count(), 1, "{printed}");
    assert!(printed.contains("a panic after the cases"), "{printed}");
}

/// `INSTA_UPDATE=always` writes the accepted snapshots, as insta writes
/// them, and removes the `.snap.new` files an earlier run left; a case with
/// a survivor is not accepted, and its leftover is removed too.
#[test]
fn accepting_leaves_no_pending_files_and_no_survivors() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for name in SAMPLE_CASES {
        let pending = dir
            .path()
            .join(format!("snapshots_sample__{name}.snap.new"));
        std::fs::write(pending, "---\nsource: earlier\n---\nold\n").expect("write");
    }
    let (passed, printed) = run_child(
        "samples-with-a-survivor",
        dir.path(),
        &[("INSTA_UPDATE", "always")],
    );
    assert!(!passed, "the survivor fails the run: {printed}");
    assert!(
        printed.contains("promptpack snapshots: 1 problem in 15 cases:\n"),
        "{printed}"
    );
    assert!(
        printed.contains("from a value  (rendered 13:11)  {{step}}"),
        "{printed}"
    );
    assert!(
        printed.contains("Accepted 11 snapshots (INSTA_UPDATE=always)."),
        "{printed}"
    );
    assert!(
        printed.contains("Removed 15 leftover .snap.new files."),
        "{printed}"
    );
    let accepted: Vec<&str> = SAMPLE_CASES
        .iter()
        .copied()
        .filter(|name| !name.starts_with("agent-system"))
        .collect();
    let mut expected: Vec<String> = accepted
        .iter()
        .map(|name| format!("snapshots_sample__{name}.snap"))
        .collect();
    expected.sort();
    assert_eq!(files_in(dir.path()), expected);
    for name in accepted {
        let written =
            std::fs::read_to_string(dir.path().join(format!("snapshots_sample__{name}.snap")))
                .expect("accepted snapshot");
        assert_eq!(written, committed(name), "{name}");
    }
}

/// With `INSTA_UPDATE=always`, identical renders are written once, under the
/// first combination's name, with a description naming the others; a
/// leftover `.snap.new` of a folded combination is removed. Allowed
/// survivors do not keep a case from being snapshotted.
#[test]
fn identical_renders_are_written_once() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let leftover = dir.path().join("snapshots_sample__lesson@inner.snap.new");
    std::fs::write(&leftover, "---\nsource: earlier\n---\nold\n").expect("write");
    let (passed, printed) = run_child("lesson", dir.path(), &[("INSTA_UPDATE", "always")]);
    assert!(passed, "{printed}");
    assert!(
        printed.contains("promptpack snapshots: Accepted 3 snapshots (INSTA_UPDATE=always). Removed 1 leftover .snap.new file."),
        "{printed}"
    );
    assert_eq!(
        files_in(dir.path()),
        [
            "snapshots_sample__lesson.snap",
            "snapshots_sample__lesson@outer+inner.snap",
            "snapshots_sample__lesson@outer.snap",
        ]
    );
    let first = insta::Snapshot::from_file(&dir.path().join("snapshots_sample__lesson.snap"))
        .expect("insta reads it");
    assert_eq!(
        first.metadata().description(),
        Some(
            "lesson with outer, inner off; values: ‹name› placeholders; also covers lesson@inner (identical text)"
        )
    );
    // A second run finds every snapshot as written.
    let (passed, printed) = run_child("lesson", dir.path(), &[]);
    assert!(passed, "{printed}");
    assert!(!printed.contains("promptpack snapshots"), "{printed}");
}

/// On CI a new snapshot is written nowhere and fails the run.
#[test]
fn on_ci_nothing_is_written() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (passed, printed) = run_child("lesson", dir.path(), &[("CI", "true")]);
    assert!(!passed, "{printed}");
    assert!(
        printed.contains("- lesson: new snapshot, not written (CI is set)\n"),
        "{printed}"
    );
    assert!(files_in(dir.path()).is_empty());
}
