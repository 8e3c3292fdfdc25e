//! The build-script API of [promptpack](https://docs.rs/promptpack): read the
//! crate's prompts, check them, generate the typed code into `OUT_DIR`, and
//! tell cargo when to do it again. Put it under `[build-dependencies]`; the
//! code generator lives here only, so an application's runtime dependency
//! tree has none of it.
//!
//! The code is written in proportion to the templates: a file per prompt
//! (an edit rebuilds one file's items, rustc's incremental build keeps the
//! rest), in builds without optimization a table per template part that one
//! loop in promptpack renders, and in optimized builds straight-line
//! renderers (one allocation of exact size, then the pieces pushed).
//! [`RENDERERS_ENV`] chooses one for every profile.
//!
//! ```no_run
//! // build.rs
//! # #[allow(clippy::needless_doctest_main)]
//! fn main() {
//!     promptpack_build::compile_or_exit();
//! }
//! ```
//!
//! and in the crate:
//!
//! ```ignore
//! promptpack::include_prompts!();
//! ```
//!
//! A template error then fails the build as a compiler error does: each
//! diagnostic is one `error:` line of cargo's output, with the template's
//! file, line and column, and nothing else (no panic, no backtrace, no dump
//! of the build script's output):
//!
//! ```text
//! error: my-app@0.1.0: templates/assistant/system.md:3:1: snippet_not_found: …
//! error: build script logged errors
//! ```
//!
//! [`compile`] returns the error instead, for a build script that goes on
//! (or fails) its own way; [`BuildError::exit`] ends it as
//! [`compile_or_exit`] does.
//!
//! [`compile`] also hands cargo a warning line for every lint of the prompts
//! (what `promptpack check` warns about) and for likely typos in variable
//! names, with the template's file, line and column:
//!
//! ```text
//! warning: my-app@0.1.0: templates/assistant/system.md:1:9: typo: variable `agentNmae` is new since the last build and one edit from `agentName`, which is gone: …
//! ```
//!
//! `[build] warnings = false` in `promptpack.toml`, or
//! [`Config::with_build_warnings`]`(false)`, turns them off.
//!
//! The generated code names promptpack as `::promptpack`. A crate that has
//! it through another crate's re-export names the path instead, as
//! prost-build's `prost_path` does: `[build] crate_path =
//! "::my_framework::promptpack"` in `promptpack.toml`, or
//! [`Config::with_crate_path`]. The code is wrapped in a macro of that
//! runtime, which checks that it reads the format this promptpack-build
//! writes: when the two versions drift apart, the build fails with one error
//! that names both, instead of many deep inside the generated files.
//!
//! Beside the code, [`compile`] writes the program's [`Contract`] (every
//! prompt id with the variables of its vars struct and their kinds) as
//! [`CONTRACT_FILE`] in `OUT_DIR`; [`contract`] gives tools the same value
//! without a build.

#![warn(missing_docs)]

#[cfg(feature = "unstable-machinery")]
pub mod codegen;
#[cfg(not(feature = "unstable-machinery"))]
mod codegen;
mod exchange_names;
mod names;
mod record;
mod renderer;
mod rust_source;
mod warnings;

use codegen::{DevPaths, Generated, Renderers, generate_parts};
// The contract's types, named here so that everything `Contract` shows is
// API of this crate: `VarKind` with them (the compiler builds contracts
// with `promptpack_core::contract::of`, which is not).
pub use promptpack_core::contract::{Contract, PromptContract, Shape, VarContract};
use promptpack_core::diagnostics::{Style, render_error};
pub use promptpack_core::error::{Diagnostic, Error, ErrorCode, Location, Result};
pub use promptpack_core::program::VarKind;
pub use promptpack_load::{CONFIG_FILE, Config};
use promptpack_load::{Compiled, Stages, load};
use record::{NAMES_FILE, NameRecord};
use std::fmt;
use std::path::{Path, PathBuf};

