use super::{read_answer, read_arguments, read_typed};
use crate::diagnostics::{Style, render_error};
use crate::error::{ErrorCode, Location};
use crate::schema::{Property, Schema, SchemaKind, Tool};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

fn at() -> Location {
    Location::file("t/system.md")
}

fn property(name: &str, schema: Schema) -> Property {
    Property::new(name, schema, at())
}

fn object(properties: Vec<Property>) -> Schema {
    Schema::new(SchemaKind::Object(properties))
}

fn enumeration(values: &[&str]) -> Schema {
    Schema::new(SchemaKind::Enum(
        values.iter().map(|v| v.to_string()).collect(),
    ))
}

/// A support chat's answer: the shape `schema/tests.rs` declares in front
/// matter, written out.
fn support() -> Schema {
    object(vec![
        property("reply", Schema::new(SchemaKind::String)),
        property("category", enumeration(&["billing", "shipping", "other"])),
        property("order", Schema::new(SchemaKind::String).nullable()),
        property(
            "refund",
            object(vec![
                property("amount", Schema::new(SchemaKind::Number)),
                property("currency", enumeration(&["EUR", "USD"])),
            ])
            .nullable(),
        ),
        property(
            "lines",
            Schema::new(SchemaKind::Array(Box::new(object(vec![
                property("sku", Schema::new(SchemaKind::String)),
                property("quantity", Schema::new(SchemaKind::Integer)),
            ])))),
        ),
    ])
}

const VALID: &str = r#"{"reply": "Your order ships today.", "category": "shipping", "order": "A-17", "refund": null, "lines": [{"sku": "B-2", "quantity": 2}]}"#;

/// The shapes models answer in, and what each gives: the value, or the
/// error as the CLI prints it.
#[test]
fn model_answers() {
    let deep = format!("{{\"reply\": {}", "[".repeat(140));
    let cases: Vec<(&str, String)> = vec![
        ("bare JSON", VALID.to_string()),
        ("fenced json", format!("```json\n{VALID}\n```")),
        ("fenced without a language", format!("```\n{VALID}\n```")),
        ("tilde fence", format!("~~~json\n{VALID}\n~~~\n")),
        ("prose before", format!("Here is the answer: {VALID}")),
        ("trailing text", format!("{VALID}\nLet me know if you need more.")),
        (
            "prose before and after, fenced",
            format!("Sure!\n\n```json\n{VALID}\n```\n\nHope this helps."),
        ),
        (
            "pretty-printed",
            "{\n  \"reply\": \"Hi\",\n  \"category\": \"billing\",\n  \"order\": null,\n  \"refund\": {\"amount\": 12.5, \"currency\": \"EUR\"},\n  \"lines\": []\n}".into(),
        ),
        (
            "truncated mid-string",
            r#"{"reply": "Your order ships tod"#.into(),
        ),
        (
            "truncated mid-object",
            "{\"reply\": \"Hi\", \"category\": \"billing\"\n".into(),
        ),
        (
            "truncated inside a fence",
            "```json\n{\"reply\": \"Hi\",\n```".into(),
        ),
        (
            "missing comma",
            r#"{"reply": "Hi" "category": "billing"}"#.into(),
        ),
        (
            "trailing comma",
            r#"{"reply": "Hi", "lines": [1, 2,]}"#.into(),
        ),
        ("single quotes", "{'reply': 'Hi'}".into()),
        (
            "Python literals",
            r#"{"reply": "Hi", "order": None}"#.into(),
        ),
        (
            "wrong type",
            r#"{"reply": "Refunded.", "category": "billing", "order": null, "refund": {"amount": "12.50", "currency": "EUR"}, "lines": []}"#.into(),
        ),
        (
            "extra field",
            r#"{"reply": "Hi", "category": "other", "ordr": "A-17", "order": null, "refund": null, "lines": []}"#.into(),
        ),
        (
            "missing fields",
            r#"{"reply": "Hi", "category": "other", "refund": null}"#.into(),
        ),
        (
            "enum value not declared",
            r#"{"reply": "Hi", "category": "biling", "order": null, "refund": null, "lines": []}"#.into(),
        ),
        (
            "null for a field that is not optional",
            r#"{"reply": null, "category": "other", "order": null, "refund": null, "lines": []}"#.into(),
        ),
        (
            "nested error path",
            r#"{"reply": "Hi", "category": "other", "order": null, "refund": null, "lines": [{"sku": "A", "quantity": 1}, {"sku": "B", "quantity": "two"}]}"#.into(),
        ),
        (
            "array item error",
            r#"{"reply": "Hi", "category": "other", "order": null, "refund": null, "lines": [{"sku": "A", "quantity": 1}, "B-2"]}"#.into(),
        ),
        (
            "several errors",
            r#"{"reply": 3, "category": "other", "refund": {"amount": 1, "currency": "GBP"}, "lines": {}, "extra": true}"#.into(),
        ),
        (
            "duplicate field",
            r#"{"reply": "Hi", "reply": "Ho", "category": "other", "order": null, "refund": null, "lines": []}"#.into(),
        ),
        (
            "integer written 1.0",
            r#"{"reply": "Hi", "category": "other", "order": null, "refund": null, "lines": [{"sku": "A", "quantity": 1.0}]}"#.into(),
        ),
        (
            "integer written 1.5",
            r#"{"reply": "Hi", "category": "other", "order": null, "refund": null, "lines": [{"sku": "A", "quantity": 1.5}]}"#.into(),
        ),
        ("empty text", String::new()),
        ("whitespace only", "  \n ".into()),
        (
            "no JSON at all",
            "I'm sorry, I can't help with that.".into(),
        ),
        (
            "a top-level array",
            format!("[{VALID}]"),
        ),
        ("deep nesting past the limit", deep),
        (
            "unicode before the JSON",
            "Voilà — 日本語の答え: {\"reply\": 42}".into(),
        ),
    ];
    let schema = support();
    let mut table = String::new();
    for (name, input) in cases {
        let shown = match input.char_indices().nth(120) {
            Some((end, _)) => format!("{:?}…", &input[..end]),
            None => format!("{input:?}"),
        };
        let outcome = match read_answer(&input, &schema) {
            Ok(value) => format!("ok: {value}"),
            Err(error) => render_error(&error, Style::Plain),
        };
        table.push_str(&format!("## {name}\ninput: {shown}\n{outcome}\n\n"));
    }
    insta::assert_snapshot!(table);
}

