//! Integration tests of the `promptpack` binary: each case runs it on a
//! fixture tree under `tests/cli/` and snapshots the command, the exit code,
//! stdout and stderr together.

use promptpack_testkit::files::copy_tree;
use promptpack_testkit::wait::recv_until;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::BIN;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary from the crate root with `args` (and `stdin`, when
/// given), in plain style, and formats what it did.
fn run_with(args: &[&str], stdin: Option<&str>) -> String {
    run_in(&manifest_dir(), args, stdin)
}

/// Starts the binary in `cwd` with `args`, in plain style, stdout and stderr
/// piped, stdin piped when `with_stdin`.
fn spawn(cwd: &Path, args: &[&std::ffi::OsStr], with_stdin: bool) -> std::process::Child {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(if with_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

/// Runs the binary in the folder `cwd` with `args` (and `stdin`, when
/// given), in plain style, and formats what it did.
fn run_in(cwd: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let os_args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut child = spawn(cwd, &os_args, stdin.is_some());
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("stdin is written");
    }
    let output = child.wait_with_output().expect("the binary runs");
    let code = output
        .status
        .code()
        .map_or("signal".to_string(), |c| c.to_string());
    format!(
        "$ promptpack {}\nexit code: {code}\n----- stdout -----\n{}----- stderr -----\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    )
}

fn run(args: &[&str]) -> String {
    run_with(args, None)
}

/// Snapshots `output` as
/// `tests/integration/snapshots/integration__cli__<name>.snap`; the command
/// is in the snapshot itself.
fn snapshot(name: &str, output: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, output));
}

macro_rules! case {
    ($name:ident, [$($arg:expr),* $(,)?]) => {
        #[test]
        fn $name() {
            snapshot(stringify!($name), &run(&[$($arg),*]));
        }
    };
}

case!(check_clean, ["check", "--root", "tests/cli/clean"]);
case!(check_broken, ["check", "--root", "tests/cli/broken"]);
case!(check_warnings, ["check", "--root", "tests/cli/warnings"]);
case!(
    check_warnings_denied,
    ["check", "--deny-warnings", "--root", "tests/cli/warnings"]
);
case!(
    check_deny_warnings_clean,
    ["check", "--deny-warnings", "--root", "tests/cli/clean"]
);
case!(
    check_angle_delimiters,
    ["check", "--root", "tests/cli/angle"]
);
case!(
    check_folder_overrides,
    [
        "check",
        "--root",
        "tests/cli/angle",
        "--templates",
        "tests/cli/clean/templates",
        "--snippets",
        "tests/cli/clean/snippets",
        "--delimiters",
        "{{",
        "}}",
    ]
);
case!(
    check_missing_root,
    ["check", "--root", "tests/cli/no-such-folder"]
);
case!(list_clean, ["list", "--root", "tests/cli/clean"]);
// The repository's own sample prompts: descriptions from their front matter,
// token counts of their shortest and longest combinations.
case!(list_sample_prompts, ["list", "--root", "../.."]);
case!(contract_sample_prompts, ["contract", "--root", "../.."]);
// What a request sends beside the text: the response format of the sample
// that declares one, in the JSON and at the end of the text form.
case!(
    render_sample_response_json,
    [
        "render",
        "support_triage",
        "--json",
        "--root",
        "../..",
        "--var",
        "product_name=Acme",
        "--var",
        "customer_name=Ada",
        "--var",
        "ticket_body=My invoice is wrong.",
    ]
);
case!(
    render_sample_tools,
    [
        "render",
        "support-chat",
        "--root",
        "../..",
        "--vars",
        "tests/cli/sample-values/support-chat.json",
    ]
);
case!(contract_broken, ["contract", "--root", "tests/cli/broken"]);
case!(
    list_sample_prompts_json,
    ["list", "--json", "--root", "../.."]
);
case!(list_choices, ["list", "--root", "tests/cli/choices"]);
case!(
    list_choices_json,
    ["list", "--json", "--root", "tests/cli/choices"]
);
// The render bound: past `--max-render-bytes` a render is `too_large`,
// naming the prompt, the bound and what it would have been; within it,
// the prompt prints.
case!(
    render_past_the_bound,
    [
        "render",
        "tutor",
        "--root",
        "tests/cli/choices",
        "--var",
        "topic=tides",
        "--var",
        "level=high school",
        "--max-render-bytes",
        "20",
    ]
);
case!(
    render_bound_not_a_number,
    [
        "render",
        "tutor",
        "--root",
        "tests/cli/choices",
        "--max-render-bytes",
        "0"
    ]
);
case!(
    render_choice,
    [
        "render",
        "tutor",
        "--root",
        "tests/cli/choices",
        "--var",
        "topic=tides",
        "--var",
        "level=high school",
    ]
);
case!(
    render_choice_unlisted_value,
    [
        "render",
        "tutor",
        "--root",
        "tests/cli/choices",
        "--var",
        "topic=tides",
        "--var",
        "level=child",
    ]
);
// Declared choices: every declared value listed in the declared order
// (`observer`, which no branch compares, first), counted as a combination;
// a declared value renders its branch (`observer` the `{{else}}`), an
// undeclared one is refused with the one meant; `check` warns of the
// values no branch compares.
case!(
    list_declared_choices,
    ["list", "--root", "tests/cli/declared-choices"]
);
case!(
    list_declared_choices_json,
    ["list", "--json", "--root", "tests/cli/declared-choices"]
);
case!(
    render_declared_choice,
    [
        "render",
        "lesson",
        "--root",
        "tests/cli/declared-choices",
        "--var",
        "topic=tides",
        "--var",
        "role=observer",
    ]
);
case!(
    render_declared_choice_undeclared_value,
    [
        "render",
        "lesson",
        "--root",
        "tests/cli/declared-choices",
        "--var",
        "topic=tides",
        "--var",
        "role=obsever",
    ]
);
case!(
    check_declared_choices,
    ["check", "--root", "tests/cli/declared-choices"]
);
case!(
    contract_declared_choices,
    ["contract", "--root", "tests/cli/declared-choices"]
);
case!(list_json, ["list", "--json", "--root", "tests/cli/clean"]);
// Front matter: descriptions, budgets, examples. `tutor` has a flag and a
// choice (shortest < longest, and over its budget at the longest);
// `greeting` has no conditions (one count) and a declared var's example;
// `plain` has no front matter.
case!(
    list_front_matter,
    ["list", "--root", "tests/cli/front-matter"]
);
case!(
    list_front_matter_json,
    ["list", "--json", "--root", "tests/cli/front-matter"]
);
case!(
    list_front_matter_cl100k,
    [
        "list",
        "--tokenizer",
        "cl100k_base",
        "--root",
        "tests/cli/front-matter",
    ]
);
case!(
    check_over_budget,
    ["check", "--root", "tests/cli/front-matter"]
);
case!(
    check_over_budget_denied,
    [
        "check",
        "--deny-warnings",
        "--root",
        "tests/cli/front-matter"
    ]
);
case!(
    render_example,
    [
        "render",
        "tutor",
        "--example",
        "fractions",
        "--root",
        "tests/cli/front-matter",
    ]
);
case!(
    render_example_vars_override,
    [
        "render",
        "tutor",
        "--example",
        "fractions",
        "--vars",
        "tests/cli/front-matter/override.json",
        "--var",
        "question=Why?",
        "--root",
        "tests/cli/front-matter",
    ]
);
case!(
    render_example_unknown,
    [
        "render",
        "tutor",
        "--example",
        "fraction",
        "--root",
        "tests/cli/front-matter",
    ]
);
case!(
    render_example_without_examples,
    [
        "render",
        "greeting",
        "--example",
        "basic",
        "--root",
        "tests/cli/front-matter",
    ]
);
case!(list_broken, ["list", "--root", "tests/cli/broken"]);
case!(
    render_var,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--var",
        "agentName=Ada",
        "--var",
        "userName=Grace"
    ]
);
case!(
    render_vars_file,
    [
        "render",
        "summarize",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars.json"
    ]
);
// `--var` overrides `--vars` with a string: "false" is truthy, as in JavaScript.
case!(
    render_var_overrides_vars_file,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars.json",
        "--var",
        "agentName=Bob",
        "--var",
        "formal=false",
    ]
);
case!(
    render_json,
    [
        "render",
        "greet",
        "--json",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars.json"
    ]
);
case!(
    render_json_no_user,
    [
        "render",
        "summarize",
        "--json",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars.json"
    ]
);
case!(
    render_strict_missing_var,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--var",
        "agentName=Ada"
    ]
);
case!(
    render_lenient,
    [
        "render",
        "greet",
        "--lenient",
        "--root",
        "tests/cli/clean",
        "--var",
        "agentName=Ada"
    ]
);
case!(
    render_unknown_id,
    ["render", "nope", "--root", "tests/cli/clean"]
);
case!(
    render_broken_tree,
    [
        "render",
        "fine",
        "--root",
        "tests/cli/broken",
        "--var",
        "name=Ada"
    ]
);
case!(
    render_angle_delimiters,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/angle",
        "--var",
        "name=Ada",
        "--var",
        "vip=yes"
    ]
);
case!(
    render_vars_invalid_json,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/clean/snippets/tone.md"
    ]
);
// A values file saved by a Windows editor starts with a byte order mark.
case!(
    render_vars_bom,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars-bom.json"
    ]
);
// After a mark, a JSON error is still placed where the editor shows it.
case!(
    render_vars_bom_invalid_json,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars-bom-invalid.json"
    ]
);
// A values file in Latin-1: the offset, line and column of the bad byte.
case!(
    render_vars_not_utf8,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars-latin1.json"
    ]
);
// A values file saved as UTF-16 ("Unicode" in Windows tools): said so.
case!(
    render_vars_utf16,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--vars",
        "tests/cli/vars-utf16.json"
    ]
);
case!(usage_unknown_flag, ["check", "--bogus"]);
case!(
    usage_bad_var,
    [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--var",
        "agentName"
    ]
);
case!(usage_missing_id, ["render", "--root", "tests/cli/clean"]);

