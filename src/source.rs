//! Reads a prompt folder from disk: finds template folders and snippet files
//! with walkdir, checks they stay inside the root, decodes UTF-8. The only
//! room of the core that touches the file system.

use crate::config::Config;
use crate::error::{Diagnostic, Error, ErrorCode, Location, Result};
use crate::library::Library;
use crate::resolve::{SnippetSource, TemplateSource};
use crate::source_file::{SourceFile, Span};
use crate::syntax::is_snippet_name;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Everything read from a prompt folder, ready to be resolved.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// One entry per template folder that has a readable `system.md`.
    pub templates: Vec<TemplateSource>,
    /// Every snippet file.
    pub snippets: Vec<SnippetSource>,
    /// Files in template folders other than `system.md` and `user.md`, and
    /// files directly in the templates folder: never read, worth a warning.
    pub stray_files: Vec<String>,
}

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

impl Library {
    /// Loads and checks the prompts under `root`: `root/templates`,
    /// `root/snippets` and `root/promptpack.toml` when present.
    pub fn load(root: impl Into<PathBuf>) -> Result<Library> {
        Library::load_config(&Config::load(root)?)
    }

    /// Loads and checks the prompts `config` points at, reporting every
    /// problem, of reading or of the templates, at once.
    pub fn load_config(config: &Config) -> Result<Library> {
        let (sources, mut errors) = read_sources(config);
        let library = Library::from_sources(
            sources.templates,
            sources.snippets,
            config.delimiters_ref().clone(),
        );
        match library {
            Ok(library) if errors.is_empty() => Ok(library),
            Ok(_) => Err(Error::from_diagnostics(errors).unwrap_or_else(unreachable_empty)),
            Err(e) => {
                errors.extend(e.into_diagnostics());
                Err(Error::from_diagnostics(errors).unwrap_or_else(unreachable_empty))
            }
        }
    }
}

fn unreachable_empty() -> Error {
    Error::new(ErrorCode::Io, "loading failed without a reason")
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
        if let Ok(entries) = std::fs::read_dir(folder) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name != "system.md" && name != "user.md" && !name.starts_with('.') {
                    sources.stray_files.push(self.shown(&entry.path()));
                }
            }
        }
        let system_path = folder.join("system.md");
        if !system_path.exists() {
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
        let user = if user_path.exists() {
            self.read_file(&user_path)
        } else {
            None
        };
        let user_failed = user_path.exists() && user.is_none();
        if let (Some(system), false) = (system, user_failed) {
            sources.templates.push(TemplateSource { id, system, user });
        }
    }

    fn read_snippets(&mut self, sources: &mut Sources) {
        let dir = self.config.snippets();
        if !dir.exists() {
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
                let mut location = file.location(Span {
                    start: valid,
                    end: valid,
                });
                location.len = 1;
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
