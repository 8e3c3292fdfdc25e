//! The case format: a prompt folder in one text, the format of
//! `tests/inputs/*.txt`, so that the fixtures are the fuzz targets' seed
//! corpus. One splitter and one header rule ([`split`], [`section`]), read two
//! ways: leniently by the fuzz targets ([`parse_case`]) and strictly by the
//! fixture harness (`tests/fixtures.rs`, through [`read_fixture`]).
//!
//! ```text
//! what the case is about (ignored)
//! --- templates/<id>/system.md
//! body, taken byte for byte up to the next header line
//! --- templates/<id>/user.md
//! --- templates/<id>/messages.md   (a conversation's turns)
//! --- snippets/<name>.md   (or snippets/<folder>/<name>.md)
//! --- snippets/odd.md escaped
//! `\n`, `\r`, `\t`, `\\` and `\u{XXXX}` in this body name the character
//! --- vars
//! {"name": "Ada"}
//! --- options
//! delimiters << >>
//! ```
//!
//! - A section starts at a line beginning with `--- ` and runs to the next
//!   such line or the end of the text; the header, trimmed, is the path given
//!   to `SourceFile::new` (what diagnostics print), less a final ` escaped`
//!   flag.
//! - [`parse_case`] keeps bodies byte for byte (CR, BOM and all), ignores what
//!   it cannot read, and takes an input without any header as one template,
//!   `templates/t/system.md`: any text is a case for the fuzz targets.
//! - [`read_fixture`] refuses what it cannot read (an unknown section, flag or
//!   escape, a CR outside an escape, a file section twice, a template without
//!   `system.md`), ends a last body that lacks one with a newline, and keeps
//!   the options for the harness to read.

use promptpack_core::syntax::{Delimiters, Item, parse};
use promptpack_core::{SnippetSource, SourceFile, TemplateSource};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

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
            for f in std::iter::once(&t.system).chain(&t.user).chain(&t.messages) {
                files.insert(f.path().to_string(), f.text().to_string());
            }
        }
        for s in &self.snippets {
            files.insert(s.file.path().to_string(), s.file.text().to_string());
        }
        files
    }
}

/// What a section's header names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `templates/<id>/system.md`.
    System(String),
    /// `templates/<id>/user.md`.
    User(String),
    /// `templates/<id>/messages.md`.
    Messages(String),
    /// `templates/<id>/<other>`: a file of a template folder that the prompt
    /// does not read (the fuzz reading keeps the folder's place; the fixture
    /// reading refuses it).
    TemplateOther(String),
    /// `snippets/<name>.md` or `snippets/<folder>/<name>.md`: the name (the file's stem).
    Snippet(String),
    /// `vars`.
    Vars,
    /// `options`.
    Options,
}

/// One section of a case, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The header, trimmed, less its flag: the file's path for a file section.
    pub path: String,
    /// What the header names.
    pub target: Target,
    /// The body, unescaped when the header has the `escaped` flag.
    pub body: String,
}

/// The sections of a case text: each header line (without `--- ` and its line
/// end) and the body after it, byte for byte. Text before the first header is
/// the case's description, dropped.
pub fn split(input: &str) -> Vec<(&str, String)> {
    let mut sections: Vec<(&str, String)> = Vec::new();
    for line in input.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("--- ") {
            sections.push((header.trim_end_matches(['\n', '\r']), String::new()));
        } else if let Some((_, body)) = sections.last_mut() {
            body.push_str(line);
        }
    }
    sections
}

/// Reads one section: what its header names, its body unescaped when it is
/// flagged `escaped`; an error for a header that names nothing this format
/// knows, or an escape that does not read.
pub fn section(header: &str, body: String) -> Result<Section, String> {
    let header = header.trim();
    let (path, escaped) = match header.strip_suffix("escaped") {
        Some(rest) if rest.ends_with(char::is_whitespace) => (rest.trim_end(), true),
        _ => (header, false),
    };
    let target = if path == "vars" {
        Target::Vars
    } else if path == "options" {
        Target::Options
    } else if let Some(rest) = path.strip_prefix("templates/") {
        match rest.rsplit_once('/') {
            Some((id, "system.md")) => Target::System(id.to_string()),
            Some((id, "user.md")) => Target::User(id.to_string()),
            Some((id, "messages.md")) => Target::Messages(id.to_string()),
            Some((id, _)) => Target::TemplateOther(id.to_string()),
            None => return Err(format!("unknown section `--- {header}`")),
        }
    } else if let Some(name) = path
        .strip_prefix("snippets/")
        .and_then(|n| n.strip_suffix(".md"))
    {
        // As on disk: named by the file's stem, whatever its folder.
        Target::Snippet(name.rsplit('/').next().unwrap_or(name).to_string())
    } else {
        return Err(format!("unknown section `--- {header}`"));
    };
    let body = if escaped { unescape(&body)? } else { body };
    Ok(Section {
        path: path.to_string(),
        target,
        body,
    })
}