/// `render greet --vars -` with `vars` on standard input.
fn render_from_stdin(name: &str, vars: &str) {
    let args = [
        "render",
        "greet",
        "--root",
        "tests/cli/clean",
        "--vars",
        "-",
    ];
    snapshot(name, &run_with(&args, Some(vars)));
}

#[test]
fn render_vars_stdin() {
    let vars = r#"{"agentName": "Ada", "userName": "Grace", "formal": 0}"#;
    render_from_stdin("render_vars_stdin", vars);
}

/// A number JavaScript reads as `Infinity` cannot be a JSON value: refused,
/// saying so, at the number.
#[test]
fn render_vars_number_out_of_range() {
    let vars = "{\"agentName\": \"Ada\",\n \"userName\": [1, 0.1e400]}";
    render_from_stdin("render_vars_number_out_of_range", vars);
}

#[test]
fn render_vars_stdin_bom() {
    let vars = "\u{FEFF}{\"agentName\": \"Ada\", \"userName\": \"Grace\"}";
    render_from_stdin("render_vars_stdin_bom", vars);
}

/// A reader that stops early (`promptpack render big | head -c 16`) ends
/// the render quietly: exit code 0, no panic, nothing on stderr.
#[test]
fn render_into_a_closed_pipe() {
    let dir = tempfile::tempdir().expect("temp dir");
    let template = dir.path().join("templates/big");
    std::fs::create_dir_all(&template).expect("create templates/big");
    // 1 MB of output, far more than a pipe holds.
    std::fs::write(template.join("system.md"), "{{x}}\n".repeat(200)).expect("write");
    let value = format!("x={}", "y".repeat(5000));
    let root = dir.path().as_os_str();
    let args = ["render", "big", "--var", &value, "--root"];
    let mut args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    args.push(root);
    let mut child = spawn(&manifest_dir(), &args, false);
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut start = [0u8; 16];
    stdout.read_exact(&mut start).expect("the render starts");
    assert_eq!(&start, b"yyyyyyyyyyyyyyyy");
    drop(stdout);
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).expect("stderr is read");
    }
    let status = child.wait().expect("the binary ends");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "");
}

