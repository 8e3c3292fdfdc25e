//! The catalog reads that the JSON API and the pages both make, apart from
//! both so that neither reaches into the other.

use promptpack_catalog::{Catalog, Error, ErrorCode, Selector, SnippetRevision, Syntax};

/// The snippet's revisions, newest first; `not_found` when it has none.
pub(crate) fn snippet_revisions(
    catalog: &mut Catalog,
    name: &str,
) -> Result<Vec<SnippetRevision>, Error> {
    let revisions = catalog.snippet_revisions(name)?;
    if revisions.is_empty() {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("the catalog has no snippet `{name}`"),
        ));
    }
    Ok(revisions)
}

/// The syntax a new version of `id` is written in: its newest version's,
/// the default for a new prompt.
pub(crate) fn syntax_of(catalog: &mut Catalog, id: &str) -> Result<Syntax, Error> {
    match catalog.get(id, &Selector::Latest) {
        Ok(newest) => Ok(newest.syntax),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(Syntax::default()),
        Err(e) => Err(e),
    }
}
