//! Scale without blow-up: deep nesting (no stack overflow anywhere), big
//! files (time linear in size), many variables, and the bytes of CRLF and
//! BOM files.
//!
//! Timings are only ever compared with each other (a size ten times larger
//! must not take anything like a hundred times longer), never with a clock,
//! so the tests hold on a slow or busy machine and in debug builds.

use promptpack::{Config, Delimiters, Library, SnippetSource, SourceFile, TemplateSource};
use promptpack_build::codegen::{DevPaths, MAX_LARGE_CODE, SMALL_PROMPT_CODE, generate};
use promptpack_core::syntax::{Item, parse};
use promptpack_testkit::files::write_bytes;
use serde_json::json;

fn template(id: &str, text: impl Into<String>) -> TemplateSource {
    TemplateSource {
        id: id.to_string(),
        system: SourceFile::new(format!("templates/{id}/system.md"), text),
        user: None,
        messages: None,
    }
}

fn snippet(name: &str, text: impl Into<String>) -> SnippetSource {
    SnippetSource {
        name: name.to_string(),
        file: SourceFile::new(format!("snippets/{name}.md"), text),
    }
}

fn dev_paths() -> DevPaths {
    promptpack_testkit::fixed_dev_paths(&Delimiters::default())
}

/// Runs `f` on a thread with a big stack: for checks (such as parsing the
/// generated code with syn) whose own recursion is not under test.
fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(s, f)
            .expect("spawn a thread")
            .join()
            .expect("the thread finishes")
    })
}

/// `{{#if cK}}(` … `{{x}}` … `){{else}}-{{/if}}`, `depth` levels deep.
fn nested(depth: usize) -> String {
    let mut text = String::new();
    for level in 0..depth {
        text.push_str(&format!("{{{{#if c{}}}}}(", level % 3));
    }
    text.push_str("{{x}}");
    for _ in 0..depth {
        text.push_str("){{else}}-{{/if}}");
    }
    text
}

/// What [`nested`] renders to when levels `0..open` hold and level `open`
/// (if any) does not.
fn nested_output(depth: usize, open: usize) -> String {
    if open >= depth {
        format!("{}X{}", "(".repeat(depth), ")".repeat(depth))
    } else {
        format!("{}-{}", "(".repeat(open), ")".repeat(open))
    }
}

/// 10,000 nested blocks: parse, resolve, render and codegen all work on the
/// test thread's ordinary stack (2 MiB), so none of them recurses per level.
#[test]
fn ten_thousand_nested_blocks() {
    const DEPTH: usize = 10_000;
    let text = nested(DEPTH);

    let file = SourceFile::new("templates/deep/system.md", text.as_str());
    let parsed = parse(&file, &Delimiters::default()).expect("balanced blocks parse");
    let ifs = parsed
        .items
        .iter()
        .filter(|i| matches!(i, Item::If(_)))
        .count();
    assert_eq!(ifs, DEPTH);

    let templates = vec![template("deep", text.as_str())];
    let library = Library::from_sources(templates.clone(), vec![], &Config::default())
        .expect("the library loads");
    let all = library
        .build_prompt("deep", &json!({"c0": true, "c1": 1, "c2": "yes", "x": "X"}))
        .expect("renders");
    assert_eq!(all.system, nested_output(DEPTH, DEPTH));
    // Level 2 (c2) fails first.
    let cut = library
        .build_prompt("deep", &json!({"c0": true, "c1": true, "c2": "", "x": "X"}))
        .expect("renders");
    assert_eq!(cut.system, nested_output(DEPTH, 2));

    // Its code is past the generator's size limit per prompt: refused.
    let error = generate(library.prompts(), &templates, &dev_paths()).expect_err("too large");
    assert_eq!(error.code().as_str(), "too_large", "{error}");

    // Half as deep, the code is linear in size: a flag per branch, an `if`
    // per run of output.
    let half = nested(DEPTH / 2);
    let templates = vec![template("deep", half.as_str())];
    let library = Library::from_sources(templates.clone(), vec![], &Config::default())
        .expect("the library loads");
    let code = generate(library.prompts(), &templates, &dev_paths()).expect("generates");
    assert!(
        code.len() < 400 * DEPTH / 2,
        "{} bytes of code for {} blocks",
        code.len(),
        DEPTH / 2
    );
    // syn recurses per level, so it gets a big stack of its own.
    let parsed = with_big_stack(|| syn::parse_file(&code).map(drop).map_err(|e| e.to_string()));
    assert_eq!(parsed, Ok(()), "the generated code parses");
}