/// Output that cannot be written (a full disk: `/dev/full`) is an `io`
/// error and a failing exit code, in every output mode, not a success that
/// printed nothing.
#[cfg(target_os = "linux")]
#[test]
fn output_lost_to_a_full_disk_is_an_error() {
    let root = manifest_dir().join("tests/cli/clean");
    let root = root.to_string_lossy();
    let vars = ["--var", "agentName=Ada", "--var", "userName=Grace"];
    let render = [&["render", "greet"][..], &vars].concat();
    let json = [&render[..], &["--json"]].concat();
    let watch = [&["watch", "greet", "--max-renders", "1"][..], &vars].concat();
    for args in [&render[..], &json[..], &["list"][..], &watch[..]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full opens");
        let output = Command::new(BIN)
            .args(args)
            .args(["--root", &root])
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(full)
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error[io]: cannot write to standard output"),
            "{args:?}: {stderr}"
        );
    }
}

/// `watch` whose reader has gone (`promptpack watch p | head -3`) ends at
/// its next render, quietly, instead of rendering for no one until killed.
#[test]
fn watch_ends_when_its_reader_closes_the_pipe() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&manifest_dir().join("tests/cli/clean"), dir.path(), &[]);
    let args = [
        "watch",
        "greet",
        "--var",
        "agentName=Ada",
        "--var",
        "userName=Grace",
        "--root",
    ];
    let mut args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    args.push(dir.path().as_os_str());
    let mut child = spawn(&manifest_dir(), &args, false);
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("the first render");
    assert_eq!(first, "=== render 1 ===\n");
    drop(stdout);
    // Each edit is a render, which finds the pipe closed; a two-minute hang
    // guard, never a timing.
    let mut status = None;
    for i in 0..240 {
        if i % 10 == 0 {
            replace(
                &dir.path().join("templates/greet/user.md"),
                &format!("Edit {i} for {{{{userName}}}}.\n"),
            );
        }
        status = child.try_wait().expect("wait on watch");
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("watch went on rendering into a closed pipe");
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).expect("stderr is read");
    }
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

