//! The snippets read once for every template: each parsed, its front
//! matter read, a name defined twice refused.

use crate::error::{Diagnostic, ErrorCode, Location};
use crate::front_matter::{FileRole, FrontMatter, read_front_matter, unused_snippet_vars};
use crate::source_file::SourceFile;
use crate::sources::SnippetSource;
use crate::syntax::Parsed;
use std::collections::HashMap;

/// How a file, or a section of one, is parsed: the same way as every file,
/// under the settings of the set.
pub(super) type Parse<'p> = &'p dyn Fn(&SourceFile) -> Result<Parsed, Vec<Diagnostic>>;

/// A snippet as read: its file, its items when it parsed, its front matter.
pub(super) struct ParsedSnippet<'a> {
    pub(super) file: &'a SourceFile,
    pub(super) parsed: Option<Parsed>,
    pub(super) front_matter: FrontMatter,
}

/// Every snippet by name, the first of two of one name kept. A snippet that
/// does not parse is kept, unparsed, so that its includes are not reported
/// as missing: what is wrong with it is reported once, here.
pub(super) fn read_snippets<'a>(
    snippets: &'a [SnippetSource],
    parse: Parse<'_>,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> HashMap<&'a str, ParsedSnippet<'a>> {
    let mut by_name: HashMap<&str, ParsedSnippet<'_>> = HashMap::new();
    for s in snippets {
        if let Some(first) = by_name.get(s.name.as_str()) {
            errors.push(
                Diagnostic::new(
                    ErrorCode::DuplicateSnippet,
                    format!(
                        "snippet `{}` is defined twice: {} and {}",
                        s.name,
                        first.file.path(),
                        s.file.path()
                    ),
                )
                .at(Location::file(s.file.path())),
            );
            continue;
        }
        let parsed = parse(&s.file).map_err(|e| errors.extend(e)).ok();
        let read = read_front_matter(&s.file, FileRole::Snippet);
        errors.extend(read.errors);
        warnings.extend(read.warnings);
        if let Some(parsed) = &parsed {
            warnings.extend(unused_snippet_vars(&read.front_matter, parsed));
        }
        by_name.insert(
            &s.name,
            ParsedSnippet {
                file: &s.file,
                parsed,
                front_matter: read.front_matter,
            },
        );
    }
    by_name
}
