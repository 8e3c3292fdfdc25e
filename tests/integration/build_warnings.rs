//! The build script's warnings, on a real scratch crate built by cargo: lints
//! and likely typos in variable names show as cargo warnings with the
//! template's file, line and column; a variable renamed since the last build
//! is named next to rustc's error about the field; `[build] warnings = false`
//! silences them all.

use crate::support::Scratch;

fn scratch() -> Scratch {
    Scratch::new(
        "scratch-warnings",
        "promptpack::include_prompts!();\n\
             fn main() {\n\
             \x20   println!(\"{}\", AssistantVars { agent_name: \"Ada\" }.render_system().unwrap_or_default());\n\
             \x20   let helper = HelperVars { user_name: Some(\"Grace\"), usre_name: \"G\" };\n\
             \x20   println!(\"{}\", helper.render_system().unwrap_or_default());\n\
             }\n",
    )
}

/// Removes what earlier runs of this test left in the shared target folder:
/// cargo gives the crate the same `OUT_DIR` whatever its temp folder, so the
/// last run's names record would be read as the last build.
fn clean(scratch: &Scratch) {
    let out = scratch.cargo(&["clean", "-p", "scratch-warnings"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds the crate: (stderr, success).
fn build(scratch: &Scratch) -> (String, bool) {
    scratch.build_with(&[])
}

/// The lines of `stderr` that are warnings of the scratch crate's build script.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("warning: scratch-warnings@0.0.0: "))
        .collect()
}

#[test]
fn lints_and_typos_are_cargo_warnings() {
    let scratch = scratch();
    clean(&scratch);
    scratch.write(
        "templates/assistant/system.md",
        "You are {{agentName}}.\nWrite for {{ audience }}.\n",
    );
    scratch.write(
        "templates/helper/system.md",
        "Hi {{userName}}!\n{{#if userName}}Also {{usreName}}.{{/if}}\n",
    );

    // A clean first build: the near-miss and the typo within a prompt show,
    // no rename (there is no last build to compare with).
    let (stderr, ok) = build(&scratch);
    assert!(ok, "{stderr}");
    let shown = warnings(&stderr);
    let near_miss: Vec<&&str> = shown.iter().filter(|w| w.contains("audience")).collect();
    assert_eq!(near_miss.len(), 1, "once: {stderr}");
    assert!(
        near_miss[0].starts_with(
            "templates/assistant/system.md:2:11: near_miss: `{{ audience }}` is not a token"
        ),
        "{stderr}"
    );
    assert!(
        near_miss[0].contains("`AssistantVars` has no field `audience`")
            && near_miss[0]
                .ends_with("(help: write `{{audience}}`: no spaces inside the delimiters)"),
        "{stderr}"
    );
    assert!(
        shown.iter().any(|w| w.starts_with(
            "templates/helper/system.md:2:22: typo: variable `usreName` is one edit from `userName`"
        )),
        "{stderr}"
    );
    assert_eq!(shown.len(), 2, "{stderr}");

    // A typo in a name the Rust code uses: rustc fails on the field, and the
    // build script's warning names the template and the name it had.
    scratch.write(
        "templates/assistant/system.md",
        "You are {{agentNmae}}.\nWrite for {{ audience }}.\n",
    );
    let (stderr, ok) = build(&scratch);
    assert!(!ok, "main.rs still sets agent_name: {stderr}");
    assert!(stderr.contains("no field named `agent_name`"), "{stderr}");
    assert!(
        warnings(&stderr).iter().any(|w| w.starts_with(
            "templates/assistant/system.md:1:9: typo: variable `agentNmae` is new since the \
             last build and one edit from `agentName`, which is gone"
        )),
        "{stderr}"
    );

    // Silenced: another rename, a near-miss and a typo, and not one warning.
    scratch.write("promptpack.toml", "[build]\nwarnings = false\n");
    scratch.write(
        "templates/assistant/system.md",
        "You are {{agentNmea}}.\nWrite for {{ audience }}.\n",
    );
    let (stderr, ok) = build(&scratch);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("agent_nmea"),
        "the build script ran again: {stderr}"
    );
    assert_eq!(warnings(&stderr), Vec::<&str>::new(), "{stderr}");
}

/// A declared choice value no branch compares is a cargo warning at the
/// value, naming the branch it renders; the declared-only variant exists
/// and the crate builds.
#[test]
fn an_unhandled_declared_choice_is_a_cargo_warning() {
    let scratch = Scratch::new(
        "scratch-choices",
        "promptpack::include_prompts!();\n\
         fn main() {\n\
         \x20   println!(\"{}\", LessonVars { role: LessonRole::Observer }.render_system().unwrap_or_default());\n\
         }\n",
    );
    scratch.write(
        "templates/lesson/system.md",
        "---\nvars:\n  role: {kind: choice, values: [teacher, observer]}\n---\n\
         {{#if role == \"teacher\"}}Teach.{{else}}Watch.{{/if}}\n",
    );
    let out = scratch.cargo(&["build"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let shown: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("warning: scratch-choices@0.0.0: "))
        .collect();
    assert_eq!(shown.len(), 1, "{stderr}");
    assert!(
        shown[0].starts_with(
            "templates/lesson/system.md:3:42: unhandled_choice: value \"observer\" of `role` is declared, but no branch compares with it: it renders the `{{else}}` branch (templates/lesson/system.md:5:32)"
        ),
        "{stderr}"
    );
}
