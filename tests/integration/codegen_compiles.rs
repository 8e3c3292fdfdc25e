//! The contract of `promptpack check`: a tree it accepts compiles. Each test
//! writes the generated code of its trees as modules of one scratch crate
//! that depends on `promptpack` by path, and runs one `cargo check` on it
//! (its target folder is `codegen-compiles` under the build's target folder,
//! so the dependencies compile once). Random trees, hostile names, deep
//! nesting, many variables and snippets that fan out.
//!
//! `PROMPTPACK_COMPILE_TREES` raises the number of random trees for a long
//! run (default 48) and `PROMPTPACK_COMPILE_SEED` (a number) draws other
//! trees than the fixed default; `FUZZ_TARGETS=codegen_compiles
//! scripts/fuzz.sh` runs batches of new seeds for a time budget.

use promptpack::{Config, ErrorCode};
use promptpack_build::codegen::Renderers;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A prompt tree: `(path under the root, content)`.
type Tree = Vec<(String, String)>;

/// What the build API makes of `tree`: `check`'s errors (the build's
/// verdict) and, when it has none, the generated code.
fn check_and_generate(tree: &Tree) -> Result<Generated, Vec<promptpack::Diagnostic>> {
    // Not a temporary folder: the generated code shows each template in its
    // rustdoc through `include_str!`, so the files must outlive the compile.
    static TREES: AtomicUsize = AtomicUsize::new(0);
    let dir = target_dir()
        .join("codegen-compiles/trees")
        .join(TREES.fetch_add(1, Ordering::Relaxed).to_string());
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in tree {
        promptpack_testkit::files::write(&dir, path, text);
    }
    let config = Config::load(&dir).expect("the config loads");
    let report = promptpack_build::check(&config);
    let generated = promptpack_build::generate_code(&config);
    // check ⇒ build, and the other way round: one verdict.
    assert_eq!(
        report.errors.is_empty(),
        generated.is_ok(),
        "check and the build disagree: {:?} / {:?}",
        report.errors,
        generated.as_ref().err()
    );
    let straight_line = generated.map_err(|_| report.errors)?;
    let tables = promptpack_build::generate_code_with(&config, Renderers::Tables)
        .expect("what generates as straight-line code generates as tables");
    Ok(Generated {
        straight_line,
        tables,
    })
}

/// A tree's code both ways its parts can render.
#[derive(Debug)]
struct Generated {
    straight_line: String,
    tables: String,
}

impl Generated {
    /// Both codes as modules `{name}` and `{name}_tables`.
    fn modules(self, name: &str) -> [(String, String); 2] {
        [
            (name.to_string(), self.straight_line),
            (format!("{name}_tables"), self.tables),
        ]
    }
}

/// The build's target folder (where cargo put this test), shared with the
/// scratch crates so that `promptpack` and its dependencies compile once.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
        PathBuf::from,
    )
}