/// A chain of 10,000 snippets, each including the next: the snippet graph
/// check and the splicing do not recurse per level either.
#[test]
fn ten_thousand_chained_snippets() {
    const DEPTH: usize = 10_000;
    let snippets: Vec<SnippetSource> = (0..DEPTH)
        .map(|i| {
            let text = if i + 1 < DEPTH {
                format!("[{{{{snippet:s{}}}}}]", i + 1)
            } else {
                "{{x}}".to_string()
            };
            snippet(&format!("s{i}"), text)
        })
        .collect();
    let templates = vec![template("chain", "{{snippet:s0}}")];
    let library = Library::from_sources(templates.clone(), snippets.clone(), &Config::default())
        .expect("the library loads");
    let prompt = library
        .build_prompt("chain", &json!({"x": "X"}))
        .expect("renders");
    let want = format!("{}X{}", "[".repeat(DEPTH - 1), "]".repeat(DEPTH - 1));
    assert_eq!(prompt.system, want);

    // Closing the chain into a cycle is found, at the include that closes it.
    let mut cyclic = snippets;
    cyclic[DEPTH - 1] = snippet(&format!("s{}", DEPTH - 1), "{{snippet:s0}}");
    let error = Library::from_sources(templates, cyclic, &Config::default())
        .expect_err("a cycle is an error");
    assert_eq!(error.code().as_str(), "snippet_cycle");
    assert_eq!(error.diagnostics().len(), 1, "{error}");
}

/// Each snippet includes the next twice: 2^40 copies of the last one, were
/// it expanded. It must fail with `too_large` at once, not exhaust memory.
#[test]
fn snippets_that_multiply_stop_at_the_size_limit() {
    const DEPTH: usize = 40;
    let snippets: Vec<SnippetSource> = (0..DEPTH)
        .map(|i| {
            let text = if i + 1 < DEPTH {
                format!("{{{{snippet:s{0}}}}}{{{{snippet:s{0}}}}}", i + 1)
            } else {
                "x".repeat(1024)
            };
            snippet(&format!("s{i}"), text)
        })
        .collect();
    let templates = vec![template("boom", "{{snippet:s0}}")];
    let error = Library::from_sources(templates, snippets, &Config::default())
        .expect_err("must not expand without bound");
    assert_eq!(error.code().as_str(), "too_large", "{error}");
    let location = error.diagnostics()[0].location.as_ref().expect("located");
    assert!(location.path().starts_with("snippets/s"), "{error}");
}

/// Text with a few tokens, about `size` bytes.
fn big_template(size: usize) -> String {
    let paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod \
                     tempor incididunt ut labore et dolore magna aliqua.\n";
    let tokens = "{{name}} {{#if flag}}yes{{else}}no{{/if}} {{snippet:sig}}\n";
    let mut text = String::with_capacity(size + paragraph.len());
    let mut lines = 0;
    while text.len() < size {
        text.push_str(paragraph);
        lines += 1;
        if lines % 5_000 == 0 {
            text.push_str(tokens);
        }
    }
    text
}

// How the time grows with the input is the bench's business (`bench/`,
// "scaling"): a test on a shared 2-core machine cannot time anything
// reliably. These tests check that the large inputs work, and give exactly
// the right result.

