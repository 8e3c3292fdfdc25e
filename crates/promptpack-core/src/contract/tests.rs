use super::*;
use crate::resolve::resolve;
use crate::source_file::SourceFile;
use crate::sources::TemplateSource;
use crate::syntax::Delimiters;

/// The prompts of `templates` (id, system text), resolved; a test input
/// that does not resolve fails the test.
fn prompts(templates: &[(&str, &str)]) -> Vec<ResolvedPrompt> {
    let sources: Vec<TemplateSource> = templates
        .iter()
        .map(|(id, system)| TemplateSource {
            id: id.to_string(),
            system: SourceFile::new(format!("templates/{id}/system.md"), *system),
            user: None,
            messages: None,
        })
        .collect();
    let (prompts, errors) = resolve(&sources, &[], &Delimiters::default());
    assert!(errors.is_empty(), "{errors:?}");
    prompts
}

/// Prompt `p` of `system`.
fn prompt(system: &str) -> ResolvedPrompt {
    prompts(&[("p", system)]).remove(0)
}

/// A vars struct of `fields` (name, kind, values).
fn compiled(fields: &[(&str, VarKind, &[&str])]) -> PromptContract {
    PromptContract {
        variables: fields
            .iter()
            .map(|(name, kind, values)| VarContract {
                name: name.to_string(),
                kind: *kind,
                values: values.iter().map(|v| v.to_string()).collect(),
            })
            .collect(),
        shape: Shape::Files,
        response: None,
        tools: Vec::new(),
    }
}

const ROLE: &[&str] = &["teacher", "student"];

#[test]
fn a_new_variable_is_a_violation_at_its_first_use() {
    let found = check(
        &prompt("Hi {{name}}, {{vip}}"),
        &compiled(&[("name", VarKind::Text, &[])]),
        ErrorCode::ContractViolation,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(d.code, ErrorCode::ContractViolation);
    assert_eq!(
        d.message,
        "prompt `p` needs variable `vip`, which the program's vars struct lacks"
    );
    let at = d.location.as_ref().expect("located");
    assert_eq!(
        (at.path(), at.line(), at.column()),
        ("templates/p/system.md", 1, 14)
    );
    let help = d.help.as_deref().unwrap_or("");
    assert!(help.contains("the fields `name` (`&str`)"), "{help}");
}

#[test]
fn a_flag_printed_as_text_is_a_violation() {
    let found = check(
        &prompt("formal={{formal}}"),
        &compiled(&[("formal", VarKind::Flag, &[])]),
        ErrorCode::ContractViolation,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].message,
        "prompt `p` uses `formal` as text (`&str`), but the program's vars struct has it as a condition (`bool`)"
    );
}

#[test]
fn text_tested_as_a_condition_is_a_violation() {
    let found = check(
        &prompt("{{#if name}}Dear{{/if}}"),
        &compiled(&[("name", VarKind::Text, &[])]),
        ErrorCode::ContractViolation,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .message
            .contains("uses `name` as a condition (`bool`), but the program's vars struct has it as text (`&str`)"),
        "{}",
        found[0].message
    );
}

#[test]
fn a_value_the_enum_lacks_is_a_violation() {
    let found = check(
        &prompt("{{#if role == \"teacher\"}}T{{else if role == \"admin\"}}A{{/if}}"),
        &compiled(&[("role", VarKind::Choice, ROLE)]),
        ErrorCode::ContractViolation,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].message,
        "prompt `p` compares `role` with \"admin\", which the program's vars struct's enum lacks"
    );
    let help = found[0].help.as_deref().unwrap_or("");
    assert!(
        help.contains("`role` (enum of \"teacher\" | \"student\")"),
        "{help}"
    );
}

