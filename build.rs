//! Compiles the repository's own sample prompts (`templates/`, `snippets/`)
//! with the very code `promptpack::build` exposes: the modules are included
//! by path, since a build script cannot depend on the crate it builds.

#[allow(dead_code, unused_imports)]
#[path = "src/build.rs"]
mod build;
#[allow(dead_code, unused_imports)]
#[path = "src/codegen.rs"]
mod codegen;
#[allow(dead_code, unused_imports)]
#[path = "src/config.rs"]
mod config;
#[allow(dead_code, unused_imports)]
#[path = "src/diagnostics.rs"]
mod diagnostics;
#[allow(dead_code, unused_imports)]
#[path = "src/error.rs"]
mod error;
#[allow(dead_code, unused_imports)]
#[path = "src/library.rs"]
mod library;
#[allow(dead_code, unused_imports)]
#[path = "src/program.rs"]
mod program;
#[allow(dead_code, unused_imports)]
#[path = "src/render.rs"]
mod render;
#[allow(dead_code, unused_imports)]
#[path = "src/resolve.rs"]
mod resolve;
#[allow(dead_code, unused_imports)]
#[path = "src/serde_vars.rs"]
mod serde_vars;
#[allow(dead_code, unused_imports)]
#[path = "src/source.rs"]
mod source;
#[allow(dead_code, unused_imports)]
#[path = "src/source_file.rs"]
mod source_file;
#[allow(dead_code, unused_imports)]
#[path = "src/syntax.rs"]
mod syntax;
#[allow(dead_code, unused_imports)]
#[path = "src/value.rs"]
mod value;
#[allow(dead_code, unused_imports)]
#[path = "src/vars.rs"]
mod vars;

fn main() {
    if let Err(e) = build::compile() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
