fn main() {
    // Reads `promptpack.toml` (delimiters `<<` and `>>`), `templates/` and
    // `snippets/` beside Cargo.toml.
    if let Err(e) = promptpack_build::compile() {
        panic!("{e}");
    }
}
