//! The splicing's work bound, sections and cycles, on small sets made here.

use super::*;

fn snippet(name: &str, text: &str) -> SnippetSource {
    SnippetSource {
        name: name.to_string(),
        file: SourceFile::new(format!("snippets/{name}.md"), text),
    }
}

fn template(system: &str, user: Option<&str>) -> TemplateSource {
    TemplateSource {
        id: "t".to_string(),
        system: SourceFile::new("templates/t/system.md", system),
        user: user.map(|u| SourceFile::new("templates/t/user.md", u)),
        messages: None,
    }
}

/// A chain `s0` … `s{depth}`: each link includes the next as `link`
/// says (`{}` for each include), the last one is `bottom`.
fn chain(depth: usize, link: &str, bottom: &str) -> Vec<SnippetSource> {
    let mut snippets: Vec<SnippetSource> = (0..depth)
        .map(|i| {
            let include = format!("{{{{snippet:s{}}}}}", i + 1);
            snippet(&format!("s{i}"), &link.replace("{}", &include))
        })
        .collect();
    snippets.push(snippet(&format!("s{depth}"), bottom));
    snippets
}

/// Resolves, and checks the work against what the input and the output
/// allow: each part walks every file at most once, copies cost the ops
/// they add, a refused part stops at the size limit.
fn resolve_bounded(templates: &[TemplateSource], snippets: &[SnippetSource]) -> Counted {
    let counted = resolve_with(templates, snippets, &[], &Settings::default());
    let bound = counted.step_bound(templates, snippets);
    assert!(counted.steps <= bound, "{} steps > {bound}", counted.steps);
    counted
}

/// A chain of snippets to resolve, and the error expected of it.
struct Shape<'a> {
    name: &'a str,
    depth: usize,
    link: &'a str,
    bottom: &'a str,
    both_parts: bool,
    error: Option<&'a str>,
}

fn shape<'a>(
    name: &'a str,
    depth: usize,
    link: &'a str,
    bottom: &'a str,
    both_parts: bool,
    error: Option<&'a str>,
) -> Shape<'a> {
    Shape {
        name,
        depth,
        link,
        bottom,
        both_parts,
        error,
    }
}

/// Fan-out ends at once in every shape: deep, wide, from both parts,
/// down to nothing or whitespace (trimmed away) it resolves; through
/// blocks, down to blocks, text or variables, whose ops or text pass the
/// size limit, it is refused, at an include, as `too_large`.
#[test]
fn fan_out_costs_what_it_adds() {
    let twice = "{}{}";
    let wide = "{}".repeat(200);
    let blocks = "{{#if a}}{}{{else}}{}{{/if}}";
    let cases = [
        shape("deep, adds nothing", 60, twice, "", false, None),
        shape("wide", 12, &wide, "", false, None),
        shape("through blocks", 60, blocks, "", true, Some("too_large")),
        shape("whitespace only", 60, twice, " \n\t\n ", false, None),
        shape(
            "false blocks",
            60,
            twice,
            "{{#if off}}{{/if}}",
            false,
            Some("too_large"),
        ),
        shape("text", 60, twice, "x", false, Some("too_large")),
        shape("a variable", 60, "{} {}", "{{v}}", true, Some("too_large")),
    ];
    for Shape {
        name,
        depth,
        link,
        bottom,
        both_parts,
        error,
    } in cases
    {
        let snippets = chain(depth, link, bottom);
        let user = both_parts.then_some("{{snippet:s0}}{{snippet:s1}}");
        let templates = [template("Hi {{snippet:s0}}", user)];
        let counted = resolve_bounded(&templates, &snippets);
        let codes: Vec<&str> = counted.errors.iter().map(|e| e.code.as_str()).collect();
        assert_eq!(codes, error.into_iter().collect::<Vec<_>>(), "{name}");
        if let Some(e) = counted.errors.first() {
            let at = e.location.as_ref().map(|l| l.path().to_string());
            assert!(
                at.is_some_and(|p| p.starts_with("snippets/s")),
                "{name}: {e}"
            );
        }
    }
}

