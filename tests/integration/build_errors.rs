//! A prompt that does not compile fails a real cargo build the way a compiler
//! error does: each diagnostic a top-level `error:` line of cargo's output
//! with the template's file, line and column, before anything else cargo
//! says about the failure; no panic, no backtrace (even with
//! `RUST_BACKTRACE=1`), and no dump of the build script's output. The
//! scratch crate's build script is the one `promptpack init --cargo` writes.

use crate::support::Scratch;

const CRATE: &str = "scratch-errors";

/// Builds the crate with `RUST_BACKTRACE=1`: (stderr, success).
fn build(scratch: &Scratch) -> (String, bool) {
    scratch.build_with(&[("RUST_BACKTRACE", Some("1"))])
}

#[test]
fn a_broken_prompt_fails_the_build_with_its_diagnostics_as_cargo_errors() {
    let scratch = Scratch::new(
        CRATE,
        "promptpack::include_prompts!();\nfn main() { let _ = PromptId::ALL; }\n",
    );
    // The one build script users get: what `init --cargo` writes.
    assert_eq!(
        std::fs::read_to_string(scratch.path("build.rs")).expect("build.rs"),
        "fn main() { promptpack_build::compile_or_exit() }\n"
    );
    scratch.write(
        "templates/assistant/system.md",
        "You are {{name}}.\n{{snippet:tone}}\n",
    );
    scratch.write(
        "templates/closer/system.md",
        "Bye.\n{{#if formal}}Be formal.\n",
    );
    // A lint too: a warning must not hide or reorder the errors.
    scratch.write("templates/helper/system.md", "Hi {{ user }}.\n");

    let (stderr, ok) = build(&scratch);
    assert!(!ok, "the build must fail: {stderr}");

    let prefix = format!("error: {CRATE}@0.0.0: ");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    // Every `error` line of the output: the two diagnostics, each once and
    // at its place, then cargo's one-line summary.
    assert_eq!(errors.len(), 3, "{stderr}");
    assert!(
        errors[0].starts_with(&format!(
            "{prefix}templates/assistant/system.md:2:1: snippet_not_found: "
        )) && errors[0].contains("{{snippet:tone}}"),
        "{stderr}"
    );
    assert!(
        errors[1].starts_with(&format!(
            "{prefix}templates/closer/system.md:2:1: unclosed_block: "
        )),
        "{stderr}"
    );
    assert_eq!(errors[2], "error: build script logged errors", "{stderr}");
    // Before them, only cargo's progress and the build script's warnings.
    let first_error = stderr.find("error").expect("an error line");
    for line in stderr[..first_error].lines() {
        let line = line.trim_start();
        assert!(
            line.is_empty()
                || line.starts_with("Compiling ")
                || line.starts_with("Locking ")
                || line.starts_with("Blocking ")
                || line.starts_with(&format!("warning: {CRATE}@0.0.0: ")),
            "a line before the diagnostics: {line:?} in {stderr}"
        );
    }
    assert!(stderr.contains("near_miss"), "the lint shows too: {stderr}");

    // None of what a panicking build script brings.
    for noise in [
        "panicked",
        "stack backtrace",
        "RUST_BACKTRACE",
        "failed to run custom build command",
        "--- stdout",
        "--- stderr",
        "rerun-if-changed",
        "cargo::error",
    ] {
        assert!(!stderr.contains(noise), "{noise:?} in {stderr}");
    }

    // Fixed, the same crate builds: the failure was the templates' alone.
    scratch.write("templates/assistant/system.md", "You are {{name}}.\n");
    scratch.write(
        "templates/closer/system.md",
        "Bye.\n{{#if formal}}Be formal.{{/if}}\n",
    );
    let (stderr, ok) = build(&scratch);
    assert!(ok, "{stderr}");
}

/// A crate whose `rust-version` predates cargo's `cargo::` instructions
/// (1.77), which cargo refuses from its build script: the diagnostics are
/// warnings naming the error, the build fails all the same, without a panic.
#[test]
fn a_crate_older_than_cargo_instructions_gets_warnings_and_a_failed_build() {
    let scratch = Scratch::new(
        "scratch-errors-old",
        "promptpack::include_prompts!();\nfn main() { let _ = PromptId::ALL; }\n",
    );
    let manifest = std::fs::read_to_string(scratch.path("Cargo.toml")).expect("manifest");
    // Edition 2024 needs rust-version 1.85: an older crate is 2021.
    let old = manifest.replace(
        "edition = \"2024\"\n",
        "edition = \"2021\"\nrust-version = \"1.70\"\n",
    );
    assert_ne!(old, manifest, "the manifest has its edition line");
    scratch.write("Cargo.toml", &old);
    scratch.write(
        "templates/assistant/system.md",
        "Hi {{name}}.\n{{snippet:tone}}\n",
    );

    let (stderr, ok) = build(&scratch);
    assert!(!ok, "the build must fail: {stderr}");
    assert!(
        stderr.contains(
            "warning: scratch-errors-old@0.0.0: error: templates/assistant/system.md:2:1: snippet_not_found: "
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("cargo::"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
