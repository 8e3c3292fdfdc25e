//! Hot reload on the real file system with the real watcher.
//!
//! Every wait polls until its condition holds (`promptpack_testkit::wait`),
//! with no fixed sleep standing in for it: the tests are as fast as the
//! watcher, and no assertion depends on how long anything took; the only
//! bound is the hang guard, which fails naming what never happened.
#![cfg(feature = "hot-reload")]

use promptpack::__private::{
    DevSource, DevVar, PromptInfo, VarKind, contract, dev_reload_events, dev_render,
};
use promptpack::{
    ErrorCode, Library, NO_RELOAD_ENV, Prompt, ReloadEvent, WatchOptions, WatchedLibrary,
};
use promptpack_testkit::files::{write, write_tree};
use promptpack_testkit::wait::{recv_until, until};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvError};
use std::time::Duration;
use tempfile::TempDir;

/// A sentinel edit: a prompt of its own, written and waited for. Once it
/// serves, every event before it has been handled (the watcher handles
/// them in order), so a check that something did *not* happen is exact.
fn settle(watched: &WatchedLibrary, root: &Path) {
    static SENTINELS: AtomicUsize = AtomicUsize::new(0);
    let text = format!("sentinel {}", SENTINELS.fetch_add(1, Ordering::Relaxed));
    write(root, "templates/zz-sentinel/system.md", &text);
    assert_eventually(watched, "zz-sentinel", &json!({}), &text);
}

/// A prompt folder holding `files` (paths relative to the root).
fn folder(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("templates")).expect("templates dir");
    write_tree(dir.path(), files);
    dir
}

/// An atomic save, as many editors do it: write a temp file beside, rename
/// it over the original.
fn write_atomic(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    let name = path
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned();
    let temp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&temp, text).expect("write temp");
    std::fs::rename(&temp, &path).expect("rename");
}

/// The system text of `id` as the watched library renders it now.
fn system(watched: &WatchedLibrary, id: &str, vars: &serde_json::Value) -> Option<String> {
    watched.build_prompt(id, vars).ok().map(|p| p.system)
}

/// Waits until `id` renders to `expected`.
fn assert_eventually(watched: &WatchedLibrary, id: &str, vars: &serde_json::Value, expected: &str) {
    until(&format!("`{id}` renders {expected:?}"), || {
        system(watched, id, vars).as_deref() == Some(expected)
    });
}

/// The next event that `wanted` accepts, skipping others.
fn wait_event(rx: &Receiver<ReloadEvent>, wanted: impl Fn(&ReloadEvent) -> bool) -> ReloadEvent {
    recv_until(rx, "a matching reload event", wanted)
        .pop()
        .expect("the match comes last")
}

fn failures(rx: &Receiver<ReloadEvent>) -> Vec<promptpack::Error> {
    rx.try_iter()
        .filter_map(|e| match e {
            ReloadEvent::Failed(error) => Some(error),
            _ => None,
        })
        .collect()
}

/// Every reload's paths and every failure, as they arrive, up to and with
/// the first reload that names a path ending in `sentinel`.
fn events_until_reload_of(
    rx: &Receiver<ReloadEvent>,
    sentinel: &str,
) -> (Vec<Vec<std::path::PathBuf>>, Vec<promptpack::Error>) {
    let (mut reloads, mut failures) = (Vec::new(), Vec::new());
    let events = recv_until(
        rx,
        &format!("a reload of {sentinel}"),
        |e| matches!(e, ReloadEvent::Reloaded { paths, .. } if paths.iter().any(|p| p.ends_with(sentinel))),
    );
    for event in events {
        match event {
            ReloadEvent::Reloaded { paths, .. } => reloads.push(paths),
            ReloadEvent::Failed(error) => failures.push(error),
            _ => {}
        }
    }
    (reloads, failures)
}

