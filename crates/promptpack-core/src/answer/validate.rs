//! A located JSON tree checked against a [`Schema`], with the semantics of
//! exactly the JSON Schema [`Schema::json_schema`] emits: closed objects,
//! every property required, `null` only where the schema is nullable, an
//! `integer` any number without a fractional part (`1.0` too, as JSON
//! Schema counts it), an enum's strings exactly.
//!
//! Every problem is reported (up to [`MAX_PROBLEMS`]), in the order of the
//! text, each at the value or key it is about, with the JSON path of the
//! place and what the schema wanted there: an answer sent back to the model
//! with its mistakes is fixed in one more turn, not one per mistake.

use super::Problem;
use super::json::{Member, Node, NodeValue};
use crate::schema::{Property, Schema, SchemaKind};
use crate::similar::nearest;
use crate::source_file::Span;
use std::fmt::Write;

/// The most problems reported of one answer: an answer of the wrong shape
/// altogether (a list of a thousand wrong objects) would otherwise make a
/// message as long as itself.
pub(crate) const MAX_PROBLEMS: usize = 20;

/// The problems of `node` against `schema`, in the order of the text;
/// empty when the schema takes it.
pub(crate) fn validate(node: &Node, schema: &Schema) -> Vec<Problem> {
    let mut validator = Validator {
        path: Vec::new(),
        problems: Vec::new(),
    };
    validator.check(node, schema);
    validator.problems
}

/// A step of a JSON path.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

struct Validator<'a> {
    /// Where the value being checked is, from the root.
    path: Vec<Step<'a>>,
    problems: Vec<Problem>,
}

impl<'a> Validator<'a> {
    fn check(&mut self, node: &'a Node, schema: &Schema) {
        if self.problems.len() >= MAX_PROBLEMS {
            return;
        }
        if schema.nullable && node.value == NodeValue::Null {
            return;
        }
        match (&schema.kind, &node.value) {
            (SchemaKind::String, NodeValue::String(_))
            | (SchemaKind::Number, NodeValue::Number(_))
            | (SchemaKind::Boolean, NodeValue::Bool(_)) => {}
            (SchemaKind::Integer, NodeValue::Number(n)) if is_integer(n) => {}
            (SchemaKind::Enum(values), NodeValue::String(s)) => {
                if !values.iter().any(|v| v == s) {
                    self.not_in_enum(node, s, values, schema);
                }
            }
            (SchemaKind::Array(item), NodeValue::Array(items)) => {
                for (index, value) in items.iter().enumerate() {
                    self.path.push(Step::Index(index));
                    self.check(value, item);
                    self.path.pop();
                }
            }
            (SchemaKind::Object(properties), NodeValue::Object(members)) => {
                self.object(node, properties, members);
            }
            _ => {
                let message = format!(
                    "{}: expected {}, found {}",
                    self.path(),
                    schema.wanted(),
                    node.found()
                );
                // An object or a list is pointed at by its opening
                // bracket: the whole of it may be pages long.
                let span = match node.value {
                    NodeValue::Array(_) | NodeValue::Object(_) => Span {
                        start: node.span.start,
                        end: node.span.start + 1,
                    },
                    _ => node.span,
                };
                self.problems.push(Problem::new(span, message));
            }
        }
    }

    fn object(&mut self, node: &'a Node, properties: &[Property], members: &'a [Member]) {
        let first = self.problems.len();
        let mut seen = Seen::new(properties.len());
        for member in members {
            let Some(index) = properties.iter().position(|p| p.name == member.key) else {
                self.unknown(member, properties);
                continue;
            };
            self.path.push(Step::Key(&member.key));
            if seen.insert(index) {
                self.check(&member.value, &properties[index].schema);
            } else if self.problems.len() < MAX_PROBLEMS {
                let message = format!("{}: the field is given twice", self.path());
                self.problems
                    .push(Problem::new(member.key_span, message).with_help(
                        "a field is written once; readers disagree on which of two they keep",
                    ));
            }
            self.path.pop();
        }
        let missing: Vec<&Property> = properties
            .iter()
            .enumerate()
            .filter(|(index, _)| !seen.contains(*index))
            .map(|(_, p)| p)
            .collect();
        if missing.is_empty() {
            return;
        }
        let names: Vec<String> = missing.iter().map(|p| format!("`{}`", p.name)).collect();
        let message = match names.as_slice() {
            [one] => format!("{}: the field {one} is missing", self.path()),
            many => format!(
                "{}: the fields {} are missing",
                self.path(),
                many.join(", ")
            ),
        };
        let brace = Span {
            start: node.span.start,
            end: node.span.start + 1,
        };
        let mut problem = Problem::new(brace, message);
        if let Some(optional) = missing.iter().find(|p| p.schema.nullable) {
            problem = problem.with_help(format!(
                "every field is written, an optional one as `null` when it has no value: `\"{}\": null`",
                optional.name
            ));
        }
        // Before the problems of the object's members: the brace comes
        // first in the text.
        let first = first.min(self.problems.len());
        self.problems.insert(first, problem);
        self.problems.truncate(MAX_PROBLEMS);
    }

