fn main() {
    // Prints every template error rustc-style and fails the build on any.
    if let Err(e) = promptpack_build::compile() {
        panic!("{e}");
    }
}
