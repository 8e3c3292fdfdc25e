//! A reference evaluator of the template language, written from its
//! definition and apart from the library's resolver, programs and renderer,
//! to compare those against.
//!
//! It reads a template as a tree of [`Node`]s. A test that generates
//! templates builds the tree itself (and writes it out as text for the
//! library), so its expectation depends on none of the library; a fuzz
//! target reads the tree out of a file the library accepted with [`tree`],
//! which uses the library's parser (its output is checked apart, by
//! [`check_parsed`](crate::check_parsed)).
//!
//! The semantics: text is written as is; a value token writes its value
//! (`String(value)`, or `JSON.stringify(value, null, 2)` for null, arrays
//! and objects), and without a value writes the token back and counts the
//! variable missing; `#if name` keeps its first branch when the value is
//! truthy in JavaScript's sense, else its `else` branch, and a variable with
//! no value is falsy (and not missing); `#if name == "value"` keeps its
//! first branch when the value is there and renders as exactly `value`;
//! `else if` is an `else` holding a block; a snippet token splices the
//! snippet's tree in, a section include (`{{snippet:name#heading}}`) the
//! tree of the section (found by the library's `sections`, tested apart);
//! a schema token (`{{schema:response}}`, in a snippet too) writes the
//! prompt's response as `Schema::describe` prints it (tested apart, by its
//! snapshot).
//! Only what is reached counts: a variable in a branch
//! not taken is never missing.

use promptpack_core::SnippetSource;
use promptpack_core::sections::Headings;
use promptpack_core::source_file::SourceFile;
use promptpack_core::syntax::{Delimiters, Item, parse};
use promptpack_core::value::{is_truthy, write_value};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A template as a tree: what the reference evaluator reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// Literal text.
    Text(String),
    /// A value token, `{{name}}`.
    Var(String),
    /// A snippet token, `{{snippet:name}}`, or `{{snippet:name#heading}}`
    /// (holding `name#heading`).
    Snippet(String),
    /// A block, `{{#if name}}then{{else}}otherwise{{/if}}`, or
    /// `{{#if name == "value"}}…`. (`{{else if …}}` reads as an `else`
    /// branch holding one block.)
    If {
        /// The condition's variable.
        name: String,
        /// For a comparison, the value.
        equals: Option<String>,
        /// The branch kept when the condition holds.
        then: Vec<Node>,
        /// The `else` branch, when the block has one.
        otherwise: Option<Vec<Node>>,
    },
    /// `{{schema:response}}`: the prompt's response schema, described.
    Schema,
}

/// The snippets a tree may include, by name, and their sections, by
/// `name#slug` and `name#id`.
pub type SnippetTrees = HashMap<String, Vec<Node>>;

/// What a reference render gives: the text, and the variables a value token
/// reached without a value, in order of first reach.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The rendered text (missing values written back as tokens).
    pub text: String,
    /// Missing variables, each once.
    pub missing: Vec<String>,
}

/// Evaluates `nodes` with `vars`; see the module documentation for the
/// semantics. `delims` writes the tokens of missing values back.
///
/// Panics when a snippet token names a snippet `snippets` does not hold:
/// the library must have refused such a template.
pub fn evaluate(
    nodes: &[Node],
    snippets: &SnippetTrees,
    vars: &Map<String, Value>,
    delims: &Delimiters,
) -> Reference {
    evaluate_prompt(nodes, snippets, vars, delims, None)
}

/// [`evaluate`] for a prompt whose response, described, is `response`
/// (what a [`Node::Schema`] writes).
///
/// Panics when a schema token is reached and `response` is `None`: the
/// library must have refused such a prompt.
pub fn evaluate_prompt(
    nodes: &[Node],
    snippets: &SnippetTrees,
    vars: &Map<String, Value>,
    delims: &Delimiters,
    response: Option<&str>,
) -> Reference {
    let mut out = Reference::default();
    let context = Context {
        snippets,
        vars,
        delims,
        response,
    };
    evaluate_into(nodes, &context, &mut out);
    out
}

/// What an evaluation reads besides the nodes.
struct Context<'c> {
    snippets: &'c SnippetTrees,
    vars: &'c Map<String, Value>,
    delims: &'c Delimiters,
    response: Option<&'c str>,
}

