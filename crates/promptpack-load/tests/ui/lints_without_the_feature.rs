// promptpack-core without its `lint` feature, as a Library-only app builds
// it: asking for the lints must not compile.
fn main() {
    let stages = promptpack_load::Stages::with_lints();
    let _ = promptpack_load::load(&promptpack_load::Config::new("."), stages);
}
