//! Prompt sources held in memory: what a reader hands the pipeline.

use crate::source_file::SourceFile;

/// A template folder's files, as read by a source: `templates/<id>/system.md`
/// and the optional `user.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSource {
    /// The prompt id: the folder name (`agent-system`).
    pub id: String,
    /// `system.md`.
    pub system: SourceFile,
    /// `user.md`, when the folder has one.
    pub user: Option<SourceFile>,
    /// `messages.md`, when the prompt is a conversation: the turns after
    /// the system message (never beside a `user.md`).
    pub messages: Option<SourceFile>,
}

/// A snippet file, `snippets/<name>.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnippetSource {
    /// The name templates include it by.
    pub name: String,
    /// The file.
    pub file: SourceFile,
}

/// Everything read from a prompt folder, ready to be resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// One entry per template folder that has a readable `system.md`.
    pub templates: Vec<TemplateSource>,
    /// Every snippet file.
    pub snippets: Vec<SnippetSource>,
    /// Files in template folders other than `system.md` and `user.md`, and
    /// files directly in the templates folder: never read, worth a warning.
    pub stray_files: Vec<String>,
    /// Names of snippets whose file exists but could not be read (outside
    /// the root, not a regular file, not UTF-8…): the reader reported each
    /// once, so an include of one is not reported again as missing.
    pub unreadable_snippets: Vec<String>,
}

#[cfg(feature = "load")]
impl Sources {
    /// Sources of texts held in memory, at the paths a prompt folder gives
    /// them: each template `(id, text)` a `templates/<id>/system.md`, each
    /// snippet `(name, text)` a `snippets/<name>.md`. For tests and tools
    /// that write prompts in code.
    pub fn from_texts(templates: &[(&str, &str)], snippets: &[(&str, &str)]) -> Sources {
        Sources {
            templates: templates
                .iter()
                .map(|(id, text)| TemplateSource {
                    id: (*id).into(),
                    system: SourceFile::new(format!("templates/{id}/system.md"), *text),
                    user: None,
                    messages: None,
                })
                .collect(),
            snippets: snippets
                .iter()
                .map(|(name, text)| SnippetSource {
                    name: (*name).into(),
                    file: SourceFile::new(format!("snippets/{name}.md"), *text),
                })
                .collect(),
            ..Sources::default()
        }
    }
}