/// Runs `cargo <command>` (`check`, or `build` where debug info is what
/// breaks) on a crate whose modules are `modules` (name, code): the
/// compiler's messages when it fails.
fn cargo(command: &str, name: &str, modules: &[(String, String)]) -> Result<(), String> {
    let base = target_dir().join("codegen-compiles");
    let dir = base.join("crates").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("create the scratch crate");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\npromptpack = {{ path = {:?}, features = [\"serde\"] }}\n\n[workspace]\n",
        repo.display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("write Cargo.toml");
    // The repository's lock file: the same dependency versions, no network.
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
    let mut lib = String::from("#![allow(warnings)]\n");
    for (module, code) in modules {
        std::fs::write(dir.join("src").join(format!("{module}.rs")), code).expect("write a module");
        writeln!(lib, "pub mod {module} {{ include!(\"{module}.rs\"); }}").expect("a String");
    }
    std::fs::write(dir.join("src/lib.rs"), lib).expect("write lib.rs");
    let output = Command::new(env!("CARGO"))
        .arg(command)
        .arg("--offline")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", base.join("target"))
        .output()
        .expect("cargo runs");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Generates every tree (each must pass `check`) and compiles them together
/// with `cargo <command>`.
fn assert_compiles(command: &str, name: &str, trees: &[(String, Tree)]) {
    let modules: Vec<(String, String)> = trees
        .iter()
        .flat_map(|(module, tree)| {
            check_and_generate(tree)
                .unwrap_or_else(|e| panic!("`check` refuses tree {module}: {e:?}"))
                .modules(module)
        })
        .collect();
    if let Err(messages) = cargo(command, name, &modules) {
        let cut: String = messages.chars().take(20_000).collect();
        panic!("the generated code does not compile:\n{cut}");
    }
}

/// A tree of one prompt whose system part is `text`.
fn one_prompt(id: &str, text: String) -> Tree {
    vec![(format!("templates/{id}/system.md"), text)]
}

/// Names the generated code itself uses (its prelude names, locals, methods,
/// associated items, helper paths), as prompt ids, variables and compared
/// values: none of them may shadow or clash with what the code relies on.
const HOSTILE: &[&str] = &[
    "err",
    "ok",
    "some",
    "none",
    "result",
    "option",
    "string",
    "str",
    "self_",
    "from_str",
    "default",
    "into",
    "len",
    "out",
    "values",
    "vars",
    "id",
    "hash",
    "build",
    "build_prompt",
    "render_system",
    "render_user",
    "render_generated",
    "as_str",
    "get",
    "fmt",
    "f",
    "s",
    "v",
    "p",
    "name",
    "rendered",
    "from_disk",
    "core",
    "std",
    "promptpack",
    "prompt_id",
    "all",
    "variables",
    "conditions",
    "choices",
    "delimiters",
    "usize",
    "bool",
    "u64",
    "i",
    "new",
    "with_capacity",
    "push",
    "push_str",
    "map_or",
    "unwrap_or",
    "is_some",
    "vec",
    "box_",
    "clone",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "debug",
    "display",
    "from",
    "to_string",
    "parse",
    "serialize",
    "deserialize",
    "serde",
    "error",
    "prompt",
    "o",
    "l",
    "t",
    "info",
    "partial_eq",
    "partial_ord",
    "promptpack_generated",
    "dev_build",
    "text_values",
    "flag_value",
    "choice_value",
    "prompt_index",
    "unknown_choice",
    "names_enum",
    "names_of",
    "parse_name",
    "wrong_vars",
    "write_str",
    "include_str",
    "cfg",
];

/// Hostile names everywhere: as prompt ids, as variables of every kind and as
/// compared values.
fn hostile_tree() -> Tree {
    let mut tree = Tree::new();
    // `Self` cannot be a variant: `self_` is refused as an id and a value.
    let usable = || HOSTILE.iter().filter(|n| **n != "self_");
    let values: String = usable()
        .map(|v| format!("{{{{#if choice == \"{v}\"}}}}[{v}]{{{{/if}}}}"))
        .collect();
    let maybe: String = usable()
        .take(10)
        .map(|v| format!("{{{{#if maybe == \"{v}\"}}}}<{v}>{{{{/if}}}}"))
        .collect();
    let names: Vec<&str> = HOSTILE.to_vec();
    for (i, id) in usable().enumerate() {
        let id = id.replace('_', "-");
        let mut text = String::new();
        // Across the prompts every name is used in every way: as a value, a
        // flag, a value and a flag, a compared value.
        for (j, var) in names.iter().cycle().skip(i).take(8).enumerate() {
            match (i + 2 * j) % 4 {
                // A compared `vars` makes the enum `<Id>Vars`: refused, rightly.
                0 | 3 if *var == "vars" => write!(text, "{{{{{var}}}}} "),
                0 => write!(text, "{{{{{var}}}}} "),
                1 => write!(text, "{{{{#if {var}}}}}yes{{{{else}}}}no{{{{/if}}}} "),
                2 => write!(text, "{{{{#if {var}}}}}({{{{{var}}}}}){{{{/if}}}} "),
                _ => write!(text, "{{{{#if {var} == \"{id}\"}}}}={{{{/if}}}} "),
            }
            .expect("a String");
        }
        if i == 0 {
            text.push_str(&values);
            text.push_str(&maybe);
            text.push_str("{{#if maybe}}!{{/if}}");
        }
        tree.push((format!("templates/{id}/system.md"), text));
        if i % 2 == 0 {
            tree.push((
                format!("templates/{id}/user.md"),
                format!("user {{{{{id}}}}}"),
            ));
        }
    }
    tree
}

/// Prompt ids, variables and compared values named like what the generated
/// code uses (`Err`, `Ok`, `Some`, `Self::Err`, `len`, `out`, …) compile.
#[test]
fn hostile_names_compile() {
    assert_compiles(
        "check",
        "hostile",
        &[
            ("hostile".to_string(), hostile_tree()),
            // Pieces of one character are pushed as `char` literals, which
            // refuse what string literals take (a raw tab).
            (
                "one_char_pieces".to_string(),
                one_prompt(
                    "chars",
                    "{{a}}\t{{a}}'{{a}}\"{{a}}\\{{a}}\r{{a}}\n{{a}}\u{202e}{{a}}\u{0}{{a}}é"
                        .to_string(),
                ),
            ),
        ],
    );
}

/// Conversations compile both ways: nested branches around messages (an
/// `{{else if}}` on a compared value, an `{{else}}`), a tool named like a
/// generated name, an empty conversation, one that is only a history, and
/// variables named like the renderer's own locals (`m`, `bound`).
#[test]
fn conversations_compile() {
    let conversation = |id: &str, messages: &str| -> Tree {
        vec![
            (format!("templates/{id}/system.md"), "S {{m}}".to_string()),
            (format!("templates/{id}/messages.md"), messages.to_string()),
        ]
    };
    let history = "---\nvars:\n  bound: {kind: messages}\n---\n";
    let branches = [
        history,
        "{{#if a}}\n{{#if b}}\n{{#user}}\nU {{m}}\n{{/user}}\n{{/if}}\n",
        "{{#tool Ok}}\nT\n{{/tool}}\n",
        "{{else if role == \"x\"}}\n{{#assistant}}\nA\n{{/assistant}}\n",
        "{{else}}\n{{bound}}\n{{/if}}\n",
        "{{#user}}\n{{#if b}}B{{/if}}\n{{/user}}\n",
    ]
    .concat();
    assert_compiles(
        "check",
        "conversations",
        &[
            ("branches".to_string(), conversation("branches", &branches)),
            ("empty".to_string(), conversation("empty", "")),
            (
                "only_history".to_string(),
                conversation("only-history", &format!("{history}{{{{bound}}}}\n")),
            ),
        ],
    );
}

/// Ids and values whose variant would hide a generated constant
/// (`PromptId::ALL`, `PromptId::DELIMITERS`, a choice enum's `ALL`) are
/// refused, located; `all` itself becomes `All` and is fine.
#[test]
fn names_that_would_hide_generated_constants_are_refused() {
    let cases = [
        ("a-l-l", "x", ErrorCode::InvalidId),
        ("d-e-l-i-m-i-t-e-r-s", "x", ErrorCode::InvalidId),
        (
            "p",
            "{{#if role == \"a-l-l\"}}x{{/if}}",
            ErrorCode::InvalidChoice,
        ),
    ];
    for (id, text, code) in cases {
        let errors =
            check_and_generate(&one_prompt(id, text.to_string())).expect_err("must be refused");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].code, code, "{}", errors[0]);
        assert!(errors[0].location.is_some(), "{}", errors[0]);
    }
    let fine = one_prompt("all", "{{#if role == \"all\"}}x{{/if}}".to_string());
    check_and_generate(&fine).expect("`all` becomes `All`");
}

/// `{{#if}}` blocks `depth` deep, each with an else, a value inside.
fn nested(depth: usize) -> String {
    let mut text = String::new();
    for level in 0..depth {
        write!(text, "{{{{#if c{}}}}}(", level % 7).expect("a String");
    }
    text.push_str("{{x}}");
    for level in 0..depth {
        write!(text, "){{{{else}}}}{{{{y{}}}}}{{{{/if}}}}", level % 5).expect("a String");
    }
    text
}

/// A prompt of `n` variables, values and flags.
fn many_vars(n: usize) -> String {
    (0..n)
        .map(|i| {
            if i % 3 == 0 {
                format!("{{{{#if v{i}}}}}flag {i}{{{{/if}}}}\n")
            } else {
                format!("line {i}: {{{{v{i}}}}}\n")
            }
        })
        .collect()
}

/// Blocks nested 7,000 deep (rustc overflowed its stack on 800) and a
/// prompt of 6,000 variables (it overflowed on 5,000) compile, a debug build
/// each (debug info nests a scope per `let`): the generated code nests
/// nothing per block or per variable. Both are near the size limit per
/// prompt; twice as many is `too_large`, for `check` and the build alike.
#[test]
fn deep_nesting_and_many_variables_compile() {
    let deep = one_prompt("deep", nested(7_000));
    assert_compiles("build", "deep", &[("deep".to_string(), deep)]);
    let many = one_prompt("many", many_vars(6_000));
    assert_compiles("build", "many", &[("many".to_string(), many)]);
    for tree in [
        one_prompt("deep", nested(14_000)),
        one_prompt("many", many_vars(12_000)),
    ] {
        let errors = check_and_generate(&tree).expect_err("past the size limit");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].code, ErrorCode::TooLarge, "{}", errors[0]);
        assert!(errors[0].location.is_some(), "{}", errors[0]);
    }
}

