//! The bad-input catalogue: one broken prompt tree per folder under
//! `tests/bad-inputs/<case>/` (`templates/`, `snippets/`, an optional
//! `promptpack.toml`), each run through the build API
//! (`build::generate_code(&Config::load(root)?)`) and through
//! `promptpack check --root <case>`, checking that nothing panics or hangs
//! and that every error names its code, file, line and column.
//!
//! # `expected.txt`
//!
//! One expectation per line (blank lines and `#` comments ignored):
//!
//! - `code path:line:col`: an error. The build API must fail with exactly
//!   these diagnostics (in any order), and `check` must exit 1 and print each
//!   as `error[code]` with `path:line:col`, and no other error.
//! - `warning: code path:line:col`: a lint `check` must print as
//!   `warning[code]` (other warnings may appear too).
//! - `generated: text`: the build API must succeed, generating code that
//!   holds `text` and parses as Rust.
//!
//! No error lines means the build API succeeds and `check` exits 0. A
//! file-level problem is at line 1, column 1; for a folder, `check` shows
//! the path alone.
//!
//! `BAD_INPUTS_DUMP=1 cargo test --features cli --test bad_inputs -- --nocapture`
//! prints what every case gives instead of checking it: a start for the
//! `expected.txt` of a new case (to be checked by hand, not copied blindly).
//!
//! Some trees cannot live in git and are finished at run time in a temporary
//! copy (see [`finish_tree`]): symlinks to outside the root or to a device,
//! FIFOs, bytes that are not UTF-8, hidden entries and editor backups.

use promptpack_testkit::files::{copy_tree, write_bytes};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;

use crate::support::BIN;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    code: String,
    /// `path:line:col`.
    at: String,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.code, self.at)
    }
}

#[derive(Debug, Default)]
struct Expected {
    errors: BTreeSet<Place>,
    warnings: BTreeSet<Place>,
    generated: Vec<String>,
}

fn place(line: &str, case: &str) -> Place {
    let (code, at) = line
        .split_once(' ')
        .unwrap_or_else(|| panic!("{case}: expected `code path:line:col`, got {line:?}"));
    let mut parts = at.rsplitn(3, ':');
    let numbers_ok = parts.next().is_some_and(|c| c.parse::<usize>().is_ok())
        && parts.next().is_some_and(|l| l.parse::<usize>().is_ok())
        && parts.next().is_some_and(|p| !p.is_empty());
    assert!(numbers_ok, "{case}: expected `path:line:col`, got {at:?}");
    Place {
        code: code.to_string(),
        at: at.to_string(),
    }
}

fn read_expected(dir: &Path) -> Expected {
    let case = dir.file_name().unwrap_or_default().to_string_lossy();
    let text = std::fs::read_to_string(dir.join("expected.txt"))
        .unwrap_or_else(|e| panic!("{case}: cannot read expected.txt: {e}"));
    let mut expected = Expected::default();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
        } else if let Some(rest) = line.strip_prefix("warning: ") {
            expected.warnings.insert(place(rest, &case));
        } else if let Some(rest) = line.strip_prefix("generated: ") {
            expected.generated.push(rest.to_string());
        } else {
            expected.errors.insert(place(line, &case));
        }
    }
    assert!(
        expected.errors.is_empty() || expected.generated.is_empty(),
        "{case}: `generated:` lines need a case without errors"
    );
    expected
}

