//! What `publish` and `snippet` read from a prompt tree: one template's
//! files, or one snippet file, verbatim, through promptpack-load's reader,
//! which refuses a file past the catalog's limit from its size, unread.

use promptpack::{Config, Diagnostic, Error, ErrorCode, Location};
use promptpack_catalog::{Draft, MAX_FILE_BYTES, Syntax};

/// Reads the tree as the catalog keeps it: files of at most
/// [`MAX_FILE_BYTES`], a larger one `too_large` (as `import` and `check`
/// refuse it).
fn read_sources(config: &Config) -> (promptpack_core::sources::Sources, Vec<Diagnostic>) {
    let config = config.clone().with_max_file_bytes(MAX_FILE_BYTES);
    promptpack_load::read_sources(&config)
}

/// `templates/<id>/system.md` and `user.md` (or `messages.md`, a
/// conversation) of the tree, verbatim, as a
/// draft with `message`. An id the tree lacks is `unknown_prompt`, naming
/// the folder; a folder that cannot be read, its read errors.
pub(super) fn template(config: &Config, id: &str, message: &str) -> Result<Draft, Error> {
    let (sources, read_errors) = read_sources(config);
    let templates = sources.templates;
    let folder = config.display_path(&config.templates().join(id));
    let known: Vec<String> = templates.iter().map(|t| t.id.clone()).collect();
    let Some(template) = templates.into_iter().find(|t| t.id == id) else {
        // Its folder, or a file of it, could not be read: say why.
        let inside = format!("{folder}/");
        let own: Vec<Diagnostic> = read_errors
            .into_iter()
            .filter(|d| {
                d.location
                    .as_ref()
                    .is_some_and(|l| l.path() == folder || l.path().starts_with(&inside))
            })
            .collect();
        if let Some(error) = Error::from_diagnostics(own) {
            return Err(error);
        }
        let mut diagnostics =
            Error::unknown_prompt(id, known.iter().map(String::as_str)).into_diagnostics();
        for d in &mut diagnostics {
            d.message = format!("the prompt tree has no template `{id}`: no folder {folder}/");
            d.location = Some(Location::file(folder.clone()));
        }
        return Err(Error::from_diagnostics(diagnostics)
            .unwrap_or_else(|| Error::new(ErrorCode::UnknownPrompt, id)));
    };
    Ok(Draft {
        system: template.system.text().to_string(),
        user: template.user.as_ref().map(|u| u.text().to_string()),
        messages: template.messages.as_ref().map(|m| m.text().to_string()),
        message: message.to_string(),
        syntax: Syntax::of(config.settings()),
    })
}

/// The text of snippet `name` of the tree, verbatim. A snippet the tree
/// lacks is `snippet_not_found`; a file that cannot be read, its errors.
pub(super) fn snippet(config: &Config, name: &str) -> Result<String, Error> {
    let (sources, read_errors) = read_sources(config);
    if let Some(snippet) = sources.snippets.iter().find(|s| s.name == name) {
        return Ok(snippet.file.text().to_string());
    }
    let file = format!("{name}.md");
    let own: Vec<Diagnostic> = read_errors
        .into_iter()
        .filter(|d| {
            d.location
                .as_ref()
                .is_some_and(|l| l.path() == file || l.path().ends_with(&format!("/{file}")))
        })
        .collect();
    if let Some(error) = Error::from_diagnostics(own) {
        return Err(error);
    }
    let path = config.display_path(&config.snippets().join(&file));
    Err(Diagnostic::new(
        ErrorCode::SnippetNotFound,
        format!("the prompt tree has no snippet `{name}`: no file {path}"),
    )
    .into())
}