/// A piece of a random template, before it is balanced into blocks.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Value(usize),
    Flag(usize),
    Compare(usize, usize),
    Else,
    Close,
    Snippet(usize),
}

fn piece() -> BoxedStrategy<Piece> {
    let name = 0..HOSTILE.len();
    prop_oneof![
        3 => "[a-z \"'\\\\{}#\n\t\u{e9}\u{1F600}\u{301}-]{0,12}".prop_map(Piece::Text),
        2 => name.clone().prop_map(Piece::Value),
        2 => name.clone().prop_map(Piece::Flag),
        2 => (name.clone(), name).prop_map(|(v, w)| Piece::Compare(v, w)),
        1 => Just(Piece::Else),
        2 => Just(Piece::Close),
        1 => (0..4usize).prop_map(Piece::Snippet),
    ]
    .boxed()
}

/// Template text from `pieces`, blocks balanced; snippet `k` includes only
/// snippets after it (`from`), so that there is no cycle.
fn text_of(pieces: &[Piece], from: usize) -> String {
    let mut text = String::new();
    // Per open block: whether it has had its `{{else}}`.
    let mut open: Vec<bool> = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => text.push_str(&t.replace("{{", "{ {")),
            Piece::Value(i) => text.push_str(&format!("{{{{{}}}}}", HOSTILE[*i])),
            Piece::Flag(i) => {
                text.push_str(&format!("{{{{#if {}}}}}", HOSTILE[*i]));
                open.push(false);
            }
            Piece::Compare(i, value) => {
                let value = HOSTILE[*value].replace("self_", "self-x");
                text.push_str(&format!("{{{{#if {} == \"{value}\"}}}}", HOSTILE[*i]));
                open.push(false);
            }
            Piece::Else => {
                if let Some(had_else) = open.last_mut().filter(|e| !**e) {
                    *had_else = true;
                    text.push_str("{{else}}");
                }
            }
            Piece::Close => {
                if open.pop().is_some() {
                    text.push_str("{{/if}}");
                }
            }
            Piece::Snippet(k) => {
                if *k >= from {
                    text.push_str(&format!("{{{{snippet:s{k}}}}}"));
                }
            }
        }
    }
    for _ in open {
        text.push_str("{{/if}}");
    }
    text
}