/// A snippet spliced again makes the same program as its text written
/// out in its place: blocks, `else if` chains, literals and text that
/// joins the text around it.
#[test]
fn splicing_again_is_writing_out() {
    let a = "x{{#if d == \"q\"}}y{{else if e}}z{{v}}{{else}}{{#if f}}w{{/if}}{{/if}}";
    let b = "{{#if c}}{{snippet:a}}{{else}}{{snippet:a}}{{/if}}";
    let system = "1{{snippet:b}}2{{snippet:a}}{{snippet:a}}{{#if g}}{{snippet:b}}{{/if}}3";
    let written = system
        .replace("{{snippet:b}}", b)
        .replace("{{snippet:a}}", a);
    let snippets = [snippet("a", a), snippet("b", b)];
    let spliced = resolve_bounded(&[template(system, Some(system))], &snippets);
    let written = resolve_bounded(&[template(&written, Some(&written))], &[]);
    let (spliced, written) = (&spliced.prompts[0], &written.prompts[0]);
    assert_eq!(spliced.system, written.system);
    assert_eq!(spliced.user, written.user);
    assert_eq!(spliced.hash, written.hash);
    let names = |p: &ResolvedPrompt| p.vars.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(spliced), names(written));
}

fn rendered(prompt: &ResolvedPrompt) -> &str {
    &prompt.system.text
}

/// A section and its whole snippet are two targets: neither's splice is
/// copied for the other, in either order; a heading's slug and its id
/// are one; the prompt's snippets name the snippet only.
#[test]
fn sections_splice_apart_from_their_snippet() {
    let guide = "intro\n# Setup {#install}\nsteps\n## Detail\nd\n# Use\nuse";
    let system = "{{snippet:g#setup}}|{{snippet:g}}|{{snippet:g#install}}|{{snippet:g#detail}}";
    let counted = resolve_bounded(&[template(system, None)], &[snippet("g", guide)]);
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    let prompt = &counted.prompts[0];
    let whole = SourceFile::new("g.md", guide).body().to_string();
    let want = format!("steps\n## Detail\nd|{whole}|steps\n## Detail\nd|d");
    assert_eq!(rendered(prompt), want);
    assert_eq!(prompt.snippets, BTreeSet::from(["g".to_string()]));
}

fn codes(counted: &Counted) -> Vec<(&str, String)> {
    counted
        .errors
        .iter()
        .map(|e| (e.code.as_str(), e.message.clone()))
        .collect()
}

/// A section is its own node of the include graph: including another
/// section of its own snippet is no cycle, including itself (or a
/// section that includes it back) is.
#[test]
fn section_cycles_are_real_cycles() {
    let fine = "# A\n{{snippet:s#b}}\n# B\nb";
    let counted = resolve_bounded(
        &[template("{{snippet:s#a}}{{snippet:s}}", None)],
        &[snippet("s", fine)],
    );
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    assert_eq!(rendered(&counted.prompts[0]), "b# A\nb\n# B\nb");

    let itself = "# A\nx {{snippet:s#a}}";
    let counted = resolve_bounded(
        &[template("{{snippet:s#a}}", None)],
        &[snippet("s", itself)],
    );
    assert_eq!(
        codes(&counted),
        [(
            "snippet_cycle",
            "snippets include each other in a cycle: s#a -> s#a".to_string()
        )]
    );

    let through = "# A\n{{snippet:t}}";
    let back = "{{snippet:s#a}}";
    let counted = resolve_bounded(
        &[template("{{snippet:s#a}}", None)],
        &[snippet("s", through), snippet("t", back)],
    );
    let found = codes(&counted);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "snippet_cycle");
    assert!(counted.prompts.is_empty());
}

