//! The `answer` section: reading a model's answer (a ~2 KB JSON object: nested objects, lists,
//! strings with escapes and non-ASCII text, pretty-printed as models send it) against the
//! prompt's response schema, with `promptpack_core::answer`, against serde_json reading the same
//! JSON without any schema:
//!
//! 1. into a hand-written serde type: `serde_json::from_str` (the baseline) against
//!    `read_typed` on the bare answer, on the answer in a ```` ```json ```` fence with a sentence
//!    before and after, and on an answer serde refuses but the schema takes (one `quantity`
//!    written `2.0`: the slow path, the schema built and checked, the value read again);
//! 2. into a `serde_json::Value`: `serde_json::from_str::<Value>` (the baseline) against
//!    `read_answer` (found, read with the place of every value, checked against the schema,
//!    made a `Value`) on the bare and on the fenced answer.
//!
//! Every row's result is compared with its baseline's before anything is timed.

use crate::harness::{
    Contender, Mode, allocations, checked, err, rows_against_baselines, time_all,
};
use promptpack_core::Location;
use promptpack_core::answer::{read_answer, read_typed};
use promptpack_core::schema::{Property, Schema, SchemaKind};
use serde::Deserialize;
use serde_json::Value;
use std::hint::black_box;

/// The answer: what a support model sends for a refund with six order lines.
const ANSWER: &str = r#"{
  "reply": "Hello Ms. Lindqvist,\n\nthank you for writing to us. I checked order A-1742: two of the six items (the \"Nordic\" wool throw and one ceramic mug) arrived damaged, and the courier confirmed it. I have refunded them in full — 42.50 € — to the card ending in 4417; banks take 3–5 working days to show it.\n\nThe other four items are on their way back to our warehouse in Göteborg. Nothing else is needed from you.\n\nKind regards,\nAino from Huset support",
  "category": "billing",
  "order": "A-1742",
  "refund": {
    "amount": 42.5,
    "currency": "EUR",
    "reason": "damaged in transit (courier report CR-99812)"
  },
  "lines": [
    {"sku": "THR-NORD-01", "name": "\"Nordic\" wool throw, 130×170 cm", "quantity": 1, "price": 29.0, "note": "damaged: torn seam"},
    {"sku": "MUG-CER-12", "name": "Ceramic mug — sand", "quantity": 2, "price": 6.75, "note": "one of two damaged"},
    {"sku": "CND-SOY-03", "name": "Soy candle, 3-pack", "quantity": 1, "price": 14.9, "note": null},
    {"sku": "TWL-LIN-40", "name": "Linen towel 40×60", "quantity": 4, "price": 8.5, "note": null},
    {"sku": "VAS-GLS-07", "name": "Glass vase \\ tall", "quantity": 1, "price": 19.95, "note": null},
    {"sku": "CUS-VEL-45", "name": "Velvet cushion 45×45", "quantity": 2, "price": 17.0, "note": "colour: moss"}
  ],
  "steps": [
    "Refund THR-NORD-01 and one MUG-CER-12 to the original card (42.50 EUR).",
    "Send the customer a prepaid return label for the other four lines.",
    "Flag courier report CR-99812 for the carrier claim.",
    "Close the ticket once the return is scanned at Göteborg."
  ],
  "tags": ["refund", "damaged"],
  "confidence": 0.92
}"#;

