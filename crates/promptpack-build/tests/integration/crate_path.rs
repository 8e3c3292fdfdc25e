//! The crate-path setting: `[build] crate_path` in `promptpack.toml` and
//! `Config::with_crate_path` name the runtime in every path the generated
//! code writes, and anything but a path of Rust names is refused where it
//! is written.

use promptpack_build::{Config, ErrorCode};
use std::path::Path;

fn prompt_root(settings: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("tempdir");
    let write = |path: &str, text: &str| crate::support::write(root.path(), path, text);
    write(
        "templates/greet/system.md",
        "{{#if formal}}Dear {{/if}}{{name}}{{#if nick}} ({{nick}}){{/if}}\
         {{#if role == \"teacher\"}}!{{/if}}",
    );
    write("templates/greet/user.md", "{{question}}");
    write("templates/plain/system.md", "Hi.");
    write("promptpack.toml", settings);
    root
}

/// Every path to the runtime in `code`: what follows ` `, `(`, `<` or `!`
/// up to `::__private`, `::Prompt`, … is the crate path.
fn names_the_runtime_only_as(code: &str, runtime: &str) {
    assert!(!code.contains("::promptpack"), "{code}");
    for item in [
        "__private",
        "Prompt<",
        "Error",
        "Vars",
        "TypedVars",
        "__generated_code!",
    ] {
        assert!(
            code.contains(&format!("{runtime}::{item}")),
            "no {runtime}::{item} in {code}"
        );
    }
}

#[test]
fn the_settings_file_names_the_runtime() {
    let root = prompt_root("[build]\ncrate_path = \"::agents::llm::runtime\"\n");
    let config = Config::load(root.path()).expect("the settings load");
    assert_eq!(config.crate_path(), "::agents::llm::runtime");
    let code = promptpack_build::generate_code(&config).expect("generates");
    names_the_runtime_only_as(&code, "::agents::llm::runtime");
}

#[test]
fn the_builder_names_the_runtime() {
    let root = prompt_root("");
    let config = Config::load(root.path()).expect("the settings load");
    assert_eq!(config.crate_path(), "::promptpack");
    for runtime in ["::runtime", "crate::deps::runtime", "::_private_2::r"] {
        let config = config
            .clone()
            .with_crate_path(runtime)
            .expect("a crate path");
        assert_eq!(config.crate_path(), runtime);
        let code = promptpack_build::generate_code(&config).expect("generates");
        names_the_runtime_only_as(&code, runtime);
    }
}

/// Spliced into the generated code as it is: anything else than `::` or
/// `crate` and Rust names is refused, by the builder and in the file.
#[test]
fn what_is_not_a_crate_path_is_refused_where_it_is_written() {
    let refused = [
        "",
        "promptpack",
        "crate",
        "::",
        "::promptpack::",
        "::a::::b",
        "self::promptpack",
        "super::promptpack",
        "::crate::promptpack",
        "::my crate",
        "::a;b",
        "::a::type",
        "::_",
        "::9lives",
        "::promptpack {} fn f() {}",
        "::prömpt",
    ];
    let config = Config::load(prompt_root("").path()).expect("the settings load");
    for path in refused {
        let error = config.clone().with_crate_path(path).expect_err(path);
        assert_eq!(error.code(), ErrorCode::InvalidConfig, "{path:?}");
        assert!(
            error.to_string().contains("crate path"),
            "{path:?}: {error}"
        );

        let settings = format!("[build]\ncrate_path = {path:?}\n");
        let root = prompt_root(&settings);
        let error = Config::load(root.path()).expect_err(path);
        assert_eq!(error.code(), ErrorCode::InvalidConfig, "{path:?}");
        let location = error.diagnostics()[0]
            .location
            .as_ref()
            .expect("a location");
        assert_eq!(
            (Path::new(location.path()), location.line()),
            (Path::new("promptpack.toml"), 2),
            "{path:?}: {error}"
        );
    }
}