/// Values used by no template, as many as the prompt has variables and
/// none of them its names: the first few are named (each with a
/// suggestion searched among all the variables) and the rest counted, so
/// that the warnings stay a few lines, and their cost linear (2,000 of each
/// printed 2,000 warnings; 20,000 of each did not end in two minutes).
#[test]
fn render_warns_about_many_unused_values_in_a_few_lines() {
    const N: usize = 2_000;
    let dir = tempfile::tempdir().expect("temp dir");
    let template = dir.path().join("templates/many");
    std::fs::create_dir_all(&template).expect("create templates/many");
    let uses: String = (0..N).map(|i| format!("{{{{v{i}}}}}\n")).collect();
    std::fs::write(template.join("system.md"), uses).expect("write the template");
    let keys: Vec<String> = (0..N).map(|i| format!("\"w{i}\": 1")).collect();
    let vars = format!("{{{}}}", keys.join(", "));
    let out = run_in(
        dir.path(),
        &["render", "many", "--root", ".", "--vars", "-"],
        Some(&vars),
    );
    let warnings: Vec<&str> = out.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 11, "{}", warnings.join("\n"));
    assert_eq!(
        warnings[0],
        "warning: --vars key `w0` is used by no template of `many`; did you mean `v0`?"
    );
    assert_eq!(
        warnings[10],
        "warning: 1990 more value(s) are used by no template of `many`"
    );
}

/// A values key or a `--var` name holding an escape sequence or a carriage
/// return is shown escaped in the warning about it, as in diagnostics: a
/// values file cannot drive the terminal.
#[test]
fn warnings_escape_control_characters() {
    let out = run_with(
        &[
            "render",
            "greet",
            "--root",
            "tests/cli/clean",
            "--var",
            "agentName=Ada",
            "--var",
            "userName=Grace",
            "--var",
            "a\u{1b}[2Jb=1",
            "--vars",
            "-",
        ],
        Some(r#"{"\u001b[31mz\r": 2}"#),
    );
    // The command echoed first holds the argument as given.
    let (_, stderr) = out.split_once("----- stderr -----").expect("stderr");
    assert!(!stderr.contains(['\u{1b}', '\r']), "{stderr:?}");
    assert!(stderr.contains("warning: --var `a\\u{1b}[2Jb`"), "{stderr}");
    assert!(
        stderr.contains("warning: --vars key `\\u{1b}[31mz\\r`"),
        "{stderr}"
    );
}

/// An unknown id among many prompts names the nearest few and how many
/// there are, not every id.
#[test]
fn render_unknown_id_among_many() {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..500 {
        let path = format!("templates/prompt-{i:03}/system.md");
        promptpack_testkit::files::write(dir.path(), &path, "Hello.");
    }
    let out = run_in(dir.path(), &["render", "prompt-42", "--root", "."], None);
    snapshot("render_unknown_id_among_many", &out);
}

/// Replaces a file in one step, as editors do, so that the watcher never
/// sees it half written.
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("md.tmp");
    std::fs::write(&tmp, text).expect("write temp file");
    std::fs::rename(&tmp, path).expect("rename over the file");
}

/// `watch` renders, renders again after an edit, shows a broken edit's error
/// inline, and stops after `--max-renders`.
/// A running `promptpack watch`: its stdout read line by line, its stderr
/// collected, for tests that edit files while it runs.
struct Watching {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
    /// Every stdout line read so far.
    seen: Vec<String>,
}

impl Watching {
    /// Starts `promptpack ARGS`, writing `stdin` to it when given.
    fn start(args: &[&std::ffi::OsStr], stdin: Option<&[u8]>) -> Watching {
        let mut child = spawn(&manifest_dir(), args, stdin.is_some());
        if let Some(bytes) = stdin {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            pipe.write_all(bytes).expect("write stdin");
        }
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Watching {
            child,
            lines,
            stderr,
            seen: Vec::new(),
        }
    }

    /// Reads stdout until a line starting with `wanted`; fails when stdout
    /// ends first (or, as a hang guard, when nothing comes for many
    /// minutes). How fast watch answers is not asserted.
    fn wait_for(&mut self, wanted: &str) {
        let what = format!(
            "a line starting with `{wanted}` from watch (after {:?})",
            self.seen
        );
        let lines = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            recv_until(&self.lines, &what, |line| line.starts_with(wanted))
        }));
        match lines {
            Ok(lines) => self.seen.extend(lines),
            Err(failure) => {
                let _ = self.child.kill();
                std::panic::resume_unwind(failure)
            }
        }
    }

    /// Waits for the process to end by itself: its exit code (`None` for a
    /// signal), every stdout line and the whole stderr.
    fn finish(mut self) -> (Option<i32>, Vec<String>, String) {
        let status = self.child.wait().expect("wait on watch");
        self.seen.extend(self.lines.iter());
        let stderr = self.stderr.join().expect("stderr reader");
        (status.code(), self.seen, stderr)
    }

    /// Stops it: every stdout line read so far.
    fn kill(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.seen
    }
}