#[test]
fn edited_added_and_deleted_templates_are_seen() {
    let dir = folder(&[("templates/greet/system.md", "Hello {{name}}.")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let vars = json!({"name": "Ada"});
    assert_eq!(
        system(&watched, "greet", &vars).as_deref(),
        Some("Hello Ada.")
    );
    assert_eq!(watched.generation(), 1);

    write(
        dir.path(),
        "templates/greet/system.md",
        "Welcome, {{name}}!",
    );
    assert_eventually(&watched, "greet", &vars, "Welcome, Ada!");

    write(dir.path(), "templates/farewell/system.md", "Bye {{name}}.");
    write(dir.path(), "templates/farewell/user.md", "See you.");
    assert_eventually(&watched, "farewell", &vars, "Bye Ada.");
    let prompt = watched.build_prompt("farewell", &vars).expect("farewell");
    assert_eq!(prompt.user.as_deref(), Some("See you."));

    std::fs::remove_dir_all(dir.path().join("templates/farewell")).expect("remove");
    until("`farewell` is gone", || {
        !watched.current().contains("farewell")
    });
    let error = watched
        .build_prompt("farewell", &vars)
        .expect_err("deleted");
    assert_eq!(error.code(), ErrorCode::UnknownPrompt);
    // The worker stores a new set before it counts it, so the count is
    // waited for (a hang guard only), not read at once.
    until("the fourth generation", || watched.generation() >= 4);
}

#[test]
fn edited_added_and_deleted_snippets_are_seen() {
    let dir = folder(&[
        ("templates/agent/system.md", "Rules: {{snippet:rules}}"),
        ("snippets/rules.md", "be kind\n"),
    ]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    let none = json!({});
    assert_eq!(
        system(&watched, "agent", &none).as_deref(),
        Some("Rules: be kind")
    );

    write(dir.path(), "snippets/rules.md", "be brief");
    assert_eventually(&watched, "agent", &none, "Rules: be brief");

    // Added: the snippet first, then the template that includes it.
    write(dir.path(), "snippets/tone.md", "warm");
    write(
        dir.path(),
        "templates/agent/system.md",
        "Rules: {{snippet:rules}}; tone: {{snippet:tone}}",
    );
    assert_eventually(&watched, "agent", &none, "Rules: be brief; tone: warm");

    // Deleted while still included: the edit does not load, the last good
    // version keeps serving.
    std::fs::remove_file(dir.path().join("snippets/tone.md")).expect("remove");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    let ReloadEvent::Failed(error) = failed else {
        unreachable!()
    };
    assert_eq!(error.code(), ErrorCode::SnippetNotFound, "{error}");
    assert_eq!(
        system(&watched, "agent", &none).as_deref(),
        Some("Rules: be brief; tone: warm")
    );

    // The include removed too: loads again.
    write(
        dir.path(),
        "templates/agent/system.md",
        "Rules: {{snippet:rules}}",
    );
    assert_eventually(&watched, "agent", &none, "Rules: be brief");
    assert!(
        !watched
            .current()
            .resolved("agent")
            .is_some_and(|p| p.snippets.contains("tone"))
    );
    until("the last error cleared", || watched.last_error().is_none());
}

#[test]
fn atomic_save_by_rename_is_seen() {
    let dir = folder(&[("templates/p/system.md", "one")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    for text in ["two", "three", "four"] {
        write_atomic(dir.path(), "templates/p/system.md", text);
        assert_eventually(&watched, "p", &json!({}), text);
    }
    assert!(failures(&events).is_empty());
}

#[test]
fn truncate_then_write_is_seen() {
    use std::io::Write;
    let dir = folder(&[("templates/p/system.md", "old text")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    let path = dir.path().join("templates/p/system.md");
    for round in 0..3 {
        // Truncate, pause (a reload may see the empty file: that is a valid,
        // empty template), then write in pieces.
        let mut file = std::fs::File::create(&path).expect("truncate");
        std::thread::sleep(Duration::from_millis(80));
        for piece in ["new ", "text ", &round.to_string()] {
            file.write_all(piece.as_bytes()).expect("write");
            file.flush().expect("flush");
        }
        drop(file);
        assert_eventually(&watched, "p", &json!({}), &format!("new text {round}"));
    }
    assert!(failures(&events).is_empty());
}

#[test]
fn editor_temp_files_do_not_reload() {
    let dir = folder(&[
        ("templates/p/system.md", "A {{snippet:s}}"),
        ("snippets/s.md", "B"),
    ]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    let root = dir.path();

    // Only junk changes: no reload at all, let alone a failed one.
    let generation = watched.generation();
    for junk in [
        "templates/p/.system.md.swp",
        "templates/p/system.md~",
        "templates/p/4913",
        "templates/p/.hidden",
        "templates/p/#system.md#",
        "templates/4913",
        "templates/.DS_Store",
        "snippets/.s.md.swp",
        "snippets/s.md~",
        "snippets/4913",
        "snippets/notes.txt",
    ] {
        write(root, junk, "{{#if broken");
    }
    std::fs::remove_file(root.join("templates/p/4913")).expect("remove 4913");
    // A hidden folder moved in: ignored as the loader ignores it.
    write(root, "elsewhere/.v1.2/x.md", "X");
    std::fs::rename(root.join("elsewhere/.v1.2"), root.join("snippets/.v1.2")).expect("move in");
    // A sentinel edit after the junk: once it shows, every junk event has
    // been handled, and no reload may name a junk file.
    // The reload's event, not the generation, is waited for: the worker
    // counts a reload before it sends the event.
    write(root, "snippets/sentinel.md", "done");
    let (reloaded, failed) = events_until_reload_of(&events, "snippets/sentinel.md");
    assert!(failed.is_empty(), "{failed:?}");
    assert!(watched.generation() > generation);
    assert!(
        reloaded
            .iter()
            .flatten()
            .any(|p| p.ends_with("snippets/sentinel.md")),
        "the sentinel's reload names it: {reloaded:?}"
    );
    assert!(
        reloaded
            .iter()
            .flatten()
            .all(|p| p.ends_with("snippets/sentinel.md")),
        "junk files caused a reload: {reloaded:?}"
    );
    assert!(failures(&events).is_empty());

    // A vim-style save: probe file, swap file, backup by rename, new file.
    write(root, "templates/p/4914", "");
    std::fs::remove_file(root.join("templates/p/4914")).expect("remove probe");
    write(root, "templates/p/.system.md.swx", "swap");
    std::fs::rename(
        root.join("templates/p/system.md"),
        root.join("templates/p/system.md~"),
    )
    .expect("backup");
    write(root, "templates/p/system.md", "C {{snippet:s}}");
    std::fs::remove_file(root.join("templates/p/system.md~")).expect("remove backup");
    assert_eventually(&watched, "p", &json!({}), "C B");
    settle(&watched, root);
    assert!(failures(&events).is_empty(), "{:?}", failures(&events));
}

#[test]
fn snippets_folder_deleted_and_recreated() {
    let dir = folder(&[
        ("templates/p/system.md", "X {{snippet:s}}"),
        ("snippets/s.md", "one"),
    ]);
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    let events = watched.subscribe();
    let none = json!({});

    // Deleted: the template no longer loads, the last good version serves.
    std::fs::remove_dir_all(root.join("snippets")).expect("remove snippets");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::SnippetNotFound),
        "{failed:?}"
    );
    assert_eq!(system(&watched, "p", &none).as_deref(), Some("X one"));

    // Created again: seen, and later edits inside the new folder too.
    write(root, "snippets/s.md", "two");
    assert_eventually(&watched, "p", &none, "X two");
    write(root, "snippets/s.md", "three");
    assert_eventually(&watched, "p", &none, "X three");

    // Deleted and created again within one debounce period.
    std::fs::remove_dir_all(root.join("snippets")).expect("remove snippets");
    write(root, "snippets/s.md", "four");
    assert_eventually(&watched, "p", &none, "X four");
    write(root, "snippets/s.md", "five");
    assert_eventually(&watched, "p", &none, "X five");

    // The same for the templates folder.
    std::fs::remove_dir_all(root.join("templates")).expect("remove templates");
    write(root, "templates/p/system.md", "Y {{snippet:s}}");
    assert_eventually(&watched, "p", &none, "Y five");
    write(root, "templates/p/system.md", "Z {{snippet:s}}");
    assert_eventually(&watched, "p", &none, "Z five");
}

#[test]
fn snippets_folder_created_later_is_watched() {
    let dir = folder(&[("templates/p/system.md", "no snippets yet")]);
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    write(root, "snippets/s.md", "S1");
    write(root, "templates/p/system.md", "{{snippet:s}}");
    assert_eventually(&watched, "p", &json!({}), "S1");
    write(root, "snippets/s.md", "S2");
    assert_eventually(&watched, "p", &json!({}), "S2");
}

/// A burst of saves ends on the last version, every reload of it
/// succeeding. How few reloads a burst makes depends on how fast the machine
/// is, so it is measured by the `reload_latency` example, not asserted here.
#[test]
fn a_burst_of_saves_ends_on_the_last_version() {
    let dir = folder(&[("templates/p/system.md", "v0")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    for i in 1..=100 {
        write(dir.path(), "templates/p/system.md", &format!("v{i}"));
    }
    assert_eventually(&watched, "p", &json!({}), "v100");
    // A sentinel edit of another file: once it shows, every event of the
    // burst has been handled (the watcher handles them in order).
    write(dir.path(), "templates/sentinel/system.md", "done");
    assert_eventually(&watched, "sentinel", &json!({}), "done");
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("v100"));
    assert!(failures(&events).is_empty());
}

/// Runs the ignored test `child` of this binary in a child process, which
/// must pass, and gives its stderr: what a dev build without a logger
/// prints there.
fn child_stderr(child: &str) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let output = std::process::Command::new(&exe)
        .args(["--exact", child, "--include-ignored", "--nocapture"])
        .output()
        .expect("run the child test");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{stderr}"
    );
    stderr
}

/// Without a logger, a broken save is printed on stderr (dev builds), with
/// its place: run in a child process, whose stderr the parent reads.
#[test]
fn a_broken_edit_is_told_on_stderr_without_a_logger() {
    let stderr = child_stderr("reload::broken_edit_without_a_logger_child");
    assert!(
        stderr.contains("promptpack: an edit does not load; the last good prompts keep serving"),
        "{stderr}"
    );
    assert!(stderr.contains("error[unclosed_block]"), "{stderr}");
    assert!(stderr.contains("--> templates/p/system.md:1:1"), "{stderr}");
}

#[test]
#[ignore = "run by a_broken_edit_is_told_on_stderr_without_a_logger, in a child process"]
fn broken_edit_without_a_logger_child() {
    let dir = folder(&[("templates/p/system.md", "good")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    write(dir.path(), "templates/p/system.md", "{{#if x}} broken");
    wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("good"));
}

/// An edit that declares a choice value no branch compares loads, and the
/// reload warns of it as the build would (`unhandled_choice`, at the
/// value): on stderr without a logger, in a child process.
#[test]
fn an_unhandled_choice_is_told_on_reload() {
    let stderr = child_stderr("reload::unhandled_choice_on_reload_child");
    // The first load has no unhandled value: a warning is the edit's.
    assert!(stderr.contains("warning[unhandled_choice]"), "{stderr}");
    assert!(
        stderr.contains("value \"observer\" of `role` is declared, but no branch compares with it"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--> templates/p/system.md:3:51"),
        "{stderr}"
    );
}

#[test]
#[ignore = "run by an_unhandled_choice_is_told_on_reload, in a child process"]
fn unhandled_choice_on_reload_child() {
    let head = "---\nvars:\n  role: {kind: choice, values: [teacher, student";
    let body =
        "]}\n---\n{{#if role == \"teacher\"}}T{{else if role == \"student\"}}S{{else}}O{{/if}}";
    let dir = folder(&[("templates/p/system.md", &format!("{head}{body}"))]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    let before = watched
        .current()
        .build_prompt("p", &json!({"role": "observer"}))
        .expect_err("not declared yet");
    assert_eq!(before.code(), ErrorCode::InvalidChoice);
    write(
        dir.path(),
        "templates/p/system.md",
        &format!("{head}, observer{body}"),
    );
    // Before the edit, `observer` is no value of `role`; after it, one
    // that renders the `{{else}}`.
    assert_eventually(&watched, "p", &json!({"role": "observer"}), "O");
    assert!(failures(&events).is_empty());
}

#[test]
fn a_broken_edit_keeps_the_last_good_version() {
    let dir = folder(&[("templates/p/system.md", "Hi {{name}}.")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    let vars = json!({"name": "Ada"});

    write(
        dir.path(),
        "templates/p/system.md",
        "Hi {{name}}.\n  {{#if formal}}Welcome.",
    );
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    let ReloadEvent::Failed(error) = failed else {
        unreachable!()
    };
    assert_eq!(error.code(), ErrorCode::UnclosedBlock, "{error}");
    let location = error.diagnostics()[0].location.clone().expect("a location");
    assert_eq!(location.path(), "templates/p/system.md");
    assert_eq!((location.line(), location.column()), (2, 3));
    assert!(
        error
            .to_string()
            .starts_with("templates/p/system.md:2:3: unclosed_block"),
        "{error}"
    );

    assert_eq!(system(&watched, "p", &vars).as_deref(), Some("Hi Ada."));
    assert_eq!(
        watched.last_error().map(|e| e.code()),
        Some(ErrorCode::UnclosedBlock)
    );

    write(
        dir.path(),
        "templates/p/system.md",
        "Hi {{name}}.{{#if name}} Welcome.{{/if}}",
    );
    let reloaded = wait_event(&events, |e| matches!(e, ReloadEvent::Reloaded { .. }));
    assert!(
        matches!(&reloaded, ReloadEvent::Reloaded { paths, prompts: 1, .. } if paths.iter().any(|p| p.ends_with("system.md"))),
        "{reloaded:?}"
    );
    assert_eq!(
        system(&watched, "p", &vars).as_deref(),
        Some("Hi Ada. Welcome.")
    );
    assert!(watched.last_error().is_none());
}

#[test]
fn a_broken_config_keeps_the_last_good_version() {
    let dir = folder(&[("templates/p/system.md", "<<x>> {{x}}")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    let vars = json!({"x": "1"});
    assert_eq!(system(&watched, "p", &vars).as_deref(), Some("<<x>> 1"));

    write(
        dir.path(),
        "promptpack.toml",
        "[delimiters]\nopen = \"<<\"\nclose = \">>\"\n",
    );
    assert_eventually(&watched, "p", &vars, "1 {{x}}");

    write(dir.path(), "promptpack.toml", "[delimiters\n");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::InvalidConfig),
        "{failed:?}"
    );
    assert_eq!(system(&watched, "p", &vars).as_deref(), Some("1 {{x}}"));

    std::fs::remove_file(dir.path().join("promptpack.toml")).expect("remove");
    assert_eventually(&watched, "p", &vars, "<<x>> 1");
}

/// The body of a file of version `n`: long, so that a half-written file
/// would show.
fn versioned(tag: &str, n: usize) -> String {
    vec![format!("{tag}{n}"); 200].join(" ")
}

/// Checks one render against the versions the writer produces, and returns
/// the version of the template.
fn check_render(text: &str) -> usize {
    let tokens: Vec<&str> = text.split(' ').collect();
    assert_eq!(tokens.len(), 400, "torn render: {text}");
    let version = |tokens: &[&str], tag: &str| -> usize {
        let first = tokens[0];
        assert!(
            tokens.iter().all(|t| *t == first),
            "torn file in render: {text}"
        );
        first
            .strip_prefix(tag)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("bad token {first}"))
    };
    let system = version(&tokens[..200], "S");
    let snippet = version(&tokens[200..], "N");
    // The writer saves the snippet of version n, then the template: the
    // sets of files that existed are (n, n) and (n - 1, n).
    assert!(
        snippet == system || snippet == system + 1,
        "a mix of versions: S{system} N{snippet}"
    );
    system
}

#[test]
fn concurrent_renders_see_complete_versions() {
    const VERSIONS: usize = 60;
    const RENDERERS: usize = 8;
    const RENDERS_EACH: usize = 16;
    const MIN_RELOADS: usize = 11;
    let dir = folder(&[
        (
            "templates/p/system.md",
            &format!("{} {{{{snippet:s}}}}", versioned("S", 0)),
        ),
        ("snippets/s.md", &versioned("N", 0)),
    ]);
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    let done = AtomicBool::new(false);
    let renders = AtomicUsize::new(0);
    // Set once the last version is served: from then on the threads finish
    // their share; without it (the writer side panicked) they just stop.
    let last_served = AtomicBool::new(false);
    let first_version = check_render(
        &watched
            .build_prompt("p", &json!({}))
            .expect("render")
            .system,
    );
    /// Stops the render threads even when the writer side panics: the scope
    /// waits for them before it lets a panic through.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let seen: Vec<std::collections::BTreeSet<usize>> = std::thread::scope(|scope| {
        let stop = StopOnDrop(&done);
        // Every thread goes on until the writer is done and it has rendered
        // the last version and its share of renders: the counts asserted
        // below hold however slow the machine is; what the test checks is
        // that every render is one whole version.
        let threads: Vec<_> = (0..RENDERERS)
            .map(|_| {
                scope.spawn(|| {
                    let mut seen = std::collections::BTreeSet::new();
                    let mut mine = 0;
                    let render = |seen: &mut std::collections::BTreeSet<usize>| {
                        let prompt: Prompt = watched.build_prompt("p", &json!({})).expect("render");
                        seen.insert(check_render(&prompt.system));
                        renders.fetch_add(1, Ordering::Relaxed);
                    };
                    let unfinished = |seen: &std::collections::BTreeSet<usize>, mine| {
                        !seen.contains(&VERSIONS) || mine < RENDERS_EACH
                    };
                    while !done.load(Ordering::Acquire)
                        || (last_served.load(Ordering::Acquire) && unfinished(&seen, mine))
                    {
                        render(&mut seen);
                        mine += 1;
                    }
                    seen
                })
            })
            .collect();
        // Explicit reloads in a loop as well: their reads overlap the
        // writer's saves, where a read could see files of two versions.
        let reloader = scope.spawn(|| {
            let mut reloads = 0;
            while !done.load(Ordering::Acquire)
                || (last_served.load(Ordering::Acquire) && reloads < MIN_RELOADS)
            {
                watched.reload().expect("every version loads");
                reloads += 1;
            }
            reloads
        });
        for n in 1..=VERSIONS {
            write_atomic(root, "snippets/s.md", &versioned("N", n));
            std::thread::sleep(Duration::from_millis(2));
            write_atomic(
                root,
                "templates/p/system.md",
                &format!("{} {{{{snippet:s}}}}", versioned("S", n)),
            );
            // Some versions within one burst, some apart, so that reloads
            // land while both files are changing.
            std::thread::sleep(Duration::from_millis(20 * (n as u64 % 4)));
        }
        let last = format!("{} {}", versioned("S", VERSIONS), versioned("N", VERSIONS));
        assert_eventually(&watched, "p", &json!({}), &last);
        last_served.store(true, Ordering::Release);
        drop(stop);
        assert!(reloader.join().expect("reloader thread") >= MIN_RELOADS);
        threads
            .into_iter()
            .map(|t| t.join().expect("render thread"))
            .collect()
    });
    let mut all: std::collections::BTreeSet<usize> = seen.into_iter().flatten().collect();
    all.insert(first_version);
    assert!(all.len() >= 2, "renders saw only versions {all:?}");
    assert!(renders.load(Ordering::Relaxed) >= RENDERERS * RENDERS_EACH);
    until("the third generation", || watched.generation() >= 3);
}

#[test]
fn polling_fallback_sees_changes() {
    let dir = folder(&[("templates/p/system.md", "one"), ("snippets/s.md", "S")]);
    let watched = WatchedLibrary::new(
        dir.path(),
        WatchOptions::new().poll(Duration::from_millis(50)),
    )
    .expect("watch");
    assert!(watched.is_polling());
    let events = watched.subscribe();
    write(dir.path(), "templates/p/system.md", "two {{snippet:s}}");
    assert_eventually(&watched, "p", &json!({}), "two S");
    write_atomic(dir.path(), "snippets/s.md", "T");
    assert_eventually(&watched, "p", &json!({}), "two T");
    // Same length, same second: only the contents differ.
    write(dir.path(), "snippets/s.md", "U");
    assert_eventually(&watched, "p", &json!({}), "two U");

    std::fs::remove_dir_all(dir.path().join("snippets")).expect("remove");
    write(dir.path(), "snippets/s.md", "V");
    assert_eventually(&watched, "p", &json!({}), "two V");
    write(dir.path(), "templates/p/.system.md.swp", "junk");
    settle(&watched, dir.path());
    let failed = failures(&events);
    assert!(
        failed.iter().all(|e| e.code() != ErrorCode::Watch),
        "{failed:?}"
    );
}

#[test]
fn watch_config_uses_its_folders_and_delimiters() {
    let dir = folder(&[("prompts/t/p/system.md", "<<x>>!"), ("prompts/s/a.md", "A")]);
    let root = dir.path();
    let config = promptpack::Config::new(root)
        .with_templates(root.join("prompts/t"))
        .with_snippets(root.join("prompts/s"))
        .with_delimiters("<<", ">>")
        .expect("delimiters");
    let watched = WatchedLibrary::with_config(&config, WatchOptions::new()).expect("watch");
    assert_eq!(
        system(&watched, "p", &json!({"x": 1})).as_deref(),
        Some("1!")
    );
    write(root, "prompts/t/p/system.md", "<<x>> <<snippet:a>>");
    assert_eventually(&watched, "p", &json!({"x": 2}), "2 A");
    write(root, "prompts/s/a.md", "B");
    assert_eventually(&watched, "p", &json!({"x": 2}), "2 B");
}

#[test]
fn explicit_reload_is_synchronous() {
    let dir = folder(&[("templates/p/system.md", "one")]);
    let watched = WatchedLibrary::new(
        dir.path(),
        WatchOptions::default().debounce(Duration::from_secs(2)),
    )
    .expect("watch");
    let events = watched.subscribe();
    write(dir.path(), "templates/p/system.md", "two");
    watched.reload().expect("reload");
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("two"));
    // The explicit reload's event is in the channel when `reload` returns;
    // the watcher's own (after its debounce) may come before it on a slow
    // machine, so it is looked for among what has arrived.
    assert!(
        events
            .try_iter()
            .any(|e| matches!(e, ReloadEvent::Reloaded { paths, .. } if paths.is_empty()))
    );

    write(dir.path(), "templates/p/system.md", "{{/if}}");
    let error = watched.reload().expect_err("broken");
    assert_eq!(error.code(), ErrorCode::StrayClose);
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("two"));
    assert!(
        events
            .try_iter()
            .any(|e| matches!(e, ReloadEvent::Failed(e) if e.code() == ErrorCode::StrayClose))
    );
}

#[test]
fn a_folder_that_does_not_load_is_an_error() {
    let dir = folder(&[("templates/p/system.md", "{{#if x}}")]);
    let error = Library::watch(dir.path()).expect_err("broken");
    assert_eq!(error.code(), ErrorCode::UnclosedBlock);
    let error = Library::watch(dir.path().join("missing")).expect_err("missing");
    assert_eq!(error.code(), ErrorCode::Io);
}

/// A folder the watcher cannot enter is a `watch` error that suggests
/// polling. Root enters any folder, so as root (CI runs as root) the check
/// runs in a child process as `nobody`, through util-linux's `setpriv`.
#[cfg(unix)]
#[test]
fn watch_setup_errors_are_reported() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let probe = tempfile::NamedTempFile::new().expect("temp file");
    let as_root = probe.as_file().metadata().expect("metadata").uid() == 0;
    if !as_root {
        watch_setup_error_checks();
        return;
    }
    // A copy of this test binary that `nobody` can run, wherever the
    // checkout is.
    let bin = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(bin.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let exe = bin.path().join("reload-test");
    std::fs::copy(std::env::current_exe().expect("test binary"), &exe).expect("copy binary");
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&exe)
        .args([
            "--exact",
            "reload::watch_setup_errors_as_another_user",
            "--include-ignored",
        ])
        .current_dir(bin.path())
        .env("TMPDIR", std::env::temp_dir())
        .output()
        .expect("run the child test with setpriv (util-linux)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "as nobody: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[cfg(unix)]
#[test]
#[ignore = "run by watch_setup_errors_are_reported as another user than root"]
fn watch_setup_errors_as_another_user() {
    watch_setup_error_checks();
}

#[cfg(unix)]
fn watch_setup_error_checks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = folder(&[("templates/p/system.md", "P")]);
    let locked = dir.path().join("templates/locked");
    std::fs::create_dir(&locked).expect("mkdir");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    assert!(
        std::fs::read_dir(&locked).is_err(),
        "permissions are enforced for this user"
    );
    let error = Library::watch(dir.path()).expect_err("a folder that cannot be watched");
    assert_eq!(error.code(), ErrorCode::Watch, "{error}");
    assert!(error.to_string().contains("templates"), "{error}");
    assert!(
        error.diagnostics()[0]
            .help
            .as_deref()
            .is_some_and(|h| h.contains("poll"))
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
}

#[test]
fn dropping_the_handle_stops_the_watcher() {
    let dir = folder(&[("templates/p/system.md", "one")]);
    let watched = Library::watch(dir.path()).expect("watch");
    let events = watched.subscribe();
    let library = watched.current();
    drop(watched);
    // The watcher thread held the last sender: its channel is closed once
    // the thread has ended.
    assert_eq!(events.recv(), Err(RecvError));
    // The loaded set is a snapshot, and no watcher is left to swap it.
    write(dir.path(), "templates/p/system.md", "two");
    assert_eq!(
        library
            .build_prompt("p", &json!({}))
            .expect("render")
            .system,
        "one"
    );
}

// ---- the dev path of generated code ----

fn leak(path: &Path) -> &'static str {
    Box::leak(path.to_string_lossy().into_owned().into_boxed_str())
}

/// Where generated code would look for the prompts under `root`, with the
/// contracts of its compiled vars structs.
fn dev_source(root: &Path, prompts: &'static [PromptInfo]) -> DevSource {
    DevSource {
        root: leak(root),
        templates: leak(&root.join("templates")),
        snippets: leak(&root.join("snippets")),
        open: "{{",
        close: "}}",
        standalone_tags: false,
        max_render_bytes: promptpack::DEFAULT_MAX_RENDER_BYTES,
        prompts,
    }
}

/// Prompt `p` compiled with no variables.
/// One prompt `p` whose compiled struct has no fields.
fn p_without_vars() -> &'static [PromptInfo] {
    Box::leak(Box::new([contract("p", &[])]))
}

/// The dev path compares a choice as the generated code does (the vars
/// struct gives the enum's value as text), and follows an edit of the
/// branches.
#[test]
fn dev_render_follows_comparisons() {
    let dir = folder(&[(
        "templates/c/system.md",
        "{{#if role == \"teacher\"}}Teach{{else if role == \"student\"}}Learn{{/if}}.",
    )]);
    let source = dev_source(
        dir.path(),
        Box::leak(Box::new([contract(
            "c",
            &[DevVar {
                name: "role",
                kind: VarKind::Choice,
                values: &["teacher", "student"],
            }],
        )])),
    );
    let render = |role: &str| {
        dev_render(&source, "c", &[("role", role)])
            .expect("rendered from disk")
            .map(|p| p.system)
    };
    assert_eq!(render("teacher").expect("teacher"), "Teach.");
    assert_eq!(render("student").expect("student"), "Learn.");
    write(
        dir.path(),
        "templates/c/system.md",
        "{{#if role == \"teacher\"}}Lead{{else}}Join{{/if}}.",
    );
    until("`teacher` renders \"Lead.\"", || {
        render("teacher").is_ok_and(|s| s == "Lead.")
    });
    assert_eq!(render("student").expect("student"), "Join.");
}

#[test]
fn dev_render_follows_the_files() {
    let dir = folder(&[
        ("templates/p/system.md", "Hi {{name}}."),
        ("templates/q/system.md", "Q"),
    ]);
    let source = dev_source(
        dir.path(),
        Box::leak(Box::new([
            contract(
                "p",
                &[DevVar {
                    name: "name",
                    kind: VarKind::Text,
                    values: &[],
                }],
            ),
            contract("q", &[]),
        ])),
    );
    let render =
        |id: &str| dev_render(&source, id, &[("name", "Ada")]).expect("rendered from disk");
    assert_eq!(render("p").expect("p").system, "Hi Ada.");

    write(dir.path(), "templates/p/system.md", "Hello {{name}}.");
    until("`p` renders \"Hello Ada.\"", || {
        render("p").is_ok_and(|p| p.system == "Hello Ada.")
    });

    // A variable the compiled struct does not have.
    write(
        dir.path(),
        "templates/p/system.md",
        "Hello {{name}}, {{title}} {{surname}}.",
    );
    until("`p` refuses to render", || render("p").is_err());
    let error = render("p").expect_err("stale");
    assert_eq!(error.code(), ErrorCode::StaleBuild, "{error}");
    let message = error.to_string();
    // One diagnostic per new variable, each naming its own.
    assert_eq!(error.diagnostics().len(), 2, "{message}");
    assert!(
        message.contains("`title`") && message.contains("`surname`") && message.contains("rebuild"),
        "{message}"
    );
    assert_eq!(
        error.diagnostics()[0].location.as_ref().map(|l| l.column()),
        Some(17)
    );

    // A broken edit: the last good version serves. Its failed reload is
    // waited for (the first failure since the subscription: every earlier
    // edit loaded), so the check below is made after the watcher read it.
    let events = dev_reload_events(&source).expect("the dev path watches the folder");
    write(dir.path(), "templates/p/system.md", "{{#if name}}");
    let failure = match recv_until(&events, "the broken edit's reload failing", |e| {
        matches!(e, ReloadEvent::Failed(_))
    })
    .pop()
    {
        Some(ReloadEvent::Failed(error)) => error,
        other => panic!("not a failure: {other:?}"),
    };
    assert_eq!(failure.code(), ErrorCode::UnclosedBlock, "{failure}");
    assert_eq!(
        render("p").expect_err("still stale").code(),
        ErrorCode::StaleBuild
    );

    // A deleted prompt folder.
    std::fs::remove_dir_all(dir.path().join("templates/q")).expect("remove");
    write(dir.path(), "templates/p/system.md", "Fixed {{name}}.");
    until("`q` refuses to render", || render("q").is_err());
    let error = render("q").expect_err("deleted");
    assert_eq!(error.code(), ErrorCode::UnknownPrompt);
    assert!(error.to_string().contains("deleted on disk"), "{error}");
    assert_eq!(render("p").expect("p").system, "Fixed Ada.");
}

#[test]
fn dev_render_without_a_good_version_reports_the_load_error() {
    let dir = folder(&[("templates/p/system.md", "{{#if x}}open")]);
    let source = dev_source(dir.path(), p_without_vars());
    let vars: [(&str, &str); 0] = [];
    let error = dev_render(&source, "p", &vars)
        .expect("from disk")
        .expect_err("broken");
    assert_eq!(error.code(), ErrorCode::UnclosedBlock);
    write(dir.path(), "templates/p/system.md", "fixed");
    until("the fixed `p` renders", || {
        dev_render(&source, "p", &vars).is_some_and(|r| r.is_ok())
    });
}

#[test]
fn dev_render_without_the_folder_uses_the_embedded_prompts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let vars: [(&str, &str); 0] = [];
    assert!(
        dev_render(
            &dev_source(&dir.path().join("gone"), p_without_vars()),
            "p",
            &vars
        )
        .is_none()
    );
    assert!(
        dev_render(&dev_source(dir.path(), p_without_vars()), "p", &vars).is_none(),
        "no templates folder"
    );
}

/// Runs [`dev_render_env_child`] in a child process with `PROMPTPACK_NO_RELOAD`
/// set: the environment is process-global, and setting it here would race
/// the other tests.
#[test]
fn no_reload_env_turns_the_dev_path_off() {
    let exe = std::env::current_exe().expect("test binary");
    for (value, disabled) in [("1", true), ("yes", true), ("0", false), ("", false)] {
        let output = std::process::Command::new(&exe)
            .args([
                "--exact",
                "reload::dev_render_env_child",
                "--include-ignored",
                "--test-threads=1",
            ])
            .env(NO_RELOAD_ENV, value)
            .env(
                "PROMPTPACK_TEST_EXPECT_DISABLED",
                if disabled { "1" } else { "0" },
            )
            .output()
            .expect("run the child test");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{NO_RELOAD_ENV}={value:?}: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
#[ignore = "run by no_reload_env_turns_the_dev_path_off, in a child process with its own environment"]
fn dev_render_env_child() {
    let expect_disabled =
        std::env::var("PROMPTPACK_TEST_EXPECT_DISABLED").expect("run by the parent test") == "1";
    let dir = folder(&[("templates/p/system.md", "from disk")]);
    let vars: [(&str, &str); 0] = [];
    let rendered = dev_render(&dev_source(dir.path(), p_without_vars()), "p", &vars);
    if expect_disabled {
        assert!(rendered.is_none());
    } else {
        assert_eq!(
            rendered.expect("from disk").expect("renders").system,
            "from disk"
        );
    }
}

/// A folder of any name (here with a dot) moved into or out of the snippets
/// folder reloads: only the names the loader ignores are ignored.
#[test]
fn a_folder_with_a_dot_moved_in_and_out_reloads() {
    let dir = folder(&[
        ("templates/p/system.md", "{{snippet:s}}"),
        ("snippets/s.md", "one"),
        ("elsewhere/v1.2/s.md", "two"),
    ]);
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    let events = watched.subscribe();
    std::fs::remove_file(root.join("snippets/s.md")).expect("remove");
    wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    std::fs::rename(root.join("elsewhere/v1.2"), root.join("snippets/v1.2")).expect("move in");
    assert_eventually(&watched, "p", &json!({}), "two");
    write(root, "snippets/v1.2/s.md", "three");
    assert_eventually(&watched, "p", &json!({}), "three");
    std::fs::rename(root.join("snippets/v1.2"), root.join("elsewhere/v1.2")).expect("move out");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::SnippetNotFound),
        "{failed:?}"
    );
}

/// A snippet that is a link (or a chain of links) to a file elsewhere under
/// the root: an edit of the target is seen, by a plain or an atomic save,
/// and so is pointing the link elsewhere.
#[cfg(unix)]
#[test]
fn edits_of_a_linked_snippets_target_are_seen() {
    use std::os::unix::fs::symlink;
    let dir = folder(&[
        (
            "templates/p/system.md",
            "{{snippet:s}} {{snippet:c}} {{snippet:t}}",
        ),
        ("libdir/t.md", "L"),
        ("shared/s.md", "one"),
        ("shared/other.md", "other"),
        ("chain/real.md", "C1"),
    ]);
    let root = dir.path();
    std::fs::create_dir_all(root.join("snippets")).expect("snippets");
    symlink("../shared/s.md", root.join("snippets/s.md")).expect("link s");
    // snippets/c.md → chain/hop.md → chain/real.md
    symlink("real.md", root.join("chain/hop.md")).expect("link hop");
    symlink("../chain/hop.md", root.join("snippets/c.md")).expect("link c");
    symlink("../libdir", root.join("snippets/lib")).expect("link lib");
    let watched = Library::watch(root).expect("watch");
    let events = watched.subscribe();
    assert_eq!(
        system(&watched, "p", &json!({})).as_deref(),
        Some("one C1 L")
    );

    write(root, "shared/s.md", "two");
    assert_eventually(&watched, "p", &json!({}), "two C1 L");
    write_atomic(root, "shared/s.md", "three");
    assert_eventually(&watched, "p", &json!({}), "three C1 L");
    write(root, "chain/real.md", "C2");
    assert_eventually(&watched, "p", &json!({}), "three C2 L");

    // The link pointed elsewhere: the new target is followed.
    std::fs::remove_file(root.join("snippets/s.md")).expect("unlink");
    symlink("../shared/other.md", root.join("snippets/s.md")).expect("relink");
    assert_eventually(&watched, "p", &json!({}), "other C2 L");
    write(root, "shared/other.md", "other2");
    assert_eventually(&watched, "p", &json!({}), "other2 C2 L");
    // A hop of the chain pointed elsewhere.
    std::fs::remove_file(root.join("chain/hop.md")).expect("unlink hop");
    symlink("../shared/s.md", root.join("chain/hop.md")).expect("relink hop");
    assert_eventually(&watched, "p", &json!({}), "other2 three L");

    // A link to a folder: its removal and its return (events that do not
    // say "folder").
    std::fs::remove_file(root.join("snippets/lib")).expect("unlink lib");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::SnippetNotFound),
        "{failed:?}"
    );
    write(root, "libdir/t.md", "M");
    symlink("../libdir", root.join("snippets/lib")).expect("relink lib");
    assert_eventually(&watched, "p", &json!({}), "other2 three M");
}

/// The dev path picks the files on disk up once the templates folder comes
/// back: missing at the first render is not missing for good.
#[test]
fn dev_render_picks_up_a_templates_folder_that_comes_back() {
    let dir = folder(&[("templates/p/system.md", "from disk")]);
    let root = dir.path();
    std::fs::rename(root.join("templates"), root.join("away")).expect("move away");
    let source = dev_source(root, p_without_vars());
    let vars: [(&str, &str); 0] = [];
    assert!(
        dev_render(&source, "p", &vars).is_none(),
        "no templates folder: the embedded prompts"
    );
    std::fs::rename(root.join("away"), root.join("templates")).expect("move back");
    until("`p` renders \"from disk\"", || {
        dev_render(&source, "p", &vars).is_some_and(|r| r.is_ok_and(|p| p.system == "from disk"))
    });
    write(root, "templates/p/system.md", "edited");
    until("`p` renders \"edited\"", || {
        dev_render(&source, "p", &vars).is_some_and(|r| r.is_ok_and(|p| p.system == "edited"))
    });
}

/// A case of a contract change: the compiled fields, the values they give,
/// the first text, the edit, what the error names.
type StaleCase = (
    &'static [DevVar],
    &'static dyn promptpack::Vars,
    &'static str,
    &'static str,
    &'static [&'static str],
);

