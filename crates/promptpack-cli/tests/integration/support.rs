//! What the CLI's tests share: the binary, its fixture trees, and the
//! `promptpack catalog` runner the catalog tests each had a copy of.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `promptpack` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_promptpack");

/// The fixture tree `tests/cli/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli")
        .join(name)
}

/// What a command did.
#[derive(Debug)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Output {
    fn from(output: std::process::Output) -> Output {
        Output {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// `promptpack catalog ARGS --db DB --author test` in plain style, with no
/// catalog settings from the environment; in `dir` when one is given.
pub fn catalog(dir: Option<&Path>, db: &str, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(BIN);
    command
        .arg("catalog")
        .args(args)
        .args(["--db", db, "--author", "test"])
        .env("NO_COLOR", "1")
        .env_remove("PROMPTPACK_DB")
        .env_remove("PROMPTPACK_AUTHOR");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    command.output().expect("the binary runs")
}