/// The file name of a section's path: what follows its last `/`.
fn target_file(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The body of an `escaped` section with `\n`, `\r`, `\t`, `\\` and
/// `\u{XXXX}` replaced by the character they name.
fn unescape(body: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let rest = chars.as_str();
                let hex = rest
                    .strip_prefix('{')
                    .and_then(|r| r.split_once('}'))
                    .map(|(hex, _)| hex)
                    .ok_or("bad \\u escape")?;
                let code = u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("bad \\u{{{hex}}}"))?;
                out.push(code);
                chars = rest[hex.len() + 2..].chars();
            }
            other => return Err(format!("unknown escape \\{other:?}")),
        }
    }
    Ok(out)
}

/// Reads a case leniently, for the fuzz targets; see the module documentation.
pub fn parse_case(input: &str) -> Case {
    let mut sections = split(input);
    if sections.is_empty() {
        sections.push(("templates/t/system.md", input.to_string()));
    }
    let mut case = Case::default();
    // Each template's id and the bodies of its system, user and messages
    // files.
    type Bodies = (String, Option<String>, Option<String>, Option<String>);
    let mut parts: Vec<Bodies> = Vec::new();
    for (header, body) in sections {
        let Ok(Section { path, target, body }) = section(header, body) else {
            continue;
        };
        match target {
            Target::Vars => {
                if let Ok(Value::Object(map)) = serde_json::from_str(&body) {
                    case.vars = map;
                }
            }
            Target::Options => {
                for line in body.lines() {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    if let ["delimiters", open, close] = words.as_slice()
                        && let Ok(d) = Delimiters::new(open, close)
                    {
                        case.delimiters = d;
                    }
                }
            }
            Target::System(id)
            | Target::User(id)
            | Target::Messages(id)
            | Target::TemplateOther(id) => {
                let index = match parts.iter().position(|p| p.0 == id) {
                    Some(i) => i,
                    None => {
                        parts.push((id, None, None, None));
                        parts.len() - 1
                    }
                };
                match target_file(&path) {
                    "system.md" => parts[index].1 = Some(body),
                    "user.md" => parts[index].2 = Some(body),
                    "messages.md" => parts[index].3 = Some(body),
                    _ => {}
                }
            }
            Target::Snippet(name) => {
                // As on disk: one file per path (so that `snippets/x.md` and
                // `snippets/sub/x.md` are a duplicate, and `snippets/x.md`
                // twice is one file).
                if case.snippets.iter().any(|s| s.file.path() == path) {
                    continue;
                }
                case.snippets.push(SnippetSource {
                    name,
                    file: SourceFile::new(path, body),
                });
            }
        }
    }
    for (id, system, user, messages) in parts {
        let Some(system) = system else { continue };
        case.templates.push(TemplateSource {
            system: SourceFile::new(format!("templates/{id}/system.md"), system),
            user: user.map(|u| SourceFile::new(format!("templates/{id}/user.md"), u)),
            messages: messages.map(|m| SourceFile::new(format!("templates/{id}/messages.md"), m)),
            id,
        });
    }
    case
}

/// A case file read strictly, for the fixture harness: the prompt folder, and
/// the `vars` and `options` sections as written, for the harness to read.
#[derive(Debug, Default)]
pub struct Fixture {
    /// Templates by id (sorted), each a [`TemplateSource`].
    pub templates: BTreeMap<String, TemplateSource>,
    /// Snippets, in case-file order (duplicate names kept).
    pub snippets: Vec<SnippetSource>,
    /// The `vars` section's body, when there is one.
    pub vars: Option<String>,
    /// The `options` lines, trimmed, blank lines and `#` comments left out.
    pub options: Vec<String>,
}

