//! Reads a prompt folder from disk: finds template folders and snippet files
//! with walkdir, checks they stay inside the root, decodes UTF-8. The only
//! room of the house that reads prompt files.
//!
//! Every file is opened once, without blocking (a FIFO or a terminal would
//! hold the reader, and the reload worker with it, for good), and what was
//! opened is checked before a byte is read: a regular file, inside the root.
//! Checking a path and then opening it again would let a link swapped in
//! between lead anywhere.

use crate::config::Config;
use crate::names::is_ignored_name;
use promptpack_core::error::{Diagnostic, ErrorCode, Location};
use promptpack_core::source_file::{SourceFile, invalid_utf8};
use promptpack_core::sources::{SnippetSource, Sources, TemplateSource};
use promptpack_core::syntax::is_snippet_name;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Reads the templates and snippets `config` points at. Returns what could be
/// read and every problem met on the way.
pub fn read_sources(config: &Config) -> (Sources, Vec<Diagnostic>) {
    let mut reader = Reader {
        config,
        errors: Vec::new(),
        bases: Vec::new(),
        unreadable: Vec::new(),
    };
    reader.bases = [config.root(), config.templates(), config.snippets()]
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut sources = Sources::default();
    reader.read_templates(&mut sources);
    reader.read_snippets(&mut sources);
    sources.unreadable_snippets = reader.unreadable;
    (sources, reader.errors)
}

struct Reader<'a> {
    config: &'a Config,
    errors: Vec<Diagnostic>,
    bases: Vec<PathBuf>,
    /// Snippets that exist but could not be read.
    unreadable: Vec<String>,
}

