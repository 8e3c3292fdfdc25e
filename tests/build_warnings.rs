//! The build script's warnings, on a real scratch crate built by cargo: lints
//! and likely typos in variable names show as cargo warnings with the
//! template's file, line and column; a variable renamed since the last build
//! is named next to rustc's error about the field; `[build] warnings = false`
//! silences them all.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Scratch {
    dir: tempfile::TempDir,
    target: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().expect("temp dir");
        let manifest = format!(
            "[package]\nname = \"scratch-warnings\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
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
            "fn main() { if let Err(e) = promptpack_build::compile() { panic!(\"{e}\") } }\n",
        );
        scratch.write(
            "src/main.rs",
            "promptpack::include_prompts!();\n\
             fn main() {\n\
             \x20   println!(\"{}\", AssistantVars { agent_name: \"Ada\" }.render_system());\n\
             \x20   let helper = HelperVars { user_name: Some(\"Grace\"), usre_name: \"G\" };\n\
             \x20   println!(\"{}\", helper.render_system());\n\
             }\n",
        );
        scratch
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create folder");
        std::fs::write(path, text).expect("write file");
    }

    /// Removes what earlier runs of this test left in the shared target
    /// folder: cargo gives the crate the same `OUT_DIR` whatever its temp
    /// folder, so the last run's names record would be read as the last build.
    fn clean(&self) {
        let out = Command::new(env!("CARGO"))
            .args(["clean", "--offline", "-p", "scratch-warnings"])
            .env("CARGO_TARGET_DIR", &self.target)
            .current_dir(self.dir.path())
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Builds the crate: (stderr, success).
    fn build(&self) -> (String, bool) {
        let out = Command::new(env!("CARGO"))
            .args(["build", "--offline"])
            .env("CARGO_TARGET_DIR", &self.target)
            .env("CARGO_TERM_COLOR", "never")
            .env_remove("RUSTFLAGS")
            .current_dir(self.dir.path())
            .output()
            .expect("cargo runs");
        (
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.success(),
        )
    }
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
    let scratch = Scratch::new();
    scratch.clean();
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
    let (stderr, ok) = scratch.build();
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
    let (stderr, ok) = scratch.build();
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
    let (stderr, ok) = scratch.build();
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("agent_nmea"),
        "the build script ran again: {stderr}"
    );
    assert_eq!(warnings(&stderr), Vec::<&str>::new(), "{stderr}");
}
