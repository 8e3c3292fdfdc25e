//! Generates the compile-time peers from the benchmark workload, read in
//! place (never copied into the repository): an askama template struct and an
//! md-tmpl `template!` invocation, both with the workload's snippets inlined
//! (both engines resolve includes at compile time anyway).
//!
//! It also compiles the workload with promptpack's own build API
//! (`promptpack_build::compile_config`), exactly as a user's build script
//! would, for the typed contender (`include_prompts!` in `src/render.rs`), and
//! the bench's own `choice/` prompt (a three-way `{{#if role == "…"}}`
//! choice) the same way, for the `choice` section
//! (`OUT_DIR/choice_prompts.rs`, `cfg(promptpack_choice)`), and its
//! `conversation/` prompt (`system.md` + `messages.md`: few-shot turns under an
//! `{{#if}}`, a snippet of turns, a `kind: messages` history) for the
//! `conversation` section (`OUT_DIR/conversation_prompts.rs`,
//! `cfg(promptpack_conversation)`).
//!
//! For the `live` section it writes 1,000 small prompts (`src/live_tree.rs`)
//! as a template tree in `OUT_DIR/live_many/` and generates their typed code
//! with `promptpack_build::generate_code` into `OUT_DIR/live_many.rs`
//! (`cfg(promptpack_live_many)`), included in `mod live_many`.
//!
//! When the workload cannot be read, the generated functions return an error
//! and the bench reports those peers as skipped; the typed contender is
//! compiled only when promptpack's build succeeded (`cfg(promptpack_typed)`).

#[path = "src/live_tree.rs"]
mod live_tree;
#[path = "src/translate.rs"]
#[allow(dead_code)]
mod translate;

use std::fmt::Write;
use translate::{Tok, Workload};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/translate.rs");
    println!("cargo:rerun-if-changed=src/live_tree.rs");
    println!("cargo:rerun-if-env-changed=PROMPTPACK_BENCH_WORKLOAD");
    println!("cargo::rustc-check-cfg=cfg(promptpack_typed)");
    println!("cargo::rustc-check-cfg=cfg(promptpack_choice)");
    println!("cargo::rustc-check-cfg=cfg(promptpack_conversation)");
    println!("cargo::rustc-check-cfg=cfg(promptpack_live_many)");
    let dir = translate::workload_dir();
    println!("cargo:rerun-if-changed={}", dir.display());
    let out_dir = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));

    // The choice section: the bench's own prompt in `choice/`. First, since
    // `compile_config` always writes `OUT_DIR/promptpack_prompts.rs`: the
    // file is moved to `choice_prompts.rs` before the workload's takes its
    // name.
    let choice = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("choice");
    let written = out_dir.join(promptpack_build::GENERATED_FILE);
    match promptpack_build::compile_config(&promptpack_build::Config::new(&choice))
        .map_err(|e| e.to_string())
        .and_then(|()| {
            std::fs::rename(&written, out_dir.join("choice_prompts.rs"))
                .map_err(|e| format!("moving {}: {e}", written.display()))
        }) {
        Ok(()) => println!("cargo::rustc-cfg=promptpack_choice"),
        Err(e) => println!("cargo::warning=choice section not built: {e}"),
    }

    // The conversation section: the bench's own `conversation/` prompt, the
    // same way (moved before the workload's code takes the default name).
    let conversation = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conversation");
    match promptpack_build::compile_config(&promptpack_build::Config::new(&conversation))
        .map_err(|e| e.to_string())
        .and_then(|()| {
            std::fs::rename(&written, out_dir.join("conversation_prompts.rs"))
                .map_err(|e| format!("moving {}: {e}", written.display()))
        }) {
        Ok(()) => println!("cargo::rustc-cfg=promptpack_conversation"),
        Err(e) => println!("cargo::warning=conversation section not built: {e}"),
    }

    // The typed contender: promptpack's generated code for the workload,
    // written to OUT_DIR/promptpack_prompts.rs for `include_prompts!`.
    match promptpack_build::compile_config(&promptpack_build::Config::new(&dir)) {
        Ok(()) => println!("cargo::rustc-cfg=promptpack_typed"),
        Err(e) => println!("cargo::warning=typed contender not built: {e}"),
    }

    // The live section's 1,000 prompts: a tree of their own, generated code
    // of their own (`generate_code` writes nothing; the module is included by
    // name).
    match live_many(&out_dir) {
        Ok(()) => println!("cargo::rustc-cfg=promptpack_live_many"),
        Err(e) => println!("cargo::warning=live section's 1,000 prompts not built: {e}"),
    }

    let generated = match Workload::read(&dir).and_then(|w| w.inlined()) {
        Ok(toks) => {
            let askama = askama(&toks).unwrap_or_else(|e| stub("askama", &e));
            let md_tmpl = md_tmpl(&toks).unwrap_or_else(|e| stub("md_tmpl", &e));
            format!("{askama}\n{md_tmpl}")
        }
        Err(e) => {
            let e = format!("the workload was not readable at build time ({e})");
            format!("{}\n{}", stub("askama", &e), stub("md_tmpl", &e))
        }
    };
    std::fs::write(out_dir.join("compiled_peers.rs"), generated).expect("write compiled_peers.rs");
}