impl Reader<'_> {
    fn shown(&self, path: &Path) -> String {
        self.config.display_path(path)
    }

    fn error(&mut self, code: ErrorCode, path: &Path, message: String) {
        let location = Location::file(self.shown(path));
        self.errors
            .push(Diagnostic::new(code, message).at(location));
    }

    fn read_templates(&mut self, sources: &mut Sources) {
        let dir = self.config.templates();
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                let message = format!("cannot read the templates folder {}: {e}", dir.display());
                self.error(ErrorCode::Io, dir, message);
                return;
            }
        };
        let mut folders = BTreeMap::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_ignored_name(&name) {
                continue;
            }
            if path.is_dir() {
                folders.insert(name, path);
            } else {
                sources.stray_files.push(self.shown(&path));
            }
        }
        for (id, folder) in folders {
            if !is_snippet_name(&id) {
                let message = format!(
                    "template folder `{id}` is not a valid prompt id: use letters, digits, `_` and `-`, not starting with `-`"
                );
                self.error(ErrorCode::InvalidId, &folder, message);
                continue;
            }
            self.read_template_folder(id, &folder, sources);
        }
    }

    fn read_template_folder(&mut self, id: String, folder: &Path, sources: &mut Sources) {
        match std::fs::read_dir(folder) {
            Ok(entries) => {
                for entry in entries {
                    match entry {
                        Ok(entry) => {
                            let name = entry.file_name();
                            let name = name.to_string_lossy();
                            let read = ["system.md", "user.md", "messages.md"];
                            if !read.contains(&name.as_ref()) && !is_ignored_name(&name) {
                                sources.stray_files.push(self.shown(&entry.path()));
                            }
                        }
                        Err(e) => self.io_error(folder, &e),
                    }
                }
            }
            Err(e) => {
                // Not "has no system.md": say what really went wrong.
                self.io_error(folder, &e);
                return;
            }
        }
        let system_path = folder.join("system.md");
        let Some(system_exists) = self.exists(&system_path) else {
            return;
        };
        if !system_exists {
            let message = format!("template folder `{id}` has no system.md");
            self.errors.push(
                Diagnostic::new(ErrorCode::MissingSystem, message)
                    .at(Location::file(self.shown(folder)))
                    .with_help("every template folder needs a system.md; user.md is optional"),
            );
            return;
        }
        let system = self.read_file(&system_path);
        let (user, user_failed) = self.read_optional(&folder.join("user.md"));
        let (messages, messages_failed) = self.read_optional(&folder.join("messages.md"));
        if let (Some(system), false, false) = (system, user_failed, messages_failed) {
            sources.templates.push(TemplateSource {
                id,
                system,
                user,
                messages,
            });
        }
    }

    /// A template folder's optional file (`user.md`, `messages.md`): the
    /// file when there is one, and whether reading it failed (reported).
    fn read_optional(&mut self, path: &Path) -> (Option<SourceFile>, bool) {
        match self.exists(path) {
            Some(true) => {
                let file = self.read_file(path);
                let failed = file.is_none();
                (file, failed)
            }
            Some(false) => (None, false),
            None => (None, true),
        }
    }

    /// Whether `path` exists: `None` (and an `io` error naming the path)
    /// when that cannot be told, e.g. for want of permission.
    fn exists(&mut self, path: &Path) -> Option<bool> {
        match std::fs::metadata(path) {
            Ok(_) => Some(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(false),
            Err(e) => {
                self.io_error(path, &e);
                None
            }
        }
    }

    fn io_error(&mut self, path: &Path, e: &std::io::Error) {
        let message = format!("cannot read {}: {e}", self.shown(path));
        self.error(ErrorCode::Io, path, message);
    }

    fn read_snippets(&mut self, sources: &mut Sources) {
        let dir = self.config.snippets();
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) => {
                let shown = self.shown(dir);
                let what = if meta.is_file() {
                    "a file"
                } else {
                    file_kind(&meta.file_type())
                };
                let message = format!("{shown} is {what}, where the snippets folder should be");
                let location = Location::file(shown);
                self.errors.push(
                    Diagnostic::new(ErrorCode::Io, message)
                        .at(location)
                        .with_help("snippets are `.md` files in a folder: `snippets/<name>.md`"),
                );
                return;
            }
            // A project without snippets is fine; a missing include says so.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.io_error(dir, &e);
                return;
            }
        }
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let walk = walkdir::WalkDir::new(dir)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            // The watcher's rule: nothing under an ignored name is read.
            .filter_entry(|e| e.depth() == 0 || !is_ignored_name(&e.file_name().to_string_lossy()));
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let path = e.path().unwrap_or(dir).to_path_buf();
                    let dangling = e
                        .io_error()
                        .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound);
                    if dangling && snippet_name(&path).is_none() {
                        // A broken link not named `.md` leads to nothing
                        // that would be read: it is ignored as a file of
                        // that name is (and as the watcher ignores it).
                        continue;
                    }
                    if let Some(name) = snippet_name(&path) {
                        self.unreadable.push(name);
                    }
                    // walkdir's own text names the path again, unshown.
                    let shown = self.shown(&path);
                    let message = match (e.loop_ancestor(), e.io_error()) {
                        (Some(ancestor), _) => {
                            let ancestor = match self.shown(ancestor) {
                                root if root.is_empty() => "the prompt root".to_string(),
                                folder => folder,
                            };
                            format!(
                                "cannot read {shown}: it leads back to {ancestor}, which holds it"
                            )
                        }
                        (None, Some(io)) => format!("cannot read {shown}: {io}"),
                        (None, None) => format!("cannot read {shown}: {e}"),
                    };
                    self.error(ErrorCode::Io, &path, message);
                    continue;
                }
            };
            let path = entry.path();
            // Not only regular files: a FIFO or a device named `x.md` is an
            // error `read_file` reports, not a snippet silently missing.
            if entry.file_type().is_dir() || path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let Some(name) = snippet_name(path) else {
                continue;
            };
            if !is_snippet_name(&name) {
                let message = format!(
                    "snippet file name `{name}` cannot be included: use letters, digits, `_` and `-`, not starting with `-`"
                );
                self.error(ErrorCode::InvalidSnippetName, path, message);
                continue;
            }
            let shown = self.shown(path);
            if let Some(first) = seen.get(&name) {
                let message = format!("snippet `{name}` is defined twice: {first} and {shown}");
                self.error(ErrorCode::DuplicateSnippet, path, message);
                continue;
            }
            seen.insert(name.clone(), shown);
            match self.read_file(path) {
                Some(file) => sources.snippets.push(SnippetSource { name, file }),
                // Its error is reported: an include of it is not "missing".
                None => self.unreadable.push(name),
            }
        }
    }

    /// Reads one file, checking it is a regular file inside the root and is
    /// UTF-8.
    fn read_file(&mut self, path: &Path) -> Option<SourceFile> {
        let shown = self.shown(path);
        let bytes = match read_regular(path, Some(&self.bases), self.config.max_file_bytes()) {
            Ok(bytes) => bytes,
            Err(refused) => {
                let code = match refused {
                    Refused::Outside(_) => ErrorCode::OutsideRoot,
                    Refused::TooLarge(_) => ErrorCode::TooLarge,
                    _ => ErrorCode::Io,
                };
                let mut diagnostic =
                    Diagnostic::new(code, refused.message(&shown)).at(Location::file(shown));
                if let Refused::Special(_) = refused {
                    diagnostic = diagnostic
                        .with_help("promptpack reads only regular files, and links to them");
                }
                self.errors.push(diagnostic);
                return None;
            }
        };
        match String::from_utf8(bytes) {
            Ok(text) => Some(SourceFile::new(shown, text)),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                self.errors
                    .push(invalid_utf8(&shown, e.as_bytes(), valid, "the file"));
                None
            }
        }
    }
}

