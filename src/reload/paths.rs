//! Which paths can change the prompts: the folders and settings file a
//! watcher looks at, and the editor junk it ignores.

use notify_debouncer_full::notify::EventKind;
use notify_debouncer_full::notify::event::{CreateKind, ModifyKind, RemoveKind};
use promptpack_load::{CONFIG_FILE, Config, is_ignored_name};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Which paths can change the prompts.
pub(super) struct Targets<'a> {
    /// `promptpack.toml`, as configured and canonical.
    pub(super) config_files: Vec<PathBuf>,
    /// The templates and snippets folders, as configured and canonical
    /// (some watchers report canonical paths: /private/var on macOS).
    pub(super) dirs: Vec<PathBuf>,
    /// The links under those folders and where they lead, as last found.
    pub(super) links: &'a Links,
}

impl<'a> Targets<'a> {
    pub(super) fn new(config: &Config, follows_file: bool, links: &'a Links) -> Targets<'a> {
        let config_files = if follows_file {
            both_forms(&config.root().join(CONFIG_FILE))
        } else {
            Vec::new()
        };
        let dirs = [config.templates(), config.snippets()]
            .into_iter()
            .flat_map(both_forms)
            .collect();
        Targets {
            config_files,
            dirs,
            links,
        }
    }

    pub(super) fn is_relevant(&self, path: &Path, entry: Entry) -> bool {
        if self.config_files.iter().any(|f| f == path) || self.links.hops.contains(path) {
            // A link's target (or a link on the way to it) lies outside the
            // watched folders, but the loader reads through it.
            return true;
        }
        for dir in &self.dirs {
            if dir.starts_with(path) {
                // The folder itself, or a folder holding it, came or went.
                return true;
            }
            if let Ok(rest) = path.strip_prefix(dir) {
                // A removed link does not say whether it led to a folder.
                return self.links.paths.contains(path) || is_prompt_path(rest, path, entry);
            }
        }
        false
    }
}

/// Longest chain of links followed, as the kernel's own limit (`ELOOP`).
const MAX_HOPS: usize = 40;

/// The links under the templates and snippets folders, and each step of
/// where they lead. The loader reads through links, but a watch on a folder
/// sees changes to the link, not to its target: the targets' folders are
/// watched too, and found again on every re-arm, so that a link pointed
/// elsewhere is followed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Links {
    /// The links themselves.
    pub(super) paths: BTreeSet<PathBuf>,
    /// Every hop of every link's chain, its folder canonical (as a watch on
    /// that folder reports it): every hop of a chain that ends under the
    /// prompt root or the prompt folders, and the hops there of one that
    /// ends elsewhere (which the loader refuses).
    pub(super) hops: BTreeSet<PathBuf>,
}

impl Links {
    /// The links under the prompt folders of `config`, following linked
    /// folders as the loader does, each folder once.
    pub(super) fn find(config: &Config) -> Links {
        let bases: Vec<PathBuf> = [config.root(), config.templates(), config.snippets()]
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        let mut links = Links::default();
        let mut seen = BTreeSet::new();
        let mut folders: Vec<PathBuf> = vec![config.templates().into(), config.snippets().into()];
        while let Some(folder) = folders.pop() {
            // A folder reached twice (through a link, or a loop of links)
            // is listed once.
            let Ok(real) = folder.canonicalize() else {
                continue;
            };
            if !seen.insert(real) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                if is_ignored_name(&entry.file_name().to_string_lossy()) {
                    continue;
                }
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_symlink() {
                    links.follow(&path, &bases);
                }
                if path.is_dir() {
                    folders.push(path);
                }
            }
        }
        links
    }

    /// Records `link` and each hop of its chain. A chain that ends inside
    /// (where the loader reads it) is recorded whole, its hops outside too:
    /// the loader reads through them, so pointing one of them elsewhere, or
    /// editing the target past it, changes the prompts. Of a chain that ends
    /// outside (which the loader refuses), only the hops inside.
    fn follow(&mut self, link: &Path, bases: &[PathBuf]) {
        self.paths.insert(link.to_path_buf());
        let inside = |hop: &Path| {
            hop.parent()
                .is_some_and(|folder| bases.iter().any(|base| folder.starts_with(base)))
        };
        let mut chain: Vec<PathBuf> = Vec::new();
        let mut at = link.to_path_buf();
        for _ in 0..MAX_HOPS {
            let (Ok(target), Some(parent)) = (std::fs::read_link(&at), at.parent()) else {
                break;
            };
            let next = parent.join(target);
            let (Some(folder), Some(name)) = (next.parent(), next.file_name()) else {
                break;
            };
            let Ok(folder) = folder.canonicalize() else {
                break;
            };
            let hop = folder.join(name);
            if chain.contains(&hop) {
                // A loop: the loader gets `ELOOP` here.
                break;
            }
            chain.push(hop.clone());
            at = hop;
        }
        let ends_inside = chain.last().is_some_and(|last| inside(last));
        self.hops
            .extend(chain.into_iter().filter(|hop| ends_inside || inside(hop)));
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

/// What an event says about the entry at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// A folder was created or removed.
    Folder,
    /// A file (or a link) was created or removed.
    File,
    /// Renamed, to or from the path. What is there now does not say what
    /// was moved: a folder renamed away and a file put in its place (a
    /// checkout turning `p/` into `p`) leaves a file.
    Renamed,
    /// Anything else: a change, a poller's event. The path may have been a
    /// folder.
    Unknown,
}