#[test]
fn codes() {
    let schema = support();
    let code = |text: &str| read_answer(text, &schema).map_err(|e| e.code());
    assert_eq!(code("nothing").err(), Some(ErrorCode::AnswerNotJson));
    assert_eq!(code("{\"reply\"").err(), Some(ErrorCode::AnswerNotJson));
    assert_eq!(code("{}").err(), Some(ErrorCode::AnswerMismatch));
    assert!(code(VALID).is_ok());
}

#[test]
fn tool_arguments() {
    let tool = Tool::new(
        "order_status",
        None,
        object(vec![
            property("order", Schema::new(SchemaKind::String)),
            property("verbose", Schema::new(SchemaKind::Boolean).nullable()),
        ]),
        at(),
    );
    let none = Tool::new("escalate", None, object(vec![]), at());
    assert_eq!(
        read_arguments(r#"{"order": "A-1", "verbose": null}"#, &tool),
        Ok(json!({"order": "A-1", "verbose": null}))
    );
    assert_eq!(read_arguments("", &none), Ok(json!({})));
    assert_eq!(read_arguments(" {} ", &none), Ok(json!({})));
    let shown = |arguments: &str, tool: &Tool| match read_arguments(arguments, tool) {
        Ok(value) => format!("ok: {value}"),
        Err(error) => render_error(&error, Style::Plain),
    };
    let table = [
        r#"{"order": 17, "verbose": true}"#,
        r#"{"order": "A-1"}"#,
        r#"{"order": "A-1", "verbose": false} trailing"#,
        "```json\n{\"order\": \"A-1\", \"verbose\": null}\n```",
        "",
    ]
    .iter()
    .map(|a| format!("input: {a:?}\n{}\n", shown(a, &tool)))
    .collect::<Vec<_>>()
    .join("\n");
    insta::assert_snapshot!(table);
}

// ---- read_typed with a hand-written type -------------------------------

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Support {
    reply: String,
    category: Category,
    order: Option<String>,
    refund: Option<Refund>,
    lines: Vec<Line>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Category {
    Billing,
    Shipping,
    Other,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Refund {
    amount: f64,
    currency: Currency,
}

#[derive(Debug, PartialEq, Deserialize)]
enum Currency {
    #[allow(clippy::upper_case_acronyms)]
    EUR,
    #[allow(clippy::upper_case_acronyms)]
    USD,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    sku: String,
    quantity: i64,
}

#[test]
fn typed_reading() {
    let read = |text: &str| read_typed::<Support>(text, support);
    let expected = Support {
        reply: "Your order ships today.".into(),
        category: Category::Shipping,
        order: Some("A-17".into()),
        refund: None,
        lines: vec![Line {
            sku: "B-2".into(),
            quantity: 2,
        }],
    };
    assert_eq!(read(VALID), Ok(expected));
    assert_eq!(
        read(&format!("Sure:\n```json\n{VALID}\n```\nDone.")).map(|s| s.lines.len()),
        Ok(1)
    );
    // serde refuses `1.0` for an i64; the schema counts it an integer.
    let whole = r#"{"reply": "", "category": "other", "order": null, "refund": null, "lines": [{"sku": "A", "quantity": 3.0}]}"#;
    assert_eq!(read(whole).map(|s| s.lines[0].quantity), Ok(3));
    // What serde refuses and the schema too: the schema's located error.
    let wrong = r#"{"reply": "", "category": "other", "order": null, "refund": null, "lines": [{"sku": "A", "quantity": 3.5}]}"#;
    assert_eq!(
        read(wrong),
        Err(read_answer(wrong, &support()).unwrap_err())
    );
    // The schema is not built when serde reads the answer.
    assert!(read_typed::<Support>(VALID, || panic!("not needed")).is_ok());
    // A type that disagrees with the schema: the schema takes the answer,
    // the type does not.
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)] // read, never looked at
    struct Other {
        reply: u8,
    }
    let error = read_typed::<Other>(VALID, support).expect_err("a string is no u8");
    insta::assert_snapshot!(render_error(&error, Style::Plain));
}

// ---- generated schemas and values, against the `jsonschema` crate ------

const NAMES: [&str; 6] = ["a", "b", "c", "dd", "e f", "é"];
const WORDS: [&str; 5] = ["x", "y", "z", "x y", "ü"];

fn scalar_schema() -> impl Strategy<Value = Schema> {
    prop_oneof![
        Just(SchemaKind::String),
        Just(SchemaKind::Integer),
        Just(SchemaKind::Number),
        Just(SchemaKind::Boolean),
        proptest::sample::subsequence(WORDS.to_vec(), 1..=3)
            .prop_map(|v| SchemaKind::Enum(v.into_iter().map(String::from).collect())),
    ]
    .prop_map(Schema::new)
}

fn schema_strategy() -> impl Strategy<Value = Schema> {
    let leaf = (scalar_schema(), any::<bool>()).prop_map(nullable);
    let tree = leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (inner.clone(), any::<bool>()).prop_map(|(item, n)| nullable((
                Schema::new(SchemaKind::Array(Box::new(item))),
                n
            ))),
            (
                proptest::sample::subsequence(NAMES.to_vec(), 0..=4),
                proptest::collection::vec(inner, 4),
                any::<bool>()
            )
                .prop_map(|(names, schemas, n)| {
                    let properties = names
                        .into_iter()
                        .zip(schemas)
                        .map(|(name, schema)| property(name, schema))
                        .collect();
                    nullable((object(properties), n))
                }),
        ]
    });
    // The top is an object, as a response and a tool's parameters are.
    (
        proptest::sample::subsequence(NAMES.to_vec(), 0..=4),
        proptest::collection::vec(tree, 4),
    )
        .prop_map(|(names, schemas)| {
            object(
                names
                    .into_iter()
                    .zip(schemas)
                    .map(|(name, schema)| property(name, schema))
                    .collect(),
            )
        })
}

