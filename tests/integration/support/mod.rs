//! A scratch crate that uses promptpack as a user's crate does (path
//! dependencies, a build script calling `promptpack_build::compile_or_exit()`), built
//! by cargo in a temporary folder: what the rerun and build-warning tests
//! share.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A crate in a temporary folder, built into the repository's
/// `target/fixture-crates` so that its dependencies compile once.
pub struct Scratch {
    dir: tempfile::TempDir,
    target: PathBuf,
}

impl Scratch {
    /// The crate `name` with `src/main.rs` holding `main_rs`.
    pub fn new(name: &str, main_rs: &str) -> Scratch {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().expect("temp dir");
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [dependencies]\npromptpack = {{ path = {repo:?}, default-features = false }}\n\n\
             [build-dependencies]\npromptpack-build = {{ path = {build:?} }}\n\n\
             [workspace]\n",
            repo = repo.display().to_string(),
            build = repo.join("crates/promptpack-build").display().to_string(),
        );
        let scratch = Scratch {
            dir,
            target: repo.join("target/fixture-crates"),
        };
        scratch.write("Cargo.toml", &manifest);
        // The repository's lock file pins the same versions, so no network is needed.
        std::fs::copy(repo.join("Cargo.lock"), scratch.path("Cargo.lock")).expect("copy lock file");
        scratch.write(
            "build.rs",
            "fn main() { promptpack_build::compile_or_exit() }\n",
        );
        scratch.write("src/main.rs", main_rs);
        scratch
    }

    /// A path inside the crate.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes a file of the crate, making its folders.
    pub fn write(&self, relative: &str, text: &str) {
        promptpack_testkit::files::write(self.dir.path(), relative, text);
    }

    /// Runs `cargo ARGS` on the crate, offline, without colour.
    pub fn cargo(&self, args: &[&str]) -> Output {
        self.cargo_with(args, &[])
    }

    /// `cargo build` of the crate with environment variables set (`Some`)
    /// or removed (`None`): its stderr, and whether it succeeded.
    pub fn build_with(&self, env: &[(&str, Option<&str>)]) -> (String, bool) {
        let out = self.cargo_with(&["build"], env);
        (
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.success(),
        )
    }

    /// [`Scratch::cargo`] with environment variables set (`Some`) or
    /// removed (`None`).
    pub fn cargo_with(&self, args: &[&str], env: &[(&str, Option<&str>)]) -> Output {
        let mut command = Command::new(env!("CARGO"));
        for (name, value) in env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        command
            .args(args)
            .arg("--offline")
            .env("CARGO_TARGET_DIR", &self.target)
            .env("CARGO_TERM_COLOR", "never")
            .env_remove("RUSTFLAGS")
            .current_dir(self.dir.path())
            .output()
            .expect("cargo runs")
    }
}