/// An edit that leaves the contract of the compiled vars struct is
/// `stale_build`, naming the variable and both kinds, never a render the
/// edit does not mean (`formal=true`, a condition silently false, a
/// comparison that can never hold).
#[test]
fn dev_render_edits_that_leave_the_compiled_contract_are_stale() {
    const FORMAL: &[DevVar] = &[DevVar {
        name: "formal",
        kind: VarKind::Flag,
        values: &[],
    }];
    const ROLE: &[DevVar] = &[DevVar {
        name: "role",
        kind: VarKind::Choice,
        values: &["teacher", "student"],
    }];
    const NAME: &[DevVar] = &[DevVar {
        name: "name",
        kind: VarKind::Text,
        values: &[],
    }];
    static FORMAL_TRUE: [(&str, bool); 1] = [("formal", true)];
    static TEACHER: [(&str, &str); 1] = [("role", "teacher")];
    static ADA: [(&str, &str); 1] = [("name", "Ada")];
    let (formal, role, name) = (&FORMAL_TRUE, &TEACHER, &ADA);
    let cases: [StaleCase; 7] = [
        // An edit of front matter alone: the template still prints `name`,
        // but now declares it optional, which the compiled `&str` is not.
        (
            NAME,
            name,
            "{{name}}",
            "---\nvars:\n  name: {kind: optional}\n---\n{{name}}",
            &["`name`", "as text (`&str`)"],
        ),
        (
            FORMAL,
            formal,
            "{{#if formal}}Dear{{/if}}",
            "formal={{formal}}",
            &["`formal`", "as text (`&str`)", "as a condition (`bool`)"],
        ),
        (
            FORMAL,
            formal,
            "{{#if formal}}Dear{{/if}}",
            "{{#if formal}}Dear{{/if}}{{#if vip}} VIP{{/if}}",
            &["`vip`", "lacks"],
        ),
        (
            ROLE,
            role,
            "{{#if role == \"teacher\"}}T{{/if}}",
            "{{#if role == \"teacher\"}}T{{else if role == \"admin\"}}A{{/if}}",
            &["`role`", "\"admin\"", "enum lacks"],
        ),
        (
            ROLE,
            role,
            "{{#if role == \"teacher\"}}T{{/if}}",
            "{{role}}{{#if role}}!{{/if}}{{#if role == \"teacher\"}}T{{/if}}",
            &["`role`", "a choice and a condition", "as a choice (`enum`)"],
        ),
        (
            NAME,
            name,
            "{{name}}",
            "{{#if name}}{{name}}{{/if}}",
            &["`name`", "text and a condition", "as text (`&str`)"],
        ),
        (
            NAME,
            name,
            "{{name}}",
            "{{#if name == \"Ada\"}}A{{/if}}",
            &["`name`", "as a choice (`enum`)", "as text (`&str`)"],
        ),
    ];
    for (fields, vars, first, edit, names) in cases {
        let dir = folder(&[("templates/p/system.md", first)]);
        let prompts: &'static [PromptInfo] = Box::leak(Box::new([contract("p", fields)]));
        let source = dev_source(dir.path(), prompts);
        let render = || dev_render(&source, "p", vars).expect("rendered from disk");
        render().unwrap_or_else(|e| panic!("{first}: {e}"));
        write(dir.path(), "templates/p/system.md", edit);
        until("the edit refused", || render().is_err());
        let error = render().expect_err("stale");
        assert_eq!(error.code(), ErrorCode::StaleBuild, "{edit}: {error}");
        let message = error.to_string();
        for name in names {
            assert!(message.contains(name), "{edit}: {message}");
        }
        assert!(error.diagnostics()[0].location.is_some(), "{edit}");
    }
    // Fewer values than the compiled enum is no change of contract: the
    // struct can still give every value the template compares with.
    let dir = folder(&[(
        "templates/p/system.md",
        "{{#if role == \"teacher\"}}T{{else if role == \"student\"}}S{{/if}}",
    )]);
    let prompts: &'static [PromptInfo] = Box::leak(Box::new([contract("p", ROLE)]));
    let source = dev_source(dir.path(), prompts);
    write(
        dir.path(),
        "templates/p/system.md",
        "{{#if role == \"teacher\"}}Teach{{/if}}",
    );
    until("`p` renders \"Teach\"", || {
        dev_render(&source, "p", role).is_some_and(|r| r.is_ok_and(|p| p.system == "Teach"))
    });
}