/// Loads and renders a template of `size` bytes, checking the output.
fn load_and_render(size: usize) {
    let text = big_template(size);
    let token_lines = text.matches("{{name}}").count();
    let want_len = text.trim_end().len()
        + token_lines * ("Ada".len() + "yes".len() + "-- sig".len())
        - token_lines * ("{{name}}{{#if flag}}yes{{else}}no{{/if}}{{snippet:sig}}".len());
    let library = Library::from_sources(
        vec![template("big", text)],
        vec![snippet("sig", "-- sig")],
        &Config::default(),
    )
    .expect("the library loads")
    // Past the default render bound of 16 MiB: raised, as a user with
    // prompts this large would.
    .with_max_render_bytes(2 * size);
    let prompt = library
        .build_prompt("big", &json!({"name": "Ada", "flag": true}))
        .expect("renders");
    assert_eq!(prompt.system.len(), want_len);
    assert!(prompt.system.contains("Ada yes -- sig\n"));
}

/// A 50 MB template loads and renders.
#[test]
fn fifty_megabytes_load_and_render() {
    load_and_render(50 << 20);
}

/// The code generator takes a 1 MB template; its code stays within a small
/// multiple of the template (the docs hold the whole template), and within
/// its size limit per prompt.
#[test]
fn codegen_of_a_large_template() {
    let size = 1 << 20;
    let templates = vec![template("big", big_template(size))];
    let sig = vec![snippet("sig", "-- sig")];
    let library = Library::from_sources(templates.clone(), sig, &Config::default())
        .expect("the library loads");
    let code = generate(library.prompts(), &templates, &dev_paths()).expect("generates");
    assert!(code.len() < 4 * size, "{} bytes of code", code.len());
}

/// A template using `n` distinct variables, one per line.
fn many_vars(n: usize) -> String {
    (0..n)
        .map(|i| format!("line {i}: {{{{v{i}}}}}\n"))
        .collect()
}

/// 20,000 variables load, each located at its first use; their code is past
/// the generator's size limit per prompt. 5,000 generate.
#[test]
fn many_variables_load_and_generate() {
    let n = 20_000;
    let templates = vec![template("many", many_vars(n))];
    let library = Library::from_sources(templates.clone(), vec![], &Config::default())
        .expect("the library loads");
    let prompt = &library.prompts()[0];
    assert_eq!(prompt.vars.len(), n);
    let last = &prompt.vars[n - 1].first_use;
    assert_eq!(
        (last.line(), last.column()),
        (n, 8 + (n - 1).to_string().len())
    );
    let error = generate(library.prompts(), &templates, &dev_paths()).expect_err("too large");
    assert_eq!(error.code().as_str(), "too_large", "{error}");

    let n = 5_000;
    let templates = vec![template("many", many_vars(n))];
    let library = Library::from_sources(templates.clone(), vec![], &Config::default())
        .expect("the library loads");
    let code = generate(library.prompts(), &templates, &dev_paths()).expect("generates");
    assert!(code.contains(&format!("v{}", n - 1)));
}

/// A thousand ordinary prompts stay clear of the budget big prompts share
/// (a limit on all code together refused them once), while a hundred big
/// ones exhaust it: rustc's cost grows with each prompt's size.
#[test]
fn many_small_prompts_generate_and_big_ones_share_a_budget() {
    let small: Vec<TemplateSource> = (0..1_000)
        .map(|i| {
            let text = format!(
                "Prompt {i}: {{{{a}}}} {{{{#if f}}}}{{{{b}}}}{{{{/if}}}} {}",
                "text ".repeat(2_200)
            );
            template(&format!("p{i:04}"), text)
        })
        .collect();
    let library = Library::from_sources(small.clone(), vec![], &Config::default())
        .expect("the library loads");
    let code = generate(library.prompts(), &small, &dev_paths())
        .expect("a thousand small prompts generate");
    assert!(code.len() > MAX_LARGE_CODE, "{} bytes", code.len());

    // Code, not text, is what costs rustc: a statement or two per token.
    let big_text = "{{x}} and ".repeat(SMALL_PROMPT_CODE / 10);
    let big: Vec<TemplateSource> = (0..100)
        .map(|i| template(&format!("big{i:03}"), big_text.clone()))
        .collect();
    let library =
        Library::from_sources(big.clone(), vec![], &Config::default()).expect("the library loads");
    let error = generate(library.prompts(), &big, &dev_paths())
        .expect_err("a hundred big prompts are too large together");
    assert_eq!(error.code().as_str(), "too_large", "{error}");
    assert!(
        error.to_string().contains("for big prompts together"),
        "{error}"
    );
}