#[derive(Debug, PartialEq, Deserialize)]
struct Answer {
    reply: String,
    category: Category,
    order: Option<String>,
    refund: Option<Refund>,
    lines: Vec<Line>,
    steps: Vec<String>,
    tags: Option<Vec<Tag>>,
    confidence: f64,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Category {
    Billing,
    Shipping,
    Other,
}

#[derive(Debug, PartialEq, Deserialize)]
struct Refund {
    amount: f64,
    currency: Currency,
    reason: String,
}

#[derive(Debug, PartialEq, Deserialize)]
enum Currency {
    #[serde(rename = "EUR")]
    Eur,
    #[serde(rename = "USD")]
    Usd,
}

#[derive(Debug, PartialEq, Deserialize)]
struct Line {
    sku: String,
    name: String,
    quantity: i64,
    price: f64,
    note: Option<String>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Tag {
    Refund,
    Damaged,
    Urgent,
    Vip,
}

/// The response schema `Answer` is the type of, as front matter would declare it.
fn schema() -> Schema {
    let at = || Location::file("bench/answer");
    let field = |name: &str, schema: Schema| Property::new(name, schema, at());
    let kind = Schema::new;
    let words = |words: &[&str]| SchemaKind::Enum(words.iter().map(|w| w.to_string()).collect());
    let object = |fields: Vec<Property>| kind(SchemaKind::Object(fields));
    let list = |item: Schema| kind(SchemaKind::Array(Box::new(item)));
    object(vec![
        field("reply", kind(SchemaKind::String)),
        field("category", kind(words(&["billing", "shipping", "other"]))),
        field("order", kind(SchemaKind::String).nullable()),
        field(
            "refund",
            object(vec![
                field("amount", kind(SchemaKind::Number)),
                field("currency", kind(words(&["EUR", "USD"]))),
                field("reason", kind(SchemaKind::String)),
            ])
            .nullable(),
        ),
        field(
            "lines",
            list(object(vec![
                field("sku", kind(SchemaKind::String)),
                field("name", kind(SchemaKind::String)),
                field("quantity", kind(SchemaKind::Integer)),
                field("price", kind(SchemaKind::Number)),
                field("note", kind(SchemaKind::String).nullable()),
            ])),
        ),
        field("steps", list(kind(SchemaKind::String))),
        field(
            "tags",
            list(kind(words(&["refund", "damaged", "urgent", "vip"]))).nullable(),
        ),
        field("confidence", kind(SchemaKind::Number)),
    ])
}

/// `&'static` for what the contenders borrow for the whole run.
fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

/// The answer as models wrap it: a sentence, a fence, a remark after.
fn fenced() -> String {
    format!(
        "Here is the structured answer for the ticket:\n\n```json\n{ANSWER}\n```\n\nLet me know \
         if anything should change."
    )
}

/// The answer with the second line's `"quantity": 2` written `2.0`: serde refuses it for an
/// `i64`, the schema's `integer` takes it.
fn whole_float() -> String {
    ANSWER.replacen("\"quantity\": 2,", "\"quantity\": 2.0,", 1)
}

const TYPED_BASE: &str = "serde_json::from_str::<Answer> (bare)";
const VALUE_BASE: &str = "serde_json::from_str::<Value> (bare)";

/// The rows, in order; each row's ratio is to the baseline of its group (the row named by
/// `base`).
const ROWS: [(&str, &str); 8] = [
    (TYPED_BASE, TYPED_BASE),
    ("read_typed::<Answer> (bare)", TYPED_BASE),
    (
        "prompty 2.1 `structured::cast::<Answer>` (bare)",
        TYPED_BASE,
    ),
    (
        "read_typed::<Answer> (json fence, prose around)",
        TYPED_BASE,
    ),
    (
        "read_typed::<Answer> (`2.0` for an integer: slow path)",
        TYPED_BASE,
    ),
    (VALUE_BASE, VALUE_BASE),
    ("read_answer → Value (bare)", VALUE_BASE),
    ("read_answer → Value (json fence, prose around)", VALUE_BASE),
];

/// The bytes an answer read holds, summed while timed so that nothing is optimized away.
fn answer_bytes(a: &Answer) -> usize {
    a.reply.len()
        + a.lines
            .iter()
            .map(|l| l.sku.len() + l.name.len())
            .sum::<usize>()
}

fn value_bytes(v: &Value) -> usize {
    v.as_object().map_or(0, |o| o.len())
}

/// The section's contenders, each checked against its baseline's result.
pub fn contenders() -> Vec<Contender<'static>> {
    let expected = match serde_json::from_str::<Answer>(ANSWER) {
        Ok(a) => leak(a),
        Err(e) => {
            return ROWS
                .iter()
                .map(|&(name, _)| Contender::failed(name, "", format!("the answer: {e}")))
                .collect();
        }
    };
    let expected_value: &'static Value = leak(serde_json::from_str(ANSWER).unwrap_or_default());
    let typed = |a: &Answer| {
        if a == expected {
            Ok(())
        } else {
            Err(format!("differs: {a:?}"))
        }
    };
    let value = |v: &Value| {
        if v == expected_value {
            Ok(())
        } else {
            Err(format!("differs: {v}"))
        }
    };
    let fenced: &'static str = leak(fenced());
    let whole: &'static str = leak(whole_float());
    let schema: &'static Schema = leak(schema());
    let mut list = Vec::new();
    list.push(checked(
        ROWS[0].0,
        "serde alone, no schema; `from_str` checks nothing follows the value",
        typed,
        answer_bytes,
        || serde_json::from_str::<Answer>(black_box(ANSWER)).map_err(err),
    ));
    list.push(checked(
        ROWS[1].0,
        "finds the JSON (the text starts with `{`), serde from the text; schema not built",
        typed,
        answer_bytes,
        || read_typed::<Answer>(black_box(ANSWER), self::schema).map_err(err),
    ));
    // Prompty's reading of a structured output: the model's text as a JSON string value,
    // `cast` copies it out and runs serde on it (no fence or prose tolerated, no schema,
    // errors as serde's message).
    let as_value: &'static Value = leak(Value::String(ANSWER.to_string()));
    list.push(checked(
        ROWS[2].0,
        "the answer as a JSON string value, copied out, serde on it; no wrapping, no schema",
        typed,
        answer_bytes,
        move || {
            prompty::structured::cast::<Answer>(black_box(as_value), None)
                .map_err(|e| e.to_string())
        },
    ));
    list.push(checked(
        ROWS[3].0,
        "the fence found (its marks searched for), then serde from its `{`; schema not built",
        typed,
        answer_bytes,
        move || read_typed::<Answer>(black_box(fenced), self::schema).map_err(err),
    ));
    list.push(checked(
        ROWS[4].0,
        "serde refuses `2.0` for an `i64`; the schema built, the answer read and checked, \
         whole numbers made integers, serde from the `Value`",
        typed,
        answer_bytes,
        move || read_typed::<Answer>(black_box(whole), self::schema).map_err(err),
    ));
    list.push(checked(
        ROWS[5].0,
        "serde alone, no schema",
        value,
        value_bytes,
        || serde_json::from_str::<Value>(black_box(ANSWER)).map_err(err),
    ));
    list.push(checked(
        ROWS[6].0,
        "located tree (a span per value and key), checked against the schema, made a `Value`",
        value,
        value_bytes,
        move || read_answer(black_box(ANSWER), schema).map_err(err),
    ));
    list.push(checked(
        ROWS[7].0,
        "the same, after finding the fence",
        value,
        value_bytes,
        move || read_answer(black_box(fenced), schema).map_err(err),
    ));
    list
}

/// The section: every row timed together, each ratio to its group's baseline of the same run.
pub fn section(mode: &Mode) -> String {
    let mut list = contenders();
    let allocs: Vec<Option<f64>> = list.iter_mut().map(|c| allocations(c, 1_000)).collect();
    time_all(&mut list, mode);
    let mut out = format!(
        "## Answer: a {}-byte model answer read against its response schema\n\n\
         A support answer (nested objects, a list of six objects, strings with escapes and \
         non-ASCII text, pretty-printed), bare and in a ```` ```json ```` fence with prose \
         around ({} bytes). Typed rows read a hand-written serde type (8 fields, 5 in each \
         line); ratios are to serde_json reading the bare answer into the same type (or into a \
         `Value`) in the same run. {} rounds, interleaved; batches of about {:?}. Every row's \
         result was checked against its baseline's first. Allocations: allocator calls per \
         read, counted over 1,000 reads.\n\n\
         | contender | median ns/read | × baseline | min ns/read | allocs/read | notes |\n\
         |---|---:|---:|---:|---:|---|\n",
        ANSWER.len(),
        fenced().len(),
        mode.rounds,
        mode.batch_target
    );
    let bases: Vec<&str> = ROWS.iter().map(|&(_, base)| base).collect();
    out.push_str(&rows_against_baselines(&mut list, &allocs, &bases));
    out
}
