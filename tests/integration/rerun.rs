//! The build script's rerun rules, on a real scratch crate built by cargo:
//! adding, editing and deleting prompt files regenerates the code, an
//! untouched prompt folder does not rerun anything, and a broken template
//! fails the build with a rustc-style diagnostic.

use crate::support::Scratch;

fn scratch() -> Scratch {
    let scratch = Scratch::new(
        "scratch",
        "promptpack::include_prompts!();\n\
             fn main() {\n\
             \x20   let ids: Vec<&str> = PromptId::ALL.iter().map(|id| id.as_str()).collect();\n\
             \x20   println!(\"{}\", ids.join(\",\"));\n\
             \x20   println!(\"{}\", AlphaVars { name: \"Ada\" }.render_system().unwrap_or_default());\n\
             }\n",
    );
    scratch.write(
        "templates/alpha/system.md",
        "Hello {{name}}. {{snippet:tail}}\n",
    );
    scratch.write("snippets/tail.md", "Bye.\n");
    scratch
}

/// Builds and runs the crate: (stdout, stderr, success).
fn run(scratch: &Scratch) -> (String, String, bool) {
    let out = scratch.cargo(&["run", "--quiet"]);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// Whether building now would run the build script again.
fn build_is_fresh(scratch: &Scratch) -> bool {
    let out = scratch.cargo(&["build", "-v"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    stderr.contains("Fresh scratch")
        && !stderr.contains("Running `")
        && !stderr.contains("Dirty scratch")
}

#[test]
fn prompt_files_drive_regeneration() {
    let scratch = scratch();
    let (stdout, stderr, ok) = run(&scratch);
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "alpha\nHello Ada. Bye.\n");
    assert!(
        build_is_fresh(&scratch),
        "an unchanged prompt folder must not rerun the build script"
    );

    scratch.write("templates/beta/system.md", "Second prompt.\n");
    let (stdout, stderr, ok) = run(&scratch);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.lines().next(),
        Some("alpha,beta"),
        "adding a folder adds a variant"
    );

    scratch.write("snippets/tail.md", "See you.\n");
    let (stdout, stderr, ok) = run(&scratch);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.lines().nth(1),
        Some("Hello Ada. See you."),
        "editing a snippet regenerates"
    );

    std::fs::remove_dir_all(scratch.path("templates/beta")).expect("delete folder");
    let (stdout, stderr, ok) = run(&scratch);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.lines().next(),
        Some("alpha"),
        "deleting a folder removes the variant"
    );

    scratch.write(
        "templates/alpha/system.md",
        "Hello {{name}}.\n{{#if loud}}HEY\n",
    );
    let (_, stderr, ok) = run(&scratch);
    assert!(!ok, "a broken template must fail the build");
    // One cargo error line per diagnostic, at its place (build_errors.rs
    // checks the rest of the output).
    assert!(
        stderr.contains("error: scratch@0.0.0: templates/alpha/system.md:2:1: unclosed_block: "),
        "{stderr}"
    );
}
