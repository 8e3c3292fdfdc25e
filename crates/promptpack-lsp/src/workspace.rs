//! The prompt root the server serves: its settings, what is on disk (read
//! once, again when the editor says files changed), and the tree as the
//! editor sees it, open buffers laid over the files.

use crate::MAX_DOCUMENT_BYTES;
use crate::documents::Documents;
use crate::uri;
use promptpack_build::{CONFIG_FILE, Config, Diagnostic, ErrorCode, Location};
use promptpack_core::source_file::SourceFile;
use promptpack_core::sources::{SnippetSource, Sources, TemplateSource};
use promptpack_core::syntax::is_snippet_name;
use std::path::{Component, Path, PathBuf};

/// What a file is to the prompt tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    /// `templates/<id>/system.md`, `user.md` or `messages.md`.
    Template { id: String, file: TemplateFile },
    /// `snippets/…/<name>.md`.
    Snippet { name: String },
}

/// Which file of a template folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TemplateFile {
    /// `system.md`.
    System,
    /// `user.md`.
    User,
    /// `messages.md`: a conversation's turns, where role tags are blocks.
    Messages,
}

impl TemplateFile {
    /// The file of a template folder named `name`, if it is one.
    fn named(name: &str) -> Option<TemplateFile> {
        match name {
            "system.md" => Some(TemplateFile::System),
            "user.md" => Some(TemplateFile::User),
            "messages.md" => Some(TemplateFile::Messages),
            _ => None,
        }
    }
}

/// The tree as the editor sees it.
#[derive(Clone)]
pub(crate) struct Overlaid {
    /// Templates and snippets, open buffers in place of their files.
    pub(crate) sources: Sources,
    /// What reading the folders met (an unreadable file, a folder that is
    /// not a prompt id), but for the files an open buffer replaces.
    pub(crate) read_errors: Vec<Diagnostic>,
}

/// The prompt root and what is known of it.
pub(crate) struct Workspace {
    config: Config,
    /// What `promptpack.toml` got wrong: the defaults serve meanwhile.
    config_errors: Vec<Diagnostic>,
    /// The folders as last read, with the problems met.
    disk: Option<(Sources, Vec<Diagnostic>)>,
    /// The tree with the buffers laid over it, for one generation of the
    /// buffers: a check and the requests after it share it.
    laid: Option<(u64, Overlaid, Vec<Diagnostic>)>,
}

impl Workspace {
    /// The prompt root at `root`, with its `promptpack.toml` when it has one.
    pub(crate) fn new(root: &Path) -> Workspace {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let (config, config_errors) = match Config::load(&root) {
            Ok(config) => (config.into_absolute(), Vec::new()),
            Err(error) => (Config::new(&root).into_absolute(), error.into_diagnostics()),
        };
        Workspace {
            config,
            config_errors,
            disk: None,
            laid: None,
        }
    }

    /// The settings the tree is read and checked under.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// What `promptpack.toml` got wrong.
    pub(crate) fn config_errors(&self) -> &[Diagnostic] {
        &self.config_errors
    }

    /// Reads the settings again (`promptpack.toml` changed).
    pub(crate) fn reload(&mut self) {
        *self = Workspace::new(self.config.root());
    }

    /// Forgets what was read: the next check reads the folders again.
    pub(crate) fn files_changed(&mut self) {
        self.disk = None;
        self.laid = None;
    }

    /// Whether `path` is the settings file.
    pub(crate) fn is_config(&self, path: &Path) -> bool {
        path == self.config.root().join(CONFIG_FILE)
    }

    /// The absolute path of a file as diagnostics name it (relative to the
    /// root, or absolute outside it).
    pub(crate) fn absolute(&self, shown: &str) -> PathBuf {
        self.config.root().join(shown)
    }

    /// `path` as diagnostics name it.
    pub(crate) fn shown(&self, path: &Path) -> String {
        self.config.display_path(path)
    }