/// The file, in `OUT_DIR`, that [`include_prompts!`](https://docs.rs/promptpack/latest/promptpack/macro.include_prompts.html) includes.
pub const GENERATED_FILE: &str = "promptpack_prompts.rs";

/// The file, in `OUT_DIR`, that holds the compiled program's [`Contract`]
/// as JSON ([`Contract::to_json`]): what text from outside the build (a
/// catalog version) must fit before this program may render it.
pub const CONTRACT_FILE: &str = "promptpack_contract.json";

/// The prompts failed to compile. Every problem was already printed
/// rustc-style on stderr, which cargo shows for a build script that fails;
/// this value only sums them up, so `compile().unwrap()` ends with a short
/// line. [`BuildError::exit`] shows them as cargo errors instead.
pub struct BuildError {
    error: Error,
}

impl BuildError {
    /// The underlying error with every diagnostic.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// Ends the build script so that cargo fails the build with each
    /// diagnostic as a top-level `error:` line (`cargo::error=`), the
    /// template's `file:line:col` first: no panic, no backtrace, and none of
    /// the build script's other output. What [`compile_or_exit`] does on
    /// failure; call it from a build script only.
    ///
    /// ```no_run
    /// let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    /// let config = promptpack_build::Config::load(&dir).unwrap().with_templates(format!("{dir}/prompts"));
    /// if let Err(e) = promptpack_build::compile_config(&config) {
    ///     e.exit();
    /// }
    /// ```
    ///
    /// A crate whose `rust-version` is older than 1.77 cannot use cargo's
    /// `cargo::` instructions: there each diagnostic is a `cargo:warning`
    /// line and the script exits with status 1, so cargo also shows the
    /// rustc-style rendering from its stderr.
    pub fn exit(&self) -> ! {
        use std::io::Write as _;
        let lines = self
            .error
            .diagnostics()
            .iter()
            .map(|d| warnings::Warning::from(d).to_string());
        let mut out = std::io::stdout().lock();
        // Outside a build script no cargo reads the instructions: status 1,
        // with the rendering already on stderr.
        let old_syntax =
            cargo_error_refused(std::env::var("CARGO_PKG_RUST_VERSION").ok().as_deref());
        if std::env::var_os("OUT_DIR").is_none() || old_syntax {
            for line in lines {
                let _ = writeln!(out, "cargo:warning=error: {line}");
            }
            let _ = out.flush();
            eprintln!("{self}");
            std::process::exit(1);
        }
        for line in lines {
            let _ = writeln!(out, "cargo::error={line}");
        }
        let _ = out.flush();
        // Status 0 on purpose: cargo fails the build on any `cargo::error`
        // line all the same (and runs the script again next time), while a
        // failing status would make it also print the script's whole
        // stdout and stderr under "failed to run custom build command", the
        // noise the error lines are meant to replace.
        std::process::exit(0)
    }
}

/// Whether cargo refuses `cargo::` instructions from the build script of a
/// crate with this `rust-version` (`CARGO_PKG_RUST_VERSION`): it does below
/// 1.77, where they were added. `cargo::error` itself came with cargo 1.84,
/// older than any toolchain that builds promptpack (its `rust-version`).
fn cargo_error_refused(rust_version: Option<&str>) -> bool {
    let Some(version) = rust_version.filter(|v| !v.is_empty()) else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) < (1, 77),
        (Some(major), None) => major < 1,
        _ => false,
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.error.diagnostics().len();
        write!(
            f,
            "promptpack: {n} error{} in the prompt templates (shown above)",
            if n == 1 { "" } else { "s" }
        )
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {}

/// What a build script calls: [`compile`], and on failure
/// [`BuildError::exit`], which fails the build with each diagnostic as a
/// cargo error.
///
/// ```no_run
/// // build.rs
/// # #[allow(clippy::needless_doctest_main)]
/// fn main() {
///     promptpack_build::compile_or_exit();
/// }
/// ```
pub fn compile_or_exit() {
    if let Err(e) = compile() {
        e.exit();
    }
}

