//! Generates the prompts of `prompts/before` and `prompts/after` with the
//! real build step, as two modules: two builds of one service, whose
//! compiled contracts differ by the variable `tone`.

use std::path::Path;

fn main() {
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| fail("OUT_DIR is not set"));
    for build in ["before", "after"] {
        let root = Path::new("prompts").join(build);
        println!("cargo::rerun-if-changed={}", root.display());
        let config = promptpack_build::Config::load(&root).unwrap_or_else(|e| fail(&e.to_string()));
        let code =
            promptpack_build::generate_code(&config).unwrap_or_else(|e| fail(&e.to_string()));
        let file = Path::new(&out).join(format!("{build}.rs"));
        std::fs::write(&file, code).unwrap_or_else(|e| fail(&e.to_string()));
    }
}

fn fail(why: &str) -> ! {
    eprintln!("{why}");
    std::process::exit(1)
}
