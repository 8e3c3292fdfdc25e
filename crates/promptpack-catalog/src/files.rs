//! The catalog's edges to a prompt tree on disk: `import` reads one through
//! the one load pipeline and writes it as the next version of each prompt,
//! verbatim; `export` writes a version back as files.

use crate::catalog::{Catalog, check_name, rows, unchanged};
use crate::compile::{MAX_FILE_BYTES, check_content, check_record, compile_draft};
use crate::hash::text_hash;
use crate::model::{Draft, ImportReport, Imported, Selector, Syntax};
use promptpack_core::contract::Contract;
use promptpack_core::diagnostics::escape_controls;
use promptpack_core::pipeline::Stages;
use promptpack_core::{Error, ErrorCode};
use promptpack_load::Config;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

impl Catalog {
    /// Imports the prompt tree at `root` (`templates/`, `snippets/`,
    /// `promptpack.toml`) in one transaction: each snippet whose text
    /// differs from its newest revision becomes a new revision; each
    /// prompt is created when new, and its files become its next version,
    /// byte for byte, unless they render what its newest version does with
    /// the same pins. `message` is every new version's message.
    ///
    /// # Errors
    /// Every error `promptpack check` reports for the tree (a file past
    /// [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES) is `too_large`, from its
    /// size, unread), `invalid_request` for a NUL byte in a file, the
    /// message or the author, and `contract_violation` against `contract`,
    /// with nothing written;
    /// `not_found` for a prompt of the tree deleted in the catalog. Each
    /// version keeps the tree's syntax (delimiters, standalone tags).
    pub fn import(
        &mut self,
        root: &Path,
        message: &str,
        contract: Option<&Contract>,
    ) -> Result<ImportReport, Error> {
        // The loader refuses a file past the limit from its size, unread.
        let config = Config::load(root)?.with_max_file_bytes(MAX_FILE_BYTES);
        let syntax = Syntax::of(config.settings());
        let tree = promptpack_load::load(&config, Stages::default()).into_result()?;
        let (store, author) = self.parts();
        check_record(author, message)?;
        let mut refused = Vec::new();
        for snippet in &tree.sources.snippets {
            if let Err(error) = check_content(snippet.file.path(), snippet.file.text()) {
                refused.extend(error.into_diagnostics());
            }
        }
        if let Some(error) = Error::from_diagnostics(refused) {
            return Err(error);
        }
        store.write(&mut |tx| {
            let mut report = ImportReport::default();
            for snippet in &tree.sources.snippets {
                let text = snippet.file.text();
                rows::lock_snippet(tx, &snippet.name)?;
                let current = rows::snippet_revision(tx, &snippet.name, None)?;
                let imported = match current {
                    Some(current) if current.text == text => Imported {
                        name: snippet.name.clone(),
                        version: current.revision,
                        written: false,
                    },
                    _ => {
                        let revision = rows::insert_snippet_revision(
                            tx,
                            &snippet.name,
                            text,
                            &text_hash(text),
                            author,
                            message,
                        )?;
                        Imported {
                            name: snippet.name.clone(),
                            version: revision.revision,
                            written: true,
                        }
                    }
                };
                report.snippets.push(imported);
            }
            let snippets = rows::current_snippets(tx)?;
            let mut created = 0;
            for template in &tree.sources.templates {
                let id = template.id.as_str();
                let prompt = match rows::prompt(tx, id, true)? {
                    Some(prompt) => prompt,
                    None => {
                        // Another importer may be adding it: the insert
                        // waits for it, and then the prompt is there.
                        created += usize::from(rows::insert_prompt(tx, id, id, "", author)?.is_some());
                        rows::prompt(tx, id, true)?.ok_or_else(|| rows::no_prompt(id))?
                    }
                };
                if prompt.deleted {
                    return Err(Error::new(
                        ErrorCode::NotFound,
                        format!(
                            "prompt `{id}` is deleted in the catalog: restore it before importing it (`promptpack catalog restore {id}`)"
                        ),
                    ));
                }
                let draft = Draft {
                    system: template.system.text().to_string(),
                    user: template.user.as_ref().map(|u| u.text().to_string()),
                    messages: template.messages.as_ref().map(|m| m.text().to_string()),
                    message: message.to_string(),
                    syntax: syntax.clone(),
                };
                let compiled = compile_draft(id, &draft, &snippets, contract)?;
                let latest = rows::version(tx, id, prompt.latest_version)?;
                let imported = match latest {
                    Some(latest) if unchanged(&latest, &draft, &compiled) => Imported {
                        name: id.to_string(),
                        version: latest.version,
                        written: false,
                    },
                    _ => {
                        let version = rows::insert_version(tx, id, &draft, &compiled, author)?;
                        Imported {
                            name: id.to_string(),
                            version: version.version,
                            written: true,
                        }
                    }
                };
                report.prompts.push(imported);
            }
            if created >= REFRESH_STATISTICS_AFTER {
                tx.refresh_statistics()?;
            }
            Ok(report)
        })
    }

