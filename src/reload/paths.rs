//! Which paths can change the prompts: the folders and settings file a
//! watcher looks at, and the editor junk it ignores.

use promptpack_load::{CONFIG_FILE, Config, is_ignored_name};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Which paths can change the prompts.
pub(super) struct Targets {
    /// `promptpack.toml`, as configured and canonical.
    pub(super) config_files: Vec<PathBuf>,
    /// The templates and snippets folders, as configured and canonical
    /// (some watchers report canonical paths: /private/var on macOS).
    pub(super) dirs: Vec<PathBuf>,
}

impl Targets {
    pub(super) fn new(config: &Config, follows_file: bool) -> Targets {
        let config_files = if follows_file {
            both_forms(&config.root().join(CONFIG_FILE))
        } else {
            Vec::new()
        };
        let dirs = [config.templates(), config.snippets()]
            .into_iter()
            .flat_map(both_forms)
            .collect();
        Targets { config_files, dirs }
    }

    pub(super) fn is_relevant(&self, path: &Path) -> bool {
        if self.config_files.iter().any(|f| f == path) {
            return true;
        }
        for dir in &self.dirs {
            if dir.starts_with(path) {
                // The folder itself, or a folder holding it, came or went.
                return true;
            }
            if let Ok(rest) = path.strip_prefix(dir) {
                return is_prompt_path(rest, path);
            }
        }
        false
    }
}

/// `path` as given and canonical (the nearest existing ancestor resolved,
/// for a path that does not exist).
pub(super) fn both_forms(path: &Path) -> Vec<PathBuf> {
    let mut forms = vec![path.to_path_buf()];
    let canonical = path.ancestors().find_map(|ancestor| {
        let real = ancestor.canonicalize().ok()?;
        let rest = path.strip_prefix(ancestor).ok()?;
        Some(if rest.as_os_str().is_empty() {
            real
        } else {
            real.join(rest)
        })
    });
    if let Some(canonical) = canonical
        && canonical != path
    {
        forms.push(canonical);
    }
    forms
}

/// Whether a change at `rest` (relative to the templates or snippets folder)
/// can change the prompts: a `.md` file, or a folder that may hold some.
/// Editor temp and swap files (`.x.swp`, `x~`, `#x#`, vim's `4913` probe,
/// dotfiles) and other extensions cannot: the loader never reads them.
pub(super) fn is_prompt_path(rest: &Path, full: &Path) -> bool {
    let names: Vec<&OsStr> = rest.iter().collect();
    let Some(last) = names.last().map(|n| n.to_string_lossy()) else {
        return true;
    };
    if names.iter().any(|n| is_ignored_name(&n.to_string_lossy())) {
        return false;
    }
    if last.ends_with(".md") {
        return true;
    }
    if last.contains('.') {
        return false;
    }
    if last.bytes().all(|b| b.is_ascii_digit()) {
        // Vim probes a folder by creating and deleting `4913` (or another
        // number). A template folder may have such a name, and then exists.
        return full.is_dir();
    }
    // No extension: a template folder or a snippet subfolder that came or
    // went (moving one away gives no event for the files inside).
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn junk_is_ignored() {
        let full = Path::new("/nonexistent/templates/x");
        for junk in [
            ".system.md.swp",
            "system.md~",
            "4913",
            ".hidden.md",
            "#system.md#",
            "notes.txt",
            "x.md.tmp",
        ] {
            assert!(
                !is_prompt_path(&Path::new("x").join(junk), &full.join(junk)),
                "{junk}"
            );
        }
        for real in ["system.md", "user.md"] {
            assert!(
                is_prompt_path(&Path::new("x").join(real), &full.join(real)),
                "{real}"
            );
        }
        assert!(is_prompt_path(
            Path::new("new-prompt"),
            Path::new("/nonexistent/templates/new-prompt")
        ));
        assert!(!is_prompt_path(
            Path::new(".git/x.md"),
            Path::new("/nonexistent/templates/.git/x.md")
        ));
    }
}