/// A missing section fails its template once, located at the include,
/// naming the headings there are (at most ten of them).
#[test]
fn a_missing_section_names_the_headings() {
    let many: String = (0..12).map(|i| format!("# H{i}\nx\n")).collect();
    let snippets = [snippet("many", &many), snippet("none", "no headings")];
    let system = "a {{snippet:many#h99}}\n{{snippet:none#x}} {{snippet:many#h99}}";
    let counted = resolve_bounded(&[template(system, None)], &snippets);
    let help: Vec<(String, usize, usize)> = counted
        .errors
        .iter()
        .map(|e| {
            let at = e.location.as_ref().map(|l| (l.line(), l.column()));
            assert_eq!(e.code.as_str(), "section_not_found");
            let (line, column) = at.unwrap_or_default();
            (e.help.clone().unwrap_or_default(), line, column)
        })
        .collect();
    let listed = (0..10)
        .map(|i| format!("`h{i}`"))
        .collect::<Vec<_>>()
        .join(", ");
    assert_eq!(
        help,
        [
            (
                format!("the headings of snippets/many.md are {listed} and 2 more"),
                1,
                3
            ),
            (
                "snippets/none.md has no headings: include it whole, or add a heading".to_string(),
                2,
                1
            ),
            (
                format!("the headings of snippets/many.md are {listed} and 2 more"),
                2,
                20
            ),
        ]
    );
    assert!(counted.prompts.is_empty());
}

/// Nested sections overlap, so one part may walk a snippet once per
/// heading level and once whole, but no more: a section included again
/// is copied, as a snippet is, and the work stays within the bound.
#[test]
fn nested_sections_stay_within_the_bound() {
    let nested: String = (1..=6)
        .map(|l| format!("{} L{l}\n{}\n", "#".repeat(l), "{{snippet:e}}".repeat(200)))
        .collect();
    let once: String = (1..=6).map(|l| format!("{{{{snippet:s#l{l}}}}}")).collect();
    let system = once.repeat(200) + "{{snippet:s}}";
    let snippets = [snippet("s", &nested), snippet("e", "")];
    let counted = resolve_bounded(&[template(&system, Some(&system))], &snippets);
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
}

/// A conversation `t` of `system` and `messages`, resolved.
fn conversation(messages: &str, snippets: &[SnippetSource]) -> Counted {
    let template = TemplateSource {
        id: "t".to_string(),
        system: SourceFile::new("templates/t/system.md", "You help."),
        user: None,
        messages: Some(SourceFile::new("templates/t/messages.md", messages)),
    };
    resolve_bounded(&[template], snippets)
}

/// The turns as one line: `user[Hi {{name}}]`, `history(h)`,
/// `if(x){…}else{…}`.
fn outline(turns: &[crate::conversation::Turn], vars: &[VarInfo]) -> String {
    use crate::conversation::Turn;
    let parts: Vec<String> = turns
        .iter()
        .map(|turn| match turn {
            Turn::Message {
                role,
                name,
                program,
            } => {
                let named = name.as_ref().map_or(String::new(), |n| format!(" {n}"));
                let text = crate::print::template_text(program, vars, &Delimiters::default());
                format!("{role}{named}[{text}]")
            }
            Turn::History(var) => format!("history({})", vars[*var].name),
            Turn::Branch { arms, otherwise } => {
                let arms: Vec<String> = arms
                    .iter()
                    .map(|arm| {
                        let test = match &arm.equals {
                            Some(value) => format!("{}=={value}", vars[arm.var].name),
                            None => vars[arm.var].name.clone(),
                        };
                        format!("if({test}){{{}}}", outline(&arm.turns, vars))
                    })
                    .collect();
                format!("{}else{{{}}}", arms.join(""), outline(otherwise, vars))
            }
        })
        .collect();
    parts.join(" ")
}

