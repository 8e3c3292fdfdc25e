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
    write_prompt(
        &mut out,
        &prompt,
        library.front_matter(&prompt.id),
        json,
        true,
    )
    .map_err(|e| Error::new(promptpack::ErrorCode::Io, e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The version judged as a live handle judges it (compiled on its own from
/// its files and the snippet revisions it pins, under its syntax, its hash
/// checked): a library of it, or why it is refused.
fn library(catalog: &mut Catalog, version: &Version) -> Result<Library, Error> {
    let checked = catalog
        .judge(&version.prompt_id, version.version, None)?
        .into_result()?;
    let mut named = promptpack::CatalogVersion::new(
        version.prompt_id.as_str(),
        version.version,
        version.content_hash.as_str(),
    );
    let mut pins: Vec<(std::sync::Arc<str>, u32)> = version
        .pins
        .iter()
        .map(|pin| (std::sync::Arc::from(pin.snippet.as_str()), pin.revision))
        .collect();
    pins.sort();
    named.pins = std::sync::Arc::from(pins);
    // Its renders say they come from this version, not from files.
    Ok(promptpack::house::catalog_library(
        vec![checked.prompt],
        checked.settings.delimiters,
        named,
    ))
}