fn evaluate_into(nodes: &[Node], context: &Context<'_>, out: &mut Reference) {
    let Context {
        snippets,
        vars,
        delims,
        response,
    } = *context;
    for node in nodes {
        match node {
            Node::Text(text) => out.text.push_str(text),
            Node::Var(name) => match vars.get(name) {
                Some(value) => write_value(&mut out.text, value),
                None => {
                    if !out.missing.contains(name) {
                        out.missing.push(name.clone());
                    }
                    out.text.push_str(&delims.var_token(name));
                }
            },
            Node::Snippet(name) => {
                let snippet = snippets
                    .get(name)
                    .unwrap_or_else(|| panic!("snippet {name} was accepted but is missing"));
                evaluate_into(snippet, context, out);
            }
            Node::If {
                name,
                equals,
                then,
                otherwise,
            } => {
                let holds = match (vars.get(name), equals) {
                    (None, _) => false,
                    (Some(value), None) => is_truthy(value),
                    (Some(value), Some(equals)) => {
                        let mut rendered = String::new();
                        write_value(&mut rendered, value);
                        rendered == *equals
                    }
                };
                if holds {
                    evaluate_into(then, context, out);
                } else if let Some(otherwise) = otherwise {
                    evaluate_into(otherwise, context, out);
                }
            }
            Node::Schema => out.text.push_str(
                response.expect("a schema token of a prompt without a response was accepted"),
            ),
        }
    }
}

/// The tree of `file`'s trimmed body, read with the library's parser; `None`
/// when it does not parse. Panics when the parser's items do not nest (an
/// `else` outside a block or twice in one, a block never closed): the
/// parser promises they do whenever it succeeds.
pub fn tree(file: &SourceFile, delims: &Delimiters) -> Option<Vec<Node>> {
    let parsed = parse(file, delims).ok()?;
    /// A block being read: its condition and branches.
    struct Open {
        name: String,
        equals: Option<String>,
        then: Vec<Node>,
        otherwise: Option<Vec<Node>>,
        /// Opened by `else if`: the `/if` of the block it continues closes it.
        from_else_if: bool,
    }
    let mut top: Vec<Node> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    for item in &parsed.items {
        let node = match item {
            Item::Text(span) => Node::Text(file.slice(*span).to_string()),
            Item::Var(n) => Node::Var(n.name.clone()),
            Item::Snippet(include) => Node::Snippet(match &include.section {
                Some(section) => format!("{}#{section}", include.name.name),
                None => include.name.name.clone(),
            }),
            Item::If(c) => {
                open.push(Open {
                    name: c.name.name.clone(),
                    equals: c.equals.clone(),
                    then: Vec::new(),
                    otherwise: None,
                    from_else_if: false,
                });
                continue;
            }
            Item::ElseIf(c) => {
                let block = open
                    .last_mut()
                    .expect("an else if outside any block parsed");
                assert!(block.otherwise.is_none(), "an else if after an else parsed");
                block.otherwise = Some(Vec::new());
                open.push(Open {
                    name: c.name.name.clone(),
                    equals: c.equals.clone(),
                    then: Vec::new(),
                    otherwise: None,
                    from_else_if: true,
                });
                continue;
            }
            Item::Else(_) => {
                let block = open.last_mut().expect("an else outside any block parsed");
                assert!(block.otherwise.is_none(), "a second else in a block parsed");
                block.otherwise = Some(Vec::new());
                continue;
            }
            Item::EndIf(_) => {
                let mut block = open.pop().expect("an /if without a block parsed");
                // Close the blocks `else if` opened, each into the `else`
                // branch of the block before it.
                while block.from_else_if {
                    let node = Node::If {
                        name: block.name,
                        equals: block.equals,
                        then: block.then,
                        otherwise: block.otherwise,
                    };
                    block = open.pop().expect("an else if block inside a block");
                    block.otherwise.get_or_insert_with(Vec::new).push(node);
                }
                Node::If {
                    name: block.name,
                    equals: block.equals,
                    then: block.then,
                    otherwise: block.otherwise,
                }
            }
            Item::Schema(_) => Node::Schema,
            Item::OpenMessage(_) | Item::CloseMessage(..) => {
                panic!("a part's parse read a role tag, which is text there")
            }
        };
        let branch = match open.last_mut() {
            Some(block) => block.otherwise.as_mut().unwrap_or(&mut block.then),
            None => &mut top,
        };
        branch.push(node);
    }
    assert!(open.is_empty(), "a block that never closes parsed");
    Some(top)
}

