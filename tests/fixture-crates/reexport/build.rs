fn main() {
    // promptpack is `agent_framework::llm::prompts` here, not `::promptpack`:
    // the generated code names it so (`[build] crate_path` in
    // promptpack.toml does the same).
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|e| panic!("{e}"));
    let config = promptpack_build::Config::load(&dir)
        .and_then(|config| config.with_crate_path("::agent_framework::llm::prompts"))
        .unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = promptpack_build::compile_config(&config) {
        e.exit();
    }
}