    /// Writes a version of prompt `id` into the prompt tree at `dir`:
    /// `templates/<id>/system.md`, `user.md` or `messages.md` when it has
    /// one, and every
    /// snippet it pins at that revision in `snippets/`, byte for byte. A
    /// file there already must be a regular file of the same text, and is
    /// left as it is. All or nothing: every target is checked before the
    /// first write, every file is written to a temporary file of its own
    /// (created exclusively, never through a link) before the first is
    /// renamed into place, and on any failure what this export created,
    /// files and folders, is removed again. Returns the files, in order.
    ///
    /// # Errors
    /// As [`Catalog::get`]; `already_exists` for a file of other text, or a
    /// file where a folder must be; `outside_root` for a link inside `dir`
    /// where a folder or file would be (nothing is written through one);
    /// `io` for a special file (a FIFO, a device) where a file would be,
    /// and for a file or folder that cannot be read or written; `damaged`
    /// for a prompt id or a pinned snippet name in the store that is not a
    /// name (it would lead out of `dir`).
    pub fn export(
        &mut self,
        id: &str,
        selector: &Selector,
        dir: &Path,
    ) -> Result<Vec<PathBuf>, Error> {
        check_name("prompt id", id)?;
        let version = self.get(id, selector)?;
        let snippets = self.pinned_snippets(&version.pins)?;
        // Names become paths: a name the store holds that is not one (written
        // there by hand) would lead out of `dir`.
        let stored_name = |what: &str, name: &str| {
            check_name(what, name).map_err(|refused| {
                let why = refused
                    .diagnostics()
                    .first()
                    .map(|d| d.message.clone())
                    .unwrap_or_default();
                Error::new(
                    ErrorCode::Damaged,
                    format!(
                        "version {} of prompt `{}` in the catalog: {why}; the store holds what promptpack never writes",
                        version.version,
                        escape_controls(&version.prompt_id)
                    ),
                )
            })
        };
        stored_name("prompt id", &version.prompt_id)?;
        let mut files: Vec<(Vec<String>, &str)> = vec![(
            vec![
                "templates".into(),
                version.prompt_id.clone(),
                "system.md".into(),
            ],
            version.system.as_str(),
        )];
        if let Some(user) = &version.user {
            files.push((
                vec![
                    "templates".into(),
                    version.prompt_id.clone(),
                    "user.md".into(),
                ],
                user,
            ));
        }
        if let Some(messages) = &version.messages {
            files.push((
                vec![
                    "templates".into(),
                    version.prompt_id.clone(),
                    "messages.md".into(),
                ],
                messages,
            ));
        }
        for snippet in &snippets {
            stored_name("snippet name", &snippet.name)?;
            files.push((
                vec!["snippets".into(), format!("{}.md", snippet.name)],
                &snippet.text,
            ));
        }
        // Every check before the first write: a conflict leaves no file.
        let mut writes = Vec::new();
        for (parts, text) in &files {
            if let Some(missing) = inspect(dir, parts, text)? {
                writes.push((parts.as_slice(), missing, *text));
            }
        }
        let mut made = Made::default();
        if let Err(error) = made.write_all(dir, &writes) {
            made.undo();
            return Err(error);
        }
        Ok(files
            .into_iter()
            .map(|(parts, _)| {
                parts
                    .iter()
                    .fold(dir.to_path_buf(), |path, part| path.join(part))
            })
            .collect())
    }
}

/// How many new prompts make an import refresh the planner's statistics:
/// PostgreSQL plans `list` from them, and before autovacuum counts a large
/// import it takes the tables for nearly empty and scans every prompt.
const REFRESH_STATISTICS_AFTER: usize = 100;