#[test]
fn watch_rerenders_on_change() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&manifest_dir().join("tests/cli/clean"), dir.path(), &[]);
    let root = dir.path().to_string_lossy().into_owned();
    let args = [
        "watch",
        "greet",
        "--root",
        &root,
        "--var",
        "agentName=Ada",
        "--var",
        "userName=Grace",
        "--max-renders",
        "3",
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut watch = Watching::start(&args, None);
    watch.wait_for("=== render 1 ===");
    replace(
        &dir.path().join("templates/greet/user.md"),
        "Say goodbye to {{userName}}.\n",
    );
    watch.wait_for("=== render 2 ===");
    replace(
        &dir.path().join("templates/greet/system.md"),
        "Broken {{#if formal}}\n",
    );
    watch.wait_for("=== render 3: failed ===");
    let (code, seen, stderr) = watch.finish();
    let out = format!(
        "$ promptpack watch greet --root TMP --var agentName=Ada --var userName=Grace --max-renders 3\nexit code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        code.map_or("signal".to_string(), |c| c.to_string()),
        seen.join("\n"),
        stderr.replace(&root, "TMP"),
    );
    snapshot("watch_rerenders_on_change", &out);
}

/// `watch --vars -` reads standard input once and renders with those values
/// on every change, not only the first time (stdin has only one end).
#[test]
fn watch_reads_stdin_vars_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&manifest_dir().join("tests/cli/clean"), dir.path(), &[]);
    let root = dir.path().to_string_lossy().into_owned();
    let args = [
        "watch",
        "greet",
        "--root",
        &root,
        "--vars",
        "-",
        "--max-renders",
        "2",
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut watch = Watching::start(&args, Some(br#"{"agentName": "Ada", "userName": "Grace"}"#));
    watch.wait_for("=== render 1");
    replace(
        &dir.path().join("templates/greet/user.md"),
        "Say goodbye to {{userName}}.\n",
    );
    watch.wait_for("=== render 2");
    let seen = watch.kill();
    assert_eq!(
        seen.iter()
            .filter(|l| l.starts_with("=== render"))
            .collect::<Vec<_>>(),
        ["=== render 1 ===", "=== render 2 ==="],
        "{}",
        seen.join("\n")
    );
}

/// A template folder that cannot be read is an `io` error naming the folder,
/// not "has no system.md". Root reads any folder, so as root (CI runs as
/// root) the command runs as `nobody`, through util-linux's `setpriv`.
#[cfg(unix)]
#[test]
fn unreadable_template_folder_is_an_io_error() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().expect("temp dir");
    let open = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(dir.path(), open.clone()).expect("chmod");
    let root = dir.path().join("prompts");
    copy_tree(&manifest_dir().join("tests/cli/clean"), &root, &[]);
    // A copy of the binary that `nobody` can run, wherever the checkout is.
    let bin = dir.path().join("promptpack");
    std::fs::copy(BIN, &bin).expect("copy the binary");
    let locked = root.join("templates/greet");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let as_root = std::fs::metadata(dir.path()).expect("metadata").uid() == 0;
    let mut command = if as_root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin);
        c
    } else {
        Command::new(&bin)
    };
    let output = command
        .args(["check", "--root"])
        .arg(&root)
        .env("NO_COLOR", "1")
        .output()
        .expect("run check");
    std::fs::set_permissions(&locked, open).expect("chmod back");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error[io]"), "{stderr}");
    assert!(stderr.contains("templates/greet"), "{stderr}");
    assert!(!stderr.contains("missing_system"), "{stderr}");
}

// --- Finding the prompt root without `--root` ---

/// From a folder below the prompt root, `check` and `render` find the root
/// by its promptpack.toml, as cargo finds Cargo.toml.
#[test]
fn check_finds_root_from_subfolder() {
    let cwd = manifest_dir().join("tests/cli/found/templates/hello");
    let out = run_in(&cwd, &["check"], None)
        + &run_in(&cwd, &["render", "hello", "--var", "name=Ada"], None);
    snapshot("check_finds_root_from_subfolder", &out);
}

/// In a crate, a Cargo.toml with templates/ beside it marks the root too,
/// found from `src/`.
#[test]
fn check_finds_cargo_root_from_src() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&manifest_dir().join("tests/cli/clean"), dir.path(), &[]);
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\n",
    )
    .expect("write Cargo.toml");
    let src = dir.path().join("src");
    std::fs::create_dir(&src).expect("create src");
    let out = run_in(&src, &["check"], None);
    assert!(out.contains("exit code: 0"), "{out}");
    assert!(
        out.contains("checked 3 prompts, 2 snippets: 0 errors, 0 warnings"),
        "{out}"
    );
}

/// With no root anywhere up, `check` reads `./templates` and says it cannot;
/// the missing folder gets no `templates:1:1` note, which pointed nowhere.
#[test]
fn check_without_a_root_has_no_position_note() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = run_in(dir.path(), &["check"], None);
    assert!(!out.contains("1:1"), "{out}");
    assert!(!out.contains("note:"), "{out}");
    snapshot("check_without_a_root_has_no_position_note", &out);
}

// --- Warnings about the values given to `render` ---

case!(
    render_unused_var_warning,
    [
        "render",
        "notes",
        "--root",
        "tests/cli/values",
        "--var",
        "language=French",
        "--var",
        "notes=- tides",
        "--var",
        "bulets=yes",
    ]
);