/// Compiles the prompts beside the crate's `Cargo.toml`: `templates/`,
/// `snippets/` and `promptpack.toml` (when present) in `CARGO_MANIFEST_DIR`.
/// On failure every diagnostic has been printed on stderr; a build script
/// that has nothing else to do calls [`compile_or_exit`] instead.
pub fn compile() -> Result<(), BuildError> {
    let root = env_path("CARGO_MANIFEST_DIR")?;
    let config = Config::load(&root).map_err(report)?;
    compile_config(&config)
}

/// Compiles the prompts `config` points at; use it to change folders or
/// delimiters:
///
/// ```no_run
/// let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
/// let config = promptpack_build::Config::load(&dir).unwrap().with_templates(format!("{dir}/prompts"));
/// promptpack_build::compile_config(&config).unwrap();
/// ```
///
/// Unless [`Config::build_warnings`] is off, every lint and every likely typo
/// of a variable name is printed as a `cargo:warning` line (cargo shows them
/// as `warning: <crate>@<version>: templates/x/system.md:3:5: near_miss: …`).
/// A typo is a variable one or two edits from another variable of its
/// prompt, or from one the prompt had at the last build and lost: a rename
/// that changes a field of the vars struct, which rustc then reports without
/// naming the template. The last build's names are kept in `OUT_DIR`.
///
/// The program's [`Contract`] is written to [`CONTRACT_FILE`] in `OUT_DIR`,
/// like the code only when it changed.
pub fn compile_config(config: &Config) -> Result<(), BuildError> {
    let out_dir = env_path("OUT_DIR")?;
    for path in watched_paths(config) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!("cargo:rerun-if-env-changed={RENDERERS_ENV}");
    let renderers = renderers_for_build().map_err(report)?;
    let Checked { compiled, code } = checked(config, &[renderers]);
    let names = out_dir.join(NAMES_FILE);
    let previous = NameRecord::read(&names);
    if config.build_warnings() {
        // `cargo:` rather than `cargo::`: the latter is an error in a crate
        // whose `rust-version` is older than 1.77.
        for warning in warnings::build_warnings(&compiled, previous.as_ref(), config.settings()) {
            println!("cargo:warning={warning}");
        }
    }
    let compiled = compiled.into_result().map_err(report)?;
    // A folder per prompt tree, so that two trees compiled by one build
    // script (the main file renamed in between) keep their files apart.
    let mut tree = promptpack_core::program::StableHasher::default();
    tree.write_str(&absolute(config.templates()));
    let folder = format!("{PROMPT_FOLDER}/{:016x}", tree.finish());
    let (main, files) = finish(code).map_err(report)?.into_files(&folder);
    write_files(&out_dir, &folder, &main, &files).map_err(report)?;
    let contract = promptpack_core::contract::of(&compiled.prompts);
    write_if_changed(&out_dir.join(CONTRACT_FILE), &contract.to_json()).map_err(report)?;
    // Only a hint for the next run's warnings: failing to keep it fails nothing.
    let record = NameRecord::next(&compiled.prompts, previous.as_ref());
    let _ = write_if_changed(&names, &record.render());
    Ok(())
}

/// The generated Rust source for the prompts `config` points at, without
/// writing anything. Absolute paths of the folders are recorded for the dev
/// path.
pub fn generate_code(config: &Config) -> Result<String> {
    generate_code_as(config, Renderers::StraightLine)
}

/// The [`Contract`] of the program [`compile_config`] would generate from
/// the prompts `config` points at, without writing anything: what
/// [`CONTRACT_FILE`] holds after that build. Fails with every error the
/// build would fail with, since such a tree has no program.
pub fn contract(config: &Config) -> Result<Contract> {
    let Checked { compiled, .. } = checked(config, &[Renderers::StraightLine]);
    let compiled = compiled.into_result()?;
    Ok(promptpack_core::contract::of(&compiled.prompts))
}

