//! `promptpack init`: a prompt folder to start from, and with `--cargo` the
//! build script and dependencies of the crate it sits in.
//!
//! Nothing is overwritten: a file that exists with other contents stops the
//! command before anything is written (exit 1). Files already as the scaffold
//! would write them are kept, so running `init` twice is harmless.

use clap::Args;
use promptpack::{CONFIG_FILE, Style};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `promptpack init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The folder to scaffold (created when missing).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The folder is a crate (it holds a Cargo.toml): also write build.rs and
    /// add the dependencies to Cargo.toml.
    #[arg(long)]
    cargo: bool,
    /// With --cargo: also add promptpack with its `testing` feature under
    /// [dev-dependencies] and write tests/prompts.rs, a snapshot test of
    /// every prompt.
    #[arg(long, requires = "cargo")]
    snapshots: bool,
    /// Also write a sample conversation, `templates/chat/` (system.md and
    /// messages.md: role blocks, few-shot turns from a snippet under an
    /// `{{#if}}`, a `kind: messages` history); with --cargo, its typed vars
    /// struct takes the history as a slice of messages.
    #[arg(long)]
    conversation: bool,
}

/// The prompt settings the scaffold starts with.
const CONFIG: &str = r#"# promptpack.toml: how the prompts in this folder are read. Every key is
# optional; without a key, its default holds.

# Where the prompts and the reusable snippets are, relative to this file.
templates = "templates"   # one folder per prompt: <id>/system.md, optional <id>/user.md
snippets = "snippets"     # <name>.md, included with {{snippet:name}}

[syntax]
# A line that holds only a block tag ({{#if x}}, {{else}}, {{/if}}) goes away
# with its newline, so that blocks can sit on lines of their own. Off by
# default, as the loader promptpack replaces kept such lines.
standalone_tags = true

# Other token delimiters, e.g. <<name>> and <<#if x>>:
# [delimiters]
# open = "<<"
# close = ">>"

# Prompt ids the naming lints of `promptpack check` skip:
# [lints]
# naming_exempt = ["legacy_prompt"]

# Turn off the build script's cargo warnings for lints:
# [build]
# warnings = false
"#;

/// The sample prompt: a variable, a snippet and a condition.
const SYSTEM: &str = "You are {{assistantName}}, an assistant for a small team.

{{snippet:tone}}

{{#if concise}}
Answer in at most three sentences.
{{else}}
Explain your reasoning step by step, then give the answer.
{{/if}}
";

/// The sample snippet.
const TONE: &str = "Be friendly and precise, and say so when you are not sure.\n";

/// The sample conversation's system message (`--conversation`).
const CHAT_SYSTEM: &str = "You are {{assistantName}}, a support assistant for a small team.

{{snippet:tone}}
";

/// The sample conversation's turns: few-shot turns from a snippet when
/// `examples` is on, the chat so far, the new question.
const CHAT_MESSAGES: &str = "---
vars:
  history: { kind: messages, description: The chat so far (oldest message first) }
---
{{#if examples}}
{{snippet:example-turns}}
{{/if}}
{{history}}
{{#user}}
{{question}}
{{/user}}
";

/// The sample snippet of whole turns: a question, a tool call's result and
/// the answer, shown to the model as an example.
const EXAMPLE_TURNS: &str = "{{#user}}
Is the build green?
{{/user}}
{{#tool ci_status}}
main: passed, 2 minutes ago
{{/tool}}
{{#assistant}}
Yes: the last build of main passed two minutes ago.
{{/assistant}}
";

/// The build script `--cargo` writes when there is none.
const BUILD_RS: &str = "fn main() {
    // Compiles templates/ and snippets/ into typed Rust; a template error
    // fails the build with one cargo error per problem, at its file, line
    // and column.
    promptpack_build::compile_or_exit();
}
";

/// The line a build script needs.
const BUILD_CALL: &str = "promptpack_build::compile_or_exit();";

/// The snapshot test `--snapshots` writes.
const SNAPSHOT_TEST: &str =
    "//! Every prompt of this crate under every combination of its conditions,
//! as insta snapshots in tests/snapshots/. The first run, and any change to
//! a prompt, fails and writes `.snap.new` files: review them with
//! `cargo insta review`, or accept them with `INSTA_UPDATE=always cargo test`,
//! and commit the `.snap` files.

promptpack::include_prompts!();

#[test]
fn prompts() {
    promptpack::snapshot_prompts!(PromptId);
}
";

/// The files of the scaffold, relative to the folder: with `snapshots`,
/// the snapshot test too; with `conversation`, the sample conversation.
fn scaffold(snapshots: bool, conversation: bool) -> Vec<(&'static str, &'static str)> {
    let mut files = vec![
        (CONFIG_FILE, CONFIG),
        ("templates/assistant/system.md", SYSTEM),
        ("snippets/tone.md", TONE),
    ];
    if conversation {
        files.extend([
            ("templates/chat/system.md", CHAT_SYSTEM),
            ("templates/chat/messages.md", CHAT_MESSAGES),
            ("snippets/example-turns.md", EXAMPLE_TURNS),
        ]);
    }
    if snapshots {
        files.push(("tests/prompts.rs", SNAPSHOT_TEST));
    }
    files
}

/// The promptpack checkout this binary was built from: promptpack is not
/// published yet, so the dependencies are path dependencies on it.
fn checkout() -> PathBuf {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    cli.ancestors().nth(2).unwrap_or(cli).to_path_buf()
}

/// The dependency lines of a crate.
struct DependencyLines {
    /// Under `[dependencies]`.
    runtime: String,
    /// Under `[build-dependencies]`.
    build: String,
    /// Under `[dev-dependencies]`, for snapshot tests: the same source as
    /// the runtime's (cargo refuses one crate from two sources, such as a
    /// path and a version), with the `testing` feature, which cargo adds to
    /// the runtime's features in test builds only.
    testing: String,
}

/// The lines that depend on the promptpack crates of `checkout`.
fn dependency_lines(checkout: &Path) -> DependencyLines {
    let path = |p: &Path| {
        let shown = p.to_string_lossy().replace('\\', "/");
        format!("\"{}\"", shown.replace('"', "\\\""))
    };
    let build = checkout.join("crates").join("promptpack-build");
    DependencyLines {
        runtime: format!(
            "promptpack = {{ path = {}, features = [\"hot-reload\"] }}",
            path(checkout)
        ),
        build: format!("promptpack-build = {{ path = {} }}", path(&build)),
        testing: format!(
            "promptpack = {{ path = {}, features = [\"testing\"] }}",
            path(checkout)
        ),
    }
}

/// Creates the scaffold (and with `--cargo` edits the crate), then says what
/// to do next.
pub(crate) fn run(args: &InitArgs, style: Style) -> ExitCode {
    match init(args) {
        Ok(report) => crate::print_out(&report, style),
        Err(message) => {
            let mut err = std::io::stderr().lock();
            let _ = std::io::Write::write_all(&mut err, message.as_bytes());
            ExitCode::FAILURE
        }
    }
}

/// `dir/rel` as shown: `rel` alone when `dir` is the current folder.
fn shown(dir: &Path, rel: &str) -> String {
    if dir == Path::new(".") {
        rel.to_string()
    } else {
        format!("{}/{rel}", dir.to_string_lossy().replace('\\', "/"))
    }
}

/// Does the work; `Err` holds the whole message for stderr.
fn init(args: &InitArgs) -> Result<String, String> {
    let dir = &args.dir;
    let io = |what: &str, e: std::io::Error| format!("error: cannot {what}: {e}\n");
    let manifest = dir.join("Cargo.toml");
    let manifest_text = if args.cargo {
        match std::fs::read_to_string(&manifest) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "error: {} holds no Cargo.toml, and --cargo sets up a crate\nhelp: run `cargo init` there first, or leave out --cargo\n",
                    dir.display()
                ));
            }
            Err(e) => return Err(io(&format!("read {}", shown(dir, "Cargo.toml")), e)),
        }
    } else {
        None
    };
    if let Some(text) = &manifest_text
        && !sections(text).any(|(header, _)| header == "package")
    {
        return Err(format!(
            "error: {} has no [package]: run `promptpack init --cargo` in the folder of the crate that uses the prompts\n",
            shown(dir, "Cargo.toml")
        ));
    }

    // Refuse before writing anything.
    let mut keep = Vec::new();
    let mut differ = Vec::new();
    for (rel, text) in scaffold(args.snapshots, args.conversation) {
        match std::fs::read(dir.join(rel)) {
            Ok(old) if old == text.as_bytes() => keep.push(rel),
            Ok(_) => differ.push(shown(dir, rel)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&format!("read {}", shown(dir, rel)), e)),
        }
    }
    if !differ.is_empty() {
        return Err(format!(
            "error: not overwriting {}, which already exist{} with other contents\nhelp: move {} aside, or run `promptpack init` in another folder\n",
            differ.join(", "),
            if differ.len() == 1 { "s" } else { "" },
            if differ.len() == 1 { "it" } else { "them" },
        ));
    }

    let mut out = String::new();
    for (rel, text) in scaffold(args.snapshots, args.conversation) {
        if keep.contains(&rel) {
            let _ = writeln!(out, "unchanged {}", shown(dir, rel));
            continue;
        }
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| io(&format!("create {}", parent.display()), e))?;
        }
        std::fs::write(&path, text).map_err(|e| io(&format!("write {}", shown(dir, rel)), e))?;
        let _ = writeln!(out, "created   {}", shown(dir, rel));
    }

    if let Some(text) = manifest_text {
        set_up_crate(dir, &text, args.snapshots, &mut out)?;
    }

    let _ = writeln!(out, "\nnext:");
    let cd = if dir == Path::new(".") {
        String::new()
    } else {
        format!("cd {} && ", dir.display())
    };
    let _ = writeln!(out, "  {cd}promptpack check");
    let _ = writeln!(
        out,
        "  {cd}promptpack render assistant --var assistantName=Ada --var concise=yes"
    );
    if args.conversation {
        // The history is a list of messages: JSON, through --vars.
        let _ = writeln!(
            out,
            "  {cd}echo '{{\"assistantName\": \"Ada\", \"examples\": true, \"question\": \"Is main green?\", \"history\": [{{\"role\": \"user\", \"content\": \"Hi\"}}, {{\"role\": \"assistant\", \"content\": \"Hello!\"}}]}}' | promptpack render chat --vars -"
        );
    }
    if args.cargo {
        let _ = writeln!(
            out,
            "  in your crate: promptpack::include_prompts!(); then\n  build_prompt(PromptId::Assistant, AssistantVars {{ assistant_name: \"Ada\", concise: true }})"
        );
        if args.conversation {
            let _ = writeln!(
                out,
                "  build_prompt(PromptId::Chat, ChatVars {{ assistant_name: \"Ada\", examples: true, history: &history, question: \"Is main green?\" }})\n  (history: a slice of promptpack::Message; prompt.messages() yields what to send)"
            );
        }
        if args.snapshots {
            let _ = writeln!(
                out,
                "  {cd}INSTA_UPDATE=always cargo test   (writes the prompts' first snapshots; commit them)"
            );
        } else {
            let _ = writeln!(
                out,
                "  snapshot tests of the prompts: promptpack init --cargo --snapshots"
            );
        }
    }
    Ok(out)
}

/// Writes build.rs when there is none, and adds the dependencies to
/// Cargo.toml where no line names them yet (with `snapshots`, the
/// dev-dependency of the snapshot test too).
fn set_up_crate(
    dir: &Path,
    manifest: &str,
    snapshots: bool,
    out: &mut String,
) -> Result<(), String> {
    let build_rs = dir.join("build.rs");
    match std::fs::read_to_string(&build_rs) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::write(&build_rs, BUILD_RS)
                .map_err(|e| format!("error: cannot write {}: {e}\n", shown(dir, "build.rs")))?;
            let _ = writeln!(out, "created   {}", shown(dir, "build.rs"));
        }
        Ok(text) if text.contains("promptpack_build::compile") => {
            let _ = writeln!(
                out,
                "unchanged {} (it calls promptpack_build already)",
                shown(dir, "build.rs")
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "{} exists: add this line to its `fn main`:\n    {BUILD_CALL}",
                shown(dir, "build.rs")
            );
        }
    }

    let checkout = checkout();
    let lines = dependency_lines(&checkout);
    let _ = write!(
        out,
        "\nthe dependencies (promptpack is not on crates.io yet: paths to the checkout this promptpack was built from):\n[dependencies]\n{}\n\n[build-dependencies]\n{}\n",
        lines.runtime, lines.build
    );
    if snapshots {
        let _ = write!(out, "\n[dev-dependencies]\n{}\n", lines.testing);
    }
    let _ = writeln!(out);
    if !checkout
        .join("crates/promptpack-build/Cargo.toml")
        .is_file()
    {
        let _ = writeln!(
            out,
            "{} is not a promptpack checkout any more: Cargo.toml left as it was; point the paths above at one and add them",
            checkout.display()
        );
        return Ok(());
    }
    let mut text = manifest.to_string();
    let mut added = Vec::new();
    let mut wanted = vec![
        ("dependencies", "promptpack", &lines.runtime),
        ("build-dependencies", "promptpack-build", &lines.build),
    ];
    if snapshots {
        wanted.push(("dev-dependencies", "promptpack", &lines.testing));
    }
    for (section, crate_name, line) in wanted {
        if names(&text, section, crate_name) {
            let _ = writeln!(
                out,
                "unchanged {}: [{section}] names {crate_name} already",
                shown(dir, "Cargo.toml")
            );
            continue;
        }
        text = add_line(&text, section, line);
        added.push(format!("[{section}] {crate_name}"));
    }
    if !added.is_empty() {
        std::fs::write(dir.join("Cargo.toml"), &text)
            .map_err(|e| format!("error: cannot write {}: {e}\n", shown(dir, "Cargo.toml")))?;
        let listed = match added.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let _ = writeln!(out, "added     {listed} to {}", shown(dir, "Cargo.toml"));
    }
    Ok(())
}

/// The table headers of a TOML file (`package`, `dependencies`,
/// `dependencies.serde`), each with the index of its line.
fn sections(text: &str) -> impl Iterator<Item = (String, usize)> + '_ {
    text.lines().enumerate().filter_map(|(i, line)| {
        let line = line.split('#').next().unwrap_or("").trim();
        let inner = line.strip_prefix('[')?.strip_suffix(']')?;
        if inner.starts_with('[') {
            return None;
        }
        Some((inner.replace(' ', ""), i))
    })
}

