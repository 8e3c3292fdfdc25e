//! Reads the benchmark workload and translates its promptpack template into
//! the syntax of each peer engine.
//!
//! Shared, through `#[path]`, by the build script (which generates the
//! compile-time peers: askama and md-tmpl's macro) and by the bench binary
//! (run-time peers), so it depends on nothing but `std`. It knows only the
//! subset of the language the workload needs: `{{name}}`, `{{snippet:name}}`,
//! `{{#if name}}…{{else}}…{{/if}}`; anything else in braces is text.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The prompt the benchmark renders.
pub const PROMPT_ID: &str = "bench-system";

/// The workload folder: `PROMPTPACK_BENCH_WORKLOAD`, or `shared/bench-workload`
/// beside the repository.
pub fn workload_dir() -> PathBuf {
    match std::env::var_os("PROMPTPACK_BENCH_WORKLOAD") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/bench-workload"
        )),
    }
}

/// JavaScript's `String.prototype.trim` (which also drops a BOM).
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// A token of the template language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Text(String),
    Var(String),
    Snippet(String),
    If(String),
    Else,
    EndIf,
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_snippet_name(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Splits template text into tokens.
pub fn tokenize(text: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut text_start = 0;
    let mut at = 0;
    while let Some(open) = text[at..].find("{{").map(|i| at + i) {
        let Some(close) = text[open + 2..].find("}}").map(|i| open + 2 + i) else {
            break;
        };
        let inner = &text[open + 2..close];
        let tok = if let Some(name) = inner.strip_prefix("snippet:") {
            is_snippet_name(name).then(|| Tok::Snippet(name.to_owned()))
        } else if let Some(name) = inner.strip_prefix("#if ") {
            is_name(name).then(|| Tok::If(name.to_owned()))
        } else if inner == "/if" {
            Some(Tok::EndIf)
        } else if inner == "else" {
            Some(Tok::Else)
        } else {
            is_name(inner).then(|| Tok::Var(inner.to_owned()))
        };
        match tok {
            Some(tok) => {
                if open > text_start {
                    toks.push(Tok::Text(text[text_start..open].to_owned()));
                }
                toks.push(tok);
                at = close + 2;
                text_start = at;
            }
            None => at = open + 1,
        }
    }
    if text_start < text.len() {
        toks.push(Tok::Text(text[text_start..].to_owned()));
    }
    toks
}

/// The workload's template and snippets, trimmed as promptpack reads them.
#[derive(Debug, Clone)]
pub struct Workload {
    pub dir: PathBuf,
    /// `templates/bench-system/system.md`, trimmed.
    pub system: String,
    /// `snippets/*.md` by name, trimmed.
    pub snippets: BTreeMap<String, String>,
}

impl Workload {
    pub fn read(dir: &Path) -> Result<Workload, String> {
        let read = |p: PathBuf| {
            std::fs::read_to_string(&p)
                .map(|t| js_trim(&t).to_owned())
                .map_err(|e| format!("{}: {e}", p.display()))
        };
        let system = read(dir.join("templates").join(PROMPT_ID).join("system.md"))?;
        let mut snippets = BTreeMap::new();
        let snippet_dir = dir.join("snippets");
        let entries = std::fs::read_dir(&snippet_dir)
            .map_err(|e| format!("{}: {e}", snippet_dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|e| e == "md") {
                let name = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                snippets.insert(name, read(path)?);
            }
        }
        Ok(Workload {
            dir: dir.to_owned(),
            system,
            snippets,
        })
    }

    /// Tokens of the system template, snippets left as tokens.
    pub fn tokens(&self) -> Vec<Tok> {
        tokenize(&self.system)
    }

    /// Tokens of a snippet.
    pub fn snippet_tokens(&self, name: &str) -> Result<Vec<Tok>, String> {
        self.snippets
            .get(name)
            .map(|t| tokenize(t))
            .ok_or_else(|| format!("no snippet `{name}`"))
    }

    /// Tokens of the system template with every snippet spliced in
    /// (recursively), adjacent texts merged.
    pub fn inlined(&self) -> Result<Vec<Tok>, String> {
        let mut out = Vec::new();
        self.inline_into(&self.tokens(), &mut out, 0)?;
        Ok(merge_text(out))
    }

    fn inline_into(&self, toks: &[Tok], out: &mut Vec<Tok>, depth: usize) -> Result<(), String> {
        if depth > 16 {
            return Err("snippets nest too deep".into());
        }
        for tok in toks {
            match tok {
                Tok::Snippet(name) => {
                    self.inline_into(&self.snippet_tokens(name)?, out, depth + 1)?
                }
                other => out.push(other.clone()),
            }
        }
        Ok(())
    }
}

fn merge_text(toks: Vec<Tok>) -> Vec<Tok> {
    let mut out: Vec<Tok> = Vec::with_capacity(toks.len());
    for tok in toks {
        match (out.last_mut(), tok) {
            (Some(Tok::Text(prev)), Tok::Text(t)) => prev.push_str(&t),
            (_, tok) => out.push(tok),
        }
    }
    out
}

/// Names used as `{{x}}` and names used as `{{#if x}}`, in order of first use.
pub fn names(toks: &[Tok]) -> (Vec<String>, Vec<String>) {
    let (mut vars, mut conds) = (Vec::new(), Vec::new());
    for tok in toks {
        match tok {
            Tok::Var(n) if !vars.contains(n) => vars.push(n.clone()),
            Tok::If(n) if !conds.contains(n) => conds.push(n.clone()),
            _ => {}
        }
    }
    (vars, conds)
}

/// Jinja syntax (minijinja, tera, askama). Snippets become
/// `{% include "name" %}`, or are refused when `includes` is false (then
/// inline them first). Text holding Jinja openers goes in a raw block.
pub fn to_jinja(toks: &[Tok], includes: bool) -> Result<String, String> {
    let mut out = String::new();
    for tok in toks {
        match tok {
            Tok::Text(t) if t.contains("{{") || t.contains("{%") || t.contains("{#") => {
                if t.contains("{% endraw %}") {
                    return Err("text holds `{% endraw %}`".into());
                }
                let _ = write!(out, "{{% raw %}}{t}{{% endraw %}}");
            }
            Tok::Text(t) => out.push_str(t),
            Tok::Var(n) => {
                let _ = write!(out, "{{{{ {n} }}}}");
            }
            Tok::Snippet(n) if includes => {
                let _ = write!(out, "{{% include \"{n}\" %}}");
            }
            Tok::Snippet(n) => return Err(format!("snippet `{n}` was not inlined")),
            Tok::If(n) => {
                let _ = write!(out, "{{% if {n} %}}");
            }
            Tok::Else => out.push_str("{% else %}"),
            Tok::EndIf => out.push_str("{% endif %}"),
        }
    }
    Ok(out)
}

/// Handlebars syntax. Snippets become partials (`{{> name}}`).
///
/// Handlebars removes a block or partial tag that stands alone on its line
/// together with that line's newline (Mustache's "standalone" rule), which
/// promptpack does not; an extra newline after each such tag gives it one
/// back.
pub fn to_handlebars(toks: &[Tok]) -> Result<String, String> {
    let mut out = String::new();
    for (i, tok) in toks.iter().enumerate() {
        let tag = match tok {
            Tok::Text(t) => {
                if t.contains("{{") {
                    return Err("text holds `{{`".into());
                }
                out.push_str(t);
                continue;
            }
            Tok::Var(n) => {
                let _ = write!(out, "{{{{{n}}}}}");
                continue;
            }
            Tok::Snippet(n) => format!("{{{{> {n}}}}}"),
            Tok::If(n) => format!("{{{{#if {n}}}}}"),
            Tok::Else => "{{else}}".to_owned(),
            Tok::EndIf => "{{/if}}".to_owned(),
        };
        let line_start = out.is_empty() || out.ends_with('\n');
        let line_end = match toks.get(i + 1) {
            None => true,
            Some(Tok::Text(t)) => t.starts_with('\n'),
            Some(_) => false,
        };
        out.push_str(&tag);
        if line_start && line_end {
            out.push('\n');
        }
    }
    Ok(out)
}

/// md-tmpl syntax, snippets inlined first: a frontmatter declaring every
/// name, `{{ x }}`, and inline `{% if x %}…{% /if %}` tags.
///
/// md-tmpl requires a tag that starts a line to be a `> {% … %}` blockquote
/// line with blank lines around it, whose whitespace rules differ. A block
/// whose tags both start a line (`P\n{{#if x}}B\n{{/if}}S`) renders the same
/// as `P{% if x %}\nB{% /if %}\nS`, where no tag starts a line: every newline
/// before a tag moves past it. That is exact only when the newlines pair up
/// like this inside each block; the output check before timing proves it.
/// md-tmpl also drops the newline right after a closing tag, so one more is
/// added there.
pub fn to_md_tmpl(toks: &[Tok]) -> Result<String, String> {
    let (vars, conds) = names(toks);
    let mut out = String::from("---\nparams:\n");
    for v in &vars {
        let _ = writeln!(out, "  - {v} = str");
    }
    for c in conds.iter().filter(|c| !vars.contains(c)) {
        let _ = writeln!(out, "  - {c} = bool");
    }
    out.push_str("---\n");
    let body_start = out.len();
    // Rotates a newline from before a line-start tag to after it.
    let mut pending_newline = false;
    for tok in toks {
        let tag = match tok {
            Tok::Text(t) => {
                if t.contains("{%") || t.contains("{#") || t.contains("{{") {
                    return Err("text holds an md-tmpl opener".into());
                }
                let mut t = t.as_str();
                if pending_newline {
                    out.push('\n');
                    pending_newline = false;
                }
                if t.ends_with('\n') {
                    t = &t[..t.len() - 1];
                    pending_newline = true;
                }
                out.push_str(t);
                continue;
            }
            Tok::Var(n) => {
                if pending_newline {
                    out.push('\n');
                    pending_newline = false;
                }
                let _ = write!(out, "{{{{ {n} }}}}");
                continue;
            }
            Tok::Snippet(n) => return Err(format!("snippet `{n}` was not inlined")),
            Tok::If(n) => format!("{{% if {n} %}}"),
            Tok::Else => "{% else %}".to_owned(),
            Tok::EndIf => "{% /if %}".to_owned(),
        };
        if out.len() == body_start {
            return Err("a tag starts the template".into());
        }
        out.push_str(&tag);
        // The newline moved past the tag.
        if pending_newline {
            out.push('\n');
            pending_newline = false;
        }
    }
    if pending_newline {
        out.push('\n');
    }
    // md-tmpl drops one newline right after a closing tag: give it one.
    let body = out
        .split_off(body_start)
        .replace("{% /if %}\n", "{% /if %}\n\n");
    out.push_str(&body);
    Ok(out)
}