/// [`generate_code`] with the parts rendered as `renderers` says.
#[cfg(feature = "unstable-machinery")]
pub fn generate_code_with(config: &Config, renderers: Renderers) -> Result<String> {
    generate_code_as(config, renderers)
}

fn generate_code_as(config: &Config, renderers: Renderers) -> Result<String> {
    let Checked { compiled, code } = checked(config, &[renderers]);
    compiled.into_result()?;
    Ok(finish(code)?.into_single_file())
}

/// The generated code of prompts that passed [`checked`].
fn finish(code: Option<Generated>) -> Result<Generated> {
    // `checked` generates whenever it finds no error.
    code.ok_or_else(|| {
        Error::new(
            ErrorCode::Io,
            "no code was generated for prompts without errors (a promptpack bug)",
        )
    })
}

/// Where the generated code records the prompt files, for the dev path.
fn dev_paths(config: &Config) -> DevPaths {
    DevPaths {
        root: absolute(config.root()),
        templates: absolute(config.templates()),
        snippets: absolute(config.snippets()),
        open: config.delimiters().open().to_string(),
        close: config.delimiters().close().to_string(),
        standalone_tags: config.settings().standalone_tags,
        max_render_bytes: config.max_render_bytes(),
    }
}

/// What [`check`] found in a prompt tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// How many prompts (template folders with a `system.md`) were read.
    pub prompts: usize,
    /// How many snippets were read.
    pub snippets: usize,
    /// Every error: the build fails on any.
    pub errors: Vec<Diagnostic>,
    /// Every lint: things that build but are probably mistakes.
    pub warnings: Vec<Diagnostic>,
}

/// Everything the build checks, without writing anything: the load
/// pipeline with its lints, then what the code generator refuses: ids and
/// variables that cannot become Rust names, or would become the same one,
/// and prompts whose code would pass the size limits (`too_large`: 2 MiB
/// of Rust for one prompt, 10 MiB beyond the first 64 KiB of each for all
/// together, and 128 MiB in all; rustc needs minutes and
/// gigabytes beyond). It runs the generator itself, without formatting, so a
/// tree without errors here is a tree [`compile`] accepts and whose code
/// rustc compiles: `promptpack check` runs this.
pub fn check(config: &Config) -> Report {
    report_of(check_compiled(config)).0
}

/// [`check`], with what the pipeline compiled.
fn check_compiled(config: &Config) -> Compiled {
    checked(config, &[Renderers::StraightLine, Renderers::Tables]).compiled
}

/// [`check`] on prompts and snippets already in memory (a draft in an
/// editor or a console, with the snippets of a catalog): the same pipeline,
/// lints and code generator, under `config`'s settings; its folders are not
/// read.
#[cfg(feature = "unstable-machinery")]
pub fn check_sources(sources: promptpack_core::sources::Sources, config: &Config) -> Report {
    report_of(check_sources_in(sources, config, Stages::with_lints())).0
}

/// [`check_sources`] without the lints (`promptpack_core::lint`): every
/// error, and front matter's warnings. For a caller that checks parts of a
/// tree and lints the whole tree once itself, as the language server does.
#[cfg(feature = "unstable-machinery")]
pub fn check_sources_without_lints(
    sources: promptpack_core::sources::Sources,
    config: &Config,
) -> Report {
    report_of(check_sources_in(sources, config, Stages::default())).0
}

#[cfg(any(feature = "unstable-machinery", feature = "house"))]
fn check_sources_in(
    sources: promptpack_core::sources::Sources,
    config: &Config,
    stages: Stages,
) -> Compiled {
    let compiled =
        promptpack_core::pipeline::compile(sources, Vec::new(), config.settings(), stages);
    let renderers = [Renderers::StraightLine, Renderers::Tables];
    generate_checked(compiled, config, &renderers).compiled
}

