fn main() {
    // Reads `promptpack.toml` (delimiters `<<` and `>>`), `templates/` and
    // `snippets/` beside Cargo.toml.
    promptpack_build::compile_or_exit();
}
