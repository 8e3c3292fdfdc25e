//! The case format: a prompt folder in one text, the format of
//! `tests/inputs/*.txt`, so that the fixtures are the fuzz targets' seed
//! corpus.
//!
//! ```text
//! --- templates/<id>/system.md
//! body, taken byte for byte up to the next header line
//! --- templates/<id>/user.md
//! --- snippets/<name>.md   (or snippets/<folder>/<name>.md)
//! --- vars
//! {"name": "Ada"}
//! --- options
//! delimiters << >>
//! ```
//!
//! Unlike the fixture harness, bodies keep their line endings exactly (CR,
//! BOM and all), unknown sections are ignored, and an input without any
//! header is one template, `templates/t/system.md`.

use promptpack_core::syntax::{Delimiters, Item, parse};
use promptpack_core::{SnippetSource, SourceFile, TemplateSource};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A prompt folder held in memory.
#[derive(Debug, Default)]
pub struct Case {
    /// Template folders, in input order; a folder without `system.md` is dropped.
    pub templates: Vec<TemplateSource>,
    /// Snippets, in input order (duplicates kept: the library must report them).
    pub snippets: Vec<SnippetSource>,
    /// The `vars` section as a JSON object (empty when absent or not an object).
    pub vars: Map<String, Value>,
    /// From `delimiters OPEN CLOSE` in `options`, when valid; else the default.
    pub delimiters: Delimiters,
}

impl Case {
    /// Every file's text by path, for checking diagnostic locations.
    pub fn files(&self) -> HashMap<String, String> {
        let mut files = HashMap::new();
        for t in &self.templates {
            for f in std::iter::once(&t.system).chain(&t.user) {
                files.insert(f.path().to_string(), f.text().to_string());
            }
        }
        for s in &self.snippets {
            files.insert(s.file.path().to_string(), s.file.text().to_string());
        }
        files
    }
}

/// Reads a case; see the module documentation.
pub fn parse_case(input: &str) -> Case {
    let mut sections: Vec<(&str, String)> = Vec::new();
    for line in input.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("--- ") {
            sections.push((header.trim_end_matches(['\n', '\r']), String::new()));
        } else if let Some((_, body)) = sections.last_mut() {
            body.push_str(line);
        }
    }
    if sections.is_empty() {
        sections.push(("templates/t/system.md", input.to_string()));
    }
    let mut case = Case::default();
    let mut parts: Vec<(String, Option<String>, Option<String>)> = Vec::new();
    for (header, body) in sections {
        let header = header.trim();
        if header == "vars" {
            if let Ok(Value::Object(map)) = serde_json::from_str(&body) {
                case.vars = map;
            }
        } else if header == "options" {
            for line in body.lines() {
                let words: Vec<&str> = line.split_whitespace().collect();
                if let ["delimiters", open, close] = words.as_slice()
                    && let Ok(d) = Delimiters::new(open, close)
                {
                    case.delimiters = d;
                }
            }
        } else if let Some(rest) = header.strip_prefix("templates/") {
            let Some((id, file)) = rest.rsplit_once('/') else {
                continue;
            };
            let index = match parts.iter().position(|p| p.0 == id) {
                Some(i) => i,
                None => {
                    parts.push((id.to_string(), None, None));
                    parts.len() - 1
                }
            };
            match file {
                "system.md" => parts[index].1 = Some(body),
                "user.md" => parts[index].2 = Some(body),
                _ => {}
            }
        } else if let Some(name) = header
            .strip_prefix("snippets/")
            .and_then(|n| n.strip_suffix(".md"))
        {
            // As on disk: one file per path, named by its stem (so that
            // `snippets/x.md` and `snippets/sub/x.md` are a duplicate).
            if case.snippets.iter().any(|s| s.file.path() == header) {
                continue;
            }
            let name = name.rsplit('/').next().unwrap_or(name);
            case.snippets.push(SnippetSource {
                name: name.to_string(),
                file: SourceFile::new(header, body),
            });
        }
    }
    for (id, system, user) in parts {
        let Some(system) = system else { continue };
        case.templates.push(TemplateSource {
            system: SourceFile::new(format!("templates/{id}/system.md"), system),
            user: user.map(|u| SourceFile::new(format!("templates/{id}/user.md"), u)),
            id,
        });
    }
    case
}