fn nullable((schema, nullable): (Schema, bool)) -> Schema {
    if nullable { schema.nullable() } else { schema }
}

/// A value of another kind than the schema's, or a near miss of it:
/// null, a float with or without a fraction, a string not in an enum.
fn wrong_value() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        (-1000i32..1000).prop_map(|i| json!(f64::from(i))),
        (-1000i32..1000).prop_map(|i| json!(f64::from(i) + 0.5)),
        "[a-zü ]{0,3}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"a": 1})),
    ]
    .boxed()
}

/// A value that fits `schema`, each part of it replaced now and then by a
/// wrong one, and each object now and then missing a property or having
/// one more.
fn value_for(schema: &Schema) -> BoxedStrategy<Value> {
    let fitting: BoxedStrategy<Value> = match &schema.kind {
        SchemaKind::String => "[a-z\"\\\\\n é]{0,4}".prop_map(Value::from).boxed(),
        SchemaKind::Integer => prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            // Whole numbers written as floats: integers to JSON Schema.
            (-1_000_000i32..1_000_000).prop_map(|i| json!(f64::from(i))),
            Just(json!(1e300)),
        ]
        .boxed(),
        SchemaKind::Number => prop_oneof![
            any::<i64>().prop_map(Value::from),
            (-1e12f64..1e12).prop_map(|f| json!(f)),
        ]
        .boxed(),
        SchemaKind::Boolean => any::<bool>().prop_map(Value::from).boxed(),
        SchemaKind::Enum(values) => proptest::sample::select(values.clone())
            .prop_map(Value::from)
            .boxed(),
        SchemaKind::Array(item) => proptest::collection::vec(value_for(item), 0..3)
            .prop_map(Value::Array)
            .boxed(),
        SchemaKind::Object(properties) => {
            let names: Vec<String> = properties.iter().map(|p| p.name.clone()).collect();
            let values: Vec<BoxedStrategy<Value>> =
                properties.iter().map(|p| value_for(&p.schema)).collect();
            (
                values,
                proptest::option::weighted(0.05, any::<proptest::sample::Index>()),
                proptest::option::weighted(0.05, proptest::sample::select(NAMES.to_vec())),
            )
                .prop_map(move |(values, removed, added)| {
                    let mut map: serde_json::Map<String, Value> =
                        names.iter().cloned().zip(values).collect();
                    if let Some(index) = removed.filter(|_| !map.is_empty()) {
                        let name = names[index.index(names.len())].clone();
                        map.shift_remove(&name);
                    }
                    if let Some(name) = added {
                        map.entry(name).or_insert(Value::Null);
                    }
                    Value::Object(map)
                })
                .boxed()
        }
    };
    let fitting = if schema.nullable {
        prop_oneof![4 => fitting, 1 => Just(Value::Null)].boxed()
    } else {
        fitting
    };
    prop_oneof![30 => fitting, 1 => wrong_value()].boxed()
}