/// Writes `OUT_DIR/live_many/templates/<id>/system.md` for each of the
/// prompts of `live_tree` (the folder emptied first) and their generated code
/// to `OUT_DIR/live_many.rs`.
fn live_many(out_dir: &std::path::Path) -> Result<(), String> {
    let root = out_dir.join("live_many");
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    }
    for i in 0..live_tree::PROMPTS {
        let folder = root.join("templates").join(live_tree::id(i));
        std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        std::fs::write(folder.join("system.md"), live_tree::system(i))
            .map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    let code = promptpack_build::generate_code(&promptpack_build::Config::new(&root))
        .map_err(|e| e.to_string())?;
    std::fs::write(out_dir.join("live_many.rs"), code).map_err(|e| format!("live_many.rs: {e}"))
}

/// A function `name` that reports why the peer could not be generated.
fn stub(name: &str, why: &str) -> String {
    format!(
        "/// Not generated: {why:?}\n\
         pub fn {name}(_: &crate::workload::Values) -> Result<fn() -> String, String> {{ Err({why:?}.to_owned()) }}\n"
    )
}

/// A raw string literal that holds `s`.
fn raw(s: &str) -> String {
    let mut hashes = 1;
    while s.contains(&format!("\"{}", "#".repeat(hashes))) {
        hashes += 1;
    }
    let h = "#".repeat(hashes);
    format!("r{h}\"{s}\"{h}")
}

fn askama(toks: &[Tok]) -> Result<String, String> {
    let (vars, conds) = translate::names(toks);
    // A name used both ways is text; its condition is "non-empty".
    let toks: Vec<Tok> = toks
        .iter()
        .map(|t| match t {
            Tok::If(n) if vars.contains(n) => Tok::If(format!("!{n}.is_empty()")),
            other => other.clone(),
        })
        .collect();
    let source = translate::to_jinja(&toks, false)?;
    let mut fields = String::new();
    let mut init = String::new();
    for v in &vars {
        let _ = writeln!(fields, "    pub {v}: &'a str,");
        let _ = writeln!(init, "        {v}: v.text({v:?}),");
    }
    for c in conds.iter().filter(|c| !vars.contains(c)) {
        let _ = writeln!(fields, "    pub {c}: bool,");
        let _ = writeln!(init, "        {c}: v.flag({c:?}),");
    }
    Ok(format!(
        r#"/// The workload's template in askama syntax, snippets inlined.
#[derive(askama::Template)]
#[template(source = {source}, ext = "txt")]
#[allow(non_snake_case)]
pub struct AskamaPrompt<'a> {{
{fields}    pub _marker: std::marker::PhantomData<&'a ()>,
}}

/// Renders the workload with askama.
pub fn askama(v: &crate::workload::Values) -> Result<impl Fn() -> String + '_, String> {{
    let prompt = AskamaPrompt {{
{init}        _marker: std::marker::PhantomData,
    }};
    Ok(move || askama::Template::render(&prompt).expect("askama render"))
}}
"#,
        source = raw(&source)
    ))
}

fn md_tmpl(toks: &[Tok]) -> Result<String, String> {
    let (vars, conds) = translate::names(toks);
    let source = translate::to_md_tmpl(toks)?;
    let mut init = String::new();
    for v in &vars {
        let _ = writeln!(init, "        {v}: v.text({v:?}).to_owned(),");
    }
    for c in conds.iter().filter(|c| !vars.contains(c)) {
        let _ = writeln!(init, "        {c}: v.flag({c:?}),");
    }
    Ok(format!(
        r#"md_tmpl::template!({source} => md_tmpl_prompt);

/// Renders the workload with the code md-tmpl's `template!` macro generates.
#[allow(clippy::redundant_field_names)]
pub fn md_tmpl(v: &crate::workload::Values) -> Result<impl Fn() -> String + '_, String> {{
    let params = md_tmpl_prompt::Params {{
{init}    }};
    Ok(move || params.render().expect("md-tmpl render"))
}}
"#,
        source = raw(&source)
    ))
}