/// A value added to a chain is reported at the `{{else if}}` that compares
/// with it, on its own line, not at the chain's `{{#if}}` (line 1).
#[test]
fn a_value_the_enum_lacks_is_located_at_its_comparison() {
    let found = check(
        &prompt(
            "{{#if role == \"teacher\"}}\nT\n{{else if role == \"student\"}}\nS\n  {{else if role == \"parent\"}}\nP\n{{/if}}",
        ),
        &compiled(&[("role", VarKind::Choice, ROLE)]),
        ErrorCode::ContractViolation,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    let at = found[0].location.as_ref().expect("located");
    assert_eq!(
        (at.path(), at.line(), at.column()),
        ("templates/p/system.md", 5, 3)
    );
}

/// Of several values the enum lacks, the first compared is where.
#[test]
fn of_several_lacking_values_the_first_comparison_is_where() {
    let found = check(
        &prompt(
            "{{#if role == \"teacher\"}}T{{/if}}\n{{#if role == \"admin\"}}A{{/if}}\n{{#if role == \"parent\"}}P{{/if}}",
        ),
        &compiled(&[("role", VarKind::Choice, ROLE)]),
        ErrorCode::ContractViolation,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].message.contains("\"admin\", \"parent\""),
        "{}",
        found[0].message
    );
    let at = found[0].location.as_ref().expect("located");
    assert_eq!((at.line(), at.column()), (2, 1));
}

/// The help names fields as the generated struct has them (snake_case,
/// raw when a keyword), not as the templates write them.
#[test]
fn the_help_names_the_rust_fields() {
    let found = check(
        &prompt("{{agentName}} {{type}} {{#if userRole == \"admin\"}}A{{/if}}"),
        &compiled(&[
            ("agentName", VarKind::Text, &[]),
            ("type", VarKind::Text, &[]),
            ("userRole", VarKind::Choice, ROLE),
        ]),
        ErrorCode::ContractViolation,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    let help = found[0].help.as_deref().unwrap_or("");
    assert!(
        help.starts_with(
            "the program's vars struct has the fields `agent_name` (`&str`), `r#type` (`&str`), `user_role` (enum of"
        ),
        "{help}"
    );
    assert!(
        !help.contains("agentName") && !help.contains("userRole"),
        "{help}"
    );
    // The message names the template's variable: that is what the text uses.
    assert!(
        found[0].message.contains("`userRole`"),
        "{}",
        found[0].message
    );
}

#[test]
fn fewer_values_and_unused_fields_fit() {
    let fields = compiled(&[
        ("role", VarKind::Choice, ROLE),
        ("name", VarKind::Text, &[]),
        ("formal", VarKind::Flag, &[]),
    ]);
    for system in [
        "{{#if role == \"teacher\"}}T{{/if}}",
        "{{name}}",
        "",
        "{{#if formal}}Dear {{/if}}{{name}}",
    ] {
        let found = check(&prompt(system), &fields, ErrorCode::ContractViolation);
        assert!(found.is_empty(), "{system}: {found:?}");
    }
}

#[test]
fn one_diagnostic_per_variable() {
    let found = check(
        &prompt("{{a}}{{b}}{{#if c}}{{/if}}"),
        &compiled(&[("c", VarKind::Text, &[])]),
        ErrorCode::ContractViolation,
    );
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].contains("`a`") && messages[1].contains("`b`"));
    assert!(messages[2].contains("`c`"), "{messages:?}");
}

#[test]
fn a_stale_build_is_worded_for_a_rebuild() {
    let found = check(&prompt("{{vip}}"), &compiled(&[]), ErrorCode::StaleBuild);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].code, ErrorCode::StaleBuild);
    assert_eq!(
        found[0].message,
        "prompt `p` on disk now needs variable `vip`, which the compiled vars struct lacks: rebuild"
    );
    let help = found[0].help.as_deref().unwrap_or("");
    assert!(
        help.starts_with("the compiled vars struct has no fields; run `cargo build`"),
        "{help}"
    );
}

#[test]
fn the_help_lists_a_bounded_number_of_fields() {
    let names: Vec<String> = (0..20).map(|i| format!("v{i}")).collect();
    let fields: Vec<(&str, VarKind, &[&str])> = names
        .iter()
        .map(|n| (n.as_str(), VarKind::Text, &[] as &[&str]))
        .collect();
    let found = check(
        &prompt("{{new}}"),
        &compiled(&fields),
        ErrorCode::ContractViolation,
    );
    let help = found[0].help.as_deref().unwrap_or("");
    assert!(help.contains("`v11` (`&str`), and 8 more;"), "{help}");
    assert!(!help.contains("`v12`"), "{help}");
}

