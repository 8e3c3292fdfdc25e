//! What must not compile: the typed API turns prompt mistakes into compiler
//! errors. The generated code of the repository's sample prompts is written
//! where the UI cases can `include!` it, since trybuild builds them outside
//! this crate. It lives in this crate, whose only dev-dependencies are
//! `promptpack` and `trybuild`, because trybuild compiles the dev-dependencies
//! of the crate under test for its cases: from the root package that was
//! proptest, insta and the rest too.

use std::path::PathBuf;

#[test]
fn prompt_mistakes_do_not_compile() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = here.join("../..");
    let config = promptpack_build::Config::load(&root).expect("config");
    let sample = promptpack_build::generate_code(&config).expect("sample prompts generate");
    let generated = root.join("target/promptpack-ui/prompts.rs");
    std::fs::create_dir_all(generated.parent().expect("parent")).expect("create folder");
    std::fs::write(&generated, &sample).expect("write generated code");

    // Rust keywords as variable names must still give code that compiles.
    let keywords =
        promptpack_build::Config::load(root.join("tests/codegen/keywords")).expect("config");
    let code = promptpack_build::generate_code(&keywords).expect("keywords generate");
    std::fs::write(root.join("target/promptpack-ui/keywords.rs"), code)
        .expect("write generated code");

    // Compared variables: an enum, and an `Option` of one.
    let choices =
        promptpack_build::Config::load(root.join("tests/codegen/choices")).expect("config");
    let code = promptpack_build::generate_code(&choices).expect("choices generate");
    std::fs::write(root.join("target/promptpack-ui/choices.rs"), code)
        .expect("write generated code");

    // A prompt whose front matter declares its variables and their kinds.
    let contract =
        promptpack_build::Config::load(root.join("tests/codegen/contract")).expect("config");
    let code = promptpack_build::generate_code(&contract).expect("contract generates");
    std::fs::write(root.join("target/promptpack-ui/contract.rs"), code)
        .expect("write generated code");

    // Choices declared in front matter: every declared value a variant, in
    // the declared order, one of them compared by no branch.
    let declared = promptpack_build::Config::load(root.join("tests/codegen/declared-choices"))
        .expect("config");
    let code = promptpack_build::generate_code(&declared).expect("declared choices generate");
    std::fs::write(root.join("target/promptpack-ui/declared.rs"), code)
        .expect("write generated code");

    // A `response` and `tools`: their structs, enums and the enum of calls.
    let exchange =
        promptpack_build::Config::load(root.join("tests/codegen/exchange")).expect("config");
    let code = promptpack_build::generate_code(&exchange).expect("exchange generates");
    std::fs::write(root.join("target/promptpack-ui/exchange.rs"), code)
        .expect("write generated code");

    // Through a crate path: the runtime re-exported as `crate::runtime`,
    // named nowhere else.
    let reexported = config
        .clone()
        .with_crate_path("crate::runtime")
        .expect("a crate path");
    let code = promptpack_build::generate_code(&reexported).expect("sample prompts generate");
    assert!(!code.contains("::promptpack"), "{code}");
    std::fs::write(root.join("target/promptpack-ui/reexported.rs"), code)
        .expect("write generated code");

    std::fs::write(
        root.join("target/promptpack-ui/drifted.rs"),
        drifted(&sample),
    )
    .expect("write generated code");

    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
}

/// The sample prompts' code as a later promptpack-build might write it for
/// a later runtime: another format, an item of the runtime this one lacks
/// and a field its prompt table lacks. The runtime must refuse it in one
/// error that names both versions, not in one error per place where the
/// code no longer fits.
fn drifted(code: &str) -> String {
    let opening = "__generated_code! { ";
    let format: u32 = code
        .split_once(opening)
        .and_then(|(_, rest)| rest.split_once(','))
        .and_then(|(format, _)| format.parse().ok())
        .expect("the generated code opens with the runtime's gate");
    let gate = format!(
        "{opening}{format}, \"promptpack-build {}\",",
        env!("CARGO_PKG_VERSION")
    );
    let later = format!("{opening}{}, \"promptpack-build 9.0.0\",", format + 1);
    let drifts = [
        (gate.as_str(), later.as_str()),
        ("__p::dev_build(", "__p::dev_build_v2("),
        ("max_tokens: ", "token_budget: "),
    ];
    let mut code = code.to_string();
    for (from, to) in drifts {
        assert!(code.contains(from), "the generated code has no `{from}`");
        code = code.replace(from, to);
    }
    code
}
