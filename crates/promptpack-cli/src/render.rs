//! `promptpack render`: one prompt with values from the command line.

use crate::{Folders, usage_error};
use clap::Args;
use promptpack::{Diagnostic, Error, ErrorCode, FrontMatter, Library, Prompt, SourceFile, Style};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::similar::nearest;
use promptpack_core::source_file::{Span, invalid_utf8};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
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
    /// (`-` reads standard input); UTF-8, with or without a byte order mark.
    #[arg(long = "vars", value_name = "FILE.json")]
    pub(crate) vars_file: Option<PathBuf>,
    /// Start from the values of the prompt's example set NAME (its front
    /// matter's `examples`); --vars and --var override them.
    #[arg(long, value_name = "NAME")]
    pub(crate) example: Option<String>,
    /// Leave a token without a value in place instead of failing.
    #[arg(long)]
    pub(crate) lenient: bool,
    /// Print `{"id", "system", "user", "hash"}` as JSON; a conversation's
    /// adds `messages`, every message to send (the system first), each
    /// `{"role", "content", "name"?}`.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) folders: Folders,
}

/// Renders the prompt once and prints it, after any warnings about the
/// values.
pub(crate) fn run(args: &RenderArgs, style: Style) -> ExitCode {
    let library = match args.folders.config().and_then(|c| Library::load_config(&c)) {
        Ok(library) => library,
        Err(e) => return crate::fail(&e, style),
    };
    let Rendered { warnings, result } = render(&library, args, "render");
    for warning in &warnings {
        crate::warn(warning, style);
    }
    match result {
        Ok(prompt) => crate::finish_out(
            crate::write_out(|out| {
                let front_matter = library.front_matter(&prompt.id);
                write_prompt(out, &prompt, front_matter, args.json, true)
            }),
            style,
        ),
        Err(e) => crate::fail(&e, style),
    }
}

/// A render, and the warnings about the values it was given.
pub(crate) struct Rendered {
    /// One line each, without `warning: `.
    pub(crate) warnings: Vec<String>,
    pub(crate) result: Result<Prompt, Error>,
}

/// Renders `args.id` from `library` with the values the arguments give;
/// `command` (`render`, `watch`) is named in the warnings' suggestions.
pub(crate) fn render(library: &Library, args: &RenderArgs, command: &str) -> Rendered {
    let failed = |e: Error| Rendered {
        warnings: Vec::new(),
        result: Err(e),
    };
    let given = match values(args) {
        Ok(given) => given,
        Err(e) => return failed(e),
    };
    let resolved = promptpack::house::resolved(library, &args.id);
    // An unknown id is left to the render, which names the ids there are.
    let example = match (resolved, &args.example) {
        (Some(prompt), Some(name)) => match example_values(prompt, name) {
            Ok(example) => Some(example),
            Err(e) => return failed(e),
        },
        _ => None,
    };
    // Only what the command line gave is warned about: an example's values
    // are checked against the prompt's variables where they are written.
    let warnings = resolved
        .map(|prompt| value_warnings(prompt, args, &given, command))
        .unwrap_or_default();
    let vars = match example {
        Some(mut vars) => {
            vars.extend(given);
            vars
        }
        None => given,
    };
    let result = if args.lenient {
        library.build_prompt_lenient(&args.id, &vars)
    } else {
        library.build_prompt(&args.id, &vars)
    };
    Rendered { warnings, result }
}

