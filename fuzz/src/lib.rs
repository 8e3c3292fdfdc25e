//! Shared pieces of the fuzz targets: the case format (the one of
//! `tests/inputs/*.txt`, so the fixtures are the seed corpus), checks that
//! diagnostics point into their files, and a reference evaluator of the
//! template language to compare the library's renderer against.
//!
//! # Case format
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

use promptpack::{Delimiters, Diagnostic, Item, SnippetSource, SourceFile, TemplateSource, parse};
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

/// Panics unless the diagnostic's location lies inside the file it names
/// (a file-level location is line 1, column 1, with an empty line text).
pub fn check_location(d: &Diagnostic, files: &HashMap<String, String>) {
    assert!(!d.to_string().is_empty());
    let Some(loc) = &d.location else {
        return;
    };
    let text = files
        .get(&loc.path)
        .unwrap_or_else(|| panic!("{d}: the path is none of the files"));
    if loc.len == 0 {
        assert_eq!((loc.line, loc.column), (1, 1), "{d}: file-level location");
        assert!(loc.line_text.is_empty(), "{d}: file-level location");
        return;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        loc.line >= 1 && loc.line <= lines.len(),
        "{d}: line out of range"
    );
    let line = lines[loc.line - 1];
    assert!(
        loc.column >= 1 && loc.column <= line.chars().count() + 1,
        "{d}: column out of range"
    );
    let shown = line.trim_start_matches('\u{FEFF}').trim_end_matches('\r');
    assert_eq!(loc.line_text, shown, "{d}: line text");
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

fn snippet_refs(file: &SourceFile, delims: &Delimiters) -> Vec<String> {
    match parse(file, delims) {
        Ok(parsed) => parsed
            .items
            .into_iter()
            .filter_map(|i| match i {
                Item::Snippet(n) => Some(n.name),
                _ => None,
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// What a reference render gives: the text, and the variables a value token
/// reached without a value, in order of first reach.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reference {
    /// The rendered text (missing values written back as tokens).
    pub text: String,
    /// Missing variables.
    pub missing: Vec<String>,
}

/// Renders `file` by the language's definition, written independently of
/// the library: snippets are spliced (trimmed), blocks keep or drop their
/// branches, values are written once, and a missing value leaves its token.
/// Only for inputs the library accepted (no cycles, every block balanced).
pub fn reference_render(
    file: &SourceFile,
    snippets: &[SnippetSource],
    vars: &Map<String, Value>,
    delims: &Delimiters,
    out: &mut Reference,
) {
    let Ok(parsed) = parse(file, delims) else {
        panic!("the library accepted {} but it does not parse", file.path());
    };
    // Per open block: whether its condition held, and whether `else` was seen.
    let mut blocks: Vec<(bool, bool)> = Vec::new();
    let active = |blocks: &[(bool, bool)]| blocks.iter().all(|&(held, in_else)| held != in_else);
    for item in &parsed.items {
        match item {
            Item::If(name) => {
                let held = vars.get(&name.name).is_some_and(promptpack::is_truthy);
                blocks.push((held, false));
            }
            Item::Else(_) => {
                if let Some(top) = blocks.last_mut() {
                    top.1 = true;
                }
            }
            Item::EndIf(_) => {
                blocks.pop();
            }
            _ if !active(&blocks) => {}
            Item::Text(span) => out.text.push_str(file.slice(*span)),
            Item::Var(name) => match vars.get(&name.name) {
                Some(value) => promptpack::write_value(&mut out.text, value),
                None => {
                    if !out.missing.contains(&name.name) {
                        out.missing.push(name.name.clone());
                    }
                    out.text.push_str(&delims.var_token(&name.name));
                }
            },
            Item::Snippet(name) => {
                let snippet = snippets
                    .iter()
                    .find(|s| s.name == name.name)
                    .unwrap_or_else(|| panic!("snippet {} was accepted but is missing", name.name));
                reference_render(&snippet.file, snippets, vars, delims, out);
            }
        }
    }
    assert!(blocks.is_empty(), "unbalanced blocks were accepted");
}

/// Codepoints rustc refuses in doc comments and literals by default.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}