#[test]
fn a_prompt_the_program_lacks_is_a_violation() {
    let contract = super::of(&prompts(&[("a", "{{x}}")]));
    let found = check_all(&prompts(&[("a", "{{x}}"), ("b", "hi")]), &contract);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].code, ErrorCode::ContractViolation);
    assert_eq!(
        found[0].message,
        "the program has no prompt `b`: it has no vars struct to render it with"
    );
    assert_eq!(
        found[0].location.as_ref().map(|l| l.path()),
        Some("templates/b/system.md")
    );
    let help = found[0].help.as_deref().unwrap_or("");
    assert!(help.contains("prompts are: a;"), "{help}");
}

#[test]
fn check_all_reports_each_prompts_problems() {
    let contract = super::of(&prompts(&[("a", "{{x}}"), ("b", "{{y}}")]));
    assert!(check_all(&prompts(&[("a", "{{x}}"), ("b", "{{y}}")]), &contract).is_empty());
    let found = check_all(
        &prompts(&[("a", "{{x}}{{z}}"), ("b", "{{#if y}}{{/if}}")]),
        &contract,
    );
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("`z`"), "{messages:?}");
    assert!(messages[1].contains("prompt `b` uses `y`"), "{messages:?}");
}

/// Every kind, and a prompt without variables.
fn sample() -> Contract {
    super::of(&prompts(&[
        (
            "greet",
            "{{#if formal}}Dear {{/if}}{{name}}{{#if title}} {{title}}{{/if}}\n\
             {{#if role == \"teacher\"}}T{{else if role == \"student\"}}S{{/if}}\n\
             {{#if mood}}{{#if mood == \"calm\"}}C{{/if}}{{/if}}",
        ),
        ("about", "No variables."),
    ]))
}

#[test]
fn the_json_shape_is_pinned() {
    insta::assert_snapshot!(sample().to_json());
}

#[test]
fn the_json_reads_back_to_the_same_contract() {
    let contract = sample();
    let read = Contract::from_json("contract.json", &contract.to_json()).expect("a contract");
    assert_eq!(read, contract);
    assert_eq!(read.format, FORMAT);
    assert_eq!(
        read.prompts.keys().collect::<Vec<_>>(),
        ["about", "greet"],
        "sorted by id"
    );
}

#[test]
fn an_unknown_kind_is_refused() {
    let text = r#"{"format":1,"prompts":{"p":{"variables":[{"name":"x","kind":"number"}]}}}"#;
    assert!(serde_json::from_str::<Contract>(text).is_err());
}

