//! Compiles the repository's own sample prompts (`templates/`, `snippets/`)
//! through `promptpack-build`, exactly as a user's build script does. Only
//! with the `samples` feature: a crate that depends on promptpack pays for
//! no code generator here.

fn main() {
    #[cfg(feature = "samples")]
    promptpack_build::compile_or_exit();
}