/// A `--vars` key no template uses is named, with the nearest variable when
/// one is near; the render goes on (exit 0).
#[test]
fn render_unused_vars_key_warning() {
    let vars = r#"{"language": "French", "notes": "- tides", "bulets": true, "colour": "red"}"#;
    let out = run_with(
        &[
            "render",
            "notes",
            "--root",
            "tests/cli/values",
            "--vars",
            "-",
        ],
        Some(vars),
    );
    snapshot("render_unused_vars_key_warning", &out);
}

// Lenient renders take what they are given without a word about unused names.
case!(
    render_lenient_no_unused_warning,
    [
        "render",
        "notes",
        "--lenient",
        "--root",
        "tests/cli/values",
        "--var",
        "bulets=yes",
    ]
);

// `--var bullets=false` is the string "false": true as a condition.
case!(
    render_false_condition_warning,
    [
        "render",
        "notes",
        "--root",
        "tests/cli/values",
        "--var",
        "language=French",
        "--var",
        "notes=- tides",
        "--var",
        "bullets=false",
    ]
);

// `No` and `0` read as false too, in any case; a missing value still fails.
case!(
    render_false_condition_warning_strict_failure,
    [
        "render",
        "notes",
        "--root",
        "tests/cli/values",
        "--var",
        "language=French",
        "--var",
        "bullets=No",
    ]
);

// --- `promptpack init` ---

/// The scaffold passes `check` (no error, no warning) and renders; a second
/// `init` keeps the files it would write identically.
#[test]
fn init_then_check_passes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("prompts");
    let init = run_in(dir.path(), &["init", "prompts"], None);
    let check = run_in(&root, &["check"], None);
    assert!(check.contains("exit code: 0"), "{check}");
    assert!(
        check.contains("checked 1 prompt, 1 snippet: 0 errors, 0 warnings"),
        "{check}"
    );
    let render = run_in(
        &root,
        &[
            "render",
            "assistant",
            "--var",
            "assistantName=Ada",
            "--var",
            "concise=yes",
        ],
        None,
    );
    let again = run_in(dir.path(), &["init", "prompts"], None);
    snapshot(
        "init_then_check_passes",
        &(init + &check + &render + &again),
    );
}

/// `init` writes nothing when a file it would write exists with other
/// contents, and names every such file.
#[test]
fn init_refuses_to_overwrite() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("snippets")).expect("create snippets");
    std::fs::write(dir.path().join("snippets/tone.md"), "My own tone.\n").expect("write");
    std::fs::write(dir.path().join("promptpack.toml"), "templates = \"t\"\n").expect("write");
    let out = run_in(dir.path(), &["init"], None);
    assert!(
        !dir.path().join("templates").exists(),
        "init wrote templates/ while refusing"
    );
    let kept = std::fs::read_to_string(dir.path().join("snippets/tone.md")).expect("read");
    assert_eq!(kept, "My own tone.\n");
    snapshot("init_refuses_to_overwrite", &out);
}

/// The promptpack checkout the binary was built from, as `init --cargo`
/// names it, and a run's output with it (and the temp folder) replaced.
fn masked(out: &str, tmp: &Path) -> String {
    let checkout = manifest_dir()
        .ancestors()
        .nth(2)
        .expect("the crate is two folders below the checkout")
        .to_string_lossy()
        .replace('\\', "/");
    out.replace(&checkout, "CHECKOUT")
        .replace(&*tmp.to_string_lossy(), "TMP")
}

/// `init --cargo` in a crate: build.rs, the dependency lines under the
/// existing `[dependencies]` and a new `[build-dependencies]`; `check`
/// passes there.
#[test]
fn init_cargo_sets_up_crate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nserde = \"1\"\n";
    std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write Cargo.toml");
    let mut out = run_in(dir.path(), &["init", "--cargo"], None);
    out += &run_in(dir.path(), &["check"], None);
    for file in ["Cargo.toml", "build.rs"] {
        let text = std::fs::read_to_string(dir.path().join(file)).expect("read");
        out += &format!("----- {file} -----\n{text}");
    }
    let cargo_toml = std::fs::read_to_string(dir.path().join("Cargo.toml")).expect("read");
    assert!(
        cargo_toml.contains("\npromptpack = { path = "),
        "{cargo_toml}"
    );
    assert!(
        cargo_toml.contains("[build-dependencies]\npromptpack-build = { path = "),
        "{cargo_toml}"
    );
    snapshot("init_cargo_sets_up_crate", &masked(&out, dir.path()));
}

