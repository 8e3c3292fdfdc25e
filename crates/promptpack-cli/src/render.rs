//! `promptpack render`: one prompt with values from the command line.

use crate::{Folders, hex, usage_error};
use clap::Args;
use promptpack::{Diagnostic, Error, ErrorCode, Library, Prompt, SourceFile, Style};
use promptpack_core::source_file::Span;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;

/// Options of `promptpack render` (and `watch`).
#[derive(Debug, Clone, Args)]
pub(crate) struct RenderArgs {
    /// The prompt id: its folder name under the templates folder.
    pub(crate) id: String,
    /// A value, as a string; repeatable; overrides the same name in --vars.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = parse_var)]
    pub(crate) var: Vec<(String, String)>,
    /// A JSON file holding an object of values, which keep their JSON types
    /// (`-` reads standard input).
    #[arg(long = "vars", value_name = "FILE.json")]
    pub(crate) vars_file: Option<PathBuf>,
    /// Leave a token without a value in place instead of failing.
    #[arg(long)]
    pub(crate) lenient: bool,
    /// Print `{"id", "system", "user", "hash"}` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) folders: Folders,
}

/// Renders the prompt once and prints it.
pub(crate) fn run(args: &RenderArgs, style: Style) -> ExitCode {
    let result = args
        .folders
        .config()
        .and_then(|c| Library::load_config(&c))
        .and_then(|l| render(&l, args));
    match result {
        Ok(prompt) => {
            crate::print_out(&show(&prompt, args.json, true));
            ExitCode::SUCCESS
        }
        Err(e) => crate::fail(&e, style),
    }
}

/// Renders `args.id` from `library` with the values the arguments give.
pub(crate) fn render(library: &Library, args: &RenderArgs) -> Result<Prompt, Error> {
    let vars = values(args)?;
    if args.lenient {
        library.build_prompt_lenient(&args.id, &vars)
    } else {
        library.build_prompt(&args.id, &vars)
    }
}

/// A rendered prompt as printed: text with a separator before the user part,
/// or a JSON object (pretty, or on one line when not `pretty`).
pub(crate) fn show(prompt: &Prompt, json: bool, pretty: bool) -> String {
    if json {
        let value = serde_json::json!({
            "id": prompt.id,
            "system": prompt.system,
            "user": prompt.user,
            "hash": hex(prompt.hash),
        });
        let text = if pretty {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        };
        return text.unwrap_or_default() + "\n";
    }
    let mut out = prompt.system.clone();
    out.push('\n');
    if let Some(user) = &prompt.user {
        out.push_str("--- user ---\n");
        out.push_str(user);
        out.push('\n');
    }
    out
}

/// The values: `--vars` first, then every `--var` over them.
fn values(args: &RenderArgs) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let mut map = match &args.vars_file {
        Some(path) => read_vars_file(path)?,
        None => serde_json::Map::new(),
    };
    for (name, value) in &args.var {
        map.insert(name.clone(), serde_json::Value::String(value.clone()));
    }
    Ok(map)
}

/// Standard input, read once for the life of the process: `watch` renders
/// again and again with `--vars -`, and stdin has only one end.
fn stdin_text() -> Result<&'static str, Error> {
    static STDIN: OnceLock<Result<String, String>> = OnceLock::new();
    let read = STDIN.get_or_init(|| {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map(|_| text)
            .map_err(|e| e.to_string())
    });
    match read {
        Ok(text) => Ok(text),
        Err(e) => Err(usage_error(
            ErrorCode::Io,
            format!("cannot read values from standard input: {e}"),
        )),
    }
}

fn read_vars_file(
    path: &std::path::Path,
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let shown = path.to_string_lossy().replace('\\', "/");
    let text = if shown == "-" {
        stdin_text()?.to_string()
    } else {
        std::fs::read_to_string(path).map_err(|e| {
            usage_error(
                ErrorCode::Io,
                format!("cannot read the values file {shown}: {e}"),
            )
        })?
    };
    let file = SourceFile::new(shown.clone(), text);
    let value: serde_json::Value = serde_json::from_str(file.text()).map_err(|e| {
        let at = offset_of(file.text(), e.line(), e.column());
        Diagnostic::new(
            ErrorCode::InvalidVars,
            format!("{shown} is not valid JSON: {e}"),
        )
        .at(file.location(Span { start: at, end: at }))
    })?;
    match value {
        serde_json::Value::Object(map) => Ok(map),
        other => {
            let kind = match other {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            };
            let message = format!("{shown} must hold a JSON object of names to values, not {kind}");
            Err(Error::from(
                Diagnostic::new(ErrorCode::InvalidVars, message)
                    .with_help("write it as {\"name\": \"value\", \"flag\": true}"),
            ))
        }
    }
}

/// The byte offset of serde_json's 1-based line and column, kept on a
/// character boundary.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Parses `NAME=VALUE` (the value may hold `=` and be empty).
fn parse_var(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(format!("expected NAME=VALUE, got `{arg}`")),
    }
}