/// A lenient render with every one of 20,000 variables missing writes each
/// token back.
#[test]
fn many_missing_variables_render() {
    let n = 20_000;
    let library = Library::from_sources(
        vec![template("many", many_vars(n))],
        vec![],
        &Config::default(),
    )
    .expect("the library loads");
    let prompt = library
        .build_prompt_lenient("many", &json!({}))
        .expect("renders");
    assert_eq!(prompt.system, many_vars(n).trim_end());
}

/// CRLF (and lone CR) bytes reach the output as they are, through the
/// library and in the generated code; only the ends are trimmed; lines of
/// diagnostics count CRLF as one line break and do not show the CR.
#[test]
fn crlf_bytes_are_preserved() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let root = dir.path();
    write_bytes(
        root,
        "templates/crlf/system.md",
        b"\r\nHello {{name}}\r\n{{#if flag}}\r\nkept\r\n{{/if}}\r\nold\rmac\r\n{{snippet:sig}}\r\n\r\n",
    );
    write_bytes(root, "snippets/sig.md", b"\r\n-- sig\r\nline two\r\n");
    write_bytes(
        root,
        "templates/bad/system.md",
        b"one\r\ntwo\r\n  {{/if}}\r\n",
    );

    let config = Config::load(root).expect("the config loads");
    let error = Library::load_config(&config).expect_err("`bad` has a stray close");
    let d = &error.diagnostics()[0];
    let loc = d.location.as_ref().expect("located");
    assert_eq!(
        (d.code.as_str(), loc.path(), loc.line(), loc.column()),
        ("stray_close", "templates/bad/system.md", 3, 3)
    );
    assert_eq!(loc.line_text(), "  {{/if}}");

    std::fs::remove_dir_all(root.join("templates/bad")).expect("remove `bad`");
    let library = Library::load_config(&config).expect("the library loads");
    let prompt = library
        .build_prompt("crlf", &json!({"name": "Ada", "flag": true}))
        .expect("renders");
    assert_eq!(
        prompt.system,
        "Hello Ada\r\n\r\nkept\r\n\r\nold\rmac\r\n-- sig\r\nline two"
    );

    let code = promptpack_build::generate_code(&config).expect("generates");
    // Line feeds stay as they are in the literal; carriage returns, which
    // rustc refuses bare, are escaped.
    assert!(code.contains("\"\\r\nkept\\r\n\""), "{code}");
    assert!(
        code.contains("\"\\r\nold\\rmac\\r\n-- sig\\r\nline two\""),
        "{code}"
    );
    syn::parse_file(&code).expect("the generated code parses");
}

/// A byte order mark is trimmed like whitespace, in templates and snippets,
/// and takes no column in diagnostics; one inside the text stays.
#[test]
fn bom_is_trimmed() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let root = dir.path();
    write_bytes(
        root,
        "templates/bom/system.md",
        "\u{FEFF}Hello {{name}}, {{snippet:sig}}\u{FEFF}inner\n".as_bytes(),
    );
    write_bytes(root, "snippets/sig.md", "\u{FEFF}-- sig\n".as_bytes());
    write_bytes(
        root,
        "templates/bad/system.md",
        "\u{FEFF}{{/if}}\n".as_bytes(),
    );

    let config = Config::load(root).expect("the config loads");
    let error = Library::load_config(&config).expect_err("`bad` has a stray close");
    let loc = error.diagnostics()[0].location.clone().expect("located");
    assert_eq!((loc.line(), loc.column()), (1, 1));
    assert_eq!(loc.line_text(), "{{/if}}");

    std::fs::remove_dir_all(root.join("templates/bad")).expect("remove `bad`");
    let library = Library::load_config(&config).expect("the library loads");
    let prompt = library
        .build_prompt("bom", &json!({"name": "Ada"}))
        .expect("renders");
    assert_eq!(prompt.system, "Hello Ada, -- sig\u{FEFF}inner");
    let code = promptpack_build::generate_code(&config).expect("generates");
    assert!(code.contains(r#"o.push_str("Hello ");"#), "{code}");
    syn::parse_file(&code).expect("the generated code parses");
}
