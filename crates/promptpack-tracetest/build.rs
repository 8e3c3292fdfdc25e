//! Generates the prompts of `prompts/` with the real build step three
//! times, as three modules. `tables` and `straight_line` render from the
//! generated code of each shape: their dev source names a prompt root that
//! does not exist, as a debug binary run on another machine finds none, so
//! the dev path steps aside (`embedded`). `dev` names `prompts/` itself, so
//! in this debug build with `hot-reload` the dev path renders from the
//! files (`loaded`).

use promptpack_build::codegen::Renderers;
use std::path::{Path, PathBuf};

fn main() {
    let out =
        PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| fail("OUT_DIR is not set")));
    println!("cargo::rerun-if-changed=prompts");
    let config = promptpack_build::Config::load("prompts").unwrap_or_else(|e| fail(&e.to_string()));
    let elsewhere = out.join("no-prompts-here");
    for (name, renderers) in [
        ("tables", Renderers::Tables),
        ("straight_line", Renderers::StraightLine),
    ] {
        let code = generate(&config, renderers);
        write(&out, name, &moved_root(&code, &elsewhere));
    }
    write(&out, "dev", &generate(&config, Renderers::Tables));
}

fn generate(config: &promptpack_build::Config, renderers: Renderers) -> String {
    promptpack_build::generate_code_with(config, renderers).unwrap_or_else(|e| fail(&e.to_string()))
}

/// `code` with its dev source's root (the `root:` line of `__DEV_SOURCE`)
/// at `root` instead.
fn moved_root(code: &str, root: &Path) -> String {
    let mut moved = 0;
    let lines: Vec<String> = code
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with("root: \"") {
                moved += 1;
                let indent = &line[..line.len() - trimmed.len()];
                format!("{indent}root: {:?},", root.display().to_string())
            } else {
                line.to_string()
            }
        })
        .collect();
    if moved != 1 {
        fail(&format!(
            "expected one `root:` line in the generated code, found {moved}"
        ));
    }
    lines.join("\n") + "\n"
}

fn write(out: &Path, name: &str, code: &str) {
    std::fs::write(out.join(format!("{name}.rs")), code).unwrap_or_else(|e| fail(&e.to_string()));
}

fn fail(why: &str) -> ! {
    eprintln!("{why}");
    std::process::exit(1)
}
