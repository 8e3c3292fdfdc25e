//! Where the prompts live and how they are written: the prompt root, its
//! `templates/` and `snippets/` folders and `promptpack.toml`.

use crate::read::{Refused, read_regular};
use crate::toml_tree::{self, Node, SyntaxError, Table, Value};
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
use promptpack_core::keywords::is_keyword;
use promptpack_core::render::DEFAULT_MAX_RENDER_BYTES;
use promptpack_core::settings::Settings;
use promptpack_core::source_file::{SourceFile, Span};
use promptpack_core::syntax::Delimiters;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The name of the optional settings file at the prompt root.
pub const CONFIG_FILE: &str = "promptpack.toml";

/// Settings for finding and reading a prompt folder.
///
/// Start from [`Config::load`] (which reads `promptpack.toml` when there is
/// one) or [`Config::new`], then change what you need. Each setting has a
/// getter named after it (`templates()`, `delimiters()`, `max_render_bytes()`)
/// and a setter named `with_` and the same name, which takes the config by
/// value and returns it (`with_templates`, `with_delimiters`), or a
/// `Result` where a value can be refused:
///
/// ```
/// let config = promptpack_load::Config::new("prompts")
///     .with_templates("prompts/templates")
///     .with_delimiters("<<", ">>")?;
/// assert_eq!(config.delimiters().open(), "<<");
/// # Ok::<(), promptpack_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    root: PathBuf,
    templates: PathBuf,
    snippets: PathBuf,
    settings: Settings,
    build_warnings: bool,
    crate_path: String,
    max_file_bytes: Option<u64>,
    max_render_bytes: usize,
}

/// Where generated code finds the promptpack runtime unless told otherwise.
const DEFAULT_CRATE_PATH: &str = "::promptpack";

/// Refuses a crate path that is not `::name(::name)*` or `crate(::name)+`
/// with Rust identifiers for names: generated code splices it in as it is.
fn check_crate_path(path: &str) -> std::result::Result<(), String> {
    let (first, rest) = match path.strip_prefix("::") {
        Some(rest) => (None, rest),
        None => path
            .split_once("::")
            .map_or((Some(path), ""), |(f, r)| (Some(f), r)),
    };
    let names_ok = |names: &str| {
        !names.is_empty()
            && names.split("::").all(|name| {
                name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !is_keyword(name)
            })
    };
    if matches!(first, None | Some("crate")) && names_ok(rest) {
        return Ok(());
    }
    Err(format!(
        "crate path `{path}` is not a path to the promptpack runtime: write `::promptpack`, \
         `::my_crate::promptpack` or `crate::promptpack`, each name a Rust identifier"
    ))
}

/// The defaults for the current folder, `promptpack.toml` unread: what
/// [`Config::new`] gives for `.`. For sources held in memory, where only the
/// language's settings and the render bound matter.
impl Default for Config {
    fn default() -> Config {
        Config::new(".")
    }
}

impl Config {
    /// Defaults for the prompt root `root`: `root/templates`, `root/snippets`,
    /// `{{` and `}}`. Does not read `promptpack.toml`.
    pub fn new(root: impl Into<PathBuf>) -> Config {
        Config::at(root.into())
    }

    /// [`Config::new`] of a path already converted. The generic functions
    /// of this API only convert and call one like it, so that what a
    /// caller's crate compiles of them is the conversion alone, not the
    /// body once more for each path type it passes.
    fn at(root: PathBuf) -> Config {
        Config {
            templates: root.join("templates"),
            snippets: root.join("snippets"),
            root,
            settings: Settings::default(),
            build_warnings: true,
            crate_path: DEFAULT_CRATE_PATH.to_string(),
            max_file_bytes: None,
            max_render_bytes: DEFAULT_MAX_RENDER_BYTES,
        }
    }

    /// The defaults for `root`, changed by `root/promptpack.toml` when it exists.
    /// Paths in the file are relative to `root`.
    ///
    /// ```toml
    /// templates = "prompts/templates"   # default "templates"
    /// snippets = "prompts/snippets"     # default "snippets"
    /// [delimiters]
    /// open = "<<"
    /// close = ">>"
    /// [lints]
    /// naming_exempt = ["legacy_prompt"] # template ids the naming lints skip
    /// [build]
    /// warnings = false                  # no cargo warnings from the build script
    /// crate_path = "::my_crate::promptpack" # where generated code finds promptpack
    /// [render]
    /// max_bytes = 16777216              # the most one part of a prompt may render to
    /// ```
    pub fn load(root: impl Into<PathBuf>) -> Result<Config> {
        Config::load_at(root.into())
    }

