//! Reads a prompt folder from disk: finds template folders and snippet files
//! with walkdir, checks they stay inside the root, decodes UTF-8. The only
//! room of the house that reads prompt files.

use crate::config::Config;
use promptpack_core::error::{Diagnostic, ErrorCode, Location};
use promptpack_core::source_file::{SourceFile, Span};
use promptpack_core::sources::{SnippetSource, Sources, TemplateSource};
use promptpack_core::syntax::is_snippet_name;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Reads the templates and snippets `config` points at. Returns what could be
/// read and every problem met on the way.
pub fn read_sources(config: &Config) -> (Sources, Vec<Diagnostic>) {
    let mut reader = Reader {
        config,
        errors: Vec::new(),
        bases: Vec::new(),
    };
    reader.bases = [config.root(), config.templates(), config.snippets()]
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut sources = Sources::default();
    reader.read_templates(&mut sources);
    reader.read_snippets(&mut sources);
    (sources, reader.errors)
}

struct Reader<'a> {
    config: &'a Config,
    errors: Vec<Diagnostic>,
    bases: Vec<PathBuf>,
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
            if name.starts_with('.') {
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
                            if name != "system.md" && name != "user.md" && !name.starts_with('.') {
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
        let user_path = folder.join("user.md");
        let (user, user_failed) = match self.exists(&user_path) {
            Some(true) => {
                let user = self.read_file(&user_path);
                let failed = user.is_none();
                (user, failed)
            }
            Some(false) => (None, false),
            None => (None, true),
        };
        if let (Some(system), false) = (system, user_failed) {
            sources.templates.push(TemplateSource { id, system, user });
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
        if self.exists(dir) != Some(true) {
            // A project without snippets is fine; a missing include says so.
            return;
        }
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let walk = walkdir::WalkDir::new(dir)
            .follow_links(true)
            .sort_by_file_name();
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let path = e.path().unwrap_or(dir).to_path_buf();
                    let message = format!("cannot read {}: {e}", path.display());
                    self.error(ErrorCode::Io, &path, message);
                    continue;
                }
            };
            let path = entry.path();
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if !entry.file_type().is_file() || hidden || path.extension().is_none_or(|e| e != "md")
            {
                continue;
            }
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
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
            if let Some(file) = self.read_file(path) {
                sources.snippets.push(SnippetSource { name, file });
            }
        }
    }

    /// Reads one file, checking it is inside the root and is UTF-8.
    fn read_file(&mut self, path: &Path) -> Option<SourceFile> {
        let shown = self.shown(path);
        if let Ok(real) = path.canonicalize()
            && !self.bases.iter().any(|base| real.starts_with(base))
        {
            let message = format!(
                "{shown} leads to {}, outside the prompt root",
                real.display()
            );
            self.error(ErrorCode::OutsideRoot, path, message);
            return None;
        }
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                self.error(ErrorCode::Io, path, format!("cannot read {shown}: {e}"));
                return None;
            }
        };
        match String::from_utf8(bytes) {
            Ok(text) => Some(SourceFile::new(shown, text)),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes();
                // Locate the bad byte in the valid prefix's terms.
                let prefix = String::from_utf8_lossy(&bytes[..valid]).into_owned();
                let file = SourceFile::new(shown.clone(), prefix);
                // One caret: an empty span is shown one character wide.
                let location = file.location(Span {
                    start: valid,
                    end: valid,
                });
                self.errors.push(
                    Diagnostic::new(
                        ErrorCode::InvalidUtf8,
                        format!(
                            "{shown} is not valid UTF-8 (byte 0x{:02x} at offset {valid})",
                            bytes[valid]
                        ),
                    )
                    .at(location)
                    .with_help("save the file as UTF-8"),
                );
                None
            }
        }
    }
}
