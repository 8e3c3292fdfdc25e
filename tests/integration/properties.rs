//! Property tests of the template engine through its public API.
//!
//! (a) arbitrary text never panics, parses into spans that tile the body, and
//!     every diagnostic points inside its file; (b) a value is never scanned
//!     again; (c) strict and lenient agree when every variable is given, and
//!     both agree with a small reference model; (d) the length of a render of
//!     text and `{{var}}` tokens is the static text plus the values; (e)
//!     integral numbers print as integers, and every finite number as a
//!     round-tripping JavaScript numeral; (f) the code generator never
//!     panics, and writes Rust that parses (with `syn`) and that rustc takes
//!     (no bare CR, no direction-changing codepoints) or reports located
//!     naming errors; (g) rendering any diagnostic never panics, and shows a
//!     window of a long line; (h) splicing snippets takes work linear in the
//!     input and the output, however the snippets fan out.
//!
//! Failures are not persisted to a regressions file: proptest prints the
//! minimal failing input, which belongs in a fixture under `tests/inputs/`.

use promptpack::{Delimiters, Diagnostic, Library, SnippetSource, SourceFile, TemplateSource};
use promptpack_core::syntax::{Include, Item, parse};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// 256 cases per property unless `PROPTEST_CASES` asks for more or fewer.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Both delimiter settings.
fn delimiters() -> impl Strategy<Value = Delimiters> {
    prop_oneof![
        Just(Delimiters::default()),
        Just(Delimiters::new("<<", ">>").expect("valid delimiters")),
    ]
}

/// Pieces that make tokens, near-tokens and awkward text, in either setting.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "{{", "}}", "{", "}", "<<", ">>", "<", ">", "#if ", "/if", "else", "snippet:", "snippet:a",
    "snippet:b", "snippet:../", "a", "b", "x", "name_1", "0", " ", "  ", "\r\n", "\n", "\r", "\t",
    "-", ".", "/", "\\", ":", "#", "é", "日本", "😀", "\u{FEFF}", "\u{3000}", "\u{85}", "\u{A0}",
    "$&", "$1", "{{x}}", "<<x>>", "{{#if a}}", "<<#if a>>", "{{/if}}", "<</if>>", "{{else}}",
    "<<else>>", "{{snippet:a}}", "<<snippet:b>>",
];

/// Names the arbitrary templates may use: some of them are in [`PIECES`].
const VAR_POOL: &[&str] = &["a", "b", "x", "name_1", "0"];

/// Text made of [`PIECES`] and arbitrary characters.
fn soup() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        6 => prop::sample::select(PIECES).prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(fragment, 0..48).prop_map(|pieces| pieces.concat())
}