    /// [`Config::load`] of a path already converted (see [`Config::at`]).
    fn load_at(root: PathBuf) -> Result<Config> {
        let mut config = Config::at(root);
        let path = config.root.join(CONFIG_FILE);
        // Read as prompt files are: a FIFO or a device here would block or
        // read without end.
        let refused = |refused: Refused| -> Error {
            let message = refused.message(&path.display().to_string());
            Diagnostic::new(ErrorCode::Io, message)
                .at(Location::file(CONFIG_FILE))
                .into()
        };
        let bytes = match read_regular(&path, None, None) {
            Ok(bytes) => bytes,
            Err(Refused::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(config),
            Err(e) => return Err(refused(e)),
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            let e = std::io::Error::new(std::io::ErrorKind::InvalidData, e);
            refused(Refused::Io(e))
        })?;
        read_file(&mut config, &text)?;
        Ok(config)
    }

    /// Removes a line that holds only a block tag (`{{#if}}`, `{{else}}`,
    /// `{{/if}}`) with its newline, as `[syntax] standalone_tags = true`
    /// does.
    pub fn with_standalone_tags(mut self, on: bool) -> Config {
        self.settings.standalone_tags = on;
        self
    }

    /// Whether a line that holds only a block tag is removed with its
    /// newline (`[syntax] standalone_tags`, off unless set).
    pub fn standalone_tags(&self) -> bool {
        self.settings.standalone_tags
    }

    /// Whether the build script reports lints and likely typos as cargo
    /// warnings (`[build] warnings`, on unless set to `false`).
    pub fn build_warnings(&self) -> bool {
        self.build_warnings
    }

    /// Turns the build script's cargo warnings on or off.
    pub fn with_build_warnings(mut self, on: bool) -> Config {
        self.build_warnings = on;
        self
    }

    /// The path by which generated code names the promptpack runtime
    /// (`[build] crate_path`, `::promptpack` unless set).
    pub fn crate_path(&self) -> &str {
        &self.crate_path
    }

    /// Has generated code name the promptpack runtime by `path`, as
    /// prost-build's `prost_path` does, for a crate that uses promptpack
    /// through another crate's re-export: `::my_crate::promptpack`, or
    /// `crate::promptpack` for a re-export in the crate itself. Fails with
    /// `invalid_config` for anything else than `::` or `crate` followed by
    /// Rust identifiers separated by `::`.
    pub fn with_crate_path(mut self, path: &str) -> Result<Config> {
        check_crate_path(path).map_err(|message| Error::new(ErrorCode::InvalidConfig, message))?;
        self.crate_path = path.to_string();
        Ok(self)
    }

    /// The most bytes one part of a prompt (its system or its user text)
    /// may render to: a render measures its output first and refuses one
    /// past this bound as `too_large`, before it allocates. Default
    /// [`DEFAULT_MAX_RENDER_BYTES`] (16 MiB); `[render] max_bytes` in
    /// `promptpack.toml`. A build script bakes it into the generated code;
    /// a [`Library`](https://docs.rs/promptpack) loaded with this config
    /// takes it too.
    pub fn max_render_bytes(&self) -> usize {
        self.max_render_bytes
    }

    /// Sets [`Config::max_render_bytes`].
    pub fn with_max_render_bytes(mut self, bytes: usize) -> Config {
        self.max_render_bytes = bytes;
        self
    }

    /// The largest prompt file (template part or snippet) read, in bytes:
    /// `None` (the default) reads any size.
    pub fn max_file_bytes(&self) -> Option<u64> {
        self.max_file_bytes
    }