/// The trees of `snippets`, by name: for each name its first file, as the
/// library takes it, and each section of it. A snippet or section that does
/// not parse is left out (a template the library accepted cannot include
/// it).
pub fn snippet_trees(snippets: &[SnippetSource], delims: &Delimiters) -> SnippetTrees {
    let mut trees = SnippetTrees::new();
    let mut seen = std::collections::HashSet::new();
    for s in snippets {
        if !seen.insert(s.name.as_str()) {
            continue;
        }
        let Some(nodes) = tree(&s.file, delims) else {
            continue;
        };
        trees.insert(s.name.clone(), nodes);
        let headings = Headings::of(&s.file).list;
        // An explicit id names its heading before any slug does.
        let ids = headings.iter().filter_map(|h| Some((h, h.id.as_ref()?)));
        for (heading, name) in ids.chain(headings.iter().map(|h| (h, &h.slug))) {
            let key = format!("{}#{name}", s.name);
            if !trees.contains_key(&key)
                && let Some(nodes) = tree(&s.file.with_body(heading.section), delims)
            {
                trees.insert(key, nodes);
            }
        }
    }
    trees
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Node {
        Node::Text(s.to_string())
    }

    #[test]
    fn a_file_reads_as_its_tree() {
        let file = SourceFile::new(
            "t.md",
            "  a {{x}}{{#if f}}T{{else}}F{{#if g}}G{{/if}}{{/if}}{{snippet:s}}\n",
        );
        let nodes = tree(&file, &Delimiters::default()).expect("parses");
        let inner = Node::If {
            equals: None,
            name: "g".into(),
            then: vec![text("G")],
            otherwise: None,
        };
        let want = vec![
            text("a "),
            Node::Var("x".into()),
            Node::If {
                equals: None,
                name: "f".into(),
                then: vec![text("T")],
                otherwise: Some(vec![text("F"), inner]),
            },
            Node::Snippet("s".into()),
        ];
        assert_eq!(nodes, want);
        let broken = SourceFile::new("t.md", "{{#if f}}");
        assert_eq!(tree(&broken, &Delimiters::default()), None);
    }

    #[test]
    fn evaluation_follows_the_definition() {
        let delims = Delimiters::default();
        let snippets = snippet_trees(
            &[
                SnippetSource {
                    name: "s".into(),
                    file: SourceFile::new("snippets/s.md", "<{{y}}|{{z}}|{{y}}>"),
                },
                SnippetSource {
                    name: "s".into(),
                    file: SourceFile::new("snippets/sub/s.md", "second"),
                },
            ],
            &delims,
        );
        let file = SourceFile::new(
            "t.md",
            "{{x}} {{#if f}}T{{else}}F{{/if}}{{#if missing}}{{w}}{{/if}} {{snippet:s}}",
        );
        let nodes = tree(&file, &delims).expect("parses");
        let vars = json!({"x": [1], "f": 0, "z": "Z"});
        let vars = vars.as_object().expect("an object");
        let got = evaluate(&nodes, &snippets, vars, &delims);
        assert_eq!(got.text, "[\n  1\n] F <{{y}}|Z|{{y}}>");
        assert_eq!(got.missing, vec!["y".to_string()]);
    }

    /// A schema token writes the prompt's described response, in a
    /// snippet too; every target runs a case that uses it.
    #[test]
    fn a_schema_token_writes_the_prompts_response() {
        let delims = Delimiters::default();
        let snippets = snippet_trees(
            &[SnippetSource {
                name: "s".into(),
                file: SourceFile::new("snippets/s.md", "({{schema:response}})"),
            }],
            &delims,
        );
        let file = SourceFile::new("t.md", "{{schema:response}} {{snippet:s}}");
        let nodes = tree(&file, &delims).expect("parses");
        assert_eq!(nodes[0], Node::Schema);
        let vars = Map::new();
        let got = evaluate_prompt(&nodes, &snippets, &vars, &delims, Some("{ }"));
        assert_eq!(got.text, "{ } ({ })");
        let case = "--- templates/t/system.md\n---\nresponse:\n  a: string, an A\n  b?: [x, y]\n---\n\
                    {{#if f}}{{schema:response}}{{/if}} {{snippet:s}} {{v}}\n\
                    --- snippets/s.md\n[{{schema:response}}]\n\
                    --- vars\n{\"f\": true}\n";
        // A prompt without a response is refused, at its token.
        let refused = format!("{case}--- templates/u/system.md\n{{{{schema:response}}}}\n");
        for case in [case.to_string(), refused] {
            for (name, target) in crate::TARGETS {
                if *name != "snippet_fanout" {
                    target(case.as_bytes());
                }
            }
        }
    }
}