/// More edits against the compiled contract, each in its own tree: a
/// compared choice tested as a flag, or printed as text; a snippet (not the
/// template) that compares with a value the enum lacks; and, on the other
/// side, an edit that only drops a variable, which the struct still gives
/// and which renders.
#[test]
fn dev_render_contract_variants() {
    const ROLE: &[DevVar] = &[DevVar {
        name: "role",
        kind: VarKind::Choice,
        values: &["teacher", "student"],
    }];
    const NAME_FORMAL: &[DevVar] = &[
        DevVar {
            name: "name",
            kind: VarKind::Text,
            values: &[],
        },
        DevVar {
            name: "formal",
            kind: VarKind::Flag,
            values: &[],
        },
    ];
    static TEACHER: [(&str, &str); 1] = [("role", "teacher")];
    let teacher: &'static dyn promptpack::Vars = &TEACHER;
    const COMPARED: &str = "{{#if role == \"teacher\"}}T{{/if}}";
    // (contract, vars, files at first, file edited, its new text, what the
    // error names)
    type Case = (
        &'static [DevVar],
        &'static dyn promptpack::Vars,
        &'static [(&'static str, &'static str)],
        &'static str,
        &'static str,
        &'static [&'static str],
    );
    let cases: [Case; 3] = [
        (
            ROLE,
            teacher,
            &[("templates/p/system.md", COMPARED)],
            "templates/p/system.md",
            "{{#if role}}T{{/if}}",
            &["`role`", "as a condition (`bool`)", "as a choice (`enum`)"],
        ),
        (
            ROLE,
            teacher,
            &[("templates/p/system.md", COMPARED)],
            "templates/p/system.md",
            "{{role}}",
            &["`role`", "as text (`&str`)", "as a choice (`enum`)"],
        ),
        (
            ROLE,
            teacher,
            &[
                ("templates/p/system.md", "{{snippet:s}}"),
                ("snippets/s.md", COMPARED),
            ],
            "snippets/s.md",
            "{{#if role == \"teacher\"}}T{{else if role == \"z\"}}Z{{/if}}",
            &["`role`", "\"z\"", "enum lacks"],
        ),
    ];
    for (fields, vars, files, edited, edit, names) in cases {
        let dir = folder(files);
        let prompts: &'static [PromptInfo] = Box::leak(Box::new([contract("p", fields)]));
        let source = dev_source(dir.path(), prompts);
        let render = || dev_render(&source, "p", vars).expect("rendered from disk");
        render().unwrap_or_else(|e| panic!("{edit}: before the edit: {e}"));
        write(dir.path(), edited, edit);
        until("the edit refused", || render().is_err());
        let error = render().expect_err("stale");
        assert_eq!(error.code(), ErrorCode::StaleBuild, "{edit}: {error}");
        let message = error.to_string();
        for name in names {
            assert!(message.contains(name), "{edit}: {message}");
        }
        let location = error.diagnostics()[0].location.as_ref();
        assert!(
            location.is_some_and(|l| l.path().ends_with(edited)),
            "{edit}: {location:?}"
        );
    }
    // A variable dropped: the struct still gives it, nothing is stale.
    static ADA: [(&str, &str); 1] = [("name", "Ada")];
    let dir = folder(&[(
        "templates/p/system.md",
        "{{#if formal}}Dear {{/if}}{{name}}",
    )]);
    let prompts: &'static [PromptInfo] = Box::leak(Box::new([contract("p", NAME_FORMAL)]));
    let source = dev_source(dir.path(), prompts);
    write(dir.path(), "templates/p/system.md", "Hi {{name}}");
    until("`p` renders \"Hi Ada\"", || {
        dev_render(&source, "p", &ADA).is_some_and(|r| r.is_ok_and(|p| p.system == "Hi Ada"))
    });
}

