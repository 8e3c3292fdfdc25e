//! Snapshots of the generated code, both ways parts can render, for small
//! fixture trees under `tests/codegen/<case>/`, and of the errors the code
//! generator reports.

use promptpack::{Config, Error};
use promptpack_build::codegen::{Renderers, generate_with};
use promptpack_core::resolve::resolve;
use promptpack_load::read_sources;
use std::path::Path;

fn generate_case(case: &str) -> Result<String, Error> {
    generate_case_with(case, Renderers::StraightLine)
}

fn generate_case_with(case: &str, renderers: Renderers) -> Result<String, Error> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/codegen")
        .join(case);
    let config = Config::load(&root)?;
    let (sources, errors) = read_sources(&config);
    assert!(errors.is_empty(), "{errors:?}");
    let (prompts, errors) = resolve(&sources.templates, &sources.snippets, config.delimiters());
    assert!(errors.is_empty(), "{errors:?}");
    let mut prompts = prompts;
    prompts.sort_by(|a, b| a.id.cmp(&b.id));
    let dev = promptpack_testkit::fixed_dev_paths(&promptpack::Delimiters::default());
    generate_with(&prompts, &sources.templates, &dev, renderers)
}

#[test]
fn basic_prompts() {
    insta::assert_snapshot!(generate_case("basic").expect("generates"));
}

/// What builds without optimization get: a table per part, the rest from
/// one macro of promptpack's.
#[test]
fn basic_prompts_as_tables() {
    insta::assert_snapshot!(generate_case_with("basic", Renderers::Tables).expect("generates"));
}

#[test]
fn compared_variables_as_tables() {
    insta::assert_snapshot!(generate_case_with("choices", Renderers::Tables).expect("generates"));
}

/// A conversation: the history a slice of messages, each message a
/// renderer of its own, the branches around messages `if`s (straight-line)
/// or jumps of the turn table (tables).
#[test]
fn a_conversation() {
    insta::assert_snapshot!(generate_case("conversation").expect("generates"));
}

#[test]
fn a_conversation_as_tables() {
    insta::assert_snapshot!(
        generate_case_with("conversation", Renderers::Tables).expect("generates")
    );
}

#[test]
fn keywords_become_raw_or_suffixed_fields() {
    let code = generate_case("keywords").expect("generates");
    assert!(code.contains("pub r#type: &'a str"), "{code}");
    assert!(code.contains("pub self_: &'a str"), "{code}");
    assert!(code.contains("pub crate_: &'a str"), "{code}");
    assert!(code.contains("pub r#match: &'a str"), "{code}");
    assert!(code.contains("pub r#async: bool"), "{code}");
    insta::assert_snapshot!(code);
}

#[test]
fn collisions_and_bad_names_are_reported_together() {
    let error = generate_case("collisions").expect_err("must not generate");
    let lines: Vec<String> = error
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

/// A compared variable becomes an enum with a variant per value; one also
/// tested for truth becomes `Option` of its enum.
#[test]
fn compared_variables_become_enums() {
    insta::assert_snapshot!(generate_case("choices").expect("generates"));
}

/// A choice declared in front matter: its enum has every declared value in
/// the declared order (`observer`, which no branch compares, first), each
/// variant's rustdoc naming the branch it renders.
#[test]
fn declared_choices_become_enums_of_every_declared_value() {
    let code = generate_case("declared-choices").expect("generates");
    assert!(
        code.contains(
            "pub enum LessonRole {\n\t\t/// `\"observer\"`: renders the `{{else}}` branch (templates/lesson/system.md:16:67).\n\t\tObserver,"
        ),
        "{code}"
    );
    assert!(
        code.contains(
            "pub const ALL: [LessonRole; 3] = [Self::Observer, Self::Teacher, Self::Student];"
        ),
        "{code}"
    );
    assert!(code.contains("pub mood: Option<LessonMood>,"), "{code}");
    insta::assert_snapshot!(code);
}

/// Front matter in the generated code: the description as rustdoc of the
/// variant and the struct, and `description()`/`metadata()`/`max_tokens()`/
/// `example()` in the prompt table; declared kinds as field types; field
/// descriptions and examples as field rustdoc.
#[test]
fn front_matter_documents_and_types_the_prompt() {
    let code = generate_case("contract").expect("generates");
    assert!(
        code.contains("/// Greets someone, declaring every variable it uses."),
        "{code}"
    );
    assert!(code.contains("pub nickname: Option<&'a str>"), "{code}");
    assert!(code.contains("pub formal: bool"), "{code}");
    insta::assert_snapshot!(code);
}

/// A prompt's `response` and `tools` as types: a serde struct per object
/// (`TicketResponse`, `TicketResponseRefund`, `TicketResponseLines`), an
/// enum per enum field, nullable fields required through the runtime's
/// `nullable`, an args struct per tool and the enum of calls, the JSON
/// a request sends in the prompt table.
#[test]
fn response_and_tools_become_types() {
    let code = generate_case("exchange").expect("generates");
    assert!(code.contains("pub struct TicketResponse {"), "{code}");
    assert!(
        code.contains("#[serde(rename = \"orderId\")]\n\t\t#[serde(deserialize_with = \"::promptpack::__private::nullable\")]\n\t\tpub order_id: Option<String>,"),
        "{code}"
    );
    assert!(
        code.contains("pub history: Option<Vec<TicketResponseHistory>>,"),
        "{code}"
    );
    assert!(
        code.contains("LookupOrder(TicketLookupOrderArgs),"),
        "{code}"
    );
    // Keywords: raw (serde reads `r#type` as `type`), or suffixed and renamed.
    assert!(
        code.contains("\t\tpub r#type: TicketLookupOrderArgsType,"),
        "{code}"
    );
    assert!(
        code.contains(
            "#[serde(rename = \"self\")]\n\t\t#[serde(deserialize_with = \"::promptpack::__private::nullable\")]\n\t\tpub self_: Option<String>,"
        ),
        "{code}"
    );
    insta::assert_snapshot!(code);
}

/// Names a response or tools cannot have: two fields of one Rust name, an
/// enum value or a tool name with no Rust identifier, two values or tools
/// of one variant, a nested type named as another generated type. Each an
/// `invalid_schema` error at its declaration, all reported together.
#[test]
fn response_and_tool_names_that_collide_are_reported_together() {
    let error = generate_case("exchange-collisions").expect_err("must not generate");
    let lines: Vec<String> = error
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        error
            .diagnostics()
            .iter()
            .all(|d| d.code.as_str() == "invalid_schema"),
        "{lines:?}"
    );
    insta::assert_snapshot!(lines.join("\n"));
}
