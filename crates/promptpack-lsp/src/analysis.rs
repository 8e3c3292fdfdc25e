//! What the editor's requests are about: the tree as the editor sees it,
//! the token under the cursor, a prompt's declarations and where each name
//! is used. Everything here reads text in memory; nothing is parsed into a
//! program, so a buffer that does not load yet still answers.

use crate::workspace::{Role, TemplateFile};
use promptpack_core::front_matter::FrontMatter;
use promptpack_core::front_matter::{FileRole, read_front_matter};
use promptpack_core::scan::{Finding, FindingKind, find_tokens};
use promptpack_core::source_file::{SourceFile, Span};
use promptpack_core::sources::{Sources, TemplateSource};
use promptpack_core::syntax::Delimiters;

/// A token of a file, with the byte span of the name it carries.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) finding: Finding,
    /// The variable or snippet the token names, as a span of the file's text.
    pub(crate) name: Option<Span>,
    /// For `{{snippet:x#section}}`, the section's span.
    pub(crate) section: Option<Span>,
    /// For `{{#if x == "value"}}`, the value's span (without its quotes).
    pub(crate) compared: Option<Span>,
}

impl Token {
    /// The name the token carries, in `text` (the file it was found in).
    pub(crate) fn name<'t>(&self, text: &'t str) -> Option<&'t str> {
        self.name.and_then(|s| text.get(s.start..s.end))
    }

    /// Whether the token names a variable (`{{x}}`, `{{#if x}}`, `{{else if x}}`).
    pub(crate) fn is_var(&self) -> bool {
        matches!(
            self.finding.kind,
            FindingKind::Var | FindingKind::If | FindingKind::ElseIf
        )
    }
}

/// Every token of `text`, with the spans of what each names.
pub(crate) fn tokens(text: &str, delims: &Delimiters) -> Vec<Token> {
    find_tokens(text, delims)
        .into_iter()
        .filter(|f| f.kind.is_token())
        .map(|finding| {
            let inner = finding.inner;
            let inner_text = text.get(inner.start..inner.end).unwrap_or("");
            let span_of = |piece: &str| {
                // `piece` is a slice of `inner_text`: its place follows.
                let start = inner.start + (piece.as_ptr() as usize - inner_text.as_ptr() as usize);
                Span {
                    start,
                    end: start + piece.len(),
                }
            };
            let mut token = Token {
                name: finding.name(text).map(span_of),
                section: None,
                compared: None,
                finding,
            };
            match token.finding.kind {
                FindingKind::Snippet => {
                    token.section = inner_text
                        .split_once('#')
                        .map(|(_, section)| span_of(section));
                }
                FindingKind::If | FindingKind::ElseIf => {
                    token.compared = inner_text
                        .split_once(" == ")
                        .map(|(_, value)| value.trim_matches('"'))
                        .map(span_of);
                }
                _ => {}
            }
            token
        })
        .collect()
}

/// The token whose span holds byte `offset` (its closing delimiter's end
/// included, where a cursor stops after typing it).
pub(crate) fn token_at(tokens: &[Token], offset: usize) -> Option<&Token> {
    tokens
        .iter()
        .find(|t| t.finding.span.start <= offset && offset <= t.finding.span.end)
}

/// A file of the tree and the prompt or snippet it belongs to.
pub(crate) struct Place<'s> {
    pub(crate) file: &'s SourceFile,
    pub(crate) role: Role,
}

/// The tree as the editor sees it, for the requests.
pub(crate) struct Tree<'s> {
    pub(crate) sources: &'s Sources,
    pub(crate) delims: &'s Delimiters,
}

