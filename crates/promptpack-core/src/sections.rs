//! Finds one section of a snippet for `{{snippet:name#heading}}`: the text
//! under a heading, up to the next heading of the same or a higher level.
//!
//! Headings are what pulldown-cmark reads as headings (ATX and setext; not
//! a `#` line inside fenced code), in the snippet's body. A heading is named
//! by its GitHub-style slug and, when it has one, by its explicit `{#id}`.

#[cfg(feature = "load")]
use crate::source_file::SourceFile;
use crate::source_file::Span;
#[cfg(feature = "load")]
use std::collections::HashMap;

/// One heading of a snippet and the section under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// Its GitHub-style slug, unique in the snippet (`-1`, `-2` suffixes
    /// told duplicates apart).
    pub slug: String,
    /// Its explicit `{#id}`, when it has one.
    pub id: Option<String>,
    /// 1 for `#`, up to 6 for `######`.
    pub level: u8,
    /// The text after the heading's line(s) up to the next heading of the
    /// same or a higher level, or the end of the body: untrimmed, as offsets
    /// into the file's text.
    pub section: Span,
}

impl Heading {
    /// The name an include is best written with: the explicit id, which
    /// its author chose, else the slug.
    pub fn name(&self) -> &str {
        self.id.as_deref().unwrap_or(&self.slug)
    }
}

/// The headings of one snippet, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headings {
    /// Every heading of the body, in document order.
    pub list: Vec<Heading>,
}

#[cfg(feature = "load")]
impl Headings {
    /// The headings of `file`'s body, with the sections under them. One pass
    /// of pulldown-cmark over the body, whatever the number of headings.
    pub fn of(file: &SourceFile) -> Headings {
        use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
        let body = file.body_span();
        let mut list: Vec<Heading> = Vec::new();
        // Headings whose section is still open, as indices into `list`:
        // their levels increase from the bottom of the stack up.
        let mut open: Vec<usize> = Vec::new();
        let mut slugger = Slugger::default();
        // The heading being read: its level, id, text and where it ends.
        let mut current: Option<(u8, Option<String>, String, usize, usize)> = None;
        let parser = Parser::new_ext(file.body(), Options::ENABLE_HEADING_ATTRIBUTES);
        for (event, range) in parser.into_offset_iter() {
            match event {
                Event::Start(Tag::Heading { level, id, .. }) => {
                    let start = body.start + range.start;
                    let level = level as u8;
                    while let Some(&last) = open.last()
                        && list[last].level >= level
                    {
                        list[last].section.end = start;
                        open.pop();
                    }
                    let id = id.map(|id| id.to_string());
                    current = Some((level, id, String::new(), start, body.start + range.end));
                }
                Event::Text(text) | Event::Code(text) | Event::InlineMath(text) => {
                    if let Some((_, _, heading, ..)) = &mut current {
                        heading.push_str(&text);
                    }
                }
                Event::SoftBreak | Event::HardBreak => {
                    if let Some((_, _, heading, ..)) = &mut current {
                        heading.push(' ');
                    }
                }
                Event::End(TagEnd::Heading(_)) => {
                    if let Some((level, id, text, _, end)) = current.take() {
                        open.push(list.len());
                        list.push(Heading {
                            slug: slugger.slug(&text),
                            id,
                            level,
                            section: Span {
                                start: end,
                                end: body.end,
                            },
                        });
                    }
                }
                _ => {}
            }
        }
        Headings { list }
    }

    /// The heading `name` names: the first with that explicit id, else the
    /// one with that slug (slugs are unique in a snippet).
    pub fn find(&self, name: &str) -> Option<usize> {
        self.list
            .iter()
            .position(|h| h.id.as_deref() == Some(name))
            .or_else(|| self.list.iter().position(|h| h.slug == name))
    }

    /// How many heading levels the snippet uses. Sections of one level do
    /// not overlap, so splicing every section of a snippet walks each of
    /// its bytes at most this many times.
    pub fn levels(&self) -> usize {
        let mut used = [false; 7];
        for h in &self.list {
            used[usize::from(h.level).min(6)] = true;
        }
        used.iter().filter(|&&u| u).count()
    }
}

/// Slugs as GitHub makes them for a file: a slug seen before gets the
/// first `-N` suffix that makes it new.
#[cfg(feature = "load")]
#[derive(Default)]
struct Slugger {
    /// For each slug given out, the last suffix tried for it.
    seen: HashMap<String, usize>,
}

#[cfg(feature = "load")]
impl Slugger {
    fn slug(&mut self, text: &str) -> String {
        let base = slug(text);
        let mut candidate = base.clone();
        while self.seen.contains_key(&candidate) {
            let n = self.seen.entry(base.clone()).or_default();
            *n += 1;
            candidate = format!("{base}-{n}");
        }
        self.seen.insert(candidate.clone(), 0);
        candidate
    }
}

/// The GitHub-style slug of a heading's text: lowercased; every character
/// but letters, digits, spaces, `-` and `_` removed; spaces made `-`.
pub fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[cfg(all(test, feature = "load"))]
mod tests {
    use super::*;

