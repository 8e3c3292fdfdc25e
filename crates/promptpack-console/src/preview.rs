//! A version or a draft compiled and rendered: what the preview, the diff's
//! example renders, the draft check and the API's `render` share. The
//! grammar and the checks are promptpack's own (the pipeline of
//! `promptpack check`), never re-implemented here.

use promptpack::{CatalogVersion, Diagnostic, Library, Prompt};
use promptpack_catalog::{Catalog, CheckedPrompt, Draft, Error, Selector, Version};
use serde_json::{Map, Value};
use std::sync::Arc;

/// `version` judged as a live handle judges it (compiled on its own from
/// its files and the snippet revisions it pins, under its syntax, its hash
/// checked) and made a library; its renders refuse a part longer than
/// `max_render_bytes` (`too_large`) before they allocate.
///
/// # Errors
/// Why the version is refused (`damaged`, a compile error), or the store's.
pub(crate) fn library_of(
    catalog: &mut Catalog,
    version: &Version,
    max_render_bytes: usize,
) -> Result<Library, Error> {
    library_chosen_by(catalog, version, None, max_render_bytes)
}

/// [`library_of`] `version`, which `selector` chose: a label that chose
/// it is named in the library's provenance (and so in its spans).
///
/// # Errors
/// As [`library_of`].
pub(crate) fn library_chosen_by<'a>(
    catalog: &mut Catalog,
    version: &Version,
    selector: impl Into<Option<&'a Selector>>,
    max_render_bytes: usize,
) -> Result<Library, Error> {
    let checked = catalog
        .judge(&version.prompt_id, version.version, None)?
        .into_result()?;
    let label = match selector.into() {
        Some(Selector::Label(label)) => Some(label.as_str()),
        _ => None,
    };
    Ok(named_library(checked, label, max_render_bytes))
}

/// A library of one checked prompt, bounded by `max_render_bytes`, whose
/// renders and reads name the version (their provenance, and their spans
/// with promptpack's `tracing`), and `label` when a label chose it.
fn named_library(checked: CheckedPrompt, label: Option<&str>, max_render_bytes: usize) -> Library {
    let mut version = catalog_version(&checked.version);
    version.label = label.map(Arc::from);
    promptpack::house::catalog_library(vec![checked.prompt], checked.settings.delimiters, version)
        .with_max_render_bytes(max_render_bytes)
}

/// `version` as a prompt's provenance names it, without a label.
fn catalog_version(version: &Version) -> CatalogVersion {
    let mut named = CatalogVersion::new(
        version.prompt_id.as_str(),
        version.version,
        version.content_hash.as_str(),
    );
    let mut pins: Vec<(Arc<str>, u32)> = version
        .pins
        .iter()
        .map(|pin| (Arc::from(pin.snippet.as_str()), pin.revision))
        .collect();
    pins.sort();
    named.pins = Arc::from(pins);
    named
}

/// Renders prompt `id` of `library` with `vars`, strictly: a variable
/// without a value is `missing_var`.
pub(crate) fn render(
    library: &Library,
    id: &str,
    vars: &Map<String, Value>,
) -> Result<Prompt, Error> {
    library.build_prompt(id, vars)
}

/// One declared example of a prompt and what it renders.
pub(crate) struct ExampleRender {
    pub(crate) name: String,
    pub(crate) values: Map<String, Value>,
    pub(crate) rendered: Result<Prompt, Error>,
}

/// Every declared example of prompt `id`, rendered.
pub(crate) fn examples(library: &Library, id: &str) -> Vec<ExampleRender> {
    let Some(front_matter) = library.front_matter(id) else {
        return Vec::new();
    };
    front_matter
        .examples
        .iter()
        .map(|example| {
            let values = front_matter
                .example_values(Some(&example.name))
                .unwrap_or_default();
            let rendered = render(library, id, &values);
            ExampleRender {
                name: example.name.clone(),
                values,
                rendered,
            }
        })
        .collect()
}

/// What `promptpack check` says of a draft of prompt `id`, with the
/// catalog's newest snippets, and the draft compiled when it has no error.
pub(crate) struct DraftCheck {
    pub(crate) errors: Vec<Diagnostic>,
    pub(crate) warnings: Vec<Diagnostic>,
    pub(crate) library: Option<Library>,
}

/// Checks `draft` as the next version of `id` would be checked by the
/// build, without writing anything.
pub(crate) fn check_draft(
    catalog: &mut Catalog,
    id: &str,
    draft: &Draft,
    max_render_bytes: usize,
) -> Result<DraftCheck, Error> {
    let sources = catalog.draft_sources(id, draft)?;
    let config = draft.syntax.config()?;
    let promptpack_build::house::Checked { report, resolved } =
        promptpack_build::house::check_sources(sources, &config);
    let library = report.errors.is_empty().then(|| {
        promptpack::house::library_of(resolved, config.delimiters().clone())
            .with_max_render_bytes(max_render_bytes)
    });
    // The draft's own files only: a lint of a snippet no prompt of this
    // draft's catalog includes is not this draft's business.
    let warnings = report
        .warnings
        .into_iter()
        .filter(|d| {
            d.location
                .as_ref()
                .is_some_and(|at| at.path().starts_with("templates/"))
        })
        .collect();
    Ok(DraftCheck {
        errors: report.errors,
        warnings,
        library,
    })
}
