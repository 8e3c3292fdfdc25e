//! Compiles the prompts of `tests/codegen/exchange`, the code generator's
//! own test input, so that the snapshot and this crate see one tree.

fn main() {
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        panic!("cargo sets CARGO_MANIFEST_DIR for a build script");
    };
    let root = format!("{dir}/../../codegen/exchange");
    match promptpack_build::Config::load(&root) {
        Ok(config) => {
            if let Err(error) = promptpack_build::compile_config(&config) {
                error.exit();
            }
        }
        Err(error) => panic!("{root}: {error}"),
    }
}