/// The name a snippet file is included by: its file name without `.md`.
fn snippet_name(path: &Path) -> Option<String> {
    (path.extension()? == "md")
        .then(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))?
}

/// Why a file was not read.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Opening or reading failed.
    Io(std::io::Error),
    /// Not a regular file: what it is instead (`"a FIFO"`).
    Special(&'static str),
    /// Larger than the limit asked for (the limit), before or while read.
    TooLarge(u64),
    /// The file opened is outside the root: where it really is.
    Outside(PathBuf),
    /// The file opened could not be told to be the one checked to be
    /// inside the root: it was replaced while being opened, every time.
    #[cfg_attr(not(unix), allow(dead_code))]
    Moving,
}

impl Refused {
    /// The message of the diagnostic, for a file shown as `shown`.
    pub(crate) fn message(&self, shown: &str) -> String {
        match self {
            Refused::Io(e) => format!("cannot read {shown}: {e}"),
            Refused::Special(what) => format!("{shown} is {what}, not a regular file"),
            Refused::TooLarge(limit) => {
                format!("{shown} holds more than {limit} bytes, the limit set for a prompt file")
            }
            Refused::Outside(real) => format!(
                "{shown} leads to {}, outside the prompt root",
                real.display()
            ),
            Refused::Moving => format!("{shown} kept changing while it was read"),
        }
    }
}

/// Reads the regular file `path` leads to, never blocking on a FIFO or a
/// device and never reading one; with `bases`, only if the file opened is
/// inside one of them (canonical folders); with `limit`, only up to that
/// many bytes, judged by the size before a byte is read.
pub(crate) fn read_regular(
    path: &Path,
    bases: Option<&[PathBuf]>,
    limit: Option<u64>,
) -> Result<Vec<u8>, Refused> {
    // Checked before opening too, so that a link to a device outside is
    // refused without being opened at all (opening some devices acts).
    if let Some(bases) = bases
        && let Ok(real) = path.canonicalize()
        && !inside(&real, bases)
    {
        return Err(Refused::Outside(real));
    }
    let mut file = open_nonblocking(path).map_err(Refused::Io)?;
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::Special(file_kind(&meta.file_type())));
    }
    if let Some(bases) = bases {
        check_opened_inside(&file, &meta, path, bases)?;
    }
    if let Some(limit) = limit
        && meta.len() > limit
    {
        return Err(Refused::TooLarge(limit));
    }
    make_blocking(&file).map_err(Refused::Io)?;
    // The length is a hint: a file that grows while read is read to its
    // end, or to one byte past the limit, which refuses it.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    match limit {
        Some(limit) => {
            let mut bounded = (&mut file).take(limit.saturating_add(1));
            bounded.read_to_end(&mut bytes).map_err(Refused::Io)?;
            if bytes.len() as u64 > limit {
                return Err(Refused::TooLarge(limit));
            }
        }
        None => {
            file.read_to_end(&mut bytes).map_err(Refused::Io)?;
        }
    }
    Ok(bytes)
}