/// Looks at where file `parts` (relative to `dir`) goes without following
/// a link or reading anything but a regular file: `None` when it holds
/// `text` already, else the index of the first part missing (from which on
/// folders and the file are to be made).
fn inspect(dir: &Path, parts: &[String], text: &str) -> Result<Option<usize>, Error> {
    let mut path = dir.to_path_buf();
    for (index, part) in parts.iter().enumerate() {
        path.push(part);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some(index)),
            Err(e) => return Err(io_error("read", &path, &e)),
        };
        let file_type = meta.file_type();
        let last = index + 1 == parts.len();
        if file_type.is_symlink() {
            return Err(Error::new(
                ErrorCode::OutsideRoot,
                format!(
                    "{} is a link: export writes nothing through a link inside the folder it writes to; remove it, or export elsewhere",
                    path.display()
                ),
            ));
        }
        if !last && file_type.is_dir() {
            continue;
        }
        if last && file_type.is_file() {
            return if holds(&path, text)? {
                Ok(None)
            } else {
                Err(Error::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "{} exists with other text: export into an empty folder, or remove it",
                        path.display()
                    ),
                ))
            };
        }
        if !last && file_type.is_file() {
            return Err(Error::new(
                ErrorCode::AlreadyExists,
                format!(
                    "{} is a file, where export needs a folder: export elsewhere, or remove it",
                    path.display()
                ),
            ));
        }
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "{} is {}, not a {}: export reads and writes only regular files and folders",
                path.display(),
                promptpack_load::file_kind(&file_type),
                if last { "regular file" } else { "folder" }
            ),
        ));
    }
    Ok(Some(parts.len()))
}

/// Whether the regular file at `path` holds `text`: a file of another size
/// does not, unread; one of the same size is opened without following a
/// link or waiting (it may have been swapped since it was looked at) and
/// read no further than `text` is long.
fn holds(path: &Path, text: &str) -> Result<bool, Error> {
    let fail = |e: std::io::Error| io_error("read", path, &e);
    let wanted = text.len() as u64;
    if std::fs::symlink_metadata(path).map_err(fail)?.len() != wanted {
        return Ok(false);
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(fail)?;
    let meta = file.metadata().map_err(fail)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "{} is {}, not a regular file: export reads only regular files",
                path.display(),
                promptpack_load::file_kind(&meta.file_type())
            ),
        ));
    }
    let mut existing = Vec::with_capacity(text.len());
    file.take(wanted.saturating_add(1))
        .read_to_end(&mut existing)
        .map_err(fail)?;
    Ok(existing == text.as_bytes())
}

fn io_error(doing: &str, path: &Path, e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::Io,
        format!("cannot {doing} {}: {e}", path.display()),
    )
}

/// Checks that `folder` is a folder and not a link, as it was when the
/// export looked at it.
fn still_a_folder(folder: &Path) -> Result<(), Error> {
    match std::fs::symlink_metadata(folder) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(meta) if meta.file_type().is_symlink() => Err(Error::new(
            ErrorCode::OutsideRoot,
            format!(
                "{} became a link while exporting: export writes nothing through a link inside the folder it writes to",
                folder.display()
            ),
        )),
        Ok(_) => Err(Error::new(
            ErrorCode::AlreadyExists,
            format!(
                "{} is no longer a folder: it changed while exporting",
                folder.display()
            ),
        )),
        Err(e) => Err(io_error("read", folder, &e)),
    }
}

/// What one export has made so far, to be removed again if it fails.
#[derive(Default)]
struct Made {
    /// Folders created, in the order created.
    folders: Vec<PathBuf>,
    /// Temporary files written and not yet renamed: (temporary, target).
    temporaries: Vec<(PathBuf, PathBuf)>,
    /// Files renamed into place.
    placed: Vec<PathBuf>,
}