/// Whether the `[section]` of a Cargo.toml names `crate_name`: a
/// `crate_name = …` line in it, or a `[section.crate_name]` table.
fn names(text: &str, section: &str, crate_name: &str) -> bool {
    let mut current = String::new();
    for line in text.lines() {
        let code = line.split('#').next().unwrap_or("").trim();
        if let Some(inner) = code.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
            current = inner.replace(' ', "");
            if current == format!("{section}.{crate_name}") {
                return true;
            }
            continue;
        }
        if current == section {
            // `promptpack = …`, `"promptpack" = …`, `promptpack.path = …`
            let key = code.split(['=', '.']).next().unwrap_or("").trim();
            let key = key.trim_matches('"');
            if key == crate_name {
                return true;
            }
        }
    }
    false
}

/// `text` with `line` right after the `[section]` header, or with a new
/// `[section]` holding it at the end.
fn add_line(text: &str, section: &str, line: &str) -> String {
    let header = sections(text).find(|(h, _)| h == section).map(|(_, i)| i);
    match header {
        Some(at) => {
            let mut lines: Vec<&str> = text.lines().collect();
            lines.insert(at + 1, line);
            let mut joined = lines.join("\n");
            if text.ends_with('\n') || text.is_empty() {
                joined.push('\n');
            }
            joined
        }
        None => {
            let mut joined = text.to_string();
            if !joined.is_empty() && !joined.ends_with('\n') {
                joined.push('\n');
            }
            if !joined.is_empty() {
                joined.push('\n');
            }
            let _ = writeln!(joined, "[{section}]\n{line}");
            joined
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_goes_under_an_existing_header() {
        let text = "[package]\nname = \"x\"\n\n[dependencies]\nserde = \"1\"\n";
        let out = add_line(text, "dependencies", "promptpack = { path = \"p\" }");
        assert_eq!(
            out,
            "[package]\nname = \"x\"\n\n[dependencies]\npromptpack = { path = \"p\" }\nserde = \"1\"\n"
        );
    }

    #[test]
    fn a_missing_section_is_appended() {
        let text = "[package]\nname = \"x\"";
        let out = add_line(text, "build-dependencies", "promptpack-build = \"1\"");
        assert_eq!(
            out,
            "[package]\nname = \"x\"\n\n[build-dependencies]\npromptpack-build = \"1\"\n"
        );
    }

    #[test]
    fn names_finds_keys_and_tables_only_in_their_section() {
        let text = "[dependencies]\npromptpack = \"1\"\n[build-dependencies.promptpack-build]\npath = \"x\"\n";
        assert!(names(text, "dependencies", "promptpack"));
        assert!(names(text, "build-dependencies", "promptpack-build"));
        assert!(!names(text, "dependencies", "promptpack-build"));
        let other = "[dev-dependencies]\npromptpack = \"1\"\n";
        assert!(!names(other, "dependencies", "promptpack"));
    }
}