/// Any JSON value a caller might pass, nested a little.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        soup().prop_map(Value::from),
        // The values the generated comparisons test for.
        prop::sample::select(LITERALS).prop_map(Value::from),
        Just(Value::from(12)),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(("[a-z{}\"]{0,3}", inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn template(id: &str, system: &str, user: Option<&str>) -> TemplateSource {
    TemplateSource {
        id: id.to_string(),
        system: SourceFile::new(format!("templates/{id}/system.md"), system),
        user: user.map(|u| SourceFile::new(format!("templates/{id}/user.md"), u)),
        messages: None,
    }
}

fn snippet(name: &str, text: &str) -> SnippetSource {
    SnippetSource {
        name: name.to_string(),
        file: SourceFile::new(format!("snippets/{name}.md"), text),
    }
}

/// Checks that a diagnostic's location lies inside the file it names.
fn check_location(d: &Diagnostic, files: &HashMap<String, String>) -> Result<(), TestCaseError> {
    let Some(loc) = &d.location else {
        return Ok(());
    };
    let text = files.get(loc.path());
    prop_assert!(text.is_some(), "{d}: unknown path");
    let lines: Vec<&str> = text.map(|t| t.split('\n').collect()).unwrap_or_default();
    prop_assert!(
        loc.line() >= 1 && loc.line() <= lines.len(),
        "{d}: line out of range"
    );
    let line = lines[loc.line() - 1];
    prop_assert!(
        loc.column() >= 1 && loc.column() <= line.chars().count() + 1,
        "{d}: column out of range"
    );
    // A byte order mark takes no column and is not shown.
    let shown = line.trim_start_matches('\u{FEFF}').trim_end_matches('\r');
    prop_assert_eq!(loc.line_text(), shown);
    prop_assert!(loc.len() >= 1, "{}: empty span", d);
    Ok(())
}

/// Parses `text` alone and checks that, on success, the items tile the
/// trimmed body exactly, in order; on failure, that every error is located.
fn check_parse(text: &str, delims: &Delimiters) -> Result<(), TestCaseError> {
    let file = SourceFile::new("f.md", text);
    match parse(&file, delims) {
        Ok(parsed) => {
            let body = file.body_span();
            let mut at = body.start;
            for item in &parsed.items {
                let span = match item {
                    Item::Text(s)
                    | Item::Else(s)
                    | Item::EndIf(s)
                    | Item::CloseMessage(_, s)
                    | Item::Schema(s) => *s,
                    Item::Var(n) | Item::Snippet(Include { name: n, .. }) => n.span,
                    Item::If(c) | Item::ElseIf(c) => c.name.span,
                    Item::OpenMessage(tag) => tag.span,
                };
                prop_assert_eq!(span.start, at, "items must be contiguous");
                prop_assert!(span.end > span.start, "empty item");
                at = span.end;
            }
            prop_assert_eq!(at, body.end, "items must cover the body");
        }
        Err(errors) => {
            prop_assert!(!errors.is_empty());
            let files = HashMap::from([("f.md".to_string(), text.to_string())]);
            for d in &errors {
                check_location(d, &files)?;
            }
        }
    }
    Ok(())
}

/// Loads template `t` with snippets `a` and `b`, renders it strictly and
/// leniently, and checks that nothing panics, lenient never fails, strict
/// fails only with `missing_var` (else agrees with lenient), and every
/// diagnostic points into its file.
fn load_and_render(
    system: &str,
    user: Option<&str>,
    snippet_a: &str,
    snippet_b: &str,
    delims: &Delimiters,
    vars: &Map<String, Value>,
) -> Result<(), TestCaseError> {
    let mut files = HashMap::from([
        ("templates/t/system.md".to_string(), system.to_string()),
        ("snippets/a.md".to_string(), snippet_a.to_string()),
        ("snippets/b.md".to_string(), snippet_b.to_string()),
    ]);
    if let Some(user) = user {
        files.insert("templates/t/user.md".to_string(), user.to_string());
    }
    let loaded = Library::from_sources(
        vec![template("t", system, user)],
        vec![snippet("a", snippet_a), snippet("b", snippet_b)],
        &config_of(delims),
    );
    let library = match loaded {
        Ok(library) => library,
        Err(e) => {
            prop_assert!(!e.diagnostics().is_empty());
            prop_assert!(!e.to_string().is_empty());
            for d in e.diagnostics() {
                check_location(d, &files)?;
            }
            return Ok(());
        }
    };
    let lenient = library.build_prompt_lenient("t", vars);
    prop_assert!(
        lenient.is_ok(),
        "lenient render failed: {:?}",
        lenient.err()
    );
    match library.build_prompt("t", vars) {
        Ok(strict) => prop_assert_eq!(Some(strict), lenient.ok()),
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            for d in e.diagnostics() {
                prop_assert_eq!(d.code.as_str(), "missing_var");
                check_location(d, &files)?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// (a) Arbitrary text in every file: parsing, loading and rendering in
    /// both modes never panic, and every diagnostic points into its file.
    #[test]
    fn arbitrary_text_never_panics(
        system in soup(),
        user in prop::option::of(soup()),
        snippet_a in soup(),
        snippet_b in soup(),
        delims in delimiters(),
        vars in prop::collection::vec(
            (prop::sample::select(VAR_POOL), json_value()),
            0..5,
        ),
    ) {
        for text in [Some(&system), user.as_ref(), Some(&snippet_a), Some(&snippet_b)]
            .into_iter()
            .flatten()
        {
            check_parse(text, &delims)?;
        }
        let vars: Map<String, Value> =
            vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        // The whole set, then each file alone as a template with valid
        // snippets (one bad file fails the whole set, so this reaches the
        // renderer far more often).
        load_and_render(&system, user.as_deref(), &snippet_a, &snippet_b, &delims, &vars)?;
        for text in [Some(&system), user.as_ref(), Some(&snippet_a), Some(&snippet_b)]
            .into_iter()
            .flatten()
        {
            load_and_render(text, None, "A {{x}}", "<<b>>", &delims, &vars)?;
        }
    }

    /// (b) A value holding any token text reaches the output verbatim, even
    /// when the variables and snippets it names exist.
    #[test]
    fn values_are_never_rescanned(value in soup(), delims in delimiters()) {
        let (open, close) = (delims.open().to_string(), delims.close().to_string());
        let system = format!("<{open}v{close}>{open}#if v{close}[{open}v{close}]{open}/if{close}");
        let user = format!("{open}snippet:x{close} {open}v{close} {open}missing{close}");
        let library = Library::from_sources(
            vec![template("t", &system, Some(&user))],
            vec![snippet("x", "X"), snippet("a", "A"), snippet("b", "B")],
            &config_of(&delims),
        )
        .expect("the template is valid");
        let vars = json!({"v": value, "a": "A-VALUE", "b": "B-VALUE", "x": "X-VALUE", "name_1": "N"});
        let prompt = library.build_prompt_lenient("t", &vars).expect("lenient render");
        let bracketed = if value.is_empty() { String::new() } else { format!("[{value}]") };
        prop_assert_eq!(prompt.system, format!("<{value}>{bracketed}"));
        prop_assert_eq!(prompt.user, Some(format!("X {value} {open}missing{close}")));
    }

    /// With `standalone_tags`, a template whose block tags each stand on a
    /// line of their own renders exactly as the same template with the
    /// newline after each tag taken out (in templates and snippets alike).
    #[test]
    fn standalone_tags_take_their_lines_away(
        nodes in prop::collection::vec(node(true), 0..6),
        snippet_nodes in prop::collection::vec(node(false), 0..4),
        values in prop::collection::vec(json_value(), NAMES.len()),
    ) {
        let d = Delimiters::default();
        let all: Map<String, Value> =
            NAMES.iter().map(|n| n.to_string()).zip(values).collect();
        let render = |own_lines: bool, standalone: bool| {
            let system = format!("[{}]", write_tag_lines(&nodes, &d, own_lines));
            let snippet_text = format!("({})", write_tag_lines(&snippet_nodes, &d, own_lines));
            let config = promptpack::Config::new(".").with_standalone_tags(standalone);
            let library = Library::from_sources(
                vec![template("t", &system, None)],
                vec![snippet("s", &snippet_text)],
                &config,
            )
            .expect("generated templates are valid");
            library.build_prompt_lenient("t", &all).expect("renders").system
        };
        prop_assert_eq!(render(true, true), render(false, false));
        // Without the setting the lines stay: the newline after a top-level
        // `{{/if}}` is always rendered.
        if nodes.iter().any(|n| matches!(n, Node::If(..))) {
            prop_assert!(render(true, false).len() > render(false, false).len());
        }
    }

    /// (c) With every variable given, strict and lenient renders are equal,
    /// and both equal a direct evaluation of the template tree.
    #[test]
    fn strict_and_lenient_agree_when_complete(
        nodes in prop::collection::vec(node(true), 0..6),
        snippet_nodes in prop::collection::vec(node(false), 0..4),
        values in prop::collection::vec(json_value(), NAMES.len()),
        delims in delimiters(),
    ) {
        let system = format!("[{}]", write_nodes(&nodes, &delims));
        let snippet_text = format!("({})", write_nodes(&snippet_nodes, &delims));
        let library = Library::from_sources(
            vec![template("t", &system, None)],
            vec![snippet("s", &snippet_text)],
            &config_of(&delims),
        )
        .expect("generated templates are valid");
        let all: Map<String, Value> =
            NAMES.iter().map(|n| n.to_string()).zip(values).collect();
        let used: Map<String, Value> = library
            .resolved("t")
            .expect("prompt t")
            .vars
            .iter()
            .map(|v| (v.name.clone(), all[&v.name].clone()))
            .collect();
        let strict = library.build_prompt("t", &used).expect("strict render with every variable");
        let lenient = library.build_prompt_lenient("t", &used).expect("lenient render");
        prop_assert_eq!(&strict, &lenient);
        let mut want = String::from("[");
        eval(&nodes, &snippet_nodes, &all, &mut want);
        want.push(']');
        prop_assert_eq!(strict.system, want);
    }

    /// (d) A template of text and value tokens renders to exactly its static
    /// text plus its values.
    #[test]
    fn length_is_text_plus_values(
        parts in prop::collection::vec(
            (
                prop::collection::vec(any::<char>(), 0..8)
                    .prop_map(|cs| cs.into_iter().filter(|c| !"{}<>".contains(*c)).collect::<String>()),
                prop::option::of(prop::sample::select(NAMES)),
            ),
            0..8,
        ),
        values in prop::collection::vec(
            prop_oneof![
                any::<String>().prop_map(Value::from),
                soup().prop_map(Value::from),
                any::<bool>().prop_map(Value::from),
                any::<i32>().prop_map(Value::from),
            ],
            NAMES.len(),
        ),
        delims in delimiters(),
    ) {
        let vars: Map<String, Value> = NAMES.iter().map(|n| n.to_string()).zip(values).collect();
        // Brackets keep the edges of the text from being trimmed.
        let mut text = String::from("[");
        let mut want = 2;
        for (static_text, name) in &parts {
            text.push_str(static_text);
            want += static_text.len();
            if let Some(name) = name {
                text.push_str(&delims.var_token(name));
                want += match &vars[*name] {
                    Value::String(s) => s.len(),
                    other => other.to_string().len(),
                };
            }
        }
        text.push(']');
        let library = Library::from_sources(vec![template("t", &text, None)], vec![], &config_of(&delims))
            .expect("text and value tokens are valid");
        let prompt = library.build_prompt("t", &vars).expect("every value is given");
        prop_assert_eq!(prompt.system.len(), want);
    }

    /// (e) An f64 holding an integer in i32 range prints as that integer, as
    /// a JSON float or integer alike, and is truthy exactly when non-zero.
    #[test]
    fn integral_numbers_print_as_integers(i in any::<i32>()) {
        let f = f64::from(i);
        let library = Library::from_sources(
            vec![template("t", "{{n}}|{{#if n}}T{{else}}F{{/if}}", None)],
            vec![],
            &promptpack::Config::default(),
        )
        .expect("valid template");
        let truthy = if i != 0 { "T" } else { "F" };
        let as_float = Value::Number(serde_json::Number::from_f64(f).expect("finite"));
        for n in [as_float, Value::from(i), Value::from(i64::from(i))] {
            let prompt = library.build_prompt("t", &json!({ "n": n })).expect("render");
            prop_assert_eq!(prompt.system, format!("{i}|{truthy}"));
        }
        let mut direct = String::new();
        promptpack_core::value::write_js_number(&mut direct, f);
        prop_assert_eq!(direct, i.to_string());
    }

    /// (e) Every finite f64 prints as a numeral that reads back as the same
    /// number, in exponent form exactly where JavaScript uses it.
    #[test]
    fn finite_numbers_round_trip(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let mut out = String::new();
        promptpack_core::value::write_js_number(&mut out, f);
        prop_assert_eq!(out.parse::<f64>().ok(), Some(f), "{} printed as {}", f, out);
        let exponent_form = f != 0.0 && (f.abs() >= 1e21 || f.abs() < 1e-6);
        prop_assert_eq!(out.contains('e'), exponent_form, "{} printed as {}", f, out);
    }
}

/// The variable names of the generated templates.
const NAMES: &[&str] = &["a", "b", "c", "flag", "n_1"];

/// A generated template, written out with either delimiters.
#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Var(&'static str),
    Snippet,
    /// `{{#if c1}}…{{else if c2}}…{{else}}…{{/if}}`: one or more tested
    /// branches, then maybe an `else`.
    If(Vec<(Test, Vec<Node>)>, Option<Vec<Node>>),
}

/// A condition: a name, and maybe the value it is compared with.
type Test = (&'static str, Option<&'static str>);

/// Values compared with; the generated values hit them now and then.
const LITERALS: &[&str] = &["x", "true", "12", "a b"];

fn test_strategy() -> impl Strategy<Value = Test> {
    (
        prop::sample::select(NAMES),
        prop::option::of(prop::sample::select(LITERALS)),
    )
}

/// Template trees; `with_snippet` allows `{{snippet:s}}` (not inside `s`).
fn node(with_snippet: bool) -> impl Strategy<Value = Node> {
    let text = "[a-zA-Z0-9 .,:#/\\-\n\té日😀]{1,8}".prop_map(Node::Text);
    let var = prop::sample::select(NAMES).prop_map(Node::Var);
    let leaf = if with_snippet {
        prop_oneof![3 => text, 3 => var, 1 => Just(Node::Snippet)].boxed()
    } else {
        prop_oneof![text, var].boxed()
    };
    leaf.prop_recursive(3, 24, 4, |inner| {
        let block = prop::collection::vec(inner.clone(), 0..4);
        prop_oneof![
            2 => inner,
            1 => (
                prop::collection::vec((test_strategy(), block.clone()), 1..4),
                prop::option::of(block)
            )
                .prop_map(|(branches, otherwise)| Node::If(branches, otherwise)),
        ]
    })
}

/// The tag of branch `i` of a block: `{{#if test}}`, then `{{else if test}}`.
fn branch_tag(i: usize, (name, equals): &Test, d: &Delimiters) -> String {
    let keyword = if i == 0 { "#if" } else { "else if" };
    let test = match equals {
        Some(value) => format!("{name} == \"{value}\""),
        None => name.to_string(),
    };
    format!("{}{keyword} {test}{}", d.open(), d.close())
}

fn write_nodes(nodes: &[Node], d: &Delimiters) -> String {
    let (open, close) = (d.open(), d.close());
    let mut out = String::new();
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Var(name) => out.push_str(&d.var_token(name)),
            Node::Snippet => out.push_str(&format!("{open}snippet:s{close}")),
            Node::If(branches, otherwise) => {
                for (i, (test, block)) in branches.iter().enumerate() {
                    out.push_str(&branch_tag(i, test, d));
                    out.push_str(&write_nodes(block, d));
                }
                if let Some(otherwise) = otherwise {
                    out.push_str(&format!("{open}else{close}"));
                    out.push_str(&write_nodes(otherwise, d));
                }
                out.push_str(&format!("{open}/if{close}"));
            }
        }
    }
    out
}

/// Writes `nodes` with every block tag at the start of a line (a newline is
/// written before a tag that would not be, as template text in both styles),
/// and, when `own_lines`, a newline after each tag too: the form
/// `standalone_tags` strips back to the form without those newlines.
fn write_tag_lines(nodes: &[Node], d: &Delimiters, own_lines: bool) -> String {
    /// The output, and whether the own-lines form is at a line start there
    /// (decided alike in both forms, so that they differ only by the
    /// newlines after tags).
    struct Out {
        text: String,
        at_line_start: bool,
    }
    fn tag(out: &mut Out, text: &str, own_lines: bool) {
        if !out.at_line_start {
            out.text.push('\n');
        }
        out.text.push_str(text);
        if own_lines {
            out.text.push('\n');
        }
        out.at_line_start = true;
    }
    fn go(out: &mut Out, nodes: &[Node], d: &Delimiters, own_lines: bool) {
        let (open, close) = (d.open(), d.close());
        for node in nodes {
            match node {
                Node::Text(t) => {
                    out.text.push_str(t);
                    if !t.is_empty() {
                        out.at_line_start = t.ends_with('\n');
                    }
                }
                Node::Var(name) => {
                    out.text.push_str(&d.var_token(name));
                    out.at_line_start = false;
                }
                Node::Snippet => {
                    out.text.push_str(&format!("{open}snippet:s{close}"));
                    out.at_line_start = false;
                }
                Node::If(branches, otherwise) => {
                    for (i, (test, block)) in branches.iter().enumerate() {
                        tag(out, &branch_tag(i, test, d), own_lines);
                        go(out, block, d, own_lines);
                    }
                    if let Some(otherwise) = otherwise {
                        tag(out, &format!("{open}else{close}"), own_lines);
                        go(out, otherwise, d, own_lines);
                    }
                    tag(out, &format!("{open}/if{close}"), own_lines);
                }
            }
        }
    }
    // What comes before (`[` or `(`) is not a line start.
    let mut out = Out {
        text: String::new(),
        at_line_start: false,
    };
    go(&mut out, nodes, d, own_lines);
    out.text
}

/// The reference semantics: what the template tree means, by the testkit's
/// reference evaluator (the one the fuzz targets compare the renderer
/// against), fed the tree itself rather than its text. Every variable must
/// have a value.
fn eval(nodes: &[Node], snippet: &[Node], vars: &Map<String, Value>, out: &mut String) {
    use promptpack_testkit::reference::{Node as RefNode, SnippetTrees, evaluate};
    fn convert(nodes: &[Node]) -> Vec<RefNode> {
        nodes
            .iter()
            .map(|node| match node {
                Node::Text(t) => RefNode::Text(t.clone()),
                Node::Var(name) => RefNode::Var(name.to_string()),
                Node::Snippet => RefNode::Snippet("s".to_string()),
                // `else if` is an `else` branch holding the rest of the chain.
                Node::If(branches, otherwise) => {
                    let mut rest = otherwise.as_deref().map(convert);
                    for ((name, equals), block) in branches.iter().rev() {
                        let node = RefNode::If {
                            name: name.to_string(),
                            equals: equals.map(str::to_string),
                            then: convert(block),
                            otherwise: rest,
                        };
                        rest = Some(vec![node]);
                    }
                    rest.and_then(|mut nodes| nodes.pop())
                        .expect("a block has a branch")
                }
            })
            .collect()
    }
    // Snippet `s` is written as `(…)`.
    let mut s = vec![RefNode::Text("(".to_string())];
    s.extend(convert(snippet));
    s.push(RefNode::Text(")".to_string()));
    let snippets = SnippetTrees::from([("s".to_string(), s)]);
    let reference = evaluate(&convert(nodes), &snippets, vars, &Delimiters::default());
    assert!(
        reference.missing.is_empty(),
        "the reference reached variables without a value: {:?}",
        reference.missing
    );
    out.push_str(&reference.text);
}

/// Text for generated templates that stresses the code generator: CR, BOM,
/// direction-changing codepoints, quotes, backslashes, comment and doc
/// markers, and delimiters that are not tokens.
fn awkward_text() -> impl Strategy<Value = String> {
    #[rustfmt::skip]
    const PIECES: &[&str] = &[
        "a", " ", "\n", "\r\n", "\r", "\t", "\u{FEFF}", "\u{202E}", "\u{2066}", "\u{2028}", "\0",
        "\u{1b}", "\"", "'", "\\", "/", "//", "///", "/*", "*/", "*", "#", "#[", "]", "`", "```",
        "r#\"", "\"#", "{", "}", "{ {", "}}", "é", "日本", "😀", "\u{85}", "\u{200B}",
    ];
    prop::collection::vec(prop::sample::select(PIECES), 1..12).prop_map(|p| p.concat())
}

/// Names that become distinct Rust fields, some of them only just
/// (keywords, names of the generated code's own locals).
const FINE_VARS: &[&str] = &[
    "a",
    "agentName",
    "type",
    "self",
    "crate",
    "super",
    "values",
    "vars",
    "len",
    "out",
    "r",
    "match",
    "async",
    "gen",
];

/// Ids that become distinct variants.
const FINE_IDS: &[&str] = &["t", "agent-system", "type", "prompt-id", "vars", "a--b"];

/// Names that become Rust names awkwardly, or not at all.
const AWKWARD_VARS: &[&str] = &[
    "a",
    "agentName",
    "agent_name",
    "AgentName",
    "type",
    "self",
    "Self",
    "crate",
    "super",
    "_",
    "__x",
    "_1a",
    "2fast",
    "values",
    "vars",
    "len",
    "out",
    "r",
    "match",
    "async",
    "gen",
];

/// Ids that become variants awkwardly, or not at all.
const AWKWARD_IDS: &[&str] = &[
    "t",
    "agent-system",
    "agent_system",
    "AgentSystem",
    "1st",
    "_1",
    "self",
    "Self",
    "type",
    "prompt-id",
    "vars",
    "a--b",
    "_",
];

#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Var(&'static str),
    If(&'static str, Vec<Piece>, Option<Vec<Piece>>),
}

/// Mostly names that work, sometimes one that does not.
fn var_name() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        6 => prop::sample::select(FINE_VARS),
        1 => prop::sample::select(AWKWARD_VARS),
    ]
}