/// The inotify watch limit reached while folders are added: the watcher
/// says so (a `watch` error, kept as the last error) and polls, so that no
/// edit is lost. A real failure, not a simulated one: the check runs in a
/// child process in a user namespace of its own (`unshare`, util-linux),
/// whose limit of inotify watches is lowered to 40, for that namespace only.
#[cfg(target_os = "linux")]
#[test]
fn the_inotify_limit_falls_back_to_polling() {
    let exe = std::env::current_exe().expect("test binary");
    let output = std::process::Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 40 > /proc/sys/user/max_inotify_watches && exec \"$0\" --exact reload::inotify_limit_child --include-ignored",
        ])
        .arg(&exe)
        .output()
        .expect("run the child test in a user namespace (unshare, util-linux)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "in a user namespace with 40 inotify watches: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[cfg(target_os = "linux")]
#[test]
#[ignore = "run by the_inotify_limit_falls_back_to_polling, in a user namespace with a low inotify limit"]
fn inotify_limit_child() {
    const FOLDERS: usize = 50;
    let limit = std::fs::read_to_string("/proc/sys/user/max_inotify_watches").expect("limit");
    assert_eq!(limit.trim(), "40", "run by the parent test");
    let dir = folder(&[("templates/p/system.md", "start"), ("snippets/s.md", "S")]);
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    assert!(!watched.is_polling());
    let events = watched.subscribe();
    for i in 0..FOLDERS {
        write(root, &format!("snippets/d{i}/x{i}.md"), &format!("X{i}"));
    }
    let all: String = (0..FOLDERS)
        .map(|i| format!("{{{{snippet:x{i}}}}}"))
        .collect();
    write(root, "templates/p/system.md", &all);
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::Watch),
        "{failed:?}"
    );
    until("the watcher polls", || watched.is_polling());
    let expected: String = (0..FOLDERS).map(|i| format!("X{i}")).collect();
    assert_eventually(&watched, "p", &json!({}), &expected);
    // An edit in every folder, the unwatched ones too: none is lost.
    for i in 0..FOLDERS {
        write(root, &format!("snippets/d{i}/x{i}.md"), &format!("Y{i}"));
    }
    let expected: String = (0..FOLDERS).map(|i| format!("Y{i}")).collect();
    assert_eventually(&watched, "p", &json!({}), &expected);
    // Good reloads do not hide that the watcher polls.
    let error = watched.last_error().expect("still said");
    assert_eq!(error.code(), ErrorCode::Watch, "{error}");
    assert!(error.to_string().contains("polling"), "{error}");
    drop(watched);

    // A tree past the limit from the start: the watcher starts polling.
    let watched = Library::watch(root).expect("watch past the limit");
    assert!(watched.is_polling());
    let error = watched.last_error().expect("said from the start");
    assert_eq!(error.code(), ErrorCode::Watch, "{error}");
    write(root, "snippets/d49/x49.md", "Z49");
    let expected: String = (0..FOLDERS)
        .map(|i| {
            if i == 49 {
                "Z49".into()
            } else {
                format!("Y{i}")
            }
        })
        .collect();
    assert_eventually(&watched, "p", &json!({}), &expected);
}

