//! The bench's conversation prompt (`../conversation`: few-shot turns under
//! an `{{#if}}`, a snippet of turns, a history) compiled with promptpack's
//! build API, as a user's build script would.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let conversation = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conversation");
    println!("cargo:rerun-if-changed={}", conversation.display());
    if let Err(e) = promptpack_build::compile_config(&promptpack_build::Config::new(&conversation)) {
        panic!("the conversation prompt does not compile: {e}");
    }
}
