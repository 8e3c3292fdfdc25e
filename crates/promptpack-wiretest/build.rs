//! Generates the typed code of `prompts/` with the real build step: the
//! `PromptId`, vars structs, tool enums and response structs the wire
//! tests send and read back.

use std::path::Path;

fn main() {
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| fail("OUT_DIR is not set"));
    let root = Path::new("prompts");
    println!("cargo::rerun-if-changed={}", root.display());
    let config = promptpack_build::Config::load(root).unwrap_or_else(|e| fail(&e.to_string()));
    let code = promptpack_build::generate_code(&config).unwrap_or_else(|e| fail(&e.to_string()));
    let file = Path::new(&out).join("prompts.rs");
    std::fs::write(&file, code).unwrap_or_else(|e| fail(&e.to_string()));
}

fn fail(why: &str) -> ! {
    eprintln!("{why}");
    std::process::exit(1)
}