    /// Refuses a prompt file larger than `bytes` as `too_large`, from its
    /// size on disk, before reading it: for callers that keep what they
    /// read (the catalog), where check's limits apply anyway.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Config {
        self.max_file_bytes = Some(bytes);
        self
    }

    /// Uses another templates folder.
    pub fn with_templates(mut self, dir: impl Into<PathBuf>) -> Config {
        self.templates = dir.into();
        self
    }

    /// Uses another snippets folder.
    pub fn with_snippets(mut self, dir: impl Into<PathBuf>) -> Config {
        self.snippets = dir.into();
        self
    }

    /// The same settings with the root and folders made absolute against
    /// the working directory now (links are kept, not resolved), so that
    /// they name the same folders after it changes, and as a file watcher
    /// names them.
    pub fn into_absolute(mut self) -> Config {
        for path in [&mut self.root, &mut self.templates, &mut self.snippets] {
            if let Ok(absolute) = std::path::absolute(&*path) {
                *path = absolute;
            }
        }
        self
    }

    /// Uses other token delimiters, e.g. `<<` and `>>`; `invalid_config`
    /// for a pair the language cannot use (see [`Delimiters::new`]).
    pub fn with_delimiters(mut self, open: &str, close: &str) -> Result<Config> {
        self.settings.delimiters = Delimiters::new(open, close)?;
        Ok(self)
    }

    /// The prompt root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The templates folder.
    pub fn templates(&self) -> &Path {
        &self.templates
    }

    /// The snippets folder.
    pub fn snippets(&self) -> &Path {
        &self.snippets
    }

    /// The settings the language and the lints use: delimiters and lint
    /// exemptions. Hidden: `Settings` is the compiler's type, and
    /// `promptpack` and `promptpack-build` re-export `Config`; their users
    /// have [`Config::delimiters`], [`Config::standalone_tags`] and [`Config::naming_exempt`].
    #[doc(hidden)]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The token delimiters.
    pub fn delimiters(&self) -> &Delimiters {
        &self.settings.delimiters
    }

    /// Template ids exempt from the naming lints of `promptpack check`.
    pub fn naming_exempt(&self) -> &[String] {
        &self.settings.naming_exempt
    }

    /// `path` as shown in diagnostics: relative to the root where it is inside.
    pub fn display_path(&self, path: &Path) -> String {
        let shown = path.strip_prefix(&self.root).unwrap_or(path);
        shown.to_string_lossy().replace('\\', "/")
    }
}

/// The keys `promptpack.toml` knows, at the top and in each table.
const TOP_KEYS: &[&str] = &[
    "templates",
    "snippets",
    "delimiters",
    "lints",
    "syntax",
    "build",
    "render",
];
const DELIMITERS_KEYS: &[&str] = &["open", "close"];
const LINTS_KEYS: &[&str] = &["naming_exempt"];
const SYNTAX_KEYS: &[&str] = &["standalone_tags"];
const BUILD_KEYS: &[&str] = &["warnings", "crate_path"];
const RENDER_KEYS: &[&str] = &["max_bytes"];

/// Applies the settings of `promptpack.toml`, whose text is `text`, to
/// `config`. Every problem is `invalid_config` at the key or value it is
/// about.
fn read_file(config: &mut Config, text: &str) -> Result<()> {
    let file = File {
        source: SourceFile::new(CONFIG_FILE, text),
    };
    let top = toml_tree::parse(text).map_err(|e| file.syntax_error(&e))?;
    let top = &top;
    file.known_keys(top, "", TOP_KEYS)?;
    if let Some(templates) = find(top, "templates") {
        config.templates = config.root.join(file.string(templates, "templates")?);
    }
    if let Some(snippets) = find(top, "snippets") {
        config.snippets = config.root.join(file.string(snippets, "snippets")?);
    }
    if let Some(delimiters) = find(top, "delimiters") {
        let table = file.table(delimiters, "delimiters", DELIMITERS_KEYS)?;
        let value = |key: &str| {
            find(table, key).ok_or_else(|| {
                file.invalid(
                    delimiters.span.clone(),
                    format!("[delimiters] needs `{key}`"),
                )
            })
        };
        let (open, close) = (value("open")?, value("close")?);
        let (open_text, close_text) = (file.string(open, "open")?, file.string(close, "close")?);
        config.settings.delimiters = Delimiters::new(open_text, close_text).map_err(|e| {
            // Point at the value that is refused (`{{` is a valid opening).
            let bad = if Delimiters::new(open_text, "}}").is_err() {
                open.span.clone()
            } else {
                close.span.clone()
            };
            e.located(file.source.location(span(bad)))
        })?;
    }
    if let Some(lints) = find(top, "lints") {
        let table = file.table(lints, "lints", LINTS_KEYS)?;
        if let Some(exempt) = find(table, "naming_exempt") {
            config.settings.naming_exempt = file.strings(exempt, "naming_exempt")?;
        }
    }
    if let Some(syntax) = find(top, "syntax") {
        let table = file.table(syntax, "syntax", SYNTAX_KEYS)?;
        if let Some(standalone) = find(table, "standalone_tags") {
            config.settings.standalone_tags = file.boolean(standalone, "standalone_tags")?;
        }
    }
    if let Some(build) = find(top, "build") {
        let table = file.table(build, "build", BUILD_KEYS)?;
        if let Some(warnings) = find(table, "warnings") {
            config.build_warnings = file.boolean(warnings, "warnings")?;
        }
        if let Some(path) = find(table, "crate_path") {
            let text = file.string(path, "crate_path")?;
            check_crate_path(text).map_err(|message| file.invalid(path.span.clone(), message))?;
            config.crate_path = text.to_string();
        }
    }
    if let Some(render) = find(top, "render") {
        let table = file.table(render, "render", RENDER_KEYS)?;
        if let Some(max) = find(table, "max_bytes") {
            config.max_render_bytes = file.byte_count(max, "max_bytes")?;
        }
    }
    Ok(())
}

