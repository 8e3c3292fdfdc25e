//! `promptpack catalog publish` and `snippet` read a prompt tree under the
//! catalog's content rules: a file past the size limit `check` applies is
//! refused as `too_large`, as `import` refuses it, and nothing is written.

use std::path::Path;
use std::process::Output;

use crate::support;

/// `promptpack catalog ARGS` in `dir`, on the SQLite catalog `dir/c.db`.
fn catalog(dir: &Path, args: &[&str]) -> Output {
    let db = format!("sqlite:{}", dir.join("c.db").display());
    support::catalog(Some(dir), &db, args)
}

#[test]
fn a_file_past_the_limit_is_refused_by_publish_and_snippet() {
    let dir = tempfile::tempdir().expect("a folder");
    let tree = dir.path().join("tree");
    let big = "a".repeat(usize::try_from(promptpack_catalog::MAX_FILE_BYTES).expect("a size") + 1);
    promptpack_testkit::files::write_tree(
        &tree,
        &[
            ("templates/big/system.md", big.as_str()),
            ("templates/small/system.md", "Hi"),
            ("snippets/big.md", big.as_str()),
        ],
    );
    let init = catalog(dir.path(), &["init"]);
    assert!(init.status.success(), "{init:?}");
    let from = tree.to_string_lossy().into_owned();
    for args in [
        ["publish", "big", "--from", from.as_str(), "-m", "big"],
        ["snippet", "big", "--from", from.as_str(), "-m", "big"],
    ] {
        let output = catalog(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}: {output:?}");
        assert!(stderr.contains("too_large"), "{args:?}: {stderr}");
    }
    let list = catalog(dir.path(), &["list", "--json"]);
    let stdout = String::from_utf8_lossy(&list.stdout);
    assert!(!stdout.contains("big"), "nothing written: {stdout}");
}