/// `init --cargo --snapshots` also writes the snapshot test and adds
/// promptpack with `testing` under `[dev-dependencies]`, from the same path
/// as under `[dependencies]` (cargo refuses one crate from two sources).
#[test]
fn init_cargo_snapshots_sets_up_the_snapshot_test() {
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\n";
    std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write Cargo.toml");
    let out = run_in(dir.path(), &["init", "--cargo", "--snapshots"], None);
    assert!(out.contains("exit code: 0"), "{out}");
    let cargo_toml = std::fs::read_to_string(dir.path().join("Cargo.toml")).expect("read");
    let path_of = |section: &str, key: &str| {
        let body = cargo_toml
            .split(&format!("[{section}]\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no [{section}] in {cargo_toml}"));
        let line = body
            .lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} under [{section}] in {cargo_toml}"));
        let path = line.split("path = ").nth(1).expect("a path");
        path.split(',').next().expect("the path").to_string()
    };
    assert_eq!(
        path_of("dev-dependencies", "promptpack"),
        path_of("dependencies", "promptpack"),
        "{cargo_toml}"
    );
    assert!(
        cargo_toml.contains("[dev-dependencies]\npromptpack = { path = ")
            && cargo_toml.contains("features = [\"testing\"] }"),
        "{cargo_toml}"
    );
    let test = std::fs::read_to_string(dir.path().join("tests/prompts.rs")).expect("read test");
    assert!(
        test.contains("promptpack::include_prompts!();")
            && test.contains("promptpack::snapshot_prompts!(PromptId);"),
        "{test}"
    );
    let build = std::fs::read_to_string(dir.path().join("build.rs")).expect("read build.rs");
    assert!(
        build.contains("promptpack_build::compile_or_exit();"),
        "{build}"
    );
    // Again: everything is there, nothing changes.
    let again = run_in(dir.path(), &["init", "--cargo", "--snapshots"], None);
    assert!(again.contains("exit code: 0"), "{again}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("Cargo.toml")).expect("read"),
        cargo_toml
    );
    // Without --cargo it is refused.
    let out = run_in(dir.path(), &["init", "--snapshots"], None);
    assert!(out.contains("exit code: 2"), "{out}");
}

/// `init --cargo` leaves a build.rs of the crate's own (it prints the line
/// to add) and a dependency already named; it adds only what is missing.
#[test]
fn init_cargo_keeps_what_is_there() {
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest =
        "[package]\nname = \"demo\"\n\n[dependencies]\npromptpack.path = \"../promptpack\"\n";
    std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write Cargo.toml");
    let build = "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n}\n";
    std::fs::write(dir.path().join("build.rs"), build).expect("write build.rs");
    let mut out = run_in(dir.path(), &["init", "--cargo"], None);
    let text = std::fs::read_to_string(dir.path().join("Cargo.toml")).expect("read");
    out += &format!("----- Cargo.toml -----\n{text}");
    let kept = std::fs::read_to_string(dir.path().join("build.rs")).expect("read");
    assert_eq!(kept, build, "init changed an existing build.rs");
    snapshot("init_cargo_keeps_what_is_there", &masked(&out, dir.path()));
}

/// `init --cargo` where there is no Cargo.toml fails and writes nothing.
#[test]
fn init_cargo_needs_a_crate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = run_in(dir.path(), &["init", "--cargo"], None);
    assert!(out.contains("exit code: 1"), "{out}");
    assert!(out.contains("holds no Cargo.toml"), "{out}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("read dir").collect();
    assert!(left.is_empty(), "init wrote {left:?}");
}

/// `watch` warns about a values file key no template uses, and says it once:
/// a render again with the same warnings (here after an edit of the values
/// file) does not repeat them.
#[test]
fn watch_warns_about_values_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&manifest_dir().join("tests/cli/values"), dir.path(), &[]);
    let vars = dir.path().join("vars.json");
    let values = |language: &str| {
        format!(r#"{{"language": "{language}", "notes": "- tides", "bulets": true}}"#)
    };
    std::fs::write(&vars, values("French")).expect("write vars.json");
    let root = dir.path().to_string_lossy().into_owned();
    let args: Vec<&std::ffi::OsStr> = vec![
        "watch".as_ref(),
        "notes".as_ref(),
        "--root".as_ref(),
        root.as_ref(),
        "--vars".as_ref(),
        vars.as_os_str(),
        "--max-renders".as_ref(),
        "2".as_ref(),
    ];
    let mut watch = Watching::start(&args, None);
    watch.wait_for("=== render 1 ===");
    // Another size, so that the values file's stamp changes within a tick.
    std::fs::write(&vars, values("Brazilian Portuguese")).expect("rewrite vars.json");
    watch.wait_for("=== render 2 ===");
    let (code, seen, stderr) = watch.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let warning =
        "warning: --vars key `bulets` is used by no template of `notes`; did you mean `bullets`?";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(
        seen.iter().any(|l| l.contains("Brazilian Portuguese")),
        "{}",
        seen.join("\n")
    );
}

// --- conversations (system.md + messages.md) ---

