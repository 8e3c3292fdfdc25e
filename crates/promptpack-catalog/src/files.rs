//! The catalog's edges to a prompt tree on disk: `import` reads one through
//! the one load pipeline and writes it as the next version of each prompt,
//! verbatim; `export` writes a version back as files.

use crate::catalog::{Catalog, rows};
use crate::compile::{Compiled, compile_draft, snippet_path, text_hash};
use crate::model::{Draft, ImportReport, Imported, Selector, Syntax, Version};
use promptpack_core::contract::Contract;
use promptpack_core::pipeline::Stages;
use promptpack_core::{Error, ErrorCode};
use promptpack_load::Config;
use std::path::{Path, PathBuf};

impl Catalog {
    /// Imports the prompt tree at `root` (`templates/`, `snippets/`,
    /// `promptpack.toml`) in one transaction: each snippet whose text
    /// differs from its newest revision becomes a new revision; each
    /// prompt is created when new, and its files become its next version,
    /// byte for byte, unless they render what its newest version does with
    /// the same pins. `message` is every new version's message.
    ///
    /// # Errors
    /// Every error `promptpack check` reports for the tree, and
    /// `contract_violation` against `contract`, with nothing written;
    /// `not_found` for a prompt of the tree deleted in the catalog. Each
    /// version keeps the tree's syntax (delimiters, standalone tags).
    pub fn import(
        &mut self,
        root: &Path,
        message: &str,
        contract: Option<&Contract>,
    ) -> Result<ImportReport, Error> {
        let config = Config::load(root)?;
        let syntax = Syntax::of(config.settings());
        let tree = promptpack_load::load(&config, Stages::default()).into_result()?;
        let (store, author) = self.parts();
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
    /// `templates/<id>/system.md`, `user.md` when it has one, and every
    /// snippet it pins at that revision in `snippets/`, byte for byte. A
    /// file there already must hold the same text. Returns the files, in
    /// the order written.
    ///
    /// # Errors
    /// As [`Catalog::get`]; `already_exists` for a file of other text;
    /// `unavailable` for a file that cannot be written.
    pub fn export(
        &mut self,
        id: &str,
        selector: &Selector,
        dir: &Path,
    ) -> Result<Vec<PathBuf>, Error> {
        let version = self.get(id, selector)?;
        let snippets = self.pinned_snippets(&version.pins)?;
        let mut files: Vec<(PathBuf, &str)> = vec![(
            dir.join("templates").join(id).join("system.md"),
            version.system.as_str(),
        )];
        if let Some(user) = &version.user {
            files.push((dir.join("templates").join(id).join("user.md"), user));
        }
        for snippet in &snippets {
            files.push((dir.join(snippet_path(&snippet.name)), &snippet.text));
        }
        // Every check before the first write: a conflict leaves no file.
        for (path, text) in &files {
            if let Ok(existing) = std::fs::read(path)
                && existing != text.as_bytes()
            {
                return Err(Error::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "{} exists with other text: export into an empty folder, or remove it",
                        path.display()
                    ),
                ));
            }
        }
        for (path, text) in &files {
            write_file(path, text)?;
        }
        Ok(files.into_iter().map(|(path, _)| path).collect())
    }
}

/// How many new prompts make an import refresh the planner's statistics:
/// PostgreSQL plans `list` from them, and before autovacuum counts a large
/// import it takes the tables for nearly empty and scans every prompt.
const REFRESH_STATISTICS_AFTER: usize = 100;

fn unchanged(latest: &Version, draft: &Draft, compiled: &Compiled) -> bool {
    latest.system == draft.system
        && latest.user == draft.user
        && latest.syntax == draft.syntax
        && latest.pins == compiled.pins
}

/// Writes `text` to `path` through a temporary file renamed over it, so
/// that a reader never sees half a file.
fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    let fail = |e: std::io::Error| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".promptpack-tmp");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text).map_err(fail)?;
    std::fs::rename(&temporary, path).map_err(fail)
}