/// The values of `prompt`'s example set `name`, or an error naming the sets
/// it has.
fn example_values(
    prompt: &ResolvedPrompt,
    name: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    if let Some(values) = prompt.front_matter.example_values(Some(name)) {
        return Ok(values);
    }
    let names: Vec<String> = prompt
        .front_matter
        .examples
        .iter()
        .map(|e| format!("`{}`", e.name))
        .collect();
    let (message, help) = if names.is_empty() {
        (
            format!(
                "prompt `{}` has no examples, so none named `{name}`",
                prompt.id
            ),
            "name sets of values under `examples:` in the prompt's front matter".to_string(),
        )
    } else {
        let near = closest(
            name,
            prompt.front_matter.examples.iter().map(|e| e.name.as_str()),
        );
        let message = match near {
            Some(near) => format!(
                "prompt `{}` has no example named `{name}`; did you mean `{near}`?",
                prompt.id
            ),
            None => format!("prompt `{}` has no example named `{name}`", prompt.id),
        };
        (message, format!("its examples: {}", names.join(", ")))
    };
    // The values asked for do not exist: `invalid_vars` is the code of
    // values a render cannot use, as a `--vars` file that is no object.
    Err(Error::from(
        Diagnostic::new(ErrorCode::InvalidVars, message).with_help(help),
    ))
}

/// What the values given will not do as they seem to: in strict mode, a name
/// no template of the prompt uses (a typo, most likely: the closest variable
/// is suggested), and in either mode a `--var` that reads as false (`false`,
/// `0`, `no`) for a variable used as a condition, where it is a non-empty
/// string and so true.
fn value_warnings(
    prompt: &ResolvedPrompt,
    args: &RenderArgs,
    vars: &serde_json::Map<String, serde_json::Value>,
    command: &str,
) -> Vec<String> {
    let id = &prompt.id;
    // The value each `--var` name renders: the last given.
    let last_var: HashMap<&str, &str> = args
        .var
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let mut warnings = Vec::new();
    if !args.lenient {
        let used: HashSet<&str> = prompt.vars.iter().map(|v| v.name.as_str()).collect();
        let mut unused = vars.keys().filter(|name| !used.contains(name.as_str()));
        for name in unused.by_ref().take(NAMED_UNUSED) {
            let given = if last_var.contains_key(name.as_str()) {
                format!("--var `{name}`")
            } else {
                format!("--vars key `{name}`")
            };
            let unset = prompt
                .vars
                .iter()
                .map(|v| v.name.as_str())
                .filter(|v| !vars.contains_key(*v));
            let warning = match closest(name, unset) {
                Some(near) => {
                    format!("{given} is used by no template of `{id}`; did you mean `{near}`?")
                }
                None => format!("{given} is used by no template of `{id}`"),
            };
            warnings.push(warning);
        }
        let more = unused.count();
        if more > 0 {
            warnings.push(format!(
                "{more} more value(s) are used by no template of `{id}`"
            ));
        }
    }
    for var in prompt.vars.iter().filter(|v| v.as_condition) {
        let name = &var.name;
        let Some(value) = last_var.get(name.as_str()) else {
            continue;
        };
        if !matches!(value.to_ascii_lowercase().as_str(), "false" | "0" | "no") {
            continue;
        }
        let json = format!("{{\"{name}\": false}}");
        let instead = match (&args.vars_file, var.as_value) {
            (Some(_), _) => format!("put `\"{name}\": false` in the --vars file"),
            (None, true) => {
                format!("pass a JSON boolean: echo '{json}' | promptpack {command} {id} --vars -")
            }
            (None, false) => format!(
                "leave it out, or pass a JSON boolean: echo '{json}' | promptpack {command} {id} --vars -"
            ),
        };
        warnings.push(format!(
            "--var {name}={value} is the string \"{value}\", which is true as a condition; for false, {instead}"
        ));
    }
    warnings
}

/// How many values used by no template are named, each with the variable
/// it may be a typo of; the rest are counted in one line. A values file of a
/// million keys, or as many keys as a prompt of thousands of variables has
/// and none of them its names, warns in a few lines, and in time linear in
/// the keys and variables (a suggestion searches every variable).
const NAMED_UNUSED: usize = 10;

/// The candidate nearest to `name` by edit distance, ignoring case, when it
/// is near enough to be a likely typo ([`nearest`]).
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    nearest(name, candidates, 1).into_iter().next()
}