/// The report of what the pipeline compiled, and the prompts that
/// resolved, sorted by id.
fn report_of(compiled: Compiled) -> (Report, Vec<promptpack_core::resolve::ResolvedPrompt>) {
    let report = Report {
        prompts: compiled.sources.templates.len(),
        snippets: compiled.sources.snippets.len(),
        errors: compiled.errors,
        warnings: compiled.warnings,
    };
    (report, compiled.prompts)
}

/// The seam promptpack's own crates (the CLI, the console, the language
/// server) build on: the build's checks with the prompts they compiled, so
/// a tool goes on with them (a library to render, token counts) without
/// compiling the tree again.
///
/// **Internal**: behind the `house` feature, for crates that pin this exact
/// version; no semver guarantee.
#[cfg(feature = "house")]
#[doc(hidden)]
pub mod house {
    use super::{Config, Report, Stages, check_compiled, check_sources_in, report_of};
    use promptpack_core::resolve::ResolvedPrompt;
    use promptpack_core::sources::Sources;

    /// What the build's checks found, and the prompts that resolved,
    /// sorted by id.
    #[derive(Debug)]
    pub struct Checked {
        /// What [`check`](crate::check) reports.
        pub report: Report,
        /// The prompts that resolved.
        pub resolved: Vec<ResolvedPrompt>,
    }

    fn checked_of((report, resolved): (Report, Vec<ResolvedPrompt>)) -> Checked {
        Checked { report, resolved }
    }

    /// [`check`](crate::check), with the prompts it compiled.
    pub fn check(config: &Config) -> Checked {
        checked_of(report_of(check_compiled(config)))
    }

    /// [`check`] of prompts and snippets already in memory (a draft in an
    /// editor or a console, with a catalog's snippets), under `config`'s
    /// settings; its folders are not read.
    pub fn check_sources(sources: Sources, config: &Config) -> Checked {
        checked_of(report_of(check_sources_in(
            sources,
            config,
            Stages::with_lints(),
        )))
    }

    /// [`check_sources`] without the lints: for a caller that checks parts
    /// of a tree and lints the whole tree once itself (the language
    /// server).
    pub fn check_sources_without_lints(sources: Sources, config: &Config) -> Checked {
        checked_of(report_of(check_sources_in(
            sources,
            config,
            Stages::default(),
        )))
    }
}

/// What the build makes of a prompt tree: every error, and the code when
/// there is none.
struct Checked {
    compiled: Compiled,
    code: Option<Generated>,
}

/// The load pipeline with lints, then the code generator: [`check`] and the
/// build run this one function, so that they cannot disagree.
fn checked(config: &Config, renderers: &[Renderers]) -> Checked {
    generate_checked(load(config, Stages::with_lints()), config, renderers)
}

/// The code generator over what the pipeline made, its refusals added to
/// the pipeline's errors.
fn generate_checked(mut compiled: Compiled, config: &Config, renderers: &[Renderers]) -> Checked {
    let mut code = None;
    if compiled.errors.is_empty() {
        let prompts = &compiled.prompts;
        let dev = dev_paths(config);
        for &mode in renderers {
            let runtime = config.crate_path();
            match generate_parts(prompts, &compiled.sources.templates, &dev, mode, runtime) {
                Ok(generated) => code = code.or(Some(generated)),
                Err(error) => {
                    compiled.errors.extend(error.into_diagnostics());
                    code = None;
                    break;
                }
            }
        }
    }
    Checked { compiled, code }
}

/// The environment variable that chooses how the generated parts render:
/// `tables` or `straight-line`. Unset, builds without optimization
/// (`opt-level = 0`, cargo's dev profile) get tables and the others
/// straight-line code.
pub const RENDERERS_ENV: &str = "PROMPTPACK_RENDERERS";

