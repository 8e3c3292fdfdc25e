//! What a missing include is told: the snippet meant when the name is a
//! typo away, the headings a snippet has when the section named is none of
//! them.

use crate::error::{Diagnostic, ErrorCode};
use crate::sections::Headings;
use crate::similar::nearest;
use crate::source_file::SourceFile;
use crate::syntax::{Delimiters, Include, Name};

/// `snippet_not_found` for `name`, in `file`; the help names the snippet
/// meant when one of `snippets` (the names that exist) is a typo away.
pub(super) fn snippet_not_found(
    file: &SourceFile,
    name: &Name,
    snippets: &[&str],
    delims: &Delimiters,
) -> Diagnostic {
    let help = match nearest(&name.name, snippets.iter().copied(), 1).first() {
        Some(near) => format!(
            "did you mean `{near}`? Or create `snippets/{}.md`",
            name.name
        ),
        None => format!(
            "create `snippets/{}.md`, or fix the name in `{}snippet:…{}`",
            name.name,
            delims.open(),
            delims.close()
        ),
    };
    Diagnostic::new(
        ErrorCode::SnippetNotFound,
        format!(
            "{} names no file in the snippets folder",
            file.slice(name.span)
        ),
    )
    .at(file.location(name.span))
    .with_help(help)
}

/// The most headings [`section_not_found`] lists.
const HEADINGS_LISTED: usize = 10;

/// `section_not_found` for `include` in `file`, naming the headings that
/// `snippet` (the file of the snippet it names) has, or the one meant when
/// the section is a heading's text written as is (`Usage` for `usage`).
pub(super) fn section_not_found(
    file: &SourceFile,
    include: &Include,
    snippet: &SourceFile,
    headings: &Headings,
    delims: &Delimiters,
) -> Diagnostic {
    let name = &include.name;
    let section = include.section.as_deref().unwrap_or_default();
    let meant = headings
        .find(&crate::sections::slug(section))
        .map(|i| headings.list[i].name());
    let listed: Vec<String> = headings
        .list
        .iter()
        .take(HEADINGS_LISTED)
        .map(|h| format!("`{}`", h.name()))
        .collect();
    let help = match (meant, headings.list.len()) {
        (Some(meant), _) => format!(
            "write `{}snippet:{}#{meant}{}`: a heading is named by its slug, in lowercase, or its `{{#id}}`",
            delims.open(),
            name.name,
            delims.close()
        ),
        (None, 0) => format!(
            "{} has no headings: include it whole, or add a heading",
            snippet.path()
        ),
        (None, n) if n > HEADINGS_LISTED => format!(
            "the headings of {} are {} and {} more",
            snippet.path(),
            listed.join(", "),
            n - HEADINGS_LISTED
        ),
        _ => format!(
            "the headings of {} are {}",
            snippet.path(),
            listed.join(", ")
        ),
    };
    Diagnostic::new(
        ErrorCode::SectionNotFound,
        format!(
            "{}: snippet `{}` has no heading `{section}`",
            file.slice(name.span),
            name.name
        ),
    )
    .at(file.location(name.span))
    .with_help(help)
}