/// What a fresh load of `root` renders for `id`: what the watcher must
/// serve once things settle.
fn fresh(root: &Path, id: &str) -> Option<String> {
    Library::load(root)
        .ok()?
        .build_prompt(id, &json!({}))
        .ok()
        .map(|p| p.system)
}

/// A snippet link whose chain passes through a folder outside the root and
/// comes back to a file inside it: the loader reads the inside file, so the
/// watcher follows the chain through the outside hop, and a change of that
/// hop or an edit of the target is seen.
#[cfg(unix)]
#[test]
fn a_link_chain_through_an_outside_folder_is_followed() {
    use std::os::unix::fs::symlink;
    let dir = folder(&[
        ("templates/p/system.md", "{{snippet:c}}"),
        ("shared/x.md", "X1"),
        ("shared/y.md", "Y1"),
    ]);
    let outside = tempfile::tempdir().expect("outside");
    let root = dir.path();
    std::fs::create_dir_all(root.join("snippets")).expect("snippets");
    let hop = outside.path().join("hop.md");
    symlink(root.join("shared/x.md"), &hop).expect("link hop");
    symlink(&hop, root.join("snippets/c.md")).expect("link c");
    let watched = Library::watch(root).expect("watch");
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("X1"));
    write(root, "shared/x.md", "X2");
    assert_eventually(&watched, "p", &json!({}), "X2");
    std::fs::remove_file(&hop).expect("unlink hop");
    symlink(root.join("shared/y.md"), &hop).expect("relink hop");
    assert_eventually(&watched, "p", &json!({}), "Y1");
    write(root, "shared/y.md", "Y2");
    assert_eventually(&watched, "p", &json!({}), "Y2");
}