// Each message under its role, a tool result under its tool's name too;
// the history from the values file, each message as given (a token in one
// stays text).
case!(
    render_conversation,
    [
        "render",
        "support",
        "--vars",
        "tests/cli/conversation/vars.json",
        "--root",
        "tests/cli/conversation",
    ]
);
case!(
    render_conversation_json,
    [
        "render",
        "support",
        "--json",
        "--vars",
        "tests/cli/conversation/vars.json",
        "--root",
        "tests/cli/conversation",
    ]
);
// A history message whose role is none: `invalid_vars`, naming it.
case!(
    render_conversation_wrong_role,
    [
        "render",
        "support",
        "--vars",
        "tests/cli/conversation/vars-wrong-role.json",
        "--root",
        "tests/cli/conversation",
    ]
);
// Token counts per message of the longest combination, and in total.
case!(
    list_conversation,
    ["list", "--root", "tests/cli/conversation"]
);
case!(
    list_conversation_json,
    ["list", "--json", "--root", "tests/cli/conversation"]
);

/// The `--json` form holds every message with its role (and a tool's name),
/// after the system message, and a prompt of two files none.
#[test]
fn render_json_gives_a_conversations_messages() {
    let json_of = |out: &str| -> serde_json::Value {
        let stdout = out
            .split("----- stdout -----\n")
            .nth(1)
            .and_then(|rest| rest.split("----- stderr -----").next())
            .unwrap_or("");
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let out = run(&[
        "render",
        "support",
        "--json",
        "--vars",
        "tests/cli/conversation/vars.json",
        "--root",
        "tests/cli/conversation",
    ]);
    let shown = json_of(&out);
    let messages = shown["messages"].as_array().expect("messages");
    let roles: Vec<(&str, Option<&str>)> = messages
        .iter()
        .map(|m| (m["role"].as_str().unwrap_or(""), m["name"].as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            ("system", None),
            ("user", None),
            ("tool", Some("orders")),
            ("assistant", None),
            ("user", None),
            ("assistant", None),
            ("user", None),
        ]
    );
    assert_eq!(messages[0]["content"], shown["system"]);
    assert_eq!(messages[4]["content"], "Hi, {{product}} support?");
    assert_eq!(messages[6]["content"], "And my order 18?");
    assert!(
        messages
            .iter()
            .all(|m| m.as_object().is_some_and(|o| o.len() <= 3)),
        "{out}"
    );
    assert_eq!(shown["user"], serde_json::Value::Null);
    let two_files = json_of(&run(&[
        "render",
        "greet",
        "--json",
        "--root",
        "tests/cli/clean",
        "--var",
        "agentName=Ada",
        "--var",
        "userName=Bo",
    ]));
    assert!(two_files.get("messages").is_none(), "{two_files}");
    assert_eq!(two_files["user"], "Say hello to Bo.");
}

/// `check` reads role tags in messages.md and in a snippet of turns as
/// tokens (no `near_miss`), and lints a conversation: an empty message, a
/// conversation that ends with the assistant's turn.
#[test]
fn check_reads_role_tags_as_tokens_and_lints_conversations() {
    let out = run(&["check", "--root", "tests/cli/conversation"]);
    assert!(!out.contains("near_miss"), "{out}");
    for (code, at) in [
        ("empty_message", "templates/draft/messages.md:1:1"),
        ("ends_with_assistant", "templates/draft/messages.md:6:1"),
    ] {
        let line = out
            .lines()
            .position(|l| l.contains(&format!("[{code}]")))
            .unwrap_or_else(|| panic!("{code} in {out}"));
        let place = out.lines().nth(line + 1).unwrap_or("");
        assert!(place.contains(at), "{code} at {at}: {out}");
    }
    // `support` is not linted: its turns end with the user's question.
    assert!(!out.contains("templates/support/messages.md:"), "{out}");
    // The snapshot tests' sample conversation has nothing to warn about.
    let sample = run(&["check", "--root", "../../tests/conversation-sample"]);
    assert!(!sample.contains("warning["), "{sample}");
    assert!(sample.contains("checked 1 prompt, 1 snippet: "), "{sample}");
}

/// `init --conversation` adds a sample conversation that renders, with the
/// history from JSON on standard input, and that `check` (the typed code's
/// generator included) passes without a warning; with `--cargo` too.
#[test]
fn init_conversation_writes_a_sample_that_renders() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("prompts");
    let init = run_in(dir.path(), &["init", "prompts", "--conversation"], None);
    let values = r#"{"assistantName": "Ada", "examples": true, "question": "Is main green?",
        "history": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}"#;
    let render = run_in(&root, &["render", "chat", "--vars", "-"], Some(values));
    assert!(render.contains("exit code: 0"), "{render}");
    let check = run_in(&root, &["check"], None);
    assert!(check.contains("exit code: 0"), "{check}");
    assert!(!check.contains("warning["), "{check}");
    let crate_dir = dir.path().join("app");
    std::fs::create_dir_all(&crate_dir).expect("crate dir");
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .expect("write Cargo.toml");
    let with_cargo = run_in(&crate_dir, &["init", "--cargo", "--conversation"], None);
    assert!(with_cargo.contains("exit code: 0"), "{with_cargo}");
    assert!(with_cargo.contains("ChatVars {"), "{with_cargo}");
    snapshot(
        "init_conversation_writes_a_sample_that_renders",
        &(init + &render),
    );
}
