//! The one load pipeline of [promptpack](https://docs.rs/promptpack): read a
//! prompt root from disk (`templates/`, `snippets/`, `promptpack.toml`), then
//! parse, resolve and, when asked, lint it with `promptpack-core`.
//! `Library::load`, the build script, the reload worker and `promptpack check`
//! all call [`load`].
//!
//! **Internal crate.** No semver guarantee of its own: applications use
//! `promptpack`, build scripts `promptpack-build`.
#![warn(missing_docs)]

mod config;
mod names;
mod read;
mod toml_tree;

pub use config::{CONFIG_FILE, Config};
pub use names::is_ignored_name;
pub use promptpack_core::pipeline::{Compiled, Stages};
pub use read::{file_kind, read_sources};

use std::path::Path;

/// How many folders above `dir` the prompt root of a command run in `dir`
/// is, found as cargo finds `Cargo.toml`: `dir` itself (0) when it holds
/// `promptpack.toml` or `templates/`, else the nearest folder above that
/// holds `promptpack.toml`, or a `Cargo.toml` beside a `templates/` folder.
/// `None` when there is none. The CLI and the language server (from the
/// editor's workspace folder) both look this way.
pub fn root_above(dir: &Path) -> Option<usize> {
    dir.ancestors().enumerate().find_map(|(up, folder)| {
        let templates = folder.join("templates").is_dir();
        let found = folder.join(CONFIG_FILE).is_file()
            || (templates && (up == 0 || folder.join("Cargo.toml").is_file()));
        found.then_some(up)
    })
}

/// Reads what `config` points at and runs it through the pure pipeline:
/// every problem of reading and of the templates lands in
/// [`Compiled::errors`], every lint (when `Stages::with_lints` asked) in
/// [`Compiled::warnings`]. [`Compiled::into_result`] turns it into the
/// house's one convention, `Result<_, Error>` with every error at once.
pub fn load(config: &Config, stages: Stages) -> Compiled {
    let (sources, read_errors) = read_sources(config);
    promptpack_core::pipeline::compile(sources, read_errors, config.settings(), stages)
}
