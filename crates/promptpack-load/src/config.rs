//! Where the prompts live and how they are written: the prompt root, its
//! `templates/` and `snippets/` folders and `promptpack.toml`.

use crate::read::{Refused, read_regular};
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
use promptpack_core::settings::Settings;
use promptpack_core::source_file::{SourceFile, Span};
use promptpack_core::syntax::Delimiters;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The name of the optional settings file at the prompt root.
pub const CONFIG_FILE: &str = "promptpack.toml";

/// Settings for finding and reading a prompt folder.
///
/// Start from [`Config::load`] (which reads `promptpack.toml` when there is
/// one) or [`Config::new`], then change what you need:
///
/// ```
/// let config = promptpack_load::Config::new("prompts")
///     .templates_dir("prompts/templates")
///     .delimiters("<<", ">>")?;
/// assert_eq!(config.delimiters_ref().open(), "<<");
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
}

/// The shape of `promptpack.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    templates: Option<PathBuf>,
    snippets: Option<PathBuf>,
    delimiters: Option<DelimitersFile>,
    lints: Option<LintsFile>,
    syntax: Option<SyntaxFile>,
    build: Option<BuildFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SyntaxFile {
    #[serde(default)]
    standalone_tags: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildFile {
    #[serde(default = "yes")]
    warnings: bool,
    crate_path: Option<CratePath>,
}

/// A `[build] crate_path` that passed [`check_crate_path`]: refused while
/// the file is read, so that the error points at the value.
#[derive(Debug, Deserialize)]
#[serde(try_from = "String")]
struct CratePath(String);

impl TryFrom<String> for CratePath {
    type Error = String;

    fn try_from(path: String) -> std::result::Result<Self, String> {
        check_crate_path(&path)?;
        Ok(CratePath(path))
    }
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
                    && name != "_"
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !RESERVED.contains(&name)
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

/// Rust's keywords, which no name of a crate path may be.
const RESERVED: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DelimitersFile {
    open: toml::Spanned<String>,
    close: toml::Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LintsFile {
    #[serde(default)]
    naming_exempt: Vec<String>,
}

impl Config {
    /// Defaults for the prompt root `root`: `root/templates`, `root/snippets`,
    /// `{{` and `}}`. Does not read `promptpack.toml`.
    pub fn new(root: impl Into<PathBuf>) -> Config {
        let root = root.into();
        Config {
            templates: root.join("templates"),
            snippets: root.join("snippets"),
            root,
            settings: Settings::default(),
            build_warnings: true,
            crate_path: DEFAULT_CRATE_PATH.to_string(),
            max_file_bytes: None,
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
    /// ```
    pub fn load(root: impl Into<PathBuf>) -> Result<Config> {
        let mut config = Config::new(root);
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
        let file: ConfigFile = toml::from_str(&text).map_err(|e| config_error(&text, &e))?;
        if let Some(t) = file.templates {
            config.templates = config.root.join(t);
        }
        if let Some(s) = file.snippets {
            config.snippets = config.root.join(s);
        }
        if let Some(d) = file.delimiters {
            let (open, close) = (d.open.get_ref(), d.close.get_ref());
            config.settings.delimiters = Delimiters::new(open, close).map_err(|e| {
                // Point at the value that is refused (`{{` is a valid opening).
                let bad = if Delimiters::new(open, "}}").is_err() {
                    d.open.span()
                } else {
                    d.close.span()
                };
                let file = SourceFile::new(CONFIG_FILE, text.as_str());
                e.located(file.location(Span {
                    start: bad.start,
                    end: bad.end,
                }))
            })?;
        }
        config.settings.naming_exempt = file.lints.unwrap_or_default().naming_exempt;
        config.settings.standalone_tags = file.syntax.unwrap_or_default().standalone_tags;
        if let Some(build) = file.build {
            config.build_warnings = build.warnings;
            if let Some(CratePath(path)) = build.crate_path {
                config.crate_path = path;
            }
        }
        Ok(config)
    }

    /// Removes a line that holds only a block tag (`{{#if}}`, `{{else}}`,
    /// `{{/if}}`) with its newline, as `[syntax] standalone_tags = true`
    /// does.
    pub fn standalone_tags(mut self, on: bool) -> Config {
        self.settings.standalone_tags = on;
        self
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
    pub fn templates_dir(mut self, dir: impl Into<PathBuf>) -> Config {
        self.templates = dir.into();
        self
    }

    /// Uses another snippets folder.
    pub fn snippets_dir(mut self, dir: impl Into<PathBuf>) -> Config {
        self.snippets = dir.into();
        self
    }

    /// The same settings with the root and folders made absolute against
    /// the working directory now (links are kept, not resolved), so that
    /// they name the same folders after it changes, and as a file watcher
    /// names them.
    pub fn absolute(mut self) -> Config {
        for path in [&mut self.root, &mut self.templates, &mut self.snippets] {
            if let Ok(absolute) = std::path::absolute(&*path) {
                *path = absolute;
            }
        }
        self
    }

    /// Uses other token delimiters, e.g. `<<` and `>>`.
    pub fn delimiters(mut self, open: &str, close: &str) -> Result<Config> {
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
    /// have [`Config::delimiters_ref`] and [`Config::naming_exempt`].
    #[doc(hidden)]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The token delimiters.
    pub fn delimiters_ref(&self) -> &Delimiters {
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

fn config_error(text: &str, e: &toml::de::Error) -> Error {
    let file = SourceFile::new(CONFIG_FILE, text);
    let mut diagnostic = Diagnostic::new(
        ErrorCode::InvalidConfig,
        format!("{CONFIG_FILE} is not valid: {}", e.message()),
    );
    diagnostic = match e.span() {
        Some(span) => diagnostic.at(file.location(Span {
            start: span.start,
            end: span.end,
        })),
        None => diagnostic.at(Location::file(CONFIG_FILE)),
    };
    diagnostic.into()
}