/// Writes a rendered prompt as printed: text with a separator before the
/// user part (`--- user ---`) or before each message of a conversation
/// (`--- assistant ---`, `--- tool NAME ---`), or a JSON object (pretty, or
/// on one line when not `pretty`) with a conversation's `messages`.
/// Straight from the prompt's own text, which can be gigabytes: no copy of
/// it is made on the way out.
pub(crate) fn write_prompt(
    out: &mut (impl Write + ?Sized),
    prompt: &Prompt,
    front_matter: Option<&FrontMatter>,
    json: bool,
    pretty: bool,
) -> std::io::Result<()> {
    let tools = front_matter.map_or(&[][..], |f| &f.tools[..]);
    let response = front_matter.and_then(|f| f.response.as_ref());
    if json {
        /// The JSON form, borrowing the prompt's text.
        #[derive(serde::Serialize)]
        struct Shown<'a> {
            id: &'a str,
            system: &'a str,
            user: Option<&'a str>,
            // Every message to send, the system message first, as the
            // console's API gives them; a prompt of two files prints as it
            // always did.
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            messages: Vec<promptpack::MessageRef<'a>>,
            // What the request sends beside the messages, as the chat
            // API takes it.
            #[serde(skip_serializing_if = "Vec::is_empty")]
            tools: Vec<serde_json::Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            response_format: Option<serde_json::Value>,
            hash: String,
        }
        let messages = if prompt.messages.is_empty() {
            Vec::new()
        } else {
            prompt.messages().collect()
        };
        let shown = Shown {
            id: &prompt.id,
            system: &prompt.system,
            user: prompt.user.as_deref(),
            messages,
            tools: tools.iter().map(|tool| tool.json()).collect(),
            response_format: response.map(|r| r.response_format(&prompt.id)),
            hash: prompt.hash.to_string(),
        };
        if pretty {
            serde_json::to_writer_pretty(&mut *out, &shown)?;
        } else {
            serde_json::to_writer(&mut *out, &shown)?;
        }
        return out.write_all(b"\n");
    }
    out.write_all(prompt.system.as_bytes())?;
    out.write_all(b"\n")?;
    if let Some(user) = &prompt.user {
        out.write_all(b"--- user ---\n")?;
        out.write_all(user.as_bytes())?;
        out.write_all(b"\n")?;
    }
    for message in &prompt.messages {
        // The role as its tag names it: `user`, as a second part's line.
        writeln!(out, "--- {} ---", message.label())?;
        out.write_all(message.content.as_bytes())?;
        out.write_all(b"\n")?;
    }
    if !tools.is_empty() {
        out.write_all(b"--- tools ---\n")?;
        for tool in tools {
            match &tool.description {
                Some(description) => writeln!(out, "{}: {description}", tool.name)?,
                None => writeln!(out, "{}", tool.name)?,
            }
        }
    }
    if let Some(response) = response {
        out.write_all(b"--- response ---\n")?;
        out.write_all(response.describe().as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
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
fn stdin_bytes() -> Result<&'static [u8], Error> {
    static STDIN: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let read = STDIN.get_or_init(|| {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map(|_| bytes)
            .map_err(|e| e.to_string())
    });
    match read {
        Ok(bytes) => Ok(bytes),
        Err(e) => Err(usage_error(
            ErrorCode::Io,
            format!("cannot read values from standard input: {e}"),
        )),
    }
}

/// A UTF-8 byte order mark, which Windows editors write at the start of a
/// file: `--vars` skips it, as JSON readers commonly do.
const BOM: &str = "\u{FEFF}";

fn read_vars_file(
    path: &std::path::Path,
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let shown = path.to_string_lossy().replace('\\', "/");
    let bytes: Cow<'static, [u8]> = if shown == "-" {
        Cow::Borrowed(stdin_bytes()?)
    } else {
        Cow::Owned(std::fs::read(path).map_err(|e| {
            usage_error(
                ErrorCode::Io,
                format!("cannot read the values file {shown}: {e}"),
            )
        })?)
    };
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        Error::from(invalid_utf8(
            &shown,
            &bytes,
            e.valid_up_to(),
            "the values file",
        ))
    })?;
    // The file keeps its mark, so that lines and columns are the editor's.
    let json = text.strip_prefix(BOM).unwrap_or(text);
    let skipped = text.len() - json.len();
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        let file = SourceFile::new(shown.clone(), text);
        let at = skipped + offset_of(json, e.line(), e.column());
        let located = |message: String| {
            Diagnostic::new(ErrorCode::InvalidVars, message)
                .at(file.location(Span { start: at, end: at }))
        };
        // Valid JSON that JavaScript would read as `Infinity` (`1e400`): a
        // JSON value cannot hold it, so it is refused, saying why.
        if e.to_string().starts_with("number out of range") {
            located(format!(
                "{shown} holds a number past the range of a double (JavaScript reads it as Infinity): {e}"
            ))
            .with_help("write the number within ±1.7976931348623157e308, or as a string (\"Infinity\")")
        } else {
            located(format!("{shown} is not valid JSON: {e}"))
        }
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
pub(crate) fn parse_var(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(format!("expected NAME=VALUE, got `{arg}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records where each write's bytes live, and the text written.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<(usize, usize)>,
        text: Vec<u8>,
    }

    impl Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.writes.push((buf.as_ptr() as usize, buf.len()));
            self.text.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// How many of `text`'s bytes were written straight from `text` itself.
    fn written_in_place(recorder: &Recorder, text: &str) -> usize {
        let range = text.as_ptr() as usize..text.as_ptr() as usize + text.len();
        recorder
            .writes
            .iter()
            .filter(|(at, len)| range.contains(at) && at + len <= range.end)
            .map(|(_, len)| len)
            .sum()
    }

    /// A rendered prompt goes out from its own text, as JSON too (whose
    /// escapes are the only bytes not taken from it): no copy of a
    /// gigabyte prompt on the way to stdout.
    #[test]
    fn prompts_are_written_without_a_copy() {
        let prompt = Prompt {
            id: "big".to_string(),
            system: "system text ".repeat(1000),
            user: Some("user \"quoted\" text\n".repeat(1000)),
            messages: Vec::new(),
            hash: promptpack::PromptHash::new(7),
            provenance: promptpack::Provenance::Loaded,
            exchange: promptpack::Exchange::NONE,
        };
        let user = prompt.user.as_deref().unwrap_or_default();
        let mut text = Recorder::default();
        write_prompt(&mut text, &prompt, None, false, true).expect("writes");
        assert_eq!(written_in_place(&text, &prompt.system), prompt.system.len());
        assert_eq!(written_in_place(&text, user), user.len());
        let expected = format!("{}\n--- user ---\n{user}\n", prompt.system);
        assert_eq!(String::from_utf8_lossy(&text.text), expected);
        for pretty in [true, false] {
            let mut json = Recorder::default();
            write_prompt(&mut json, &prompt, None, true, pretty).expect("writes");
            assert_eq!(written_in_place(&json, &prompt.system), prompt.system.len());
            // All but the two quotes and the newline of each repeat.
            assert_eq!(written_in_place(&json, user), user.len() - 3000);
            let value: serde_json::Value =
                serde_json::from_slice(&json.text).expect("the JSON form is JSON");
            assert_eq!(value["user"], user);
            assert_eq!(value["hash"], "0000000000000007");
        }
    }

    #[test]
    fn closest_suggests_only_near_names() {
        let vars = ["bullets", "agentName", "userName"];
        assert_eq!(closest("bulets", vars.into_iter()), Some("bullets"));
        assert_eq!(closest("agent_name", vars.into_iter()), Some("agentName"));
        assert_eq!(closest("username", vars.into_iter()), Some("userName"));
        assert_eq!(closest("notes", vars.into_iter()), None);
    }
}