/// What git cannot hold, made in the copy of the case at `root`, whose
/// parent is a scratch folder outside it.
fn finish_tree(case: &str, root: &Path) {
    match case {
        "non-utf8" => {
            // 0xFF on line 2, after two characters.
            write_bytes(
                root,
                "templates/broken/system.md",
                b"Line one\nab\xffcd {{name}}\n",
            );
            // A BOM takes no column: the bad byte is at 1:1.
            write_bytes(root, "snippets/bom.md", b"\xef\xbb\xbf\xfe rest\n");
        }
        "odd-characters" => write_bytes(
            root,
            "templates/odd/system.md",
            "Hello {{name}}\rold\u{202E}mac\rline two\u{2066}\0\u{1b}[2J end\n".as_bytes(),
        ),
        "symlink-outside-root" => {
            let outside = root.parent().expect("a scratch folder").join("outside");
            write_bytes(&outside, "secret.md", b"a secret\n");
            write_bytes(&outside, "folder/system.md", b"a template\n");
            symlink(&outside.join("secret.md"), &root.join("snippets/leak.md"));
            symlink(&outside.join("folder"), &root.join("templates/linked"));
        }
        "special-files" => {
            mkfifo(&root.join("templates/fifo-system/system.md"));
            mkfifo(&root.join("templates/fifo-user/user.md"));
            mkfifo(&root.join("snippets/piped.md"));
        }
        "config-device" => symlink(Path::new("/dev/zero"), &root.join("promptpack.toml")),
        "ignored-names" => {
            // Made here: a checkout or a copy could drop hidden entries and
            // backups, and the case would pass without testing anything.
            for ignored in [
                "snippets/.hid/y.md",
                "snippets/sub~/y.md",
                "snippets/#sub#/y.md",
                "snippets/y.md~",
                "snippets/#y.md#",
                "snippets/.y.md",
                "templates/.x/system.md",
                "templates/old~/system.md",
                "templates/greet/system.md~",
                "templates/greet/#system.md#",
            ] {
                write_bytes(root, ignored, b"{{#if}} ignored\n");
            }
        }
        // Issue 12: a diagnostic or a variable's first use on a long line
        // kept a copy of the line each (gigabytes for these), and counting
        // its column walked the line each time.
        "long-line-many-tokens" => {
            let vars: String = (0..20_000).map(|i| format!("{{{{v{i}}}}}")).collect();
            write_bytes(
                root,
                "templates/p/system.md",
                format!("Start {vars}\n").as_bytes(),
            );
            let near_misses = "{{ x }}".repeat(20_000);
            write_bytes(
                root,
                "templates/p/user.md",
                format!("Then {near_misses}\n").as_bytes(),
            );
        }
        "long-line-stray-else" => {
            let line = format!("{}{{{{else}}}}", "a".repeat(10_000)).repeat(400);
            write_bytes(
                root,
                "templates/p/system.md",
                format!("Start {line}\n").as_bytes(),
            );
        }
        // Issue 12: each snippet includes the next twice, 2^60 splices,
        // which the resolver walked one by one.
        "snippet-fan-out" => {
            write_bytes(root, "templates/p/system.md", b"Hi {{snippet:s0}}\n");
            write_bytes(root, "templates/p/user.md", b"{{snippet:w0}} {{name}}\n");
            for i in 0..60 {
                let next = format!("{{{{snippet:s{}}}}}", i + 1);
                write_bytes(
                    root,
                    &format!("snippets/s{i}.md"),
                    next.repeat(2).as_bytes(),
                );
            }
            write_bytes(root, "snippets/s60.md", b"");
            // Wide: 100 includes a level, down to whitespace.
            for i in 0..10 {
                let next = format!("{{{{snippet:w{}}}}}", i + 1);
                write_bytes(
                    root,
                    &format!("snippets/w{i}.md"),
                    next.repeat(100).as_bytes(),
                );
            }
            write_bytes(root, "snippets/w10.md", b"  \n\t\n");
        }
        "snippet-fan-out-too-large" => {
            write_bytes(root, "templates/p/system.md", b"Hi {{snippet:c0}}\n");
            for i in 0..60 {
                let next = format!("{{{{snippet:c{}}}}}", i + 1);
                write_bytes(
                    root,
                    &format!("snippets/c{i}.md"),
                    format!("{{{{#if a}}}}{next}{{{{else}}}}{next}{{{{/if}}}}").as_bytes(),
                );
            }
            write_bytes(root, "snippets/c60.md", b"{{#if off}}{{/if}}");
        }
        _ => {}
    }
}

/// Cases that need what only unix has (FIFOs, /dev/zero): skipped elsewhere.
const UNIX_ONLY: &[&str] = &["special-files", "config-device"];

#[cfg(unix)]
fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create folders");
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

#[cfg(not(unix))]
fn mkfifo(_: &Path) {
    unreachable!("FIFO cases are in UNIX_ONLY");
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).expect("create a symlink");
}

#[cfg(windows)]
fn symlink(target: &Path, link: &Path) {
    let made = if target.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    };
    made.expect("create a symlink (needs developer mode on Windows)");
}

/// Runs `f` on another thread: a panic fails the case with its name. No
/// deadline: how long a case takes is the bench's to measure, and a hang is
/// the test runner's to report.
fn guarded<T: Send + 'static>(case: &str, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv() {
        Ok(value) => {
            let _ = handle.join();
            value
        }
        Err(mpsc::RecvError) => panic!("{case}: {what} panicked"),
    }
}

fn places(error: &promptpack::Error, case: &str) -> BTreeSet<Place> {
    error
        .diagnostics()
        .iter()
        .map(|d| {
            let loc = d
                .location
                .as_ref()
                .unwrap_or_else(|| panic!("{case}: `{d}` has no location"));
            Place {
                code: d.code.as_str().to_string(),
                at: format!("{}:{}:{}", loc.path(), loc.line(), loc.column()),
            }
        })
        .collect()
}

fn check_build_api(case: &str, root: &Path, expected: &Expected) {
    let root = root.to_path_buf();
    let result = guarded(case, "the build API", move || {
        promptpack::Config::load(&root).and_then(|c| promptpack_build::generate_code(&c))
    });
    match result {
        Err(error) => {
            let found = places(&error, case);
            assert_eq!(
                found, expected.errors,
                "{case}: the build API reported\n{error}"
            );
        }
        Ok(code) => {
            assert!(
                expected.errors.is_empty(),
                "{case}: the build API succeeded, expected {:?}",
                expected.errors
            );
            for text in &expected.generated {
                assert!(code.contains(text), "{case}: no `{text}` in\n{code}");
            }
            if let Err(e) = syn::parse_file(&code) {
                panic!("{case}: the generated code does not parse: {e}\n{code}");
            }
            // What rustc refuses in comments and literals (syn takes it).
            let mut chars = code.chars().peekable();
            while let Some(c) = chars.next() {
                let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
                assert!(!bidi, "{case}: {c:?} in the generated code");
                let bare_cr = c == '\r' && chars.peek() != Some(&'\n');
                assert!(!bare_cr, "{case}: a bare CR in the generated code");
            }
        }
    }
}