/// Folders and files coming and going the ways editors, git and people
/// move them: after each, what is served is what a fresh load reads.
#[test]
fn folders_moved_renamed_and_switched_are_seen() {
    let dir = folder(&[
        ("templates/p/system.md", "P1 {{snippet:s}}"),
        ("snippets/s.md", "S1"),
    ]);
    let outside = tempfile::tempdir_in(dir.path().parent().expect("tmp")).expect("outside");
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    let settled = |id: &str, expected: &str| {
        assert_eventually(&watched, id, &json!({}), expected);
        assert_eq!(fresh(root, id).as_deref(), Some(expected));
    };

    // A hidden folder made, filled, then renamed visible.
    write(root, "templates/.q/system.md", "Q1");
    write(root, "snippets/.d/t.md", "T1");
    std::fs::rename(root.join("snippets/.d"), root.join("snippets/d")).expect("show d");
    std::fs::rename(root.join("templates/.q"), root.join("templates/q")).expect("show q");
    write(
        root,
        "templates/p/system.md",
        "P2 {{snippet:s}} {{snippet:t}}",
    );
    settled("q", "Q1");
    settled("p", "P2 S1 T1");

    // A prompt folder moved in from outside the root.
    write(outside.path(), "r/system.md", "R1");
    std::fs::rename(outside.path().join("r"), root.join("templates/r")).expect("move r in");
    settled("r", "R1");
    write(root, "templates/r/system.md", "R2");
    settled("r", "R2");

    // The templates folder renamed away, edited there, renamed back.
    std::fs::rename(root.join("templates"), root.join("templates.old")).expect("away");
    write(root, "templates.old/p/system.md", "P3 {{snippet:s}}");
    std::fs::rename(root.join("templates.old"), root.join("templates")).expect("back");
    settled("p", "P3 S1");
    write(root, "templates/p/system.md", "P4 {{snippet:s}}");
    settled("p", "P4 S1");

    // A vim save with backups: the file renamed to `x~`, a new one
    // written, the backup deleted.
    let system_md = root.join("templates/p/system.md");
    std::fs::rename(&system_md, root.join("templates/p/system.md~")).expect("backup");
    std::fs::write(&system_md, "P5 {{snippet:s}}").expect("write");
    std::fs::remove_file(root.join("templates/p/system.md~")).expect("drop backup");
    settled("p", "P5 S1");

    // A checkout: many prompts removed, added and changed at once.
    for n in 0..30 {
        write(
            root,
            &format!("templates/g{n}/system.md"),
            &format!("G{n}a"),
        );
    }
    settled("g29", "G29a");
    for n in 0..30 {
        let path = format!("templates/g{n}");
        match n % 3 {
            0 => std::fs::remove_dir_all(root.join(&path)).expect("remove"),
            1 => write(root, &format!("{path}/system.md"), &format!("G{n}b")),
            _ => write_atomic(root, &format!("{path}/system.md"), &format!("G{n}b")),
        }
        write(root, &format!("templates/h{n}/system.md"), &format!("H{n}"));
    }
    settled("h29", "H29");
    for n in 0..30 {
        if n % 3 != 0 {
            settled(&format!("g{n}"), &format!("G{n}b"));
        }
    }
    assert!(system(&watched, "g0", &json!({})).is_none());

    // promptpack.toml moves the snippets folder; edits there are seen.
    write(root, "snip2/s.md", "N1");
    write(root, "snip2/t.md", "N2");
    write(root, "promptpack.toml", "snippets = \"snip2\"\n");
    settled("p", "P5 N1");
    write(root, "snip2/s.md", "N3");
    settled("p", "P5 N3");
}

/// Link loops, a link to a FIFO and a linked folder under the prompt
/// folders: the watcher starts, reports the bad entries as the loader
/// does, and still sees every edit; an edit inside the linked folder too.
#[cfg(unix)]
#[test]
fn link_loops_and_a_link_to_a_fifo_do_not_stop_the_watcher() {
    use std::os::unix::fs::symlink;
    let dir = folder(&[
        ("templates/p/system.md", "{{snippet:s}} {{snippet:t}}"),
        ("snippets/s.md", "S1"),
        ("libdir/deep/t.md", "T1"),
    ]);
    let root = dir.path();
    symlink(".", root.join("templates/p/self")).expect("loop self");
    symlink("../libdir", root.join("snippets/lib")).expect("lib");
    let watched = Library::watch(root).expect("watch");
    let events = watched.subscribe();
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("S1 T1"));
    symlink("..", root.join("snippets/up")).expect("loop up");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::Io),
        "{failed:?}"
    );
    std::fs::remove_file(root.join("snippets/up")).expect("unloop");
    write(root, "snippets/s.md", "S1");
    assert_eventually(&watched, "p", &json!({}), "S1 T1");
    write(root, "libdir/deep/t.md", "T2");
    assert_eventually(&watched, "p", &json!({}), "S1 T2");

    symlink("l2.md", root.join("snippets/l1.md")).expect("l1");
    symlink("l1.md", root.join("snippets/l2.md")).expect("l2");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::Io),
        "{failed:?}"
    );
    std::fs::remove_file(root.join("snippets/l1.md")).expect("unlink l1");
    std::fs::remove_file(root.join("snippets/l2.md")).expect("unlink l2");
    write(root, "snippets/s.md", "S2");
    assert_eventually(&watched, "p", &json!({}), "S2 T2");

    let fifo = root.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    std::fs::remove_file(root.join("snippets/s.md")).expect("unlink s");
    symlink("../fifo", root.join("snippets/s.md")).expect("link to fifo");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::Io),
        "{failed:?}"
    );
    std::fs::remove_file(root.join("snippets/s.md")).expect("unlink fifo link");
    write(root, "snippets/s.md", "S3");
    assert_eventually(&watched, "p", &json!({}), "S3 T2");
    drop(watched);
}

/// A snippet linked to a file under an ignored name (inside the snippets
/// folder or beside it), the root reached through a link: the loader reads
/// through the link, so the watcher sees edits of the target.
#[cfg(unix)]
#[test]
fn a_link_into_an_ignored_folder_is_followed() {
    use std::os::unix::fs::symlink;
    let dir = folder(&[
        ("real/templates/p/system.md", "{{snippet:s}} {{snippet:u}}"),
        ("real/snippets/.hid/x.md", "X1"),
        ("real/.shared/y.md", "Y1"),
    ]);
    symlink(".hid/x.md", dir.path().join("real/snippets/s.md")).expect("link s");
    symlink("../.shared/y.md", dir.path().join("real/snippets/u.md")).expect("link u");
    symlink("real", dir.path().join("linked")).expect("link root");
    let root = dir.path().join("linked");
    let watched = Library::watch(&root).expect("watch");
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("X1 Y1"));
    write(&root, "snippets/.hid/x.md", "X2");
    assert_eventually(&watched, "p", &json!({}), "X2 Y1");
    write(&root, ".shared/y.md", "Y2");
    assert_eventually(&watched, "p", &json!({}), "X2 Y2");
    write_atomic(&root, "snippets/.hid/x.md", "X3");
    assert_eventually(&watched, "p", &json!({}), "X3 Y2");
}

/// The prompt folders themselves swapped for FIFOs while watched: each is
/// an `io` failure, the last good version serves, and the folders put back
/// are watched again. A template folder renamed away with a file put in
/// its place (as a checkout turning `p/` into `p` does) is seen gone.
#[cfg(unix)]
#[test]
fn prompt_folders_swapped_for_fifos_come_back() {
    let dir = folder(&[
        ("templates/p/system.md", "P1 {{snippet:s}}"),
        ("snippets/s.md", "S1"),
    ]);
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    let events = watched.subscribe();
    let mkfifo = |path: &Path| {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo");
        assert!(made.success());
    };
    for (folder, file, text, expected) in [
        ("snippets", "snippets/s.md", "S2", "P1 S2"),
        (
            "templates",
            "templates/p/system.md",
            "P2 {{snippet:s}}",
            "P2 S2",
        ),
        (
            "templates/p",
            "templates/p/system.md",
            "P3 {{snippet:s}}",
            "P3 S2",
        ),
    ] {
        let path = root.join(folder);
        let away = root.join("away");
        std::fs::rename(&path, &away).expect("move away");
        mkfifo(&path);
        if folder == "templates/p" {
            // A FIFO where a template folder was is a stray file: the
            // prompt is gone.
            until("`p` is gone", || {
                system(&watched, "p", &json!({})).is_none()
            });
        } else {
            let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
            assert!(
                matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::Io),
                "{folder}: {failed:?}"
            );
        }
        std::fs::remove_file(&path).expect("remove fifo");
        std::fs::rename(&away, &path).expect("move back");
        write(root, file, text);
        assert_eventually(&watched, "p", &json!({}), expected);
    }
}

/// A root that is a link, pointed at another release as deployments do
/// (a new link renamed over the old one): the new release is served, and
/// its edits are seen.
#[cfg(unix)]
#[test]
fn a_root_link_pointed_elsewhere_is_followed() {
    use std::os::unix::fs::symlink;
    let dir = folder(&[
        ("v1/templates/p/system.md", "V1"),
        ("v2/templates/p/system.md", "V2"),
    ]);
    let base = dir.path();
    symlink("v1", base.join("current")).expect("link current");
    let root = base.join("current");
    let watched = Library::watch(&root).expect("watch");
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("V1"));
    symlink("v2", base.join("current.new")).expect("link new");
    std::fs::rename(base.join("current.new"), &root).expect("swap");
    assert_eventually(&watched, "p", &json!({}), "V2");
    write(&root, "templates/p/system.md", "V2b");
    assert_eventually(&watched, "p", &json!({}), "V2b");
}