    /// What `path` is to the tree, if anything.
    pub(crate) fn role(&self, path: &Path) -> Option<Role> {
        if path.extension().is_none_or(|e| e != "md") {
            return None;
        }
        if let Ok(inside) = path.strip_prefix(self.config.templates()) {
            let parts: Vec<&str> = inside
                .components()
                .map(|c| match c {
                    Component::Normal(part) => part.to_str().unwrap_or(""),
                    _ => "",
                })
                .collect();
            return match parts.as_slice() {
                [id, file] if is_snippet_name(id) => {
                    TemplateFile::named(file).map(|file| Role::Template {
                        id: (*id).to_string(),
                        file,
                    })
                }
                _ => None,
            };
        }
        if path.starts_with(self.config.snippets()) {
            let name = path.file_stem()?.to_str()?;
            return is_snippet_name(name).then(|| Role::Snippet {
                name: name.to_string(),
            });
        }
        None
    }

    /// The tree with `documents` laid over the files, and the buffers too
    /// large to check, each with its `too_large` diagnostic.
    pub(crate) fn overlaid(&mut self, documents: &Documents) -> (Overlaid, Vec<Diagnostic>) {
        if let Some((generation, overlaid, refused)) = &self.laid
            && *generation == documents.generation()
        {
            return (overlaid.clone(), refused.clone());
        }
        let laid = self.lay_over(documents);
        self.laid = Some((documents.generation(), laid.0.clone(), laid.1.clone()));
        laid
    }

    fn lay_over(&mut self, documents: &Documents) -> (Overlaid, Vec<Diagnostic>) {
        let (mut sources, mut read_errors) = self
            .disk
            .get_or_insert_with(|| promptpack_load::read_sources(&self.config))
            .clone();
        let mut refused = Vec::new();
        for (address, text) in documents.iter() {
            let Some(path) = uri::to_path(address) else {
                continue;
            };
            let Some(role) = self.role(&path) else {
                continue;
            };
            let shown = self.shown(&path);
            if text.len() > MAX_DOCUMENT_BYTES {
                let message = format!(
                    "this buffer is {} bytes, over the {} the language server checks: the file on disk is checked in its place",
                    text.len(),
                    MAX_DOCUMENT_BYTES
                );
                refused
                    .push(Diagnostic::new(ErrorCode::TooLarge, message).at(Location::file(shown)));
                continue;
            }
            read_errors.retain(|d| d.location.as_ref().is_none_or(|l| l.path() != shown));
            let file = SourceFile::new(shown.clone(), text);
            lay_over(&mut sources, role, file);
        }
        sources.templates.sort_by(|a, b| a.id.cmp(&b.id));
        (
            Overlaid {
                sources,
                read_errors,
            },
            refused,
        )
    }
}

/// Puts `file` in `sources` in place of the file it stands for, or as a new
/// one (a buffer not saved yet).
fn lay_over(sources: &mut Sources, role: Role, file: SourceFile) {
    match role {
        Role::Template { id, file: part } => {
            match (sources.templates.iter_mut().find(|t| t.id == id), part) {
                (Some(template), TemplateFile::User) => template.user = Some(file),
                (Some(template), TemplateFile::Messages) => template.messages = Some(file),
                (Some(template), TemplateFile::System) => template.system = file,
                // A `user.md` or `messages.md` alone is no prompt: the
                // folder needs its `system.md` first (as on disk, where a
                // folder without one is `missing_system`).
                (None, TemplateFile::User | TemplateFile::Messages) => {}
                (None, TemplateFile::System) => sources.templates.push(TemplateSource {
                    id,
                    system: file,
                    user: None,
                    messages: None,
                }),
            }
        }
        Role::Snippet { name } => {
            sources.unreadable_snippets.retain(|n| *n != name);
            match sources
                .snippets
                .iter_mut()
                .find(|s| s.file.path() == file.path())
            {
                Some(snippet) => snippet.file = file,
                None => sources.snippets.push(SnippetSource { name, file }),
            }
        }
    }
}