/// `promptpack_build::check` (what `promptpack check` runs) finds exactly
/// the errors the build API does: check ⇒ build.
fn check_names_agree(case: &str, root: &Path, expected: &Expected) {
    let found = match promptpack::Config::load(root) {
        Err(error) => places(&error, case),
        Ok(config) => {
            match promptpack::Error::from_diagnostics(promptpack_build::check(&config).errors) {
                Some(error) => places(&error, case),
                None => BTreeSet::new(),
            }
        }
    };
    assert_eq!(found, expected.errors, "{case}: promptpack_build::check");
}

/// Runs the binary to its end.
fn run_check(case: &str, root: &Path) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(["check", "--root"])
        .arg(root)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = child.wait().expect("wait for the binary");
    let stderr = reader.join().expect("stderr is read");
    assert!(
        !stderr.contains("panicked"),
        "{case}: `promptpack check` panicked:\n{stderr}"
    );
    (status.code(), stderr)
}

/// The diagnostics of `check`'s output: each starts at a line beginning with
/// `error[` or `warning[`.
fn blocks(stderr: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for line in stderr.lines() {
        if line.starts_with("error[") || line.starts_with("warning[") {
            blocks.push(String::new());
        }
        if let Some(block) = blocks.last_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    blocks
}

/// Whether a block shows `level[code]` at `path:line:col` (not followed by
/// another digit, so that `1:1` does not match `1:12`). A place that names
/// a whole file or folder (`path:1:1` in the catalogue) has no position to
/// show: there it is enough that the block names the path, followed by no
/// `:` (the renderer drops positions that point nowhere).
fn shows(block: &str, level: &str, p: &Place) -> bool {
    let positioned = block
        .match_indices(p.at.as_str())
        .any(|(i, _)| !block[i + p.at.len()..].starts_with(|c: char| c.is_ascii_digit()));
    let whole_file = p.at.strip_suffix(":1:1").is_some_and(|path| {
        block
            .match_indices(path)
            .any(|(i, _)| !block[i + path.len()..].starts_with(':'))
    });
    block.starts_with(&format!("{level}[{}]", p.code)) && (positioned || whole_file)
}

fn check_cli(case: &str, root: &Path, expected: &Expected) {
    let (code, stderr) = run_check(case, root);
    let want = if expected.errors.is_empty() { 0 } else { 1 };
    assert_eq!(
        code,
        Some(want),
        "{case}: `promptpack check` exit code\n{stderr}"
    );
    let blocks = blocks(&stderr);
    for p in &expected.errors {
        assert!(
            blocks.iter().any(|b| shows(b, "error", p)),
            "{case}: `promptpack check` does not show `error[{}]` at {}\n{stderr}",
            p.code,
            p.at
        );
    }
    for p in &expected.warnings {
        assert!(
            blocks.iter().any(|b| shows(b, "warning", p)),
            "{case}: `promptpack check` does not show `warning[{}]` at {}\n{stderr}",
            p.code,
            p.at
        );
    }
    let errors = blocks.iter().filter(|b| b.starts_with("error[")).count();
    assert_eq!(
        errors,
        expected.errors.len(),
        "{case}: `promptpack check` shows other errors\n{stderr}"
    );
}

fn dump(case: &str, root: &Path) {
    println!("===== {case}");
    let loaded = promptpack::Config::load(root).and_then(|c| promptpack_build::generate_code(&c));
    match loaded {
        Ok(code) => println!("build API: ok, {} bytes of code", code.len()),
        Err(e) => {
            for p in places(&e, case) {
                println!("{p}");
            }
        }
    }
    let (code, stderr) = run_check(case, root);
    println!("--- check: exit {code:?}\n{stderr}");
}

#[test]
fn catalogue() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-inputs");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&base)
        .expect("tests/bad-inputs exists")
        .map(|e| e.expect("read tests/bad-inputs").path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 27, "the catalogue lost cases: {cases:?}");
    let mut failed = Vec::new();
    for dir in cases {
        let case = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if cfg!(not(unix)) && UNIX_ONLY.contains(&case.as_str()) {
            continue;
        }
        let scratch = tempfile::tempdir().expect("a scratch folder");
        let root = scratch.path().join("root");
        copy_tree(&dir, &root, &["expected.txt"]);
        finish_tree(&case, &root);
        if std::env::var_os("BAD_INPUTS_DUMP").is_some() {
            dump(&case, &root);
            continue;
        }
        // Every case runs, and the failures are listed together.
        let outcome = std::panic::catch_unwind(|| {
            let expected = read_expected(&dir);
            check_build_api(&case, &root, &expected);
            check_names_agree(&case, &root, &expected);
            check_cli(&case, &root, &expected);
        });
        if outcome.is_err() {
            failed.push(case);
        }
    }
    assert!(failed.is_empty(), "failing cases (see above): {failed:?}");
}
