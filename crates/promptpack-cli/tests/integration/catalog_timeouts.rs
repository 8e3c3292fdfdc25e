//! `promptpack catalog` against a store that does not answer ends with
//! `unavailable` (bounded by `--db-timeout` / `$PROMPTPACK_DB_TIMEOUT`),
//! and never prints the password of its URL.
//!
//! No test measures time or waits against a deadline: each command is
//! waited for until it ends. An unbounded wait shows as a test that never
//! ends (the runner reports it running for over 60 s; CI's limit ends it),
//! never as an assertion on how long something took.

use std::process::{Command, Stdio};

use crate::support::BIN;
use promptpack_testkit::net::black_hole;

/// What a command did.
struct Outcome {
    code: Option<i32>,
    stderr: String,
}

/// Runs `promptpack catalog ARGS` with `env` set (and no PROMPTPACK_DB*
/// from outside), until it ends.
fn catalog(args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut command = Command::new(BIN);
    command
        .arg("catalog")
        .args(args)
        .env_remove("PROMPTPACK_DB")
        .env_remove("PROMPTPACK_DB_TIMEOUT")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = command.spawn().expect("promptpack runs");
    let output = child.wait_with_output().expect("its output");
    Outcome {
        code: output.status.code(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn assert_unavailable(outcome: &Outcome, password: &str) {
    assert_eq!(outcome.code, Some(1), "{}", outcome.stderr);
    assert!(
        outcome.stderr.contains("error[unavailable]"),
        "{}",
        outcome.stderr
    );
    assert!(!outcome.stderr.contains(password), "{}", outcome.stderr);
}

#[test]
fn a_server_that_never_answers_ends_the_command_as_unavailable() {
    let url = black_hole();
    let by_variable = catalog(&["list", "--db", &url], &[("PROMPTPACK_DB_TIMEOUT", "1")]);
    assert_unavailable(&by_variable, "black-hole-pw");
    let by_option = catalog(&["get", "p", "--db", &url, "--db-timeout", "0.5"], &[]);
    assert_unavailable(&by_option, "black-hole-pw");
    let url_parameter = format!("{url}?connect_timeout=1");
    let by_url = catalog(
        &["list", "--db", &url_parameter],
        &[("PROMPTPACK_DB_TIMEOUT", "3600")],
    );
    assert_unavailable(&by_url, "black-hole-pw");
}

#[test]
fn a_timeout_that_is_not_seconds_is_a_usage_error() {
    for value in ["soon", "0", "-3"] {
        let outcome = catalog(
            &["list", "--db", "postgres://127.0.0.1:1/x"],
            &[("PROMPTPACK_DB_TIMEOUT", value)],
        );
        assert_eq!(outcome.code, Some(2), "{value}: {}", outcome.stderr);
        assert!(
            outcome.stderr.contains("--db-timeout"),
            "{}",
            outcome.stderr
        );
    }
}

#[test]
fn the_timeout_is_documented_in_the_help() {
    let output = Command::new(BIN)
        .args(["catalog", "--help"])
        .output()
        .expect("promptpack runs");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--db-timeout <SECONDS>"), "{help}");
    assert!(help.contains("PROMPTPACK_DB_TIMEOUT"), "{help}");
}

#[test]
fn passwords_in_the_url_are_never_printed() {
    // Port 1 on loopback: nothing listens there, the refusal is at once.
    for (url, password) in [
        ("postgres://ada:cli-secret@127.0.0.1:1/x", "cli-secret"),
        (
            "postgres://ada@127.0.0.1:1/x?password=cli-secret",
            "cli-secret",
        ),
        (
            "postgresql://ada@127.0.0.1:1/x?sslmode=disable&password=cli-secret",
            "cli-secret",
        ),
        ("postgres://ada:cli%2Dsecret@127.0.0.1:1/x", "cli%2Dsecret"),
    ] {
        let outcome = catalog(&["list", "--db", url], &[]);
        assert_unavailable(&outcome, password);
        assert!(outcome.stderr.contains("127.0.0.1:1"), "{}", outcome.stderr);
        let outcome = catalog(&["list"], &[("PROMPTPACK_DB", url)]);
        assert_unavailable(&outcome, password);
    }
}