fn schema_and_value() -> impl Strategy<Value = (Schema, Value)> {
    schema_strategy().prop_flat_map(|schema| {
        let value = value_for(&schema);
        (Just(schema), value)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `read_answer` takes exactly what a JSON Schema validator takes of
    /// the schema's `json_schema()`.
    #[test]
    fn agrees_with_jsonschema((schema, value) in schema_and_value()) {
        let json_schema = schema.json_schema();
        let validator = jsonschema::validator_for(&integer_unions_spelled_out(json_schema.clone()))
            .map_err(|e| TestCaseError::fail(format!("{e}: {json_schema}")))?;
        let text = value.to_string();
        let ours = read_answer(&text, &schema);
        prop_assert_eq!(
            ours.is_ok(),
            validator.is_valid(&value),
            "{}\nschema: {}\nours: {:?}",
            text,
            json_schema,
            ours
        );
        if let Ok(read) = ours {
            prop_assert_eq!(read, value);
        }
    }

    /// `read_typed` takes what `read_answer` takes, and gives what serde
    /// reads from its value.
    #[test]
    fn typed_agrees_with_the_schema(value in value_for(&support()), fenced in any::<bool>()) {
        let text = if fenced { format!("```json\n{value}\n```") } else { value.to_string() };
        let answer = read_answer(&text, &support());
        let typed = read_typed::<Support>(&text, support);
        if let Ok(read) = answer {
            match serde_json::from_value::<Support>(whole_quantities(read)) {
                Ok(expected) => prop_assert_eq!(typed, Ok(expected)),
                // A whole number past an i64 (`1e300`, `2^63`): the schema's
                // `integer` takes it, the Rust type cannot hold it.
                Err(_) => prop_assert_eq!(typed.map_err(|e| e.code()).err(), Some(ErrorCode::AnswerMismatch)),
            }
        }
    }

    /// No text makes the reading panic.
    #[test]
    fn never_panics(text in "\\PC{0,80}", json_ish in "[\\[\\]{}\":,0-9a-z\\\\ eE.+\\-`\n]{0,80}") {
        for text in [&text, &json_ish] {
            let _ = read_answer(text, &support());
            let _ = read_typed::<Support>(text, support);
            let tool = Tool::new("t", None, support(), at());
            let _ = read_arguments(text, &tool);
        }
    }

    /// A valid answer cut anywhere (or with a byte changed) is refused
    /// with a location, never a panic.
    #[test]
    fn cut_and_changed_answers(cut in 0usize..200, at_byte in 0usize..200, byte in 0u8..128) {
        let text = format!("```json\n{VALID}\n```");
        let end = cut.min(text.len());
        let _ = read_answer(&text[..end], &support());
        let mut bytes = text.into_bytes();
        let i = at_byte.min(bytes.len() - 1);
        bytes[i] = byte;
        if let Ok(changed) = String::from_utf8(bytes)
            && let Err(error) = read_answer(&changed, &support())
        {
            prop_assert!(error.diagnostics().iter().all(|d| d.location.is_some()));
        }
    }
}

/// The value with every whole `quantity` an integer, as serde reads an
/// `i64` (written apart from the module's own normalization, which it
/// checks).
fn whole_quantities(mut value: Value) -> Value {
    if let Some(lines) = value.get_mut("lines").and_then(Value::as_array_mut) {
        for line in lines {
            if let Some(q) = line.get_mut("quantity")
                && let Some(f) = q.as_f64()
                && !q.is_i64()
                && !q.is_u64()
                && (-9.2e18..9.2e18).contains(&f)
            {
                *q = json!(f as i64);
            }
        }
    }
    value
}

/// The schema with every `"type": ["integer", "null"]` written `"anyOf":
/// [{"type": "integer"}, {"type": "null"}]`, which JSON Schema defines to
/// mean the same. jsonschema 0.33 does not treat them the same: a type
/// list counts a float with no fractional part (`1.0`) as a number only
/// (`JsonTypeSet::contains_value_type`), while a lone `"integer"` takes it,
/// as the specification says (draft 6 on: "a number with a zero fractional
/// part"). The union keeps the oracle to the specification.
fn integer_unions_spelled_out(mut schema: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.get("type") == Some(&json!(["integer", "null"])) {
                    map.shift_remove("type");
                    map.insert(
                        "anyOf".into(),
                        json!([{"type": "integer"}, {"type": "null"}]),
                    );
                }
                map.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}

/// The differential test sees both verdicts often: values that fit and
/// values that do not, in a fixed sample of the same generators.
#[test]
fn the_generated_values_both_fit_and_miss() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = schema_and_value();
    let (mut fit, mut missed) = (0, 0);
    for _ in 0..500 {
        let (schema, value) = strategy
            .new_tree(&mut runner)
            .expect("a generated case")
            .current();
        match read_answer(&value.to_string(), &schema) {
            Ok(_) => fit += 1,
            Err(_) => missed += 1,
        }
    }
    assert!(fit >= 100 && missed >= 100, "{fit} fit, {missed} missed");
}