/// `promptpack.toml` a link to a file elsewhere under the root: an edit of
/// that file is seen, as the loader reads through the link.
#[cfg(unix)]
#[test]
fn a_linked_config_files_edits_are_seen() {
    use std::os::unix::fs::symlink;
    let dir = folder(&[
        ("templates/p/system.md", "{{snippet:s}}"),
        ("snippets/s.md", "S1"),
        ("other/s.md", "O1"),
        ("conf/pp.toml", "snippets = \"snippets\"\n"),
    ]);
    let root = dir.path();
    symlink("conf/pp.toml", root.join("promptpack.toml")).expect("link config");
    let watched = Library::watch(root).expect("watch");
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("S1"));
    write(root, "conf/pp.toml", "snippets = \"other\"\n");
    assert_eventually(&watched, "p", &json!({}), "O1");
}

/// A configuration with relative folders, reached through a link: the
/// watcher reports absolute paths, and the edits are still seen.
#[cfg(unix)]
#[test]
fn a_relative_config_through_a_link_sees_edits() {
    use std::os::unix::fs::symlink;
    let dir = folder(&[("real/templates/p/system.md", "P1")]);
    symlink("real", dir.path().join("linked")).expect("link");
    // The same folder, relative to the working directory (not changed
    // here: other tests run in this process).
    let cwd = std::env::current_dir().expect("cwd");
    let mut relative = std::path::PathBuf::new();
    for _ in cwd.components().skip(1) {
        relative.push("..");
    }
    let relative = relative.join(
        dir.path()
            .join("linked")
            .strip_prefix("/")
            .expect("absolute"),
    );
    let config = promptpack::Config::new(&relative);
    let watched = WatchedLibrary::with_config(&config, WatchOptions::new()).expect("watch");
    assert_eq!(system(&watched, "p", &json!({})).as_deref(), Some("P1"));
    write(dir.path(), "linked/templates/p/system.md", "P2");
    assert_eventually(&watched, "p", &json!({}), "P2");
}

/// A conversation reloads as a prompt of two files does: an edit of
/// messages.md, or of a snippet of turns it includes, is served, and one
/// that cuts a message leaves the last good conversation serving.
#[test]
fn a_conversations_edits_are_served() {
    let dir = folder(&[
        ("templates/chat/system.md", "S"),
        (
            "templates/chat/messages.md",
            "{{#user}}\nU1\n{{/user}}\n{{snippet:shot}}\n",
        ),
        ("snippets/shot.md", "{{#assistant}}\nA1\n{{/assistant}}\n"),
    ]);
    let root = dir.path();
    let watched = Library::watch(root).expect("watch");
    let sent = || -> Option<Vec<String>> {
        let prompt = watched.build_prompt("chat", &json!({})).ok()?;
        Some(
            prompt
                .messages()
                .map(|m| format!("{}:{}", m.role, m.content))
                .collect(),
        )
    };
    let served = |expected: &[&str]| {
        until(&format!("`chat` sends {expected:?}"), || {
            sent().is_some_and(|got| got == expected)
        });
    };
    served(&["system:S", "user:U1", "assistant:A1"]);
    write(
        root,
        "templates/chat/messages.md",
        "{{#user}}\nU2\n{{/user}}\n{{snippet:shot}}\n",
    );
    served(&["system:S", "user:U2", "assistant:A1"]);
    write(
        root,
        "snippets/shot.md",
        "{{#assistant}}\nA2\n{{/assistant}}\n",
    );
    served(&["system:S", "user:U2", "assistant:A2"]);
    let events = watched.subscribe();
    write(root, "templates/chat/messages.md", "{{#user}}\nU3\n");
    let failed = wait_event(&events, |e| matches!(e, ReloadEvent::Failed(_)));
    assert!(
        matches!(&failed, ReloadEvent::Failed(e) if e.code() == ErrorCode::UnclosedBlock),
        "{failed:?}"
    );
    assert_eq!(
        sent().expect("the last good conversation serves"),
        ["system:S", "user:U2", "assistant:A2"]
    );
}

/// The dev path holds an edit on disk to the compiled shape too: a prompt
/// compiled from two files whose `user.md` becomes a `messages.md` with the
/// same variables, or a conversation whose `messages.md` becomes a
/// `user.md`, is `stale_build` at the file that makes the shape: the
/// generated code has no place for what the edit renders.
#[test]
fn dev_render_refuses_an_edit_to_another_shape() {
    const QUESTION: &[DevVar] = &[DevVar {
        name: "question",
        kind: VarKind::Text,
        values: &[],
    }];
    static ASK: [(&str, &str); 1] = [("question", "Why?")];
    let stale = |source: &DevSource, what: &str| {
        let render = || dev_render(source, "p", &ASK).expect("rendered from disk");
        until(what, || {
            render().is_err_and(|e| e.code() == ErrorCode::StaleBuild)
        });
        render().expect_err("stale")
    };

    // Two files compiled; the user part becomes a conversation.
    let dir = folder(&[
        ("templates/p/system.md", "S"),
        ("templates/p/user.md", "{{question}}"),
    ]);
    let prompts: &'static [PromptInfo] = Box::leak(Box::new([contract("p", QUESTION)]));
    let source = dev_source(dir.path(), prompts);
    let first = dev_render(&source, "p", &ASK)
        .expect("rendered from disk")
        .expect("renders");
    assert_eq!(first.user.as_deref(), Some("Why?"));
    write(
        dir.path(),
        "templates/p/messages.md",
        "{{#user}}\n{{question}}\n{{/user}}\n",
    );
    std::fs::remove_file(dir.path().join("templates/p/user.md")).expect("remove user.md");
    let error = stale(
        &source,
        "a conversation where two files were compiled is stale",
    );
    let message = error.to_string();
    assert!(message.contains("conversation"), "{message}");
    let at = error.diagnostics()[0].location.as_ref().expect("located");
    assert!(at.path().ends_with("messages.md"), "{message}");

    // A conversation compiled; it becomes two files.
    let dir = folder(&[
        ("templates/p/system.md", "S"),
        (
            "templates/p/messages.md",
            "{{#user}}\n{{question}}\n{{/user}}\n",
        ),
    ]);
    let prompts: &'static [PromptInfo] = Box::leak(Box::new([PromptInfo {
        conversation: true,
        ..contract("p", QUESTION)
    }]));
    let source = dev_source(dir.path(), prompts);
    let first = dev_render(&source, "p", &ASK)
        .expect("rendered from disk")
        .expect("renders");
    assert_eq!(first.messages.len(), 1, "{first:?}");
    write(dir.path(), "templates/p/user.md", "{{question}}");
    std::fs::remove_file(dir.path().join("templates/p/messages.md")).expect("remove messages.md");
    let error = stale(
        &source,
        "two files where a conversation was compiled is stale",
    );
    assert!(error.to_string().contains("two files"), "{error}");
}

/// The dev path holds an edit on disk to what the compiled types read: a
/// response the generated struct could not read (a required field added)
/// is `stale_build` at the field; an optional field added is read past, so
/// the edit serves.
#[test]
fn dev_render_refuses_a_response_the_compiled_type_could_not_read() {
    const NONE: &[DevVar] = &[];
    static NO_VALUES: [(&str, &str); 0] = [];
    let declared = |extra: &str, text: &str| {
        format!("---\nresponse:\n  category: [bug, billing]\n  summary: string\n{extra}---\n{text}")
    };
    let compiled = Library::from_sources(
        vec![promptpack::TemplateSource {
            id: "p".into(),
            system: promptpack::SourceFile::new("templates/p/system.md", declared("", "Triage.")),
            user: None,
            messages: None,
        }],
        vec![],
        &promptpack::Config::default(),
    )
    .expect("loads");
    let format: &'static str = Box::leak(
        compiled
            .response_format("p")
            .expect("a response")
            .to_string()
            .into_boxed_str(),
    );
    let dir = folder(&[("templates/p/system.md", &declared("", "Triage."))]);
    let prompts: &'static [PromptInfo] = Box::leak(Box::new([PromptInfo {
        response_format: Some(promptpack::RequestJson::__new(format)),
        ..contract("p", NONE)
    }]));
    let source = dev_source(dir.path(), prompts);
    let render = || dev_render(&source, "p", &NO_VALUES).expect("rendered from disk");
    assert!(render().is_ok(), "the compiled response");

    write(
        dir.path(),
        "templates/p/system.md",
        &declared("  note?: string\n", "Triage, v2."),
    );
    until("an optional field is read past", || {
        render().is_ok_and(|p| p.system == "Triage, v2.")
    });

    write(
        dir.path(),
        "templates/p/system.md",
        &declared("  mood: string\n", "Triage, v3."),
    );
    until("a required field added is stale", || {
        render().is_err_and(|e| e.code() == ErrorCode::StaleBuild)
    });
    let error = render().expect_err("stale");
    assert!(error.to_string().contains("$.mood"), "{error}");
    let at = error.diagnostics()[0].location.as_ref().expect("located");
    assert_eq!(
        (at.path().ends_with("system.md"), at.line()),
        (true, 5),
        "{error}"
    );
}
