//! Byte-for-byte conformance with the original TypeScript loader on its real
//! prompt corpus (`../shared/conformance/openmaic`, read in place: it is AGPL
//! data and is never copied into this repository).
//!
//! `PROMPTPACK_CONFORMANCE_DIR` names the corpus; when it is not set the test
//! looks beside the repository. The test is `#[ignore]`d, so that a clone
//! without the corpus shows it did not run (`ignored, needs the OpenMAIC
//! corpus`) instead of a pass; run it with `--include-ignored`, as CI does,
//! and then a missing or incomplete corpus fails it.

use promptpack::Library;
use std::path::PathBuf;

/// The corpus README promises this many golden renders.
const GOLDEN_COUNT: usize = 97;

/// The corpus folder; fails the test when there is none.
fn corpus_dir() -> PathBuf {
    let dir = match std::env::var_os("PROMPTPACK_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/openmaic"),
    };
    assert!(
        dir.is_dir(),
        "the conformance corpus is not at {}: set PROMPTPACK_CONFORMANCE_DIR to the folder \
         holding OpenMAIC's templates/, snippets/ and golden/",
        dir.display()
    );
    dir
}

#[test]
#[ignore = "needs the OpenMAIC corpus (../shared/conformance/openmaic or PROMPTPACK_CONFORMANCE_DIR): run with --include-ignored"]
fn renders_every_golden_byte_for_byte() {
    let dir = corpus_dir();
    let library = Library::load(&dir).unwrap_or_else(|e| panic!("corpus failed to load:\n{e}"));
    let mut goldens: Vec<PathBuf> = std::fs::read_dir(dir.join("golden"))
        .expect("golden folder")
        .map(|e| e.expect("golden entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    goldens.sort();
    assert_eq!(
        goldens.len(),
        GOLDEN_COUNT,
        "the golden folder is incomplete"
    );

    let mut failures = Vec::new();
    for path in &goldens {
        let text = std::fs::read_to_string(path).expect("golden file");
        let golden: serde_json::Value = serde_json::from_str(&text).expect("golden JSON");
        let id = golden["promptId"].as_str().expect("promptId");
        let vars = &golden["variables"];
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        // Only the `partial` sets leave variables out on purpose; every other
        // set must render in strict mode, which also proves strictness costs
        // nothing on complete input.
        let rendered = if name.ends_with("--partial") {
            library.build_prompt_lenient(id, vars)
        } else {
            library.build_prompt(id, vars)
        };
        let prompt = match rendered {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let want_system = golden["output"]["system"].as_str().expect("system");
        let want_user = golden["output"]["user"].as_str().expect("user");
        if prompt.system != want_system {
            failures.push(format!(
                "{name}: system differs\n{}",
                first_difference(&prompt.system, want_system)
            ));
        }
        let user = prompt.user.as_deref().unwrap_or("");
        if user != want_user {
            failures.push(format!(
                "{name}: user differs\n{}",
                first_difference(user, want_user)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} goldens differ:\n{}",
        failures.len(),
        goldens.len(),
        failures.join("\n")
    );
    println!("conformance: {} passed, 0 failed", goldens.len());
}

fn first_difference(got: &str, want: &str) -> String {
    let at = got
        .bytes()
        .zip(want.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let context = |s: &str| {
        let start = s.floor_char_boundary(at.saturating_sub(40));
        let end = s.ceil_char_boundary((at + 40).min(s.len()));
        format!("{:?}", &s[start..end])
    };
    format!(
        "  at byte {at}\n  got:  {}\n  want: {}",
        context(got),
        context(want)
    )
}

/// Front matter must not change a file that has none: every template and
/// snippet of the corpus is read with no block found, its body exactly the
/// JavaScript-style trim of the whole file, and its front matter empty.
#[test]
#[ignore = "needs the OpenMAIC corpus (../shared/conformance/openmaic or PROMPTPACK_CONFORMANCE_DIR): run with --include-ignored"]
fn every_corpus_file_is_read_without_front_matter() {
    let dir = corpus_dir();
    let library = Library::load(&dir).unwrap_or_else(|e| panic!("corpus failed to load:\n{e}"));
    let mut files = 0;
    for entry in walkdir::WalkDir::new(&dir) {
        let entry = entry.expect("corpus entry");
        let path = entry.path();
        let in_prompts =
            path.starts_with(dir.join("templates")) || path.starts_with(dir.join("snippets"));
        if !in_prompts || path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("corpus file");
        let file = promptpack::SourceFile::new(path.display().to_string(), text.clone());
        assert_eq!(
            file.front_matter(),
            None,
            "{} has a front matter block",
            path.display()
        );
        let trimmed =
            text.trim_matches(|c: char| promptpack_core::source_file::is_js_whitespace(c));
        assert_eq!(file.body(), trimmed, "{}", path.display());
        files += 1;
    }
    assert!(
        files > 20,
        "only {files} corpus files found under {}",
        dir.display()
    );
    for id in library.ids() {
        assert_eq!(
            library.front_matter(id),
            Some(&promptpack::FrontMatter::default()),
            "{id}"
        );
    }
}
