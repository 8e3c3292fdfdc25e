//! Replays every past fuzz finding as an ordinary test: each file under
//! `fuzz/regressions/<target>/` goes through the body of its cargo-fuzz
//! target (`promptpack_testkit::fuzz_<target>`), which panics on a finding.
//! The test fails naming every file that panicked, and also when there is
//! nothing to replay (the folder missing or empty, a folder that names no
//! target), so that a moved folder cannot make it pass silently. See
//! `fuzz/regressions/README.md`.

use promptpack_testkit::{TARGETS, target};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// The files to replay, by target, sorted; an error for anything that is
/// neither a target's folder, a target's file nor the README.
fn regressions(root: &Path) -> Result<Vec<(String, PathBuf)>, Vec<String>> {
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    let entries = std::fs::read_dir(root)
        .map_err(|e| vec![format!("cannot read {}: {e}", root.display())])?;
    let mut folders: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    folders.sort();
    for folder in folders {
        let name = folder.file_name().unwrap_or_default().to_string_lossy();
        if folder.is_file() && name.ends_with(".md") {
            continue;
        }
        if !folder.is_dir() || target(&name).is_none() {
            problems.push(format!(
                "{}: not the folder of a fuzz target (targets: {})",
                folder.display(),
                TARGETS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            continue;
        }
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&folder) {
            Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => {
                problems.push(format!("cannot read {}: {e}", folder.display()));
                continue;
            }
        };
        files.sort();
        for file in files {
            if file.is_file() {
                cases.push((name.to_string(), file));
            } else {
                problems.push(format!("{}: not a file", file.display()));
            }
        }
    }
    if cases.is_empty() {
        problems.push(format!("{}: no file to replay", root.display()));
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(problems)
    }
}

/// The message a panic carried.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}

#[test]
fn every_regression_replays_without_a_finding() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let cases = regressions(&root).unwrap_or_else(|problems| {
        panic!("fuzz regressions: {}", problems.join("\n"));
    });
    let mut failed = Vec::new();
    for (name, file) in &cases {
        let run = target(name).expect("a target's folder");
        let data =
            std::fs::read(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| run(&data))) {
            let message = panic_message(payload.as_ref());
            let shown: String = message.chars().take(2_000).collect();
            failed.push(format!("{} (target {name}): {shown}", file.display()));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} fuzz regression(s) panicked:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
    eprintln!("replayed {} fuzz regression(s)", cases.len());
}

/// The harness itself: nothing to replay is a failure, never a pass.
#[test]
fn a_missing_empty_or_unknown_folder_fails() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("regressions");
    assert!(regressions(&root).is_err(), "a missing folder");
    std::fs::create_dir_all(root.join("parse")).expect("create parse/");
    std::fs::write(root.join("README.md"), "notes").expect("write README.md");
    assert!(regressions(&root).is_err(), "a folder with no file");
    std::fs::write(root.join("parse/case"), "{{x}}").expect("write parse/case");
    let cases = regressions(&root).expect("one case");
    assert_eq!(cases, vec![("parse".to_string(), root.join("parse/case"))]);
    std::fs::create_dir_all(root.join("prase")).expect("create prase/");
    let problems = regressions(&root).expect_err("a folder that names no target");
    assert!(problems[0].contains("prase"), "{problems:?}");
}