/// How the build script's build renders: [`RENDERERS_ENV`], else by the
/// profile's `OPT_LEVEL`.
fn renderers_for_build() -> Result<Renderers> {
    match std::env::var(RENDERERS_ENV).ok().as_deref() {
        Some("tables") => Ok(Renderers::Tables),
        Some("straight-line") => Ok(Renderers::StraightLine),
        Some(other) => Err(Error::new(
            ErrorCode::InvalidConfig,
            format!("{RENDERERS_ENV}={other:?}: expected `tables` or `straight-line`"),
        )),
        None if std::env::var("OPT_LEVEL").is_ok_and(|level| level == "0") => Ok(Renderers::Tables),
        None => Ok(Renderers::StraightLine),
    }
}

/// What cargo must watch: the two folders (cargo scans a folder recursively,
/// so adding or deleting a file counts) and the settings file. A settings
/// file that does not exist is not named: cargo would rerun on every build.
fn watched_paths(config: &Config) -> Vec<PathBuf> {
    let settings = config.root().join(CONFIG_FILE);
    [
        config.templates().to_path_buf(),
        config.snippets().to_path_buf(),
        settings,
    ]
    .into_iter()
    .filter(|p| p.exists())
    .collect()
}

fn absolute(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path.to_string_lossy().into_owned()
}

/// The folder, in `OUT_DIR`, of the file per prompt that
/// [`GENERATED_FILE`] includes (in a folder per prompt tree).
const PROMPT_FOLDER: &str = "promptpack_prompts";

/// Writes the main file and the file of each prompt, each only when it
/// changed, and removes the files of prompts that are gone.
fn write_files(out_dir: &Path, folder: &str, main: &str, files: &[(String, String)]) -> Result<()> {
    let prefix = folder;
    let folder = out_dir.join(folder);
    std::fs::create_dir_all(&folder).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("cannot create {}: {e}", folder.display()),
        )
    })?;
    let wanted: std::collections::HashSet<&str> =
        files.iter().map(|(name, _)| name.as_str()).collect();
    if let Ok(entries) = std::fs::read_dir(&folder) {
        for entry in entries.flatten() {
            let name = format!("{prefix}/{}", entry.file_name().to_string_lossy());
            if !wanted.contains(name.as_str()) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    for (name, code) in files {
        write_if_changed(&out_dir.join(name), code)?;
    }
    write_if_changed(&out_dir.join(GENERATED_FILE), main)
}

/// Writes only when the content differs, so an unchanged prompt set does not
/// make cargo recompile the crate.
fn write_if_changed(path: &Path, code: &str) -> Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == code) {
        return Ok(());
    }
    std::fs::write(path, code).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("cannot write {}: {e}", path.display()),
        )
    })
}

fn env_path(name: &str) -> Result<PathBuf, BuildError> {
    std::env::var_os(name).map(PathBuf::from).ok_or_else(|| {
        report(Error::new(
            ErrorCode::InvalidConfig,
            format!("{name} is not set: promptpack_build::compile runs from a build script"),
        ))
    })
}

/// Prints every diagnostic rustc-style for cargo to show, and wraps the error.
fn report(error: Error) -> BuildError {
    eprintln!("{}", render_error(&error, Style::Plain));
    BuildError { error }
}

#[cfg(test)]
mod tests {
    use super::cargo_error_refused;

    #[test]
    fn cargo_instructions_need_rust_version_1_77() {
        assert!(!cargo_error_refused(None));
        assert!(!cargo_error_refused(Some("")));
        assert!(!cargo_error_refused(Some("1.77")));
        assert!(!cargo_error_refused(Some("1.91.0")));
        assert!(!cargo_error_refused(Some("2")));
        assert!(cargo_error_refused(Some("1.76.1")));
        assert!(cargo_error_refused(Some("1.56")));
        assert!(!cargo_error_refused(Some("not a version")));
    }
}
