//! Integration tests of the `promptpack` binary: each case runs it on a
//! fixture tree under `tests/cli/` and snapshots the command, the exit code,
//! stdout and stderr together.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_promptpack");

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary from the crate root with `args` (and `stdin`, when
/// given), in plain style, and formats what it did.
fn run_with(args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(manifest_dir())
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
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

/// Snapshots `output` as `tests/snapshots/cli__<name>.snap`; the command is
/// in the snapshot itself.
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
case!(list_choices, ["list", "--root", "tests/cli/choices"]);
case!(
    list_choices_json,
    ["list", "--json", "--root", "tests/cli/choices"]
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
case!(list_json, ["list", "--json", "--root", "tests/cli/clean"]);
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

#[test]
fn render_vars_stdin() {
    let vars = r#"{"agentName": "Ada", "userName": "Grace", "formal": 0}"#;
    let out = run_with(
        &[
            "render",
            "greet",
            "--root",
            "tests/cli/clean",
            "--vars",
            "-",
        ],
        Some(vars),
    );
    snapshot("render_vars_stdin", &out);
}

/// Copies a fixture tree.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("fixture exists") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("create dir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
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
#[test]
fn watch_rerenders_on_change() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&manifest_dir().join("tests/cli/clean"), dir.path());
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
    let mut child = Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
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
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut seen = Vec::new();
    let mut wait_for = |wanted: &str, child: &mut std::process::Child| loop {
        match lines.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => {
                let found = line == wanted;
                seen.push(line);
                if found {
                    return;
                }
            }
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "no `{wanted}` from watch; stdout so far:\n{}",
                    seen.join("\n")
                );
            }
        }
    };
    wait_for("=== render 1 ===", &mut child);
    replace(
        &dir.path().join("templates/greet/user.md"),
        "Say goodbye to {{userName}}.\n",
    );
    wait_for("=== render 2 ===", &mut child);
    replace(
        &dir.path().join("templates/greet/system.md"),
        "Broken {{#if formal}}\n",
    );
    wait_for("=== render 3: failed ===", &mut child);

    let mut status = None;
    for _ in 0..300 {
        status = child.try_wait().expect("wait on watch");
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let Some(status) = status else {
        let _ = child.kill();
        panic!("watch did not stop after --max-renders");
    };
    seen.extend(lines.try_iter());
    let stderr = err_reader.join().expect("stderr reader");
    let out = format!(
        "$ promptpack watch greet --root TMP --var agentName=Ada --var userName=Grace --max-renders 3\nexit code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
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
    copy_tree(&manifest_dir().join("tests/cli/clean"), dir.path());
    let root = dir.path().to_string_lossy().into_owned();
    let mut child = Command::new(BIN)
        .args(["watch", "greet", "--root", &root, "--vars", "-"])
        .args(["--max-renders", "2"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        stdin
            .write_all(br#"{"agentName": "Ada", "userName": "Grace"}"#)
            .expect("write the values");
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let mut wait_for = |wanted: &str| loop {
        match lines.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => {
                let done = line.starts_with(wanted);
                seen.push(line);
                if done {
                    return seen.clone();
                }
            }
            Err(_) => panic!(
                "no `{wanted}` from watch; stdout so far:\n{}",
                seen.join("\n")
            ),
        }
    };
    wait_for("=== render 1");
    replace(
        &dir.path().join("templates/greet/user.md"),
        "Say goodbye to {{userName}}.\n",
    );
    let seen = wait_for("=== render 2");
    let _ = child.kill();
    let _ = child.wait();
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
    copy_tree(&manifest_dir().join("tests/cli/clean"), &root);
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
