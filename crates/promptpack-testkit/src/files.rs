//! Writing a prompt tree (or any files) under a folder, the set-up most tests start with.

use std::path::Path;

/// Writes `text` to `path` under `root`, making its folders; panics naming the file when it
/// cannot (a test's set-up failing is the test's failure).
///
/// A plain save: the file is truncated, then written (editors that save atomically are
/// something else; tests of a file watcher write those by hand).
pub fn write(root: &Path, path: &str, text: &str) {
    write_bytes(root, path, text.as_bytes());
}

/// [`write()`] for bytes that need not be UTF-8 (a test of bad input).
pub fn write_bytes(root: &Path, path: &str, bytes: &[u8]) {
    let path = root.join(path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("creating {}: {e}", parent.display()));
    }
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// Writes every `(path, text)` of `files` under `root` with [`write()`].
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        write(root, path, text);
    }
}

/// Copies the folder `from` to `to` (made if missing), files whose name is in
/// `left_out` excepted at every depth: a fixture tree copied into a scratch
/// folder, where a test may change it.
pub fn copy_tree(from: &Path, to: &Path, left_out: &[&str]) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("creating {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("reading {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("reading {}: {e}", from.display()));
        let (path, target) = (entry.path(), to.join(entry.file_name()));
        if path.is_dir() {
            copy_tree(&path, &target, left_out);
        } else if !left_out.iter().any(|name| entry.file_name() == *name) {
            std::fs::copy(&path, &target)
                .unwrap_or_else(|e| panic!("copying {}: {e}", path.display()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_copies_trees() {
        let dir = std::env::temp_dir().join(format!("promptpack-testkit-{}", std::process::id()));
        write_tree(
            &dir,
            &[("templates/a/system.md", "A"), ("snippets/s.md", "S")],
        );
        write_bytes(&dir, "templates/a/system.md", b"B");
        let read = |p: &str| std::fs::read_to_string(dir.join(p)).expect("read");
        let copy = dir.with_extension("copy");
        copy_tree(&dir, &copy, &["s.md"]);
        let texts = (read("templates/a/system.md"), read("snippets/s.md"));
        let copied = std::fs::read_to_string(copy.join("templates/a/system.md")).ok();
        let left_out = copy.join("snippets/s.md").exists();
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&copy);
        assert_eq!(texts, ("B".to_string(), "S".to_string()));
        assert_eq!((copied.as_deref(), left_out), (Some("B"), false));
    }
}