#[test]
fn conversations_resolve_into_their_turns_or_say_what_cuts_a_message() {
    let history = "---\nvars:\n  history: {kind: messages}\n---\n";
    // (messages.md, the turns, or the error's code and place)
    let cases: &[(&str, &str)] = &[
        (
            "{{#user}}\nHi {{name}}.\n{{/user}}\n{{#assistant}}\nHello.\n{{/assistant}}\n",
            "user[Hi {{name}}.] assistant[Hello.]",
        ),
        (
            "{{#user}}\n  two lines\nkept as they are\n\n{{/user}}",
            "user[  two lines\nkept as they are\n]",
        ),
        (
            "{{#user}}Q{{/user}}{{#if show}}\n{{#assistant}}\nA\n{{/assistant}}\n{{#tool lookup}}\n42\n{{/tool}}\n{{else}}{{#user}}no{{/user}}{{/if}}",
            "user[Q] if(show){assistant[A] tool lookup[42]}else{user[no]}",
        ),
        (
            "{{#if level == \"a\"}}{{#user}}a{{/user}}{{else if level == \"b\"}}{{#user}}b{{/user}}{{/if}}",
            "if(level==a){user[a]}if(level==b){user[b]}else{}",
        ),
        (
            "{{#user}}{{#if formal}}Dear {{name}}{{else}}Hey{{/if}}{{/user}}",
            "user[{{#if formal}}Dear {{name}}{{else}}Hey{{/if}}]",
        ),
        (
            "---\nvars:\n  history: {kind: messages}\n  question: text\n---\n{{#user}}Q{{/user}}\n{{history}}\n{{#user}}\n{{question}}\n{{/user}}",
            "user[Q] history(history) user[{{question}}]",
        ),
        ("{{#user}}Q{{/user}}\n{{history}}", "invalid_message 2:1"),
        (
            "{{#user}}a{{#user}}b{{/user}}{{/user}}",
            "invalid_message 1:11",
        ),
        ("{{#user}}a{{/assistant}}", "invalid_message 1:11"),
        ("{{/user}}", "invalid_message 1:1"),
        ("{{#user}}a", "unclosed_block 1:1"),
        (
            "{{#if x}}{{#user}}a{{/if}}{{/user}}",
            "invalid_message 1:20",
        ),
        (
            "{{#user}}{{#if x}}a{{/user}}{{/if}}",
            "invalid_message 1:20",
        ),
        (
            "{{#user}}a{{/user}}\nstray text\n",
            "text_outside_message 2:1",
        ),
        (
            "{{#user}}a{{/user}}{{snippet:s}}",
            "text_outside_message 1:20",
        ),
        (
            "{{#user}}Q{{/user}}\n{{snippet:shot}}\n{{#user}}{{snippet:s}} {{q}}{{/user}}",
            "user[Q] user[Example {{q}}] assistant[S] user[S {{q}}]",
        ),
        (
            "{{#if few}}\n{{snippet:shot}}\n{{/if}}",
            "if(few){user[Example {{q}}] assistant[S]}else{}",
        ),
        ("{{snippet:broken}}", "invalid_message 2:1"),
        ("{{#user}}{{snippet:shot}}{{/user}}", "invalid_message 1:10"),
        ("{{#tool}}x{{/tool}}", "invalid_message 1:1"),
        ("{{#user x}}x{{/user}}", "invalid_message 1:1"),
        ("{{#user}}a{{/user}}{{name}}", "invalid_message 1:20"),
    ];
    for (messages, expected) in cases {
        let snippets = [
            snippet("s", "S"),
            snippet(
                "shot",
                "{{#user}}\nExample {{q}}\n{{/user}}\n{{#assistant}}\n{{snippet:s}}\n{{/assistant}}\n",
            ),
            snippet("broken", "{{#user}}\n{{/assistant}}\n"),
        ];
        let counted = conversation(messages, &snippets);
        let got = match (counted.errors.first(), counted.prompts.first()) {
            (Some(error), _) => {
                let at = error.location.as_ref().expect("a located error");
                format!("{} {}:{}", error.code, at.line(), at.column())
            }
            (None, Some(prompt)) => {
                let turns = &prompt.conversation.as_ref().expect("a conversation").turns;
                outline(turns, &prompt.vars)
            }
            (None, None) => "nothing".to_string(),
        };
        assert_eq!(&got, expected, "{messages:?}: {:?}", counted.errors);
    }
    // The history, declared, used as text inside a message: refused there.
    let counted = conversation(
        &format!("{history}{{{{#user}}}}{{{{history}}}}{{{{/user}}}}"),
        &[],
    );
    assert_eq!(
        counted.errors[0].code,
        ErrorCode::InvalidMessage,
        "{:?}",
        counted.errors
    );
    // Placed twice.
    let counted = conversation(&format!("{history}{{{{history}}}}\n{{{{history}}}}"), &[]);
    assert_eq!(
        counted.errors[0].code,
        ErrorCode::InvalidMessage,
        "{:?}",
        counted.errors
    );
    assert!(
        counted.errors[0].message.contains("second time"),
        "{}",
        counted.errors[0].message
    );
}