/// The value of `key` in `table`.
fn find<'t>(table: &'t Table, key: &str) -> Option<&'t Node> {
    table.get(key)
}

fn span(range: Range<usize>) -> Span {
    Span {
        start: range.start,
        end: range.end,
    }
}

/// `promptpack.toml` being read, for errors at their place in it.
struct File {
    source: SourceFile,
}

impl File {
    fn invalid(&self, at: Range<usize>, message: impl Into<String>) -> Error {
        Diagnostic::new(ErrorCode::InvalidConfig, message.into())
            .at(self.source.location(span(at)))
            .into()
    }

    fn syntax_error(&self, e: &SyntaxError) -> Error {
        let diagnostic = Diagnostic::new(
            ErrorCode::InvalidConfig,
            format!("{CONFIG_FILE} is not valid: {}", e.message),
        );
        match e.span.clone() {
            Some(at) => diagnostic.at(self.source.location(span(at))),
            None => diagnostic.at(Location::file(CONFIG_FILE)),
        }
        .into()
    }

    /// Refuses a key of `table` (`[section]`, or the top for "") that is
    /// not one of `known`, listing those it knows.
    fn known_keys(&self, table: &Table, section: &str, known: &[&str]) -> Result<()> {
        for (name, key_span, _) in table.entries() {
            if known.contains(&name) {
                continue;
            }
            let place = if section.is_empty() {
                String::new()
            } else {
                format!(" in [{section}]")
            };
            let list = known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(self.invalid(
                key_span.clone(),
                format!("{CONFIG_FILE} has no setting `{name}`{place}; it knows {list}"),
            ));
        }
        Ok(())
    }

    fn wrong_type(&self, value: &Node, key: &str, wanted: &str) -> Error {
        let found = value.value.kind();
        self.invalid(
            value.span.clone(),
            format!("`{key}` in {CONFIG_FILE} is {wanted}, found {found}"),
        )
    }

