//! `promptpack catalog render`: a catalog version rendered with values,
//! through the same `Library` and value handling as `promptpack render`.

use super::Which;
use crate::Folders;
use crate::render::{RenderArgs as TreeRenderArgs, Rendered, parse_var, render, write_prompt};
use clap::Args;
use promptpack::{Error, Library, Style};
use promptpack_catalog::{Catalog, Version};
use std::path::PathBuf;

/// Options of `promptpack catalog render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// The prompt id.
    id: String,
    #[command(flatten)]
    which: Which,
    /// A value, as a string; repeatable; overrides the same name in --vars.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = parse_var)]
    var: Vec<(String, String)>,
    /// A JSON file holding an object of values (`-` reads standard input).
    #[arg(long = "vars", value_name = "FILE.json")]
    vars_file: Option<PathBuf>,
    /// Start from the values of the version's example set NAME.
    #[arg(long, value_name = "NAME")]
    example: Option<String>,
    /// Leave a token without a value in place instead of failing.
    #[arg(long)]
    lenient: bool,
}

/// Renders the version: the text to print; its warnings, and the version
/// and its hash, on stderr.
pub(crate) fn execute(
    catalog: &mut Catalog,
    args: &RenderArgs,
    json: bool,
    style: Style,
) -> Result<String, Error> {
    let version = catalog.get(&args.id, &args.which.selector())?;
    let library = library(catalog, &version)?;
    let tree_args = TreeRenderArgs {
        id: args.id.clone(),
        var: args.var.clone(),
        vars_file: args.vars_file.clone(),
        example: args.example.clone(),
        lenient: args.lenient,
        json,
        folders: Folders {
            root: None,
            templates: None,
            snippets: None,
            delimiters: None,
            max_render_bytes: None,
        },
    };
    let Rendered { warnings, result } = render(&library, &tree_args, "catalog render");
    for warning in &warnings {
        crate::warn(warning, style);
    }
    let prompt = result?;
    eprintln!(
        "{} v{} sha256:{}",
        version.prompt_id, version.version, version.content_hash
    );
    let mut out = Vec::new();
    let written = if prompt.messages.is_empty() {
        write_prompt(&mut out, &prompt, json, true)
    } else {
        write_conversation(&mut out, &prompt, json)
    };
    written.map_err(|e| Error::new(promptpack::ErrorCode::Io, e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Writes a rendered conversation: the system text, then each message
/// after a line naming its role (`--- tool NAME ---` for a tool result),
/// as `write_prompt` separates the user part; or a JSON object whose
/// `messages` are every message to send, the system message first, each
/// `{"role", "content"}` (and a tool result's `"name"`).
fn write_conversation(
    out: &mut Vec<u8>,
    prompt: &promptpack::Prompt,
    json: bool,
) -> std::io::Result<()> {
    use std::io::Write;
    if json {
        /// One message, borrowing the prompt's text.
        #[derive(serde::Serialize)]
        struct Message<'a> {
            role: promptpack::Role,
            content: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            name: Option<&'a str>,
        }
        /// The JSON form: `promptpack render --json`'s, with the messages.
        #[derive(serde::Serialize)]
        struct Shown<'a> {
            id: &'a str,
            system: &'a str,
            user: Option<&'a str>,
            messages: Vec<Message<'a>>,
            hash: String,
        }
        let shown = Shown {
            id: &prompt.id,
            system: &prompt.system,
            user: prompt.user.as_deref(),
            messages: prompt
                .messages()
                .map(|m| Message {
                    role: m.role,
                    content: m.content,
                    name: m.name,
                })
                .collect(),
            hash: prompt.hash.to_string(),
        };
        serde_json::to_writer_pretty(&mut *out, &shown)?;
        return out.write_all(b"\n");
    }
    out.write_all(prompt.system.as_bytes())?;
    out.write_all(b"\n")?;
    for message in &prompt.messages {
        match &message.name {
            Some(name) => writeln!(out, "--- {} {name} ---", message.role)?,
            None => writeln!(out, "--- {} ---", message.role)?,
        }
        out.write_all(message.content.as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The version judged as a live handle judges it (compiled on its own from
/// its files and the snippet revisions it pins, under its syntax, its hash
/// checked): a library of it, or why it is refused.
fn library(catalog: &mut Catalog, version: &Version) -> Result<Library, Error> {
    let checked = catalog
        .judge(&version.prompt_id, version.version, None)?
        .into_result()?;
    Ok(promptpack::house::library_of(
        vec![checked.prompt],
        checked.settings.delimiters,
    ))
}