/// Reads a fixture case file strictly; see the module documentation. The
/// error says what is wrong, for the harness to show with the file's path.
pub fn read_fixture(text: &str) -> Result<Fixture, String> {
    if text.contains('\r') {
        return Err("write CR as \\r in an escaped section".into());
    }
    let sections = split(text);
    if sections.is_empty() {
        return Err("no sections".into());
    }
    type Files = (Option<SourceFile>, Option<SourceFile>, Option<SourceFile>);
    let mut files: BTreeMap<String, Files> = BTreeMap::new();
    let mut fixture = Fixture::default();
    for (header, mut body) in sections {
        // Every body line ends in a newline, the file's last line too.
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        let Section { path, target, body } = section(header, body)?;
        match target {
            Target::Vars => fixture.vars = Some(body),
            Target::Options => fixture.options.extend(
                body.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(String::from),
            ),
            Target::System(id) | Target::User(id) | Target::Messages(id) if !id.contains('/') => {
                let entry = files.entry(id).or_default();
                let slot = match target_file(&path) {
                    "system.md" => &mut entry.0,
                    "user.md" => &mut entry.1,
                    _ => &mut entry.2,
                };
                if slot.is_some() {
                    return Err(format!("`{path}` twice"));
                }
                *slot = Some(SourceFile::new(&path, body));
            }
            Target::Snippet(name) if path == format!("snippets/{name}.md") => {
                fixture.snippets.push(SnippetSource {
                    name,
                    file: SourceFile::new(&path, body),
                });
            }
            _ => return Err(format!("unknown section `--- {header}`")),
        }
    }
    for (id, (system, user, messages)) in files {
        let system = system.ok_or_else(|| format!("template `{id}` has no system.md section"))?;
        let template = TemplateSource {
            id: id.clone(),
            system,
            user,
            messages,
        };
        fixture.templates.insert(id, template);
    }
    Ok(fixture)
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
    /// The fixture harness and the fuzz targets read every fixture alike: the
    /// same templates, snippets, values and delimiters. The two differences
    /// are on purpose: the newline the fixture reading gives a last body that
    /// lacks one, and a snippet path given twice, which the fixture reading
    /// passes on twice (the API's duplicate) and the fuzz reading once (a
    /// folder holds one file per path).
    #[test]
    fn both_readings_agree_on_every_fixture() {
        let inputs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/inputs");
        let mut paths: Vec<_> = std::fs::read_dir(&inputs)
            .expect("tests/inputs")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        paths.sort();
        assert!(paths.len() > 50, "only {} fixtures", paths.len());
        let ended = |text: &str| {
            if text.is_empty() || text.ends_with('\n') {
                text.to_string()
            } else {
                format!("{text}\n")
            }
        };
        for path in paths {
            let name = path.display();
            let text = std::fs::read_to_string(&path).expect("UTF-8");
            let fixture = read_fixture(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let case = parse_case(&text);
            let templates: BTreeMap<&str, (String, Option<String>)> = case
                .templates
                .iter()
                .map(|t| {
                    let text = |f: &SourceFile| (f.path().to_string(), ended(f.text()));
                    let user = t.user.as_ref().map(|u| text(u).1);
                    (t.id.as_str(), (text(&t.system).1, user))
                })
                .collect();
            let expected: BTreeMap<&str, (String, Option<String>)> = fixture
                .templates
                .iter()
                .map(|(id, t)| {
                    let user = t.user.as_ref().map(|u| u.text().to_string());
                    (id.as_str(), (t.system.text().to_string(), user))
                })
                .collect();
            assert_eq!(templates, expected, "{name}: templates");
            let snippets = |list: &[SnippetSource]| -> Vec<(String, String, String)> {
                list.iter()
                    .map(|s| {
                        (
                            s.name.clone(),
                            s.file.path().to_string(),
                            ended(s.file.text()),
                        )
                    })
                    .collect()
            };
            let mut once = snippets(&fixture.snippets);
            let mut paths = std::collections::HashSet::new();
            once.retain(|(_, path, _)| paths.insert(path.clone()));
            assert_eq!(snippets(&case.snippets), once, "{name}: snippets");
            let vars = match fixture.vars.as_deref().map(serde_json::from_str::<Value>) {
                Some(Ok(Value::Object(map))) => map,
                _ => Map::new(),
            };
            assert_eq!(case.vars, vars, "{name}: vars");
            let delimiters = fixture.options.iter().find_map(|o| {
                match o.split_whitespace().collect::<Vec<_>>().as_slice() {
                    ["delimiters", open, close] => Delimiters::new(open, close).ok(),
                    _ => None,
                }
            });
            let delimiters = delimiters.unwrap_or_default();
            assert_eq!(
                (case.delimiters.open(), case.delimiters.close()),
                (delimiters.open(), delimiters.close()),
                "{name}: delimiters"
            );
        }
    }

    #[test]
    fn the_fixture_reading_refuses_what_it_cannot_read() {
        for (text, error) in [
            ("no header", "no sections"),
            ("--- templates/a/system.md\nA\r\n", "write CR as \\r"),
            (
                "--- templates/a/notes.md\nA\n",
                "unknown section `--- templates/a/notes.md`",
            ),
            ("--- templates/a/b/system.md\nA\n", "unknown section"),
            ("--- snippets/sub/s.md\nS\n", "unknown section"),
            ("--- whatever\n", "unknown section `--- whatever`"),
            (
                "--- templates/a/system.md\nA\n--- templates/a/system.md\nB\n",
                "twice",
            ),
            (
                "--- templates/a/user.md\nU\n",
                "template `a` has no system.md section",
            ),
            ("--- templates/a/system.md escaped\n\\q\n", "unknown escape"),
            (
                "--- templates/a/system.md escaped\n\\u{zz}\n",
                "bad \\u{zz}",
            ),
        ] {
            let got = read_fixture(text).expect_err(text);
            assert!(got.contains(error), "{text:?}: {got}");
        }
    }

    #[test]
    fn escaped_sections_are_unescaped_in_both_readings() {
        let text = "--- templates/a/system.md escaped\nA\\r\\n\\u{FEFF}\\t\\\\";
        let fixture = read_fixture(text).expect("reads");
        assert_eq!(fixture.templates["a"].system.text(), "A\r\n\u{FEFF}\t\\\n");
        let case = parse_case(text);
        assert_eq!(case.templates[0].system.text(), "A\r\n\u{FEFF}\t\\");
    }
}