    fn string<'v>(&self, value: &'v Node, key: &str) -> Result<&'v str> {
        match &value.value {
            Value::String(text) => Ok(text),
            _ => Err(self.wrong_type(value, key, "a string")),
        }
    }

    /// A count of bytes: a positive integer that fits a `usize`.
    fn byte_count(&self, value: &Node, key: &str) -> Result<usize> {
        match value.value {
            Value::Integer(Some(n)) => {
                usize::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
                    self.invalid(
                        value.span.clone(),
                        format!("`{key}` in {CONFIG_FILE} is a number of bytes above 0, found {n}"),
                    )
                })
            }
            Value::Integer(None) => Err(self.invalid(
                value.span.clone(),
                format!("`{key}` in {CONFIG_FILE} is too large a number"),
            )),
            _ => Err(self.wrong_type(value, key, "a number of bytes")),
        }
    }

    fn boolean(&self, value: &Node, key: &str) -> Result<bool> {
        match value.value {
            Value::Boolean(b) => Ok(b),
            _ => Err(self.wrong_type(value, key, "`true` or `false`")),
        }
    }

    fn strings(&self, value: &Node, key: &str) -> Result<Vec<String>> {
        let Value::Array(items) = &value.value else {
            return Err(self.wrong_type(value, key, "an array of strings"));
        };
        items
            .iter()
            .map(|item| self.string(item, key).map(str::to_string))
            .collect()
    }

    /// `value` as the table `[name]`, its keys all among `known`.
    fn table<'v>(&self, value: &'v Node, name: &str, known: &[&str]) -> Result<&'v Table> {
        let Value::Table(table) = &value.value else {
            return Err(self.wrong_type(value, name, "a table"));
        };
        self.known_keys(table, name, known)?;
        Ok(table)
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;

    fn load(text: &str) -> std::result::Result<Config, (String, String)> {
        let mut config = Config::new("root");
        match read_file(&mut config, text) {
            Ok(()) => Ok(config),
            Err(e) => {
                let d = &e.diagnostics()[0];
                let at = d
                    .location
                    .as_ref()
                    .map_or(String::new(), |l| format!("{}:{}", l.line(), l.column()));
                Err((at, d.message.clone()))
            }
        }
    }

    #[test]
    fn every_setting_is_read() {
        let config = load(
            "templates = \"t\"\nsnippets = \"s\"\n[delimiters]\nopen = \"<<\"\nclose = \">>\"\n\
             [lints]\nnaming_exempt = [\"a\", \"b\"]\n[syntax]\nstandalone_tags = true\n\
             [build]\nwarnings = false\ncrate_path = \"::x::promptpack\"\n\
             [render]\nmax_bytes = 0x10_00\n",
        )
        .expect("valid");
        assert_eq!(config.templates(), Path::new("root/t"));
        assert_eq!(config.snippets(), Path::new("root/s"));
        assert_eq!(config.delimiters().open(), "<<");
        assert_eq!(config.naming_exempt(), ["a", "b"]);
        assert!(config.settings().standalone_tags);
        assert!(!config.build_warnings());
        assert_eq!(config.crate_path(), "::x::promptpack");
        assert_eq!(config.max_render_bytes(), 4096);
        let defaults = load("").expect("valid");
        assert_eq!(defaults, Config::new("root"));
    }

    /// Each problem is `invalid_config` at the key or value it is about.
    #[test]
    fn problems_point_at_their_place() {
        let cases = [
            ("templats = \"t\"\n", "1:1", "no setting `templats`"),
            (
                "[build]\nwarning = true\n",
                "2:1",
                "no setting `warning` in [build]",
            ),
            ("templates = 3\n", "1:13", "is a string, found an integer"),
            (
                "[syntax]\nstandalone_tags = \"yes\"\n",
                "2:19",
                "`true` or `false`",
            ),
            (
                "[lints]\nnaming_exempt = [\"a\", 1]\n",
                "2:23",
                "a string, found an integer",
            ),
            ("build = 1\n", "1:9", "a table, found an integer"),
            ("[delimiters]\nopen = \"<<\"\n", "1:1", "needs `close`"),
            (
                "[delimiters]\nopen = \"{{\"\nclose = \"x\"\n",
                "3:9",
                "close delimiter",
            ),
            ("[build]\ncrate_path = \"self::p\"\n", "2:14", "crate path"),
            ("[delimiters\n", "1:12", "is not valid"),
            ("[render]\nmax_bytes = 0\n", "2:13", "above 0, found 0"),
            ("[render]\nmax_bytes = -5\n", "2:13", "above 0, found -5"),
            (
                "[render]\nmax_bytes = 99999999999999999999\n",
                "2:13",
                "too large a number",
            ),
            (
                "[render]\nmax_bytes = \"1M\"\n",
                "2:13",
                "a number of bytes",
            ),
            ("[render]\nmax = 1\n", "2:1", "no setting `max` in [render]"),
        ];
        for (text, at, message) in cases {
            let (found_at, found) = load(text).expect_err(text);
            assert_eq!(found_at, at, "{text:?}: {found}");
            assert!(found.contains(message), "{text:?}: {found}");
        }
    }

    /// A crate path refuses every word core's keyword lists hold, the ones
    /// a field is escaped for too, wherever it stands: one list, one rule.
    #[test]
    fn crate_paths_refuse_every_keyword() {
        use promptpack_core::keywords::{NEVER, RAW_ONLY};
        for keyword in RAW_ONLY.iter().chain(NEVER) {
            for path in [
                format!("::{keyword}"),
                format!("::x::{keyword}::y"),
                format!("crate::{keyword}"),
            ] {
                assert!(check_crate_path(&path).is_err(), "{path}");
            }
            let plain = format!("::{keyword}s::promptpack");
            assert_eq!(check_crate_path(&plain), Ok(()), "{plain}");
        }
    }
}