impl<'s> Tree<'s> {
    /// The file shown as `shown`, and what it is.
    pub(crate) fn place(&self, shown: &str) -> Option<Place<'s>> {
        for t in &self.sources.templates {
            let files = [
                (Some(&t.system), TemplateFile::System),
                (t.user.as_ref(), TemplateFile::User),
                (t.messages.as_ref(), TemplateFile::Messages),
            ];
            for (file, part) in files {
                if let Some(file) = file.filter(|f| f.path() == shown) {
                    return Some(Place {
                        file,
                        role: Role::Template {
                            id: t.id.clone(),
                            file: part,
                        },
                    });
                }
            }
        }
        self.sources
            .snippets
            .iter()
            .find(|s| s.file.path() == shown)
            .map(|s| Place {
                file: &s.file,
                role: Role::Snippet {
                    name: s.name.clone(),
                },
            })
    }

    /// The template `id`.
    pub(crate) fn template(&self, id: &str) -> Option<&'s TemplateSource> {
        self.sources.templates.iter().find(|t| t.id == id)
    }

    /// The file of snippet `name`.
    pub(crate) fn snippet(&self, name: &str) -> Option<&'s SourceFile> {
        self.sources
            .snippets
            .iter()
            .find(|s| s.name == name)
            .map(|s| &s.file)
    }

    /// The files a name used in `place` belongs with: a template's files
    /// (`system.md` with `user.md` or `messages.md`), or the snippet alone.
    pub(crate) fn scope(&self, place: &Place<'s>) -> Vec<&'s SourceFile> {
        match &place.role {
            Role::Template { id, .. } => self
                .template(id)
                .map(|t| template_files(t).collect())
                .unwrap_or_default(),
            Role::Snippet { .. } => vec![place.file],
        }
    }

    /// The front matter of the files of `scope` together (a template's
    /// files merge; a conflict between them is the check's to report).
    pub(crate) fn front_matter(&self, scope: &[&SourceFile], role: &Role) -> FrontMatter {
        let file_role = match role {
            Role::Template { .. } => FileRole::Template,
            Role::Snippet { .. } => FileRole::Snippet,
        };
        let mut merged = FrontMatter::default();
        let mut conflicts = Vec::new();
        for file in scope {
            merged.merge(
                read_front_matter(file, file_role).front_matter,
                &mut conflicts,
            );
        }
        merged
    }

    /// Every file of the tree: templates' parts, then snippets.
    pub(crate) fn files(&self) -> impl Iterator<Item = &'s SourceFile> {
        self.sources
            .templates
            .iter()
            .flat_map(template_files)
            .chain(self.sources.snippets.iter().map(|s| &s.file))
    }

    /// Every use of variable `name` in `scope`: file and the name's span.
    pub(crate) fn var_uses(
        &self,
        scope: &[&'s SourceFile],
        name: &str,
    ) -> Vec<(&'s SourceFile, Span)> {
        let mut uses = Vec::new();
        for file in scope {
            for token in tokens(file.text(), self.delims) {
                if token.is_var() && token.name(file.text()) == Some(name) {
                    uses.extend(token.name.map(|span| (*file, span)));
                }
            }
        }
        uses
    }

    /// Every include of snippet `name` in the tree: file and the name's span.
    pub(crate) fn includes_of(&self, name: &str) -> Vec<(&'s SourceFile, Span)> {
        let mut found = Vec::new();
        for file in self.files() {
            for token in tokens(file.text(), self.delims) {
                if token.finding.kind == FindingKind::Snippet
                    && token.name(file.text()) == Some(name)
                {
                    found.extend(token.name.map(|span| (file, span)));
                }
            }
        }
        found
    }
}

/// The files of a template folder: `system.md`, then `user.md` or
/// `messages.md`.
pub(crate) fn template_files(t: &TemplateSource) -> impl Iterator<Item = &SourceFile> {
    std::iter::once(&t.system)
        .chain(t.user.as_ref())
        .chain(t.messages.as_ref())
}

/// The byte offset where the heading line of a section starts: the line
/// before the section's first byte.
pub(crate) fn heading_line_start(text: &str, section_start: usize) -> usize {
    let before = text.get(..section_start).unwrap_or(text);
    let before = before.strip_suffix('\n').unwrap_or(before);
    before.rfind('\n').map_or(0, |i| i + 1)
}

/// The part of the front matter block of `file` that `offset` is in, if it
/// is in one.
pub(crate) fn in_front_matter(file: &SourceFile, offset: usize) -> bool {
    file.front_matter()
        .is_some_and(|span| span.start <= offset && offset <= span.end)
}