    fn section<'f>(file: &'f SourceFile, name: &str) -> Option<&'f str> {
        let headings = Headings::of(file);
        let found = &headings.list[headings.find(name)?];
        Some(file.slice(file.with_body(found.section).body_span()))
    }

    fn slugs(file: &SourceFile) -> Vec<String> {
        Headings::of(file)
            .list
            .into_iter()
            .map(|h| h.slug)
            .collect()
    }

    #[test]
    fn slugs_like_github() {
        assert_eq!(slug("Hello, World!"), "hello-world");
        assert_eq!(slug("  two  spaces "), "--two--spaces-");
        assert_eq!(slug("a_b-c (d) `e`"), "a_b-c-d-e");
        assert_eq!(slug("Überblick & Café"), "überblick--café");
        assert_eq!(slug("日本語 見出し"), "日本語-見出し");
        assert_eq!(slug("?!"), "");
    }

    #[test]
    fn a_section_ends_at_a_heading_of_its_level_or_higher() {
        let file = SourceFile::new(
            "s.md",
            "# Top\ntop\n## A\na\n### A1\na1\n#### deep\nd\n### A2\na2\n## B\nb\n",
        );
        assert_eq!(section(&file, "a1"), Some("a1\n#### deep\nd"));
        assert_eq!(
            section(&file, "a"),
            Some("a\n### A1\na1\n#### deep\nd\n### A2\na2")
        );
        assert_eq!(section(&file, "a2"), Some("a2"));
        assert_eq!(section(&file, "deep"), Some("d"));
        assert_eq!(section(&file, "b"), Some("b"), "the last runs to the end");
        assert_eq!(section(&file, "top").map(|s| s.ends_with("b")), Some(true));
        assert_eq!(section(&file, "c"), None);
        assert_eq!(Headings::of(&file).levels(), 4);
    }

    #[test]
    fn explicit_ids_name_headings_too() {
        let file = SourceFile::new("s.md", "# Setup {#install}\nsteps\n# Use\nuse it\n");
        assert_eq!(section(&file, "install"), Some("steps"));
        assert_eq!(
            section(&file, "setup"),
            Some("steps"),
            "its slug still works"
        );
        let headings = Headings::of(&file);
        assert_eq!(headings.list[0].name(), "install");
        assert_eq!(headings.list[1].name(), "use");
    }

    #[test]
    fn duplicates_get_suffixes() {
        let file = SourceFile::new(
            "s.md",
            "# Notes\none\n# Notes\ntwo\n# Notes-1\nthree\n# Notes\nfour",
        );
        assert_eq!(slugs(&file), ["notes", "notes-1", "notes-1-1", "notes-2"]);
        assert_eq!(section(&file, "notes"), Some("one"));
        assert_eq!(section(&file, "notes-1"), Some("two"));
        assert_eq!(section(&file, "notes-2"), Some("four"));
    }

    #[test]
    fn a_hash_line_in_fenced_code_is_no_heading() {
        let file = SourceFile::new(
            "s.md",
            "# Shell\n```sh\n# comment\nls\n```\nafter\n# Next\nx",
        );
        assert_eq!(slugs(&file), ["shell", "next"]);
        assert_eq!(
            section(&file, "shell"),
            Some("```sh\n# comment\nls\n```\nafter")
        );
    }

    #[test]
    fn setext_headings_count() {
        let file = SourceFile::new("s.md", "Title\n=====\nintro\n\nPart\n----\npart\n");
        assert_eq!(slugs(&file), ["title", "part"]);
        assert_eq!(section(&file, "title"), Some("intro\n\nPart\n----\npart"));
        assert_eq!(section(&file, "part"), Some("part"));
        // A setext heading's text may run over lines: they join with spaces.
        let file = SourceFile::new("s.md", "Two\nlines\n---\nx");
        assert_eq!(slugs(&file), ["two-lines"]);
    }

    #[test]
    fn crlf_text_maps_to_the_file() {
        let file = SourceFile::new("s.md", "\r\n# One\r\nfirst\r\nline\r\n# Two\r\nsecond\r\n");
        assert_eq!(section(&file, "one"), Some("first\r\nline"));
        assert_eq!(section(&file, "two"), Some("second"));
    }

    #[test]
    fn non_ascii_headings() {
        let file = SourceFile::new("s.md", "# Café Menü\ncafé\n## Über uns\nwir\n");
        assert_eq!(slugs(&file), ["café-menü", "über-uns"]);
        assert_eq!(section(&file, "über-uns"), Some("wir"));
        assert_eq!(section(&file, "café-menü"), Some("café\n## Über uns\nwir"));
    }

    #[test]
    fn offsets_index_the_whole_file_after_front_matter() {
        let file = SourceFile::new("s.md", "---\na: 1\n---\n# H\nbody\n");
        assert_eq!(section(&file, "h"), Some("body"));
        let none = SourceFile::new("s.md", "plain text\n");
        assert!(Headings::of(&none).list.is_empty());
    }
}