#[test]
fn a_contract_of_another_format_or_not_a_contract_is_refused() {
    let other = r#"{"format": 2, "prompts": {}}"#;
    let error = Contract::from_json("old.json", other).expect_err("format 2");
    assert_eq!(error.code(), ErrorCode::InvalidConfig);
    assert!(error.to_string().contains("format 2"), "{error}");
    let error = Contract::from_json("x.json", "[1, 2]").expect_err("not a contract");
    assert!(
        error
            .to_string()
            .contains("x.json is not a promptpack contract"),
        "{error}"
    );
    let current = format!(r#"{{"format": {FORMAT}, "prompts": {{}}}}"#);
    assert!(Contract::from_json("new.json", &current).is_ok());
}

/// A prompt with `front` as its front matter's `vars` and `body` after it.
fn declared(vars: &str, body: &str) -> ResolvedPrompt {
    prompt(&format!("---\nvars:\n{vars}---\n{body}"))
}

const DECLARED_ROLE: &str = "  role: {kind: choice, values: [teacher, student, observer]}\n";
const BRANCHES: &str =
    "{{#if role == \"teacher\"}}T{{else if role == \"student\"}}S{{else}}O{{/if}}";

/// A declared choice's contract is its declared values, in the order
/// declared, observer included though no branch compares with it.
#[test]
fn a_declared_choice_contracts_every_declared_value() {
    let contract = of_prompt(&declared(DECLARED_ROLE, BRANCHES));
    assert_eq!(
        contract.variables,
        [VarContract::new(
            "role",
            VarKind::Choice,
            vec!["teacher".into(), "student".into(), "observer".into()]
        )]
    );
}

/// A version that declares a value the binary's enum lacks but compares
/// only with values it has fits (the binary never passes the new value);
/// one that compares with the new value does not; one that drops a
/// declared value fits.
#[test]
fn declared_values_fit_by_what_is_compared() {
    let binary = compiled(&[("role", VarKind::Choice, &["teacher", "student"])]);
    let more = "  role: {kind: choice, values: [teacher, student, guest]}\n";
    let fits = check(
        &declared(
            more,
            "{{#if role == \"teacher\"}}T{{else if role == \"student\"}}S{{/if}}",
        ),
        &binary,
        ErrorCode::ContractViolation,
    );
    assert!(fits.is_empty(), "{fits:?}");
    let refused = check(
        &declared(more, "{{#if role == \"guest\"}}G{{/if}}"),
        &binary,
        ErrorCode::ContractViolation,
    );
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0]
            .message
            .contains("compares `role` with \"guest\""),
        "{}",
        refused[0].message
    );
    let wide = compiled(&[("role", VarKind::Choice, &["teacher", "student", "observer"])]);
    let fewer = "  role: {kind: choice, values: [teacher]}\n";
    let dropped = check(
        &declared(fewer, "{{#if role == \"teacher\"}}T{{/if}}"),
        &wide,
        ErrorCode::ContractViolation,
    );
    assert!(dropped.is_empty(), "{dropped:?}");
}

/// Prompt `p` of `system` and, as a conversation, `messages`.
fn conversation(system: &str, messages: &str) -> ResolvedPrompt {
    let source = TemplateSource {
        id: "p".into(),
        system: SourceFile::new("templates/p/system.md", system),
        user: None,
        messages: Some(SourceFile::new("templates/p/messages.md", messages)),
    };
    let (mut prompts, errors) = resolve(&[source], &[], &Delimiters::default());
    assert!(errors.is_empty(), "{errors:?}");
    prompts.remove(0)
}

const HISTORY: &str =
    "---\nvars:\n  history: { kind: messages }\n---\n{{history}}\n{{#user}}\n{{q}}\n{{/user}}";
const CHAT_LOG: &str =
    "---\nvars:\n  chat_log: { kind: messages }\n---\n{{chat_log}}\n{{#user}}\n{{q}}\n{{/user}}";
const NO_HISTORY: &str = "{{#user}}\n{{q}}\n{{/user}}";

#[test]
fn a_conversations_contract_says_its_shape_and_its_history() {
    let contract = super::of_prompt(&conversation("S", HISTORY));
    assert_eq!(contract.shape, Shape::Conversation);
    assert_eq!(
        contract.variable("history").map(|v| v.kind),
        Some(VarKind::Messages)
    );
    assert_eq!(super::of_prompt(&prompt("S {{q}}")).shape, Shape::Files);
    let history = contract.clone();
    assert!(
        check(
            &conversation("T", HISTORY),
            &history,
            ErrorCode::ContractViolation
        )
        .is_empty()
    );
}

