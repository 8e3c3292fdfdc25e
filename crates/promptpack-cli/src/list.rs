//! `promptpack list`: what every prompt needs and includes.

use crate::{Folders, hex};
use clap::Args;
use promptpack::{Library, Style};
use promptpack_core::program::{VarInfo, VarKind};
use promptpack_core::resolve::ResolvedPrompt;
use serde_json::json;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Options of `promptpack list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Print a JSON array instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    folders: Folders,
}

/// Lists every prompt, sorted by id.
pub(crate) fn run(args: &ListArgs, style: Style) -> ExitCode {
    let library = match args.folders.config().and_then(|c| Library::load_config(&c)) {
        Ok(library) => library,
        Err(e) => return crate::fail(&e, style),
    };
    let prompts = library.prompts();
    let text = if args.json {
        let list: Vec<serde_json::Value> = prompts.iter().map(to_json).collect();
        let mut text = serde_json::to_string_pretty(&list).unwrap_or_default();
        text.push('\n');
        text
    } else {
        prompts.iter().map(to_text).collect::<Vec<_>>().join("\n")
    };
    crate::print_out(&text, style)
}

/// The field type a variable gets; for a choice, its values.
fn shown_type(var: &VarInfo) -> String {
    let values = var
        .choices
        .iter()
        .map(|c| format!("{c:?}"))
        .collect::<Vec<_>>()
        .join(" | ");
    match var.kind() {
        VarKind::Choice => format!("enum of {values}"),
        VarKind::OptionalChoice => format!("Option<enum of {values}>"),
        kind => kind.rust_type().to_string(),
    }
}

fn parts(prompt: &ResolvedPrompt) -> Vec<&'static str> {
    if prompt.user.is_some() {
        vec!["system", "user"]
    } else {
        vec!["system"]
    }
}

fn conditions(prompt: &ResolvedPrompt) -> Vec<&str> {
    prompt
        .vars
        .iter()
        .filter(|v| v.as_condition)
        .map(|v| v.name.as_str())
        .collect()
}

/// Bytes of static text of the resolved parts, snippets spliced in.
fn size(prompt: &ResolvedPrompt) -> usize {
    prompt.system.text.len() + prompt.user.as_ref().map_or(0, |u| u.text.len())
}

fn to_text(prompt: &ResolvedPrompt) -> String {
    let or_none = |items: Vec<String>| {
        if items.is_empty() {
            "-".to_string()
        } else {
            items.join(", ")
        }
    };
    let vars = prompt
        .vars
        .iter()
        .map(|v| format!("{}: {}", v.name, shown_type(v)))
        .collect();
    let conditions = conditions(prompt).into_iter().map(String::from).collect();
    let snippets = prompt.snippets.iter().cloned().collect();
    let mut out = String::new();
    let _ = writeln!(out, "{}", prompt.id);
    let _ = writeln!(out, "  parts:      {}", parts(prompt).join(", "));
    let _ = writeln!(out, "  variables:  {}", or_none(vars));
    let _ = writeln!(out, "  conditions: {}", or_none(conditions));
    let _ = writeln!(out, "  snippets:   {}", or_none(snippets));
    let _ = writeln!(out, "  size:       {} bytes", size(prompt));
    let _ = writeln!(out, "  hash:       {}", hex(prompt.hash));
    out
}

fn to_json(prompt: &ResolvedPrompt) -> serde_json::Value {
    let vars: Vec<serde_json::Value> = prompt
        .vars
        .iter()
        .map(|v| {
            let mut var = json!({"name": v.name, "type": v.kind().rust_type()});
            if !v.choices.is_empty() {
                var["values"] = json!(v.choices);
            }
            var
        })
        .collect();
    json!({
        "id": prompt.id,
        "parts": parts(prompt),
        "system_path": prompt.system_path,
        "user_path": prompt.user_path,
        "variables": vars,
        "conditions": conditions(prompt),
        "snippets": prompt.snippets,
        "size": size(prompt),
        "hash": hex(prompt.hash),
    })
}