/// The size of the fully expanded templates (every snippet spliced in every
/// place it is included), saturating. Snippets that include one another a
/// few times in a chain expand exponentially (a "billion laughs"); targets
/// skip such inputs rather than spend the time and memory.
pub fn expanded_size(case: &Case) -> usize {
    let mut refs: HashMap<&str, (usize, Vec<String>)> = HashMap::new();
    for s in &case.snippets {
        refs.entry(s.name.as_str())
            .or_insert_with(|| (s.file.body().len(), snippet_refs(&s.file, &case.delimiters)));
    }
    let mut memo: HashMap<String, usize> = HashMap::new();
    let mut total = 0usize;
    for t in &case.templates {
        for f in std::iter::once(&t.system).chain(&t.user) {
            let mut size = f.body().len();
            for r in snippet_refs(f, &case.delimiters) {
                size = size.saturating_add(size_of(&r, &refs, &mut memo, 0));
            }
            total = total.saturating_add(size);
        }
    }
    total
}

/// The expanded size of snippet `name`, memoized.
fn size_of(
    name: &str,
    refs: &HashMap<&str, (usize, Vec<String>)>,
    memo: &mut HashMap<String, usize>,
    depth: usize,
) -> usize {
    if let Some(&n) = memo.get(name) {
        return n;
    }
    // Deeper than there are snippets means a cycle: the library rejects it.
    let Some((len, includes)) = refs.get(name).filter(|_| depth <= refs.len()) else {
        return 0;
    };
    let mut size = *len;
    for r in includes {
        size = size.saturating_add(size_of(r, refs, memo, depth + 1));
    }
    memo.insert(name.to_string(), size);
    size
}

/// The snippets `file` includes, in order (none when it does not parse).
fn snippet_refs(file: &SourceFile, delims: &Delimiters) -> Vec<String> {
    match parse(file, delims) {
        Ok(parsed) => parsed
            .items
            .into_iter()
            .filter_map(|i| match i {
                Item::Snippet(include) => Some(include.name.name),
                _ => None,
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_make_a_prompt_folder() {
        let case = parse_case(
            "what it is about\n\
             --- templates/a/user.md\nU\r\n\
             --- templates/a/system.md\nS <<x>>\n\
             --- templates/no-system/user.md\nU\n\
             --- snippets/sub/s.md\nsub\n\
             --- snippets/s.md\ntop\n\
             --- vars\n{\"x\": 1}\n\
             --- options\ndelimiters << >>\n\
             --- unknown\nignored\n",
        );
        assert_eq!(case.templates.len(), 1);
        let a = &case.templates[0];
        assert_eq!((a.id.as_str(), a.system.text()), ("a", "S <<x>>\n"));
        assert_eq!(a.user.as_ref().map(SourceFile::text), Some("U\r\n"));
        let names: Vec<(&str, &str)> = case
            .snippets
            .iter()
            .map(|s| (s.name.as_str(), s.file.path()))
            .collect();
        assert_eq!(names, [("s", "snippets/sub/s.md"), ("s", "snippets/s.md")]);
        assert_eq!(case.vars["x"], 1);
        assert_eq!(case.delimiters.open(), "<<");
        assert_eq!(case.files().len(), 4);
    }

    #[test]
    fn text_without_a_header_is_one_template() {
        let case = parse_case("Hi {{name}}.");
        assert_eq!(case.templates.len(), 1);
        assert_eq!(case.templates[0].system.path(), "templates/t/system.md");
        assert_eq!(case.templates[0].system.text(), "Hi {{name}}.");
        assert_eq!(expanded_size(&case), "Hi {{name}}.".len());
    }
}
