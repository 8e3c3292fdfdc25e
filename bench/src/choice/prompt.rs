//! The bench's own prompt for the `choice` section: `choice/templates/choice-bench/system.md`,
//! which picks one of three role snippets with `{{#if role == "…"}}…{{else if role == "…"}}…{{/if}}`.
//!
//! This module knows only the subset of the language that prompt uses (`{{name}}`,
//! `{{snippet:name}}`, `{{#if name == "value"}}`, `{{else if name == "value"}}`, `{{else}}`,
//! `{{/if}}`) and computes, independently of promptpack, the text pieces of one role's output for
//! the lower bound: the same construction as the render section's lower bound (snippets spliced
//! in, adjacent texts merged, then the pieces of the kept branches and the variables' values).

use crate::translate::js_trim;
use std::path::{Path, PathBuf};

/// The prompt id (its folder under `choice/templates/`).
pub const PROMPT_ID: &str = "choice-bench";

/// The roles, as the template compares them, in the order of its branches.
pub const ROLES: [&str; 3] = ["teacher", "assistant", "student"];

/// The text values of the timed renders (`role` is the role rendered).
pub const TEXTS: [(&str, &str); 2] = [
    ("agentName", "Juniper"),
    ("topic", "balanced binary search trees"),
];

/// The prompt root: `choice/` in the bench package.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("choice")
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Text(String),
    Var(String),
    Snippet(String),
    /// `{{#if name == "value"}}`
    If(String, String),
    /// `{{else if name == "value"}}`
    ElseIf(String, String),
    Else,
    EndIf,
}

/// `name == "value"`.
fn comparison(s: &str) -> Option<Tok> {
    let (name, value) = s.split_once(" == ")?;
    let value = value.strip_prefix('"')?.strip_suffix('"')?;
    Some(Tok::If(name.to_owned(), value.to_owned()))
}

fn tokenize(text: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        if open > 0 {
            toks.push(Tok::Text(rest[..open].to_owned()));
        }
        let close = rest[open..]
            .find("}}")
            .map(|i| open + i)
            .ok_or("`{{` without `}}`")?;
        let inner = &rest[open + 2..close];
        let tok = if let Some(name) = inner.strip_prefix("snippet:") {
            Tok::Snippet(name.to_owned())
        } else if let Some(cond) = inner.strip_prefix("#if ") {
            comparison(cond).ok_or_else(|| format!("not a comparison: {inner:?}"))?
        } else if let Some(cond) = inner.strip_prefix("else if ") {
            match comparison(cond) {
                Some(Tok::If(n, v)) => Tok::ElseIf(n, v),
                _ => return Err(format!("not a comparison: {inner:?}")),
            }
        } else if inner == "else" {
            Tok::Else
        } else if inner == "/if" {
            Tok::EndIf
        } else if !inner.is_empty()
            && inner
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            Tok::Var(inner.to_owned())
        } else {
            return Err(format!("unexpected tag {inner:?}"));
        };
        toks.push(tok);
        rest = &rest[close + 2..];
    }
    if !rest.is_empty() {
        toks.push(Tok::Text(rest.to_owned()));
    }
    Ok(toks)
}

/// Reads `path`, trimmed as promptpack reads templates and snippets.
fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|t| js_trim(&t).to_owned())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The template's tokens with every snippet spliced in and adjacent texts merged.
fn inlined(dir: &Path) -> Result<Vec<Tok>, String> {
    fn splice(dir: &Path, toks: Vec<Tok>, out: &mut Vec<Tok>, depth: usize) -> Result<(), String> {
        if depth > 16 {
            return Err("snippets nest too deep".into());
        }
        for tok in toks {
            match tok {
                Tok::Snippet(name) => {
                    let text = read(&dir.join("snippets").join(format!("{name}.md")))?;
                    splice(dir, tokenize(&text)?, out, depth + 1)?;
                }
                Tok::Text(t) => match out.last_mut() {
                    Some(Tok::Text(prev)) => prev.push_str(&t),
                    _ => out.push(Tok::Text(t)),
                },
                other => out.push(other),
            }
        }
        Ok(())
    }
    let system = read(&dir.join("templates").join(PROMPT_ID).join("system.md"))?;
    let mut out = Vec::new();
    splice(dir, tokenize(&system)?, &mut out, 0)?;
    Ok(out)
}

/// The pieces of the output for `role`, in order: what the lower bound pushes.
pub fn pieces(dir: &Path, role: &str) -> Result<Vec<String>, String> {
    let value = |name: &str| -> Result<&str, String> {
        match name {
            "role" => Ok(role),
            _ if TEXTS.iter().any(|(n, _)| *n == name) => Ok(text(name)),
            _ => Err(format!("no value for `{name}`")),
        }
    };
    let mut pieces = Vec::new();
    // One entry per open block: (this branch is kept, a branch was kept).
    let mut blocks: Vec<(bool, bool)> = Vec::new();
    for tok in inlined(dir)? {
        let on = blocks.iter().all(|&(kept, _)| kept);
        match tok {
            Tok::Text(t) if on => pieces.push(t),
            Tok::Var(n) if on => pieces.push(value(&n)?.to_owned()),
            Tok::If(n, v) => {
                let hit = value(&n)? == v;
                blocks.push((hit, hit));
            }
            Tok::ElseIf(n, v) => {
                let hit = value(&n)? == v;
                let (kept, taken) = blocks.last_mut().ok_or("`else if` outside a block")?;
                *kept = !*taken && hit;
                *taken |= hit;
            }
            Tok::Else => {
                let (kept, taken) = blocks.last_mut().ok_or("`else` outside a block")?;
                *kept = !*taken;
                *taken = true;
            }
            Tok::EndIf => {
                blocks.pop().ok_or("unbalanced `{{/if}}`")?;
            }
            _ => {}
        }
    }
    if !blocks.is_empty() {
        return Err("unclosed `{{#if}}`".into());
    }
    Ok(pieces)
}

/// The text value `name` of the timed renders.
pub fn text(name: &str) -> &'static str {
    TEXTS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |&(_, v)| v)
}
