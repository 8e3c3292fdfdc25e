fn main() {
    // Compiles templates/ and snippets/ into typed Rust; a template error
    // fails the build with one cargo error per problem, at its file, line
    // and column.
    promptpack_build::compile_or_exit();
}