fn pieces() -> impl Strategy<Value = Vec<Piece>> {
    let leaf = prop_oneof![
        awkward_text().prop_map(Piece::Text),
        var_name().prop_map(Piece::Var),
    ];
    let piece = leaf.prop_recursive(3, 16, 4, |inner| {
        let block = prop::collection::vec(inner.clone(), 0..4);
        prop_oneof![
            2 => inner,
            1 => (var_name(), block.clone(), prop::option::of(block))
                .prop_map(|(name, then, otherwise)| Piece::If(name, then, otherwise)),
        ]
    });
    prop::collection::vec(piece, 0..6)
}

fn write_pieces(pieces: &[Piece], out: &mut String) {
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Var(name) => out.push_str(&format!("{{{{{name}}}}}")),
            Piece::If(name, then, otherwise) => {
                out.push_str(&format!("{{{{#if {name}}}}}"));
                write_pieces(then, out);
                if let Some(otherwise) = otherwise {
                    out.push_str("{{else}}");
                    write_pieces(otherwise, out);
                }
                out.push_str("{{/if}}");
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// (f) For any valid prompts (awkward text, ids and variable names), the
    /// code generator either writes Rust that parses and holds nothing rustc
    /// refuses in a comment or literal, or reports located naming errors.
    #[test]
    fn generated_code_parses_or_names_are_reported(
        prompts in prop::collection::vec(
            (
                prop_oneof![4 => prop::sample::select(FINE_IDS), 1 => prop::sample::select(AWKWARD_IDS)],
                pieces(),
                prop::option::of(pieces()),
            ),
            1..4,
        ),
        snippet_text in awkward_text(),
    ) {
        use promptpack_build::codegen::{Renderers, generate, generate_with};

        let mut templates: Vec<TemplateSource> = Vec::new();
        for (id, system, user) in &prompts {
            if templates.iter().any(|t| t.id == *id) {
                continue;
            }
            let mut system_text = String::new();
            write_pieces(system, &mut system_text);
            system_text.push_str("{{snippet:s}}");
            let user_text = user.as_ref().map(|user| {
                let mut text = String::new();
                write_pieces(user, &mut text);
                text
            });
            templates.push(template(id, &system_text, user_text.as_deref()));
        }
        let snippets = vec![snippet("s", &snippet_text)];
        let (mut resolved, errors) =
            promptpack_core::resolve::resolve(&templates, &snippets, &Delimiters::default());
        prop_assert!(errors.is_empty(), "generated templates are valid: {:?}", errors);
        resolved.sort_by(|a, b| a.id.cmp(&b.id));
        let dev = promptpack_testkit::fixed_dev_paths(&Delimiters::default());
        // The tables of builds without optimization: refused exactly when
        // the straight-line code is, and parsing otherwise.
        let tables = std::panic::catch_unwind(|| {
            generate_with(&resolved, &templates, &dev, Renderers::Tables)
        });
        prop_assert!(tables.is_ok(), "the code generator panicked");
        let tables = tables.unwrap_or_else(|_| unreachable!());
        if let Ok(code) = &tables
            && let Err(e) = syn::parse_file(code)
        {
            prop_assert!(false, "the generated tables do not parse: {}\n{}", e, code);
        }
        let generated = std::panic::catch_unwind(|| generate(&resolved, &templates, &dev));
        prop_assert!(generated.is_ok(), "the code generator panicked");
        prop_assert_eq!(
            tables.is_ok(),
            generated.as_ref().is_ok_and(Result::is_ok),
            "one generator refused what the other took"
        );
        match generated.unwrap_or_else(|_| unreachable!()) {
            Ok(code) => {
                if let Err(e) = syn::parse_file(&code) {
                    prop_assert!(false, "the generated code does not parse: {}\n{}", e, code);
                }
                let mut chars = code.chars().peekable();
                while let Some(c) = chars.next() {
                    prop_assert!(
                        !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'),
                        "a direction-changing codepoint in the generated code"
                    );
                    prop_assert!(c != '\r' || chars.peek() == Some(&'\n'), "a bare CR in the generated code");
                }
            }
            Err(e) => {
                for d in e.diagnostics() {
                    prop_assert!(
                        promptpack_testkit::checks::refused_by_codegen(d.code),
                        "unexpected {}", d
                    );
                    prop_assert!(d.location.is_some(), "{} has no location", d);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// (g) Any located diagnostic renders without panicking, in both styles,
    /// naming its place: whatever the line holds (tabs, control and wide
    /// characters, a long line) and wherever the column points.
    #[test]
    fn rendering_any_diagnostic_never_panics(
        indent in prop::collection::vec(prop_oneof![Just('\t'), Just(' '), Just('\u{3000}'), Just('\u{b}')], 0..40),
        rest in prop::collection::vec(any::<char>().prop_map(|c| if c == '\n' { ' ' } else { c }), 0..600),
        column in 1usize..700,
        len in 0usize..700,
        line in 1usize..10_000,
    ) {
        use promptpack::{ErrorCode, Severity, Style, render_diagnostic};
        use promptpack_core::source_file::Span;
        let line_text: String = indent.into_iter().chain(rest).collect();
        // The span from the `column`th character, `len` characters long.
        let byte = |chars: usize| {
            line_text.char_indices().nth(chars).map_or(line_text.len(), |(i, _)| i)
        };
        let start = byte(column - 1);
        let end = byte(column - 1 + len);
        let before = "\n".repeat(line - 1);
        let file = SourceFile::new("templates/t/system.md", format!("{before}{line_text}\n"));
        let location = file.location(Span { start: before.len() + start, end: before.len() + end });
        prop_assert_eq!(location.line(), line);
        let column = location.column();
        let d = Diagnostic::new(ErrorCode::StrayClose, "a message").at(location);
        for style in [Style::Plain, Style::Color] {
            for severity in [Severity::Error, Severity::Warning] {
                let shown = render_diagnostic(&d, severity, style);
                prop_assert!(shown.contains(&format!("templates/t/system.md:{line}:{column}")), "{}", shown);
                prop_assert!(!shown.contains('\u{1b}') || style == Style::Color, "an escape in plain output");
                // However long the line, the excerpt is a window of it.
                for shown_line in shown.lines().filter(|_| style == Style::Plain) {
                    prop_assert!(shown_line.chars().count() <= 160, "a long excerpt line: {}", shown_line);
                }
            }
        }
    }
}

/// The bottom of a chain in `chains_that_fan_out`: text that adds nothing,
/// only whitespace (trimmed away), a block that tests false, some output.
const BOTTOMS: &[&str] = &[
    "",
    "  \n ",
    "{{#if off}}{{/if}}",
    "{{#if c}}{{else}}{{/if}}",
    "x",
    "{{v}}",
];

/// How a link of the chain includes the next snippet, `{}` its includes.
const LINKS: &[&str] = &[
    "{}",
    "{{#if c}}{}{{else}}{}{{/if}}",
    " {} ",
    "{{#if off}}{}{{/if}}",
];

proptest! {
    #![proptest_config(config())]

    /// Random snippet graphs that fan out, as the `snippet_fanout` fuzz
    /// target makes them: work linear in input and output, and renders as
    /// the reference evaluator does when small enough to expand.
    #[test]
    fn splicing_work_is_linear(data in prop::collection::vec(any::<u8>(), 0..400)) {
        promptpack_testkit::fuzz_snippet_fanout(&data);
    }

    /// A chain of `depth` snippets, each including the next `width` times
    /// in one of [`LINKS`], ending in one of [`BOTTOMS`], from one part or
    /// both: `width^depth` splices, whose work stays linear in the input and
    /// the output (a part whose output passes the size limit is refused).
    #[test]
    fn chains_that_fan_out(
        depth in 1usize..64,
        width in 1usize..5,
        link in 0..LINKS.len(),
        bottom in 0..BOTTOMS.len(),
        both_parts in any::<bool>(),
    ) {
        let mut case = String::new();
        for i in 0..depth {
            let include = format!("{{{{snippet:s{}}}}}", i + 1).repeat(width);
            let text = LINKS[link].replace("{}", &include);
            case.push_str(&format!("--- snippets/s{i}.md\n{text}\n"));
        }
        case.push_str(&format!("--- snippets/s{depth}.md\n{}\n", BOTTOMS[bottom]));
        case.push_str("--- templates/t/system.md\nS {{snippet:s0}}\n");
        if both_parts {
            case.push_str("--- templates/t/user.md\n{{snippet:s0}}{{snippet:s1}}\n");
        }
        let steps = promptpack_testkit::check_splice_work(&promptpack_testkit::parse_case(&case));
        prop_assert!(steps > 0);
    }
}

/// The `PromptInfo` generated code would hold for `prompt` (id `t`), with
/// its tables `parts`, leaked to be `'static` as generated constants are.
fn leaked_info(
    prompt: &promptpack_core::resolve::ResolvedPrompt,
    parts: Vec<promptpack::__private::Part>,
) -> promptpack::__private::PromptInfo {
    let leak = |s: &str| -> &'static str { String::leak(s.to_string()) };
    promptpack::__private::PromptInfo {
        id: "t",
        hash: prompt.hash.into(),
        variables: Vec::leak(prompt.vars.iter().map(|v| leak(&v.name)).collect()),
        kinds: leak(
            &prompt
                .vars
                .iter()
                .map(|v| char::from(v.kind().letter()))
                .collect::<String>(),
        ),
        conditions: &[],
        choices: Vec::leak(
            prompt
                .vars
                .iter()
                .filter(|v| !v.choices.is_empty())
                .map(|v| {
                    let values: Vec<&'static str> = v.choices.iter().map(|c| leak(c)).collect();
                    (leak(&v.name), &*Vec::leak(values))
                })
                .collect(),
        ),
        parts: Vec::leak(parts),
        ..promptpack::__private::NO_FIELDS
    }
}

/// Every variable of `prompt` as [`shown_by_struct`] makes it of the
/// values `value` gives by name: what the interpreter renders with.
fn shown_by_structs<'p>(
    prompt: &'p promptpack_core::resolve::ResolvedPrompt,
    value: &dyn Fn(&str) -> Option<String>,
) -> HashMap<&'p str, String> {
    prompt
        .vars
        .iter()
        .map(|v| {
            (
                v.name.as_str(),
                shown_by_struct(v, value(&v.name).as_deref()),
            )
        })
        .collect()
}

/// What a generated vars struct makes of a value given by name, as
/// `render_generated` does: a compared variable keeps only one of its
/// values (the first, when given another; nothing, when it is optional).
fn shown_by_struct(var: &promptpack_core::program::VarInfo, given: Option<&str>) -> String {
    use promptpack_core::program::VarKind;
    let known = given.filter(|v| var.choices.iter().any(|c| c == v));
    match var.kind() {
        VarKind::Choice => known
            .or(var.choices.first().map(String::as_str))
            .unwrap_or_default()
            .to_string(),
        VarKind::OptionalChoice => known.unwrap_or_default().to_string(),
        _ => given.unwrap_or_default().to_string(),
    }
}

proptest! {
    #![proptest_config(config())]

    /// The tables builds without optimization render from (the steps of
    /// `promptpack_core::table`, walked by `__private::render`) give what
    /// the interpreter gives, for any template and any values.
    #[test]
    fn tables_render_as_the_interpreter_does(
        nodes in prop::collection::vec(node(true), 0..6),
        user_nodes in prop::option::of(prop::collection::vec(node(true), 0..4)),
        snippet_nodes in prop::collection::vec(node(false), 0..4),
        values in prop::collection::vec(
            prop::option::of(prop_oneof![
                prop::sample::select(LITERALS).prop_map(str::to_string),
                Just(String::new()),
                "[a-z ]{0,4}",
            ]),
            NAMES.len(),
        ),
    ) {
        use promptpack::__private::{Part, render_generated};
        use promptpack_core::table::steps;

        let d = Delimiters::default();
        let user = user_nodes.as_ref().map(|n| write_nodes(n, &d));
        let library = Library::from_sources(
            vec![template("t", &format!("[{}]", write_nodes(&nodes, &d)), user.as_deref())],
            vec![snippet("s", &format!("({})", write_nodes(&snippet_nodes, &d)))],
            &config_of(&d),
        )
        .expect("generated templates are valid");
        let prompt = library.resolved("t").expect("prompt t");
        let given: HashMap<&str, Option<String>> =
            NAMES.iter().copied().zip(values).collect();
        let value = |name: &str| given.get(name).cloned().flatten();

        let shown = shown_by_structs(prompt, &value);
        let interpreted = library
            .render("t", &shown, promptpack::MissingVars::Error)
            .expect("every variable is given");

        let leak = |s: &str| -> &'static str { String::leak(s.to_string()) };
        let part = |program: &promptpack_core::program::Program| Part {
            text: leak(&program.text),
            steps: Vec::leak(steps(program, &prompt.vars)),
        };
        let parts: Vec<Part> = std::iter::once(&prompt.system)
            .chain(prompt.user.as_ref())
            .map(part)
            .collect();
        let info = leaked_info(prompt, parts);
        let tables = render_generated("t", &info, &value);
        prop_assert_eq!(&tables.system, &interpreted.system);
        prop_assert_eq!(&tables.user, &interpreted.user);
        prop_assert_eq!(tables.hash, interpreted.hash);
    }
}

/// `system` with front matter declaring every variable `prompt` uses: each
/// compared one a choice (`optional_choice` when also tested) of its
/// compared values in reverse order plus `zz`, which no branch compares.
fn declaring_front_matter(
    prompt: &promptpack_core::resolve::ResolvedPrompt,
    system: &str,
) -> String {
    let mut front = String::from("---\nvars:\n");
    for var in &prompt.vars {
        if var.compared.is_empty() {
            front.push_str(&format!("  {}:\n", var.name));
            continue;
        }
        let kind = if var.as_condition {
            "optional_choice"
        } else {
            "choice"
        };
        let values: Vec<String> = var
            .compared
            .iter()
            .rev()
            .map(String::as_str)
            .chain(["zz"])
            .map(|v| format!("{v:?}"))
            .collect();
        front.push_str(&format!(
            "  {}: {{kind: {kind}, values: [{}]}}\n",
            var.name,
            values.join(", ")
        ));
    }
    front.push_str("---\n");
    front + system
}

proptest! {
    #![proptest_config(config())]

    /// With every compared variable declared a choice (its values in
    /// another order than the comparisons', and one no branch compares),
    /// the tables render what the interpreter renders for every value,
    /// the declared-only one included: the enum's order and the tables'
    /// value numbers agree.
    #[test]
    fn declared_choices_render_in_tables_as_the_interpreter_does(
        nodes in prop::collection::vec(node(true), 1..6),
        snippet_nodes in prop::collection::vec(node(false), 0..4),
        values in prop::collection::vec(
            prop::option::of(prop_oneof![
                prop::sample::select(LITERALS).prop_map(str::to_string),
                Just("zz".to_string()),
            ]),
            NAMES.len(),
        ),
    ) {
        use promptpack::__private::{Part, render_generated};
        use promptpack_core::table::steps;

        let d = Delimiters::default();
        let system = format!("[{}]", write_nodes(&nodes, &d));
        let snippets = || vec![snippet("s", &format!("({})", write_nodes(&snippet_nodes, &d)))];
        let plain = Library::from_sources(vec![template("t", &system, None)], snippets(), &config_of(&d))
            .expect("generated templates are valid");
        let declared_system = declaring_front_matter(plain.resolved("t").expect("prompt t"), &system);
        let library = Library::from_sources(
            vec![template("t", &declared_system, None)],
            snippets(),
            &config_of(&d),
        )
        .expect("declaring every variable keeps the templates valid");
        let prompt = library.resolved("t").expect("prompt t");
        for var in prompt.vars.iter().filter(|v| !v.compared.is_empty()) {
            prop_assert_eq!(var.choices.last().map(String::as_str), Some("zz"));
        }
        let given: HashMap<&str, Option<String>> =
            NAMES.iter().copied().zip(values).collect();
        let value = |name: &str| given.get(name).cloned().flatten();
        let shown = shown_by_structs(prompt, &value);
        let interpreted = library
            .render("t", &shown, promptpack::MissingVars::Error)
            .expect("every value shown is a declared one");

        let leak = |s: &str| -> &'static str { String::leak(s.to_string()) };
        let parts: Vec<Part> = vec![Part {
            text: leak(&prompt.system.text),
            steps: Vec::leak(steps(&prompt.system, &prompt.vars)),
        }];
        let info = leaked_info(prompt, parts);
        let tables = render_generated("t", &info, &value);
        prop_assert_eq!(&tables.system, &interpreted.system);
        prop_assert_eq!(tables.hash, interpreted.hash);
    }
}

/// The defaults written in `delimiters`.
fn config_of(delimiters: &Delimiters) -> promptpack::Config {
    promptpack::Config::default()
        .with_delimiters(delimiters.open(), delimiters.close())
        .unwrap_or_else(|e| panic!("the strategy made delimiters the language refuses: {e}"))
}

/// Role tags, in both delimiter settings, for values and histories that
/// try to make, end or re-role a message.
const ROLE_PIECES: &[&str] = &[
    "{{#user}}",
    "{{/user}}",
    "{{#assistant}}",
    "{{/assistant}}",
    "{{#tool x}}",
    "{{/tool}}",
    "{{#system}}",
    "<<#user>>",
    "<</user>>",
    "{{history}}",
    "\n",
    "user:",
    "assistant:",
    "a",
];

/// Text made of [`ROLE_PIECES`], [`PIECES`] and arbitrary characters.
fn role_soup() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        4 => prop::sample::select(ROLE_PIECES).prop_map(String::from),
        2 => prop::sample::select(PIECES).prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(fragment, 0..24).prop_map(|pieces| pieces.concat())
}

/// A history of any roles and texts.
fn history() -> impl Strategy<Value = Vec<promptpack::Message>> {
    let role = prop::sample::select(&promptpack::Role::ALL[..]);
    prop::collection::vec((role, role_soup()), 0..8).prop_map(|messages| {
        messages
            .into_iter()
            .map(|(role, content)| promptpack::Message::new(role, content))
            .collect()
    })
}

proptest! {
    #![proptest_config(config())]

    /// No value makes, ends or re-roles a message: for any values and any
    /// history, the rendered conversation is the system message, the
    /// few-shot turn when `few` holds, the history as given (roles and
    /// texts), and the last user message holding the value verbatim.
    #[test]
    fn values_never_change_a_conversations_structure(
        question in role_soup(),
        few in any::<bool>(),
        given in history(),
        delims in delimiters(),
    ) {
        let (open, close) = (delims.open(), delims.close());
        let tag = |inner: &str| format!("{open}{inner}{close}");
        let messages = format!(
            "---\nvars:\n  history: {{kind: messages}}\n---\n\
             {}\n{}\nExample: {}\n{}\n{}\nAnswer.\n{}\n{}\n{}\n{}\n{}\n{}\n",
            tag("#if few"), tag("#user"), tag("q"), tag("/user"), tag("#assistant"),
            tag("/assistant"), tag("/if"), tag("history"), tag("#user"), tag("q"), tag("/user"),
        );
        let template = promptpack::TemplateSource {
            id: "chat".into(),
            system: SourceFile::new("templates/chat/system.md", format!("About {}.", tag("q"))),
            user: None,
            messages: Some(SourceFile::new("templates/chat/messages.md", messages)),
        };
        let library = Library::from_sources(vec![template], vec![], &config_of(&delims))
            .expect("the conversation is valid");
        let vars = json!({"q": question, "few": few, "history": given});
        let prompt = library.build_prompt("chat", &vars).expect("renders");
        let mut expected: Vec<(promptpack::Role, String)> =
            vec![(promptpack::Role::System, format!("About {question}."))];
        if few {
            expected.push((promptpack::Role::User, format!("Example: {question}")));
            expected.push((promptpack::Role::Assistant, "Answer.".to_string()));
        }
        expected.extend(given.iter().map(|m| (m.role, m.content.clone())));
        expected.push((promptpack::Role::User, question.clone()));
        let sent: Vec<(promptpack::Role, String)> = prompt
            .messages()
            .map(|m| (m.role, m.content.to_string()))
            .collect();
        prop_assert_eq!(sent, expected);
    }
}
