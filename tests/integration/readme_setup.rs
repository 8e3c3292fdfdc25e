//! The README's setup lines, taken from README.md itself, make a crate that
//! builds and whose snapshot test passes: the `Cargo.toml`, `build.rs` and
//! `src/prompts.rs` blocks of "Using it in your crate" and the
//! `[dev-dependencies]` and `tests/prompts.rs` blocks of "Snapshot tests of
//! your prompts", with `../promptpack` pointing at this checkout. A line
//! cargo refuses (a version beside a path dependency) fails here.

use crate::support::Scratch;
use std::path::Path;

/// A fenced block of the README: the heading it sits under, its language
/// and its text.
struct Block {
    heading: String,
    lang: String,
    text: String,
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut heading = String::new();
    let mut open: Option<Block> = None;
    for line in readme.lines() {
        if let Some(block) = open.as_mut() {
            if line.trim_start().starts_with("```") {
                blocks.extend(open.take());
            } else {
                block.text.push_str(line);
                block.text.push('\n');
            }
        } else if let Some(fence) = line.trim_start().strip_prefix("```") {
            open = Some(Block {
                heading: heading.clone(),
                lang: fence.trim().to_string(),
                text: String::new(),
            });
        } else if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_string();
        }
    }
    blocks
}

/// The blocks of `lang` under `heading`; at least one, or the README
/// changed shape and this test must change with it.
fn under<'b>(blocks: &'b [Block], heading: &str, lang: &str) -> Vec<&'b Block> {
    let found: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.heading == heading && b.lang == lang)
        .collect();
    assert!(
        !found.is_empty(),
        "README.md has no ```{lang} block under `{heading}`"
    );
    found
}

/// A Rust block's file, from its first line: `// build.rs`,
/// `// src/prompts.rs (or anywhere)`.
fn file_of(block: &Block) -> String {
    let first = block.text.lines().next().unwrap_or_default();
    let path = first
        .strip_prefix("// ")
        .unwrap_or_else(|| panic!("a Rust setup block names its file first: {first:?}"));
    path.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_readme_setup_lines_build_a_crate_whose_snapshot_test_passes() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).expect("README.md");
    let blocks = blocks(&readme);
    let setup = "Using it in your crate";
    let snapshots = "Snapshot tests of your prompts";

    // The README's path is the checkout's, as it would be beside a clone.
    let checkout = format!("\"{}", repo.display());
    let mut manifest = String::from(
        "[package]\nname = \"readme-crate\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n",
    );
    for block in under(&blocks, setup, "toml")
        .into_iter()
        .chain(under(&blocks, snapshots, "toml"))
    {
        assert!(
            block.text.contains("\"../promptpack"),
            "a setup block without the checkout's path: {}",
            block.text
        );
        manifest.push_str(&block.text.replace("\"../promptpack", &checkout));
        manifest.push('\n');
    }
    manifest.push_str("[workspace]\n");

    let scratch = Scratch::new("readme-crate", "");
    scratch.write("Cargo.toml", &manifest);
    let mut files = Vec::new();
    for block in under(&blocks, setup, "rust")
        .into_iter()
        .chain(under(&blocks, snapshots, "rust"))
    {
        let file = file_of(block);
        scratch.write(&file, &block.text);
        files.push(file);
    }
    for wanted in ["build.rs", "src/prompts.rs", "tests/prompts.rs"] {
        assert!(
            files.iter().any(|f| f == wanted),
            "README.md has no `// {wanted}` block: {files:?}"
        );
    }
    scratch.write(
        "src/main.rs",
        "mod prompts;\n\nfn main() {\n    let vars = prompts::GreetVars { name: \"Ada\", formal: true };\n    println!(\"{}\", prompts::build_prompt(prompts::PromptId::Greet, vars).expect(\"render\").system);\n}\n",
    );
    scratch.write(
        "templates/greet/system.md",
        "{{#if formal}}Good day{{else}}Hi{{/if}}, {{name}}. {{snippet:sign-off}}\n",
    );
    scratch.write("snippets/sign-off.md", "Yours, the agent.\n");

    let out = scratch.cargo(&["run", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{manifest}\n{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Good day, Ada. Yours, the agent.\n"
    );

    // The snapshot test: the first run writes the snapshots (as the README
    // says, with INSTA_UPDATE=always), the next checks against them as CI
    // does.
    let first = scratch.cargo_with(
        &["test", "--quiet"],
        &[("INSTA_UPDATE", Some("always")), ("CI", None)],
    );
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let snaps: Vec<String> = std::fs::read_dir(scratch.path("tests/snapshots"))
        .expect("snapshots written")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        snaps.iter().any(|s| s.starts_with("prompts__greet")),
        "{snaps:?}"
    );
    let again = scratch.cargo_with(&["test", "--quiet"], &[("CI", Some("true"))]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}