#[test]
fn role_tags_stay_text_in_system_and_user_files() {
    let counted = resolve_bounded(
        &[template("{{#user}}x{{/user}}", Some("{{#assistant}}"))],
        &[],
    );
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    let prompt = &counted.prompts[0];
    assert_eq!(prompt.system.text, "{{#user}}x{{/user}}");
    assert!(prompt.conversation.is_none());
}

#[test]
fn a_conversation_beside_a_user_file_is_refused() {
    let template = TemplateSource {
        id: "t".to_string(),
        system: SourceFile::new("templates/t/system.md", "S"),
        user: Some(SourceFile::new("templates/t/user.md", "U")),
        messages: Some(SourceFile::new(
            "templates/t/messages.md",
            "{{#user}}U{{/user}}",
        )),
    };
    let counted = resolve_bounded(&[template], &[]);
    assert_eq!(counted.errors[0].code, ErrorCode::InvalidMessage);
    assert_eq!(
        counted.errors[0].location.as_ref().map(|l| l.path()),
        Some("templates/t/user.md")
    );
}

#[test]
fn snippets_of_turns_that_multiply_stop_at_the_bound() {
    // Each level includes the next twice: 2^13 messages at the bottom.
    let mut snippets: Vec<SnippetSource> = (0..13)
        .map(|i| {
            let next = format!("{{{{snippet:t{}}}}}", i + 1);
            snippet(
                &format!("t{i}"),
                &format!("{{{{#user}}}}u{{{{/user}}}}\n{next}\n{next}\n"),
            )
        })
        .collect();
    snippets.push(snippet("t13", "{{#user}}bottom{{/user}}"));
    let counted = conversation("{{snippet:t0}}", &snippets);
    assert_eq!(counted.errors.len(), 1, "{:?}", counted.errors);
    assert_eq!(counted.errors[0].code, ErrorCode::InvalidMessage);
    assert!(
        counted.errors[0].message.contains("passes 4096 messages"),
        "{}",
        counted.errors[0].message
    );
}

#[test]
fn a_snippet_of_turns_is_never_spliced_into_a_text() {
    let turns = snippet("shot", "{{#user}}\nQ\n{{/user}}\n");
    let counted = resolve_bounded(&[template("A {{snippet:shot}}", None)], &[turns]);
    assert_eq!(counted.errors.len(), 1, "{:?}", counted.errors);
    assert_eq!(counted.errors[0].code, ErrorCode::InvalidMessage);
    assert!(
        counted.errors[0].message.contains("whole turns"),
        "{}",
        counted.errors[0].message
    );
}

const RESPONSE: &str =
    "---\nresponse:\n  reply: string, what the user reads\n  mood: [calm, upset]\n---\n";