/// Every way a version leaves a conversation's contract (or a two-file
/// prompt's), with what the first diagnostic says and where.
#[test]
fn a_changed_shape_or_history_is_a_violation_at_the_file() {
    let history = super::of_prompt(&conversation("S", HISTORY));
    let no_history = super::of_prompt(&conversation("S", NO_HISTORY));
    let files = compiled(&[("q", VarKind::Text, &[])]);
    let cases: [(&str, ResolvedPrompt, &PromptContract, &[&str], &str); 5] = [
        (
            "two files where the program sends a conversation",
            prompt("S {{q}}"),
            &history,
            &[
                "prompt `p` is two files (`system.md`, `user.md`), but the program's vars struct is of a conversation (`system.md`, `messages.md`)",
            ],
            "templates/p/system.md",
        ),
        (
            "a conversation where the program has two files, with a new history",
            conversation("S", HISTORY),
            &files,
            &[
                "prompt `p` is a conversation (`system.md`, `messages.md`), but the program's vars struct is of two files (`system.md`, `user.md`)",
                "prompt `p` needs variable `history`, which the program's vars struct lacks",
            ],
            "templates/p/messages.md",
        ),
        (
            "the history dropped",
            conversation("S", NO_HISTORY),
            &history,
            &[
                "prompt `p` no longer places history `history`, which the program's vars struct has: the history it is given would not be sent",
            ],
            "templates/p/messages.md",
        ),
        (
            "the history renamed",
            conversation("S", CHAT_LOG),
            &history,
            &[
                "prompt `p` no longer places history `history`, which the program's vars struct has: the history it is given would not be sent",
                "prompt `p` needs variable `chat_log`, which the program's vars struct lacks",
            ],
            "templates/p/messages.md",
        ),
        (
            "a history added",
            conversation("S", HISTORY),
            &no_history,
            &["prompt `p` needs variable `history`, which the program's vars struct lacks"],
            "templates/p/messages.md",
        ),
    ];
    for (case, prompt, contract, messages, path) in cases {
        let found = check(&prompt, contract, ErrorCode::ContractViolation);
        let said: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(said, messages, "{case}");
        assert!(found.iter().all(|d| d.code == ErrorCode::ContractViolation));
        let at = found[0].location.as_ref().map(|l| l.path().to_string());
        assert_eq!(at.as_deref(), Some(path), "{case}");
    }
}

#[test]
fn a_history_re_kinded_is_a_violation() {
    let history = super::of_prompt(&conversation("S", HISTORY));
    let found = check(
        &conversation("S", "{{#user}}\n{{history}} {{q}}\n{{/user}}"),
        &history,
        ErrorCode::ContractViolation,
    );
    let said: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        said,
        [
            "prompt `p` uses `history` as text (`&str`), but the program's vars struct has it as a history (`&[Message]`)"
        ]
    );
}

#[test]
fn a_stale_conversation_is_worded_for_a_rebuild() {
    let files = compiled(&[("q", VarKind::Text, &[])]);
    let found = check(
        &conversation("S", NO_HISTORY),
        &files,
        ErrorCode::StaleBuild,
    );
    assert_eq!(
        found.first().map(|d| d.message.as_str()),
        Some(
            "prompt `p` on disk now is a conversation (`system.md`, `messages.md`), but the compiled vars struct is of two files (`system.md`, `user.md`): rebuild"
        )
    );
}

#[test]
fn a_contract_without_shape_reads_as_two_files_and_a_conversation_writes_it() {
    let old = r#"{"format":1,"prompts":{"p":{"variables":[{"name":"x","kind":"text"}]}}}"#;
    let read = Contract::from_json("old.json", old).expect("an old contract reads");
    assert_eq!(read.prompts["p"].shape, Shape::Files);
    assert!(
        !read.to_json().contains("shape"),
        "two files are written as they always were"
    );
    let chat = super::of(&[conversation("S", HISTORY)]);
    let json = chat.to_json();
    assert!(json.contains("\"shape\": \"conversation\""), "{json}");
    assert!(json.contains("\"kind\": \"messages\""), "{json}");
    assert_eq!(
        Contract::from_json("chat.json", &json).expect("reads"),
        chat
    );
}

/// The front matter of a prompt declaring `response` and `tools` (each a
/// YAML block, indented under its key).
fn exchange(response: &str, tools: &str) -> String {
    let mut text = String::from("---\n");
    if !response.is_empty() {
        text.push_str("response:\n");
        text.push_str(response);
    }
    if !tools.is_empty() {
        text.push_str("tools:\n");
        text.push_str(tools);
    }
    text.push_str("---\nAnswer.\n");
    text
}

const RESPONSE: &str = "  reply: string
  category: [billing, shipping]
  order?: string
  score: number
  refund?:
    amount: number
  steps: string[]
";

const TOOLS: &str = "  order_status:
    description: Looks an order up
    parameters:
      order: string
  escalate: Hands the chat over
";