impl Entry {
    pub(super) fn of(kind: &EventKind) -> Entry {
        match kind {
            EventKind::Create(CreateKind::Folder) | EventKind::Remove(RemoveKind::Folder) => {
                Entry::Folder
            }
            EventKind::Create(CreateKind::File)
            | EventKind::Remove(RemoveKind::File)
            | EventKind::Modify(ModifyKind::Data(_)) => Entry::File,
            EventKind::Modify(ModifyKind::Name(_)) => Entry::Renamed,
            _ => Entry::Unknown,
        }
    }
}

/// Whether a change at `rest` (relative to the templates or snippets folder)
/// can change the prompts: one rule with the loader. Nothing under a name
/// the loader ignores (`is_ignored_name` on every component: dotfiles, `x~`,
/// `#x#`); a `.md` file; a folder of any name, which may hold some (moving
/// one in or away gives no event for the files inside). Other files (vim's
/// `4913` probe, `notes.txt`) cannot: the loader never reads them. A path
/// renamed, or gone and whose event does not say what it was, may have been
/// a folder, so it counts.
pub(super) fn is_prompt_path(rest: &Path, full: &Path, entry: Entry) -> bool {
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
    match entry {
        Entry::Folder | Entry::Renamed => true,
        // A new link to a folder is a file to the event, a folder to the
        // loader.
        Entry::File => full.is_dir(),
        Entry::Unknown => std::fs::metadata(full).map_or(true, |meta| meta.is_dir()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Junk is ignored whatever the event says; a `.md` file and a folder
    /// of any name count.
    #[test]
    fn junk_is_ignored() {
        let full = Path::new("/nonexistent/templates/x");
        for entry in [Entry::File, Entry::Folder, Entry::Renamed, Entry::Unknown] {
            for junk in [".system.md.swp", "system.md~", ".hidden.md", "#system.md#"] {
                assert!(
                    !is_prompt_path(&Path::new("x").join(junk), &full.join(junk), entry),
                    "{junk} {entry:?}"
                );
            }
            for real in ["system.md", "user.md", "messages.md"] {
                assert!(
                    is_prompt_path(&Path::new("x").join(real), &full.join(real), entry),
                    "{real} {entry:?}"
                );
            }
            assert!(!is_prompt_path(
                Path::new(".git/x"),
                Path::new("/nonexistent/templates/.git/x"),
                entry
            ));
        }
        for file in ["4913", "notes.txt", "x.md.tmp"] {
            assert!(
                !is_prompt_path(&Path::new("x").join(file), &full.join(file), Entry::File),
                "{file}"
            );
        }
        for folder in ["new-prompt", "v1.2", "4913"] {
            assert!(
                is_prompt_path(Path::new(folder), &full.join(folder), Entry::Folder),
                "{folder}"
            );
            // Moved away: the event does not say it was a folder.
            for entry in [Entry::Renamed, Entry::Unknown] {
                assert!(
                    is_prompt_path(Path::new(folder), &full.join(folder), entry),
                    "{folder}"
                );
            }
        }
    }
}
