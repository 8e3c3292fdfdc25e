//! The build script's rerun rules, on a real scratch crate built by cargo:
//! adding, editing and deleting prompt files regenerates the code, an
//! untouched prompt folder does not rerun anything, and a broken template
//! fails the build with a rustc-style diagnostic.

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
            "[package]\nname = \"scratch\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
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
             \x20   let ids: Vec<&str> = PromptId::ALL.iter().map(|id| id.as_str()).collect();\n\
             \x20   println!(\"{}\", ids.join(\",\"));\n\
             \x20   println!(\"{}\", AlphaVars { name: \"Ada\" }.render_system());\n\
             }\n",
        );
        scratch.write(
            "templates/alpha/system.md",
            "Hello {{name}}. {{snippet:tail}}\n",
        );
        scratch.write("snippets/tail.md", "Bye.\n");
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

    /// Builds and runs the crate: (stdout, stderr, success).
    fn run(&self) -> (String, String, bool) {
        let out = Command::new(env!("CARGO"))
            .args(["run", "--quiet", "--offline"])
            .env("CARGO_TARGET_DIR", &self.target)
            .env_remove("RUSTFLAGS")
            .current_dir(self.dir.path())
            .output()
            .expect("cargo runs");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.success(),
        )
    }

    /// Whether building now would run the build script again.
    fn build_is_fresh(&self) -> bool {
        let out = Command::new(env!("CARGO"))
            .args(["build", "--offline", "-v"])
            .env("CARGO_TARGET_DIR", &self.target)
            .current_dir(self.dir.path())
            .output()
            .expect("cargo runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        stderr.contains("Fresh scratch")
            && !stderr.contains("Running `")
            && !stderr.contains("Dirty scratch")
    }
}

#[test]
fn prompt_files_drive_regeneration() {
    let scratch = Scratch::new();
    let (stdout, stderr, ok) = scratch.run();
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "alpha\nHello Ada. Bye.\n");
    assert!(
        scratch.build_is_fresh(),
        "an unchanged prompt folder must not rerun the build script"
    );

    scratch.write("templates/beta/system.md", "Second prompt.\n");
    let (stdout, stderr, ok) = scratch.run();
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.lines().next(),
        Some("alpha,beta"),
        "adding a folder adds a variant"
    );

    scratch.write("snippets/tail.md", "See you.\n");
    let (stdout, stderr, ok) = scratch.run();
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.lines().nth(1),
        Some("Hello Ada. See you."),
        "editing a snippet regenerates"
    );

    std::fs::remove_dir_all(scratch.path("templates/beta")).expect("delete folder");
    let (stdout, stderr, ok) = scratch.run();
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
    let (_, stderr, ok) = scratch.run();
    assert!(!ok, "a broken template must fail the build");
    assert!(stderr.contains("error[unclosed_block]"), "{stderr}");
    assert!(stderr.contains("templates/alpha/system.md:2:1"), "{stderr}");
    assert!(stderr.contains("  | ^^^^^^^^^^^^\n"), "{stderr}");
}