impl Made {
    /// Writes every file of `writes` (its parts, the first missing one, its
    /// text) to a temporary file, then renames each into place.
    fn write_all(&mut self, dir: &Path, writes: &[(&[String], usize, &str)]) -> Result<(), Error> {
        if writes.is_empty() {
            return Ok(());
        }
        self.make_target(dir)?;
        let real = dir.canonicalize().map_err(|e| io_error("read", dir, &e))?;
        for &(parts, missing, text) in writes {
            let Some((name, folders)) = parts.split_last() else {
                continue;
            };
            let mut folder = dir.to_path_buf();
            for (index, part) in folders.iter().enumerate() {
                folder.push(part);
                if index >= missing {
                    self.make_folder(&folder)?;
                } else {
                    // Looked at before any write; a link swapped in since
                    // is refused as one found then would be.
                    still_a_folder(&folder)?;
                }
            }
            let target = folder.join(name);
            let real_folder = folders
                .iter()
                .fold(real.clone(), |path, part| path.join(part));
            let temporary = write_temporary(&folder, &real_folder, name, text)?;
            self.temporaries.push((temporary, target));
        }
        while let Some((temporary, target)) = self.temporaries.pop() {
            // Checked when inspected; made since, it is not this export's.
            if std::fs::symlink_metadata(&target).is_ok() {
                self.temporaries.push((temporary, target.clone()));
                return Err(Error::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "{} appeared while exporting: export into an empty folder, or remove it",
                        target.display()
                    ),
                ));
            }
            if let Err(e) = std::fs::rename(&temporary, &target) {
                self.temporaries.push((temporary, target.clone()));
                return Err(io_error("write", &target, &e));
            }
            self.placed.push(target);
        }
        Ok(())
    }

    /// Creates the folder exported to, and those above it, where missing.
    fn make_target(&mut self, dir: &Path) -> Result<(), Error> {
        let missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|folder| {
                !folder.as_os_str().is_empty() && std::fs::symlink_metadata(folder).is_err()
            })
            .collect();
        for folder in missing.into_iter().rev() {
            self.make_folder(folder)?;
        }
        Ok(())
    }

    /// Creates `folder`, unless an earlier file of this export did.
    fn make_folder(&mut self, folder: &Path) -> Result<(), Error> {
        match std::fs::create_dir(folder) {
            Ok(()) => {
                self.folders.push(folder.to_path_buf());
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                match std::fs::symlink_metadata(folder) {
                    Ok(meta) if meta.is_dir() && self.folders.iter().any(|f| f == folder) => Ok(()),
                    _ => Err(Error::new(
                        ErrorCode::AlreadyExists,
                        format!(
                            "{} appeared while exporting: export into an empty folder, or remove it",
                            folder.display()
                        ),
                    )),
                }
            }
            Err(e) => Err(io_error("create", folder, &e)),
        }
    }

    /// Removes what this export made, newest first, so that the folder is as
    /// it was. Best effort: what cannot be removed stays.
    fn undo(&mut self) {
        for path in self.placed.drain(..).rev() {
            let _ = std::fs::remove_file(path);
        }
        for (temporary, _) in self.temporaries.drain(..) {
            let _ = std::fs::remove_file(temporary);
        }
        for folder in self.folders.drain(..).rev() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// Writes `text` to a new temporary file beside `name` in `folder`: created
/// exclusively (an existing file or link of its name is never opened) under
/// a name of this process and export, hidden so that the loader and the
/// watcher skip one left by a crash. The file opened must be in
/// `real_folder` (the canonical folder): one that a link swapped in for a
/// folder led elsewhere is removed, unwritten.
fn write_temporary(
    folder: &Path,
    real_folder: &Path,
    name: &str,
    text: &str,
) -> Result<PathBuf, Error> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut attempts = 0;
    loop {
        let serial = NEXT.fetch_add(1, Ordering::Relaxed);
        let temporary = folder.join(format!(
            ".{name}.{}-{serial}.promptpack-tmp",
            std::process::id()
        ));
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary);
        let mut file = match created {
            Ok(file) => file,
            // Left by an earlier process of the same id: take another name.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 100 => {
                attempts += 1;
                continue;
            }
            Err(e) => return Err(io_error("create", &temporary, &e)),
        };
        if let Some(opened) = opened_path(&file)
            && opened.parent() != Some(real_folder)
        {
            drop(file);
            let _ = std::fs::remove_file(&opened);
            return Err(Error::new(
                ErrorCode::OutsideRoot,
                format!(
                    "{} led to {} while exporting: export writes nothing through a link inside the folder it writes to",
                    folder.display(),
                    opened.parent().unwrap_or(&opened).display()
                ),
            ));
        }
        return match file.write_all(text.as_bytes()) {
            Ok(()) => Ok(temporary),
            Err(e) => {
                drop(file);
                let _ = std::fs::remove_file(&temporary);
                Err(io_error("write", &temporary, &e))
            }
        };
    }
}

/// Where the file `file` really is, as the system names it: Linux names the
/// file behind a descriptor exactly. `None` elsewhere, where the folders
/// checked before the write are all there is.
fn opened_path(file: &std::fs::File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::write_temporary;
    use promptpack_core::ErrorCode;

    /// A folder swapped for a link after export looked at it: the temporary
    /// file opened through it is found elsewhere, removed, and nothing is
    /// written there.
    #[test]
    fn a_temporary_opened_through_a_swapped_link_is_removed_unwritten() {
        let dir = tempfile::tempdir().expect("a scratch folder");
        let root = dir.path().canonicalize().expect("canonical");
        let (inside, elsewhere) = (root.join("snippets"), root.join("elsewhere"));
        std::fs::create_dir(&elsewhere).expect("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, &inside).expect("the swapped link");
        let written = write_temporary(&inside, &inside, "s.md", "text");
        let code = written.err().map(|e| e.code());
        assert_eq!(code, Some(ErrorCode::OutsideRoot));
        let left: Vec<_> = std::fs::read_dir(&elsewhere)
            .expect("elsewhere")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