    fn unknown(&mut self, member: &Member, properties: &[Property]) {
        if self.problems.len() >= MAX_PROBLEMS {
            return;
        }
        let message = format!("{}: the object has no field `{}`", self.path(), member.key);
        let names: Vec<&str> = properties.iter().map(|p| p.name.as_str()).collect();
        let listed = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let help = match (
            names.is_empty(),
            nearest(&member.key, names.iter().copied(), 1).first(),
        ) {
            (true, _) => "this object declares no field: it is written `{}`".to_string(),
            (false, Some(near)) => format!("did you mean `{near}`? The fields are: {listed}"),
            (false, None) => format!("the fields are: {listed}"),
        };
        self.problems
            .push(Problem::new(member.key_span, message).with_help(help));
    }

    fn not_in_enum(&mut self, node: &Node, found: &str, values: &[String], schema: &Schema) {
        let message = format!(
            "{}: expected {}, found {}",
            self.path(),
            schema.wanted(),
            quoted(found)
        );
        let mut problem = Problem::new(node.span, message);
        if let Some(near) = nearest(found, values.iter().map(String::as_str), 1).first() {
            problem = problem.with_help(format!("did you mean {near:?}?"));
        }
        self.problems.push(problem);
    }

    /// The JSON path of the value being checked, in backquotes: `` `$.refund.amount` ``,
    /// `` `$.lines[2]` ``, `` `$["odd key"]` ``.
    fn path(&self) -> String {
        let mut out = String::from("`$");
        for step in &self.path {
            match step {
                Step::Key(key) if is_identifier(key) => {
                    out.push('.');
                    out.push_str(key);
                }
                Step::Key(key) => {
                    let _ = write!(out, "[{}]", serde_json::Value::from(*key));
                }
                Step::Index(index) => {
                    let _ = write!(out, "[{index}]");
                }
            }
        }
        out.push('`');
        out
    }
}

/// Whether JSON Schema's `integer` takes a number: any without a
/// fractional part, `1.0` and `1e3` as well as `1`.
pub(crate) fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// A path step written `.key`: a name JavaScript would take there.
fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// A string of the answer as a message shows it: quoted, and cut after 40
/// characters (an answer's value may be a page long).
fn quoted(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((end, _)) => format!("{:?}…", &s[..end]),
        None => format!("{s:?}"),
    }
}

/// Which of an object's properties have been seen: bits in a word for the
/// objects of every real schema, a vector past 64 properties, so that
/// checking an object allocates nothing.
enum Seen {
    Word(u64),
    Many(Vec<bool>),
}

impl Seen {
    fn new(len: usize) -> Seen {
        if len <= 64 {
            Seen::Word(0)
        } else {
            Seen::Many(vec![false; len])
        }
    }

    /// Marks `index` seen; false when it was already.
    fn insert(&mut self, index: usize) -> bool {
        match self {
            Seen::Word(bits) => {
                let bit = 1u64 << index;
                let new = *bits & bit == 0;
                *bits |= bit;
                new
            }
            Seen::Many(seen) => !std::mem::replace(&mut seen[index], true),
        }
    }

    fn contains(&self, index: usize) -> bool {
        match self {
            Seen::Word(bits) => bits & (1u64 << index) != 0,
            Seen::Many(seen) => seen[index],
        }
    }
}