fn inside(real: &Path, bases: &[PathBuf]) -> bool {
    bases.iter().any(|base| real.starts_with(base))
}

/// Opens for reading without waiting: a FIFO opens at once (rather than
/// when a writer comes), and a terminal does not become ours.
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

/// Turns `O_NONBLOCK` off again once the file is known to be regular: on
/// some file systems (mandatory locks, network mounts) a non-blocking read
/// of a regular file can fail with `EAGAIN` instead of waiting its turn.
#[cfg(unix)]
fn make_blocking(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file` for the whole call;
    // F_GETFL and F_SETFL read and set its status flags only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_blocking(_: &File) -> std::io::Result<()> {
    Ok(())
}

/// What a file that is not a regular file is, for a message: the loader's
/// and the catalog's export name special files alike.
pub fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else {
        "a special file"
    }
}

/// Checks that the file `file` (already opened from `path`) is inside one
/// of `bases`: the check is of what was opened, so a link swapped between
/// a check of the path and the opening cannot lead outside.
#[cfg(unix)]
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
fn check_opened_inside(
    file: &File,
    meta: &std::fs::Metadata,
    path: &Path,
    bases: &[PathBuf],
) -> Result<(), Refused> {
    // Linux names the file behind a descriptor: the answer is exact.
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
        if let Ok(real) = std::fs::read_link(proc_path) {
            return if inside(&real, bases) {
                Ok(())
            } else {
                Err(Refused::Outside(real))
            };
        }
    }
    same_file_inside(meta, path, bases)
}

/// Elsewhere (or without /proc): the file opened (`meta`) must be the very
/// file (device and inode) at a canonical path inside the root. A path
/// replaced between the opening and this look is looked at again; one that
/// keeps changing is refused rather than trusted.
#[cfg(unix)]
fn same_file_inside(
    meta: &std::fs::Metadata,
    path: &Path,
    bases: &[PathBuf],
) -> Result<(), Refused> {
    use std::os::unix::fs::MetadataExt;
    for _ in 0..3 {
        let real = path.canonicalize().map_err(Refused::Io)?;
        if !inside(&real, bases) {
            return Err(Refused::Outside(real));
        }
        let there = std::fs::symlink_metadata(&real).map_err(Refused::Io)?;
        if (there.dev(), there.ino()) == (meta.dev(), meta.ino()) {
            return Ok(());
        }
    }
    Err(Refused::Moving)
}

/// Without file identities in stable std, the path checked before opening
/// is all there is.
#[cfg(not(unix))]
fn check_opened_inside(
    _: &File,
    _: &std::fs::Metadata,
    _: &Path,
    _: &[PathBuf],
) -> Result<(), Refused> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::{Refused, read_sources, same_file_inside};
    use crate::config::Config;
    use promptpack_core::error::ErrorCode;
    use std::os::unix::fs::symlink;

    /// The messages of what `read_sources` reports for `root`.
    fn messages(root: &std::path::Path) -> Vec<String> {
        let (_, errors) = read_sources(&Config::new(root));
        errors.into_iter().map(|d| d.message).collect()
    }

    /// A snippets folder that is not a folder says what it is; a link loop
    /// under it names its path once, as shown everywhere else; a broken
    /// link is an error only where a snippet would be read.
    #[test]
    fn special_snippet_entries_are_named_as_they_are() {
        let dir = tempfile::tempdir().expect("a scratch folder");
        let root = dir.path();
        std::fs::create_dir(root.join("templates")).expect("templates");
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("snippets"))
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let found = messages(root);
        assert_eq!(
            found,
            ["snippets is a FIFO, where the snippets folder should be"],
            "{found:?}"
        );

        std::fs::remove_file(root.join("snippets")).expect("remove the FIFO");
        std::fs::create_dir(root.join("snippets")).expect("snippets");
        symlink("l2.md", root.join("snippets/l1.md")).expect("l1");
        symlink("l1.md", root.join("snippets/l2.md")).expect("l2");
        symlink("..", root.join("snippets/up")).expect("up");
        // Broken links: one that would be a snippet, and one that would
        // never be read.
        symlink("nowhere", root.join("snippets/gone.md")).expect("gone");
        symlink("nowhere", root.join("snippets/notes.txt")).expect("notes");
        let found = messages(root);
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found[0].starts_with("cannot read snippets/gone.md: "),
            "{found:?}"
        );
        let found = &found[1..];
        assert!(
            found[0].starts_with("cannot read snippets/l1.md: ")
                && found[0].matches("l1.md").count() == 1,
            "{found:?}"
        );
        assert!(
            found[2].starts_with("cannot read snippets/up: it leads back to "),
            "{found:?}"
        );
    }

    /// A limit on file sizes refuses a larger file as `too_large`, naming
    /// it, and reads the others; without one, any size is read.
    #[test]
    fn a_file_past_the_size_limit_is_too_large() {
        let dir = tempfile::tempdir().expect("a scratch folder");
        let root = dir.path();
        std::fs::create_dir_all(root.join("templates/big")).expect("big");
        std::fs::create_dir_all(root.join("templates/small")).expect("small");
        std::fs::write(root.join("templates/big/system.md"), "12345").expect("big");
        std::fs::write(root.join("templates/small/system.md"), "1234").expect("small");
        let limited = Config::new(root).with_max_file_bytes(4);
        let (sources, errors) = read_sources(&limited);
        let found: Vec<(ErrorCode, String)> =
            errors.iter().map(|d| (d.code, d.message.clone())).collect();
        assert_eq!(
            found,
            [(
                ErrorCode::TooLarge,
                "templates/big/system.md holds more than 4 bytes, the limit set for a prompt file"
                    .to_string()
            )]
        );
        let ids: Vec<&str> = sources.templates.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["small"]);
        let (sources, errors) = read_sources(&Config::new(root));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(sources.templates.len(), 2);
    }

    /// The check used where /proc cannot name an opened file: a link that
    /// led outside when the file was opened and inside when looked at is
    /// the race the check exists for.
    #[test]
    fn the_identity_check_refuses_a_file_other_than_the_one_inside() {
        let dir = tempfile::tempdir().expect("a scratch folder");
        let (root, outside) = (dir.path().join("root"), dir.path().join("secret.md"));
        std::fs::create_dir(&root).expect("the root");
        std::fs::write(&outside, "secret").expect("the secret");
        let inside = root.join("inside.md");
        std::fs::write(&inside, "inside").expect("an inside file");
        let link = root.join("s.md");
        symlink(&inside, &link).expect("a link");
        let bases = [root.canonicalize().expect("canonical")];
        let opened = |p: &std::path::Path| std::fs::metadata(p).expect("metadata");

        assert!(same_file_inside(&opened(&inside), &link, &bases).is_ok());
        // Opened through the link while it led outside, checked after the
        // link was swapped back inside.
        let refused = same_file_inside(&opened(&outside), &link, &bases);
        assert!(matches!(refused, Err(Refused::Moving)), "{refused:?}");
        // The link still leads outside.
        std::fs::remove_file(&link).expect("unlink");
        symlink(&outside, &link).expect("a link");
        let refused = same_file_inside(&opened(&outside), &link, &bases);
        assert!(matches!(refused, Err(Refused::Outside(_))), "{refused:?}");
    }
}