/// Every rule of `schema::compat`, one version each against the program
/// built from [`RESPONSE`] and [`TOOLS`]: what passes, and what each refusal
/// says and where.
#[test]
fn a_version_passes_when_the_program_reads_its_answers_and_calls() {
    let program = of_prompt(&prompt(&exchange(RESPONSE, TOOLS)));
    let cases: &[(&str, String)] = &[
        ("the same", exchange(RESPONSE, TOOLS)),
        (
            "an optional field added",
            exchange(&format!("{RESPONSE}  note?: string\n"), TOOLS),
        ),
        (
            "a description reworded",
            exchange(
                &RESPONSE.replace("reply: string", "reply: string, what they read"),
                TOOLS,
            ),
        ),
        (
            "an enum narrowed",
            exchange(&RESPONSE.replace("[billing, shipping]", "[billing]"), TOOLS),
        ),
        (
            "a nullable field made required",
            exchange(&RESPONSE.replace("order?:", "order:"), TOOLS),
        ),
        (
            "a tool dropped",
            exchange(RESPONSE, "  escalate: Hands over\n"),
        ),
        (
            "a required field added",
            exchange(&format!("{RESPONSE}  mood: string\n"), TOOLS),
        ),
        (
            "a field dropped",
            exchange(&RESPONSE.replace("  score: number\n", ""), TOOLS),
        ),
        (
            "a type changed",
            exchange(&RESPONSE.replace("score: number", "score: string"), TOOLS),
        ),
        (
            "an integer where a number was",
            exchange(&RESPONSE.replace("score: number", "score: integer"), TOOLS),
        ),
        (
            "an enum widened",
            exchange(
                &RESPONSE.replace("[billing, shipping]", "[billing, shipping, other]"),
                TOOLS,
            ),
        ),
        (
            "a required field made nullable",
            exchange(&RESPONSE.replace("reply:", "reply?:"), TOOLS),
        ),
        (
            "a nested field retyped",
            exchange(
                &RESPONSE.replace("amount: number", "amount: boolean"),
                TOOLS,
            ),
        ),
        (
            "a list's item retyped",
            exchange(&RESPONSE.replace("string[]", "integer[]"), TOOLS),
        ),
        ("the response dropped", exchange("", TOOLS)),
        (
            "a tool added",
            exchange(RESPONSE, &format!("{TOOLS}  refund: Refunds an order\n")),
        ),
        (
            "a tool's argument retyped",
            exchange(RESPONSE, &TOOLS.replace("order: string", "order: integer")),
        ),
    ];
    let mut shown = String::new();
    for (name, text) in cases {
        let version = prompt(text);
        let found = check(&version, &program, ErrorCode::ContractViolation);
        shown.push_str(&format!("== {name}\n"));
        if found.is_empty() {
            shown.push_str("passes\n");
        }
        for diagnostic in found {
            let at = diagnostic.location.as_ref().expect("located");
            shown.push_str(&format!(
                "{} {}:{}: {}\n",
                diagnostic.code,
                at.line(),
                at.column(),
                diagnostic.message
            ));
        }
    }
    insta::assert_snapshot!(shown);
}

#[test]
fn a_program_without_a_response_type_takes_any_response() {
    let program = of_prompt(&prompt("Answer."));
    let version = prompt(&exchange(RESPONSE, ""));
    assert!(check(&version, &program, ErrorCode::ContractViolation).is_empty());
}

#[test]
fn the_contract_keeps_the_schemas_through_json() {
    let prompts = prompts(&[("p", &exchange(RESPONSE, TOOLS)), ("q", "Plain.")]);
    let contract = of(&prompts);
    let read = Contract::from_json("contract.json", &contract.to_json()).expect("reads");
    assert_eq!(read, contract);
    // A prompt without either writes the bytes it always did.
    assert!(
        !contract
            .to_json()
            .contains("\"q\": {\n      \"variables\": [],\n      \"response\"")
    );
    let p = &read.prompts["p"];
    let response = p.response.as_ref().expect("a response");
    let schema = crate::schema::Schema::from_json_schema(response, "contract.json").expect("reads");
    assert_eq!(&schema.json_schema(), response);
}
