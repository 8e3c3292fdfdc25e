//! `compile_config` writes the program's contract into `OUT_DIR`, and it is
//! the contract `contract()` gives tools. `compile_config` reads `OUT_DIR`
//! from its environment, as in a build script: the test runs itself again
//! as a child with the variable set, rather than setting it in a process
//! whose other tests run beside it.

use promptpack_build::{CONTRACT_FILE, Config, Contract};
use promptpack_core::program::VarKind;
use std::process::Command;

use crate::support::write;

/// The test the child runs.
const CHILD: &str = "contract_file::compile_in_out_dir";
/// Tells the child where the prompt root is.
const ROOT_ENV: &str = "PROMPTPACK_TEST_ROOT";

#[test]
fn compile_config_writes_the_contract() {
    let root = tempfile::tempdir().expect("tempdir");
    write(
        root.path(),
        "templates/greet/system.md",
        "{{#if formal}}Dear {{/if}}{{name}}{{#if role == \"teacher\"}}!{{/if}}",
    );
    write(root.path(), "templates/plain/system.md", "Hi.");
    let out = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test binary");
    let child = Command::new(exe)
        .args([CHILD, "--exact", "--ignored", "--quiet"])
        .env("OUT_DIR", out.path())
        .env(ROOT_ENV, root.path())
        .output()
        .expect("the child runs");
    assert!(
        child.status.success(),
        "{}{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    let text = std::fs::read_to_string(out.path().join(CONTRACT_FILE)).expect("written");
    let written = Contract::from_json("promptpack_contract.json", &text).expect("a contract");
    let config = Config::load(root.path()).expect("config");
    let expected = promptpack_build::contract(&config).expect("a contract");
    assert_eq!(written, expected);
    assert_eq!(text, expected.to_json());
    let ids: Vec<&str> = written.prompts.keys().map(String::as_str).collect();
    assert_eq!(ids, ["greet", "plain"]);
    let kinds: Vec<(&str, VarKind)> = written.prompts["greet"]
        .variables
        .iter()
        .map(|v| (v.name.as_str(), v.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("formal", VarKind::Flag),
            ("name", VarKind::Text),
            ("role", VarKind::Choice)
        ]
    );
    assert_eq!(written.prompts["greet"].variables[2].values, ["teacher"]);
}

#[test]
fn a_tree_with_errors_has_no_contract() {
    let root = tempfile::tempdir().expect("tempdir");
    write(root.path(), "templates/broken/system.md", "{{#if x}}");
    let config = Config::load(root.path()).expect("config");
    let error = promptpack_build::contract(&config).expect_err("no program");
    assert_eq!(error.code(), promptpack_build::ErrorCode::UnclosedBlock);
}

/// The child: a build script's `compile_config` with the `OUT_DIR` and root
/// it was given.
#[test]
#[ignore = "run by compile_config_writes_the_contract, with OUT_DIR set"]
fn compile_in_out_dir() {
    // Run by hand (`--include-ignored`) it has no root to compile: only the
    // parent's run checks anything.
    let Some(root) = std::env::var_os(ROOT_ENV) else {
        return;
    };
    let config = Config::load(root).expect("config");
    promptpack_build::compile_config(&config).expect("compiles");
}