/// A random tree: one to four prompts named by hostile names, each with a
/// system part and maybe a user part, and four snippets.
fn tree() -> impl Strategy<Value = Tree> {
    let part = || prop::collection::vec(piece(), 0..24);
    let prompt = (0..HOSTILE.len(), part(), prop::option::of(part()));
    (
        prop::collection::vec(prompt, 1..5),
        prop::collection::vec(part(), 4),
    )
        .prop_map(|(prompts, snippets)| {
            let mut tree = Tree::new();
            for (id, system, user) in prompts {
                let id = HOSTILE[id].replace('_', "-").replace("self-", "myself");
                let dir = format!("templates/{id}");
                tree.push((format!("{dir}/system.md"), text_of(&system, 0)));
                if let Some(user) = user {
                    tree.push((format!("{dir}/user.md"), text_of(&user, 0)));
                }
            }
            for (k, snippet) in snippets.iter().enumerate() {
                tree.push((format!("snippets/s{k}.md"), text_of(snippet, k + 1)));
            }
            tree
        })
}

/// Random trees that `check` accepts compile, together in one crate.
/// `PROMPTPACK_COMPILE_TREES` sets how many (default 48),
/// `PROMPTPACK_COMPILE_SEED` which (default: one fixed seed, so that a
/// failure here repeats).
#[test]
fn random_trees_that_check_accepts_compile() {
    let count: usize = std::env::var("PROMPTPACK_COMPILE_TREES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(48);
    let mut seed = [7; 32];
    if let Ok(text) = std::env::var("PROMPTPACK_COMPILE_SEED") {
        let number: u64 = text.parse().expect("PROMPTPACK_COMPILE_SEED is a number");
        seed[..8].copy_from_slice(&number.to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(
        RunnerConfig::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    let strategy = tree();
    let mut modules = Vec::new();
    let mut refused = Vec::new();
    while modules.len() < 2 * count {
        let tree = strategy
            .new_tree(&mut runner)
            .expect("a random tree")
            .current();
        match check_and_generate(&tree) {
            Ok(code) => modules.extend(code.modules(&format!("t{}", modules.len()))),
            Err(errors) => refused.extend(errors.into_iter().map(|d| d.code)),
        }
        assert!(
            refused.len() < 4 * count + 100,
            "most random trees should pass `check`: {refused:?}"
        );
    }
    // Nothing in these small trees is too large.
    assert!(!refused.contains(&ErrorCode::TooLarge), "{refused:?}");
    if let Err(messages) = cargo("check", "random", &modules) {
        let cut: String = messages.chars().take(20_000).collect();
        panic!("the generated code of a random tree does not compile:\n{cut}");
    }
}

/// Snippets `s0`…`s{levels-1}` of about 50 bytes, each including the next
/// twice; the last one holds `leaf`.
fn fan_out(levels: usize, leaf: &str) -> Tree {
    let mut tree = one_prompt("fan", "{{snippet:s0}}".to_string());
    for level in 0..levels {
        let text = if level + 1 < levels {
            format!(
                "<level {level:02} of the fan-out: {{{{snippet:s{0}}}}} and {{{{snippet:s{0}}}}}>",
                level + 1
            )
        } else {
            format!("<the last level of the fan-out, holding {leaf}>")
        };
        tree.push((format!("snippets/s{level}.md"), text));
    }
    tree
}

/// A 16-level fan-out of 50-byte snippets (65,536 copies of the last one)
/// took rustc 88 s and 10.7 GB as a statement per piece of text. Its text
/// is now one literal, but past the size limit all the same: `check` and the
/// build refuse it, with values in every copy or without, with a located
/// `too_large` naming the prompt and the size. One level less, and a
/// fan-out of values 12 deep, compile.
#[test]
fn fan_out_compiles_or_is_too_large() {
    let values = "{{x}} and {{#if y}}{{z}}{{/if}}";
    assert_compiles(
        "build",
        "fan",
        &[
            ("text".to_string(), fan_out(15, "text only")),
            ("values".to_string(), fan_out(12, values)),
        ],
    );

    for leaf in ["text only", values] {
        let errors = check_and_generate(&fan_out(16, leaf)).expect_err("past the size limit");
        assert_eq!(errors.len(), 1, "{errors:?}");
        let error = &errors[0];
        assert_eq!(error.code, ErrorCode::TooLarge, "{error}");
        assert!(error.message.contains("prompt `fan`"), "{error}");
        assert!(error.message.contains("MiB of Rust"), "{error}");
        let location = error.location.as_ref().expect("located");
        assert_eq!(location.path(), "templates/fan/system.md");
    }
}