/// `{{schema:response}}` becomes the response's description as literal
/// text, wherever the prompt writes it: system.md (the response declared
/// in user.md, read before any part is spliced), user.md and a snippet,
/// spliced once or again.
#[test]
fn the_schema_token_prints_the_prompts_response() {
    let described =
        "{\n  \"reply\": string, // what the user reads\n  \"mood\": \"calm\" | \"upset\"\n}";
    let user = format!("{RESPONSE}Q {{{{schema:response}}}}");
    let counted = resolve_bounded(
        &[template(
            "A {{schema:response}} B {{snippet:s}}{{snippet:s}}",
            Some(&user),
        )],
        &[snippet("s", "[{{schema:response}}]")],
    );
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    let prompt = &counted.prompts[0];
    assert_eq!(
        rendered(prompt),
        format!("A {described} B [{described}][{described}]")
    );
    let user = prompt.user.as_ref().expect("a user part");
    assert_eq!(user.text, format!("Q {described}"));
    // Literal text: no op but text.
    assert!(
        prompt
            .system
            .ops
            .iter()
            .all(|op| matches!(op, crate::program::Op::Text { .. }))
    );
}

/// Without a response, the token is an error where it is written (in a
/// snippet too, naming the prompt); a description that holds a token is
/// refused, as printing it would write one.
#[test]
fn the_schema_token_needs_a_response_whose_text_holds_no_token() {
    let counted = resolve_bounded(
        &[template("A {{schema:response}} {{snippet:s}}", None)],
        &[snippet("s", "{{schema:response}}")],
    );
    assert_eq!(
        codes(&counted),
        [(
            "invalid_schema",
            "{{schema:response}} prints the response of prompt `t`, but it declares none"
                .to_string()
        )]
    );
    assert_eq!(
        counted.errors[0].location.as_ref().map(|l| l.path()),
        Some("templates/t/system.md")
    );
    let counted = resolve_bounded(
        &[template("{{snippet:s}}", None)],
        &[snippet("s", "x {{schema:response}}")],
    );
    assert_eq!(
        counted.errors[0].location.as_ref().map(|l| l.path()),
        Some("snippets/s.md")
    );
    let holding = "---\nresponse:\n  reply: string, say {{name}} first\n---\n{{schema:response}}";
    let counted = resolve_bounded(&[template(holding, None)], &[]);
    assert_eq!(codes(&counted).len(), 1, "{:?}", counted.errors);
    assert!(
        codes(&counted)[0].1.contains("would print a token"),
        "{:?}",
        counted.errors
    );
    // With other delimiters, the same description is plain text.
    let angle = Settings {
        delimiters: Delimiters::new("<<", ">>").unwrap_or_default(),
        ..Settings::default()
    };
    let holding = holding.replace("{{schema:response}}", "<<schema:response>>");
    let counted = resolve_with(&[template(&holding, None)], &[], &[], &angle);
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    assert!(rendered(&counted.prompts[0]).contains("say {{name}} first"));
}

/// In a conversation, the token prints inside a message, and is refused
/// between messages, where its text would belong to no message.
#[test]
fn the_schema_token_goes_inside_a_message() {
    let template = |messages: &str| TemplateSource {
        id: "t".to_string(),
        system: SourceFile::new("templates/t/system.md", format!("{RESPONSE}You help.")),
        user: None,
        messages: Some(SourceFile::new("templates/t/messages.md", messages)),
    };
    let counted = resolve_bounded(
        &[template(
            "{{#user}}\nAnswer as {{schema:response}}\n{{/user}}",
        )],
        &[],
    );
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    let turns = &counted.prompts[0]
        .conversation
        .as_ref()
        .expect("a conversation")
        .turns;
    let crate::conversation::Turn::Message { program, .. } = &turns[0] else {
        panic!("a message: {turns:?}");
    };
    assert!(
        program.text.starts_with("Answer as {\n  \"reply\""),
        "{}",
        program.text
    );
    let counted = resolve_bounded(
        &[template("{{schema:response}}\n{{#user}}\nQ\n{{/user}}")],
        &[],
    );
    assert_eq!(
        codes(&counted).first().map(|c| c.0),
        Some("text_outside_message")
    );
}
