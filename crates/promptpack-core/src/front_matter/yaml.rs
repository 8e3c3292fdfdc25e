//! YAML into a tree whose every node knows where it was written: what lets
//! each front matter problem point at its line in the `.md` file.

use crate::error::{Diagnostic, ErrorCode};
use crate::source_file::{SourceFile, Span};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// A YAML value, its children located.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Yaml {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Seq(Vec<Node>),
    /// Pairs in the order written (YAML maps keep no order of their own,
    /// but a reader expects the first example to be the first written).
    Map(Vec<(Node, Node)>),
}

/// A value and the bytes of the file it was written at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: Yaml,
    pub(crate) span: Span,
}

impl Yaml {
    /// What the value is, for "expected …, found …" messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Yaml::Null => "nothing",
            Yaml::Bool(_) => "a boolean",
            Yaml::Number(_) => "a number",
            Yaml::String(_) => "a string",
            Yaml::Seq(_) => "a list",
            Yaml::Map(_) => "a map",
        }
    }

    /// The value as JSON: what free-form fields hand the application.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Yaml::Null => Value::Null,
            Yaml::Bool(b) => Value::Bool(*b),
            Yaml::Number(n) => Value::Number(n.clone()),
            Yaml::String(s) => Value::String(s.clone()),
            Yaml::Seq(items) => Value::Array(items.iter().map(|n| n.value.to_json()).collect()),
            Yaml::Map(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.value.key_text(), v.value.to_json()))
                    .collect(),
            ),
        }
    }

    /// A map key as text: YAML allows `1:` or `true:` as keys, JSON does not.
    pub(crate) fn key_text(&self) -> String {
        match self {
            Yaml::String(s) => s.clone(),
            Yaml::Null => "null".to_string(),
            Yaml::Bool(b) => b.to_string(),
            Yaml::Number(n) => n.to_string(),
            other => other.to_json().to_string(),
        }
    }
}

/// What serde-saphyr hands back: a value and its place in the YAML text.
struct Raw {
    value: RawYaml,
    at: serde_saphyr::Location,
}

enum RawYaml {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Seq(Vec<Raw>),
    Map(Vec<(Raw, Raw)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Raw, D::Error> {
        let spanned = Spanned::<RawYaml>::deserialize(deserializer)?;
        Ok(Raw {
            value: spanned.value,
            at: spanned.referenced,
        })
    }
}

impl<'de> Deserialize<'de> for RawYaml {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RawYaml, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawYaml;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawYaml, E> {
        Ok(RawYaml::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawYaml, E> {
        Ok(RawYaml::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawYaml, E> {
        Ok(RawYaml::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawYaml, E> {
        serde_json::Number::from_f64(v)
            .map(RawYaml::Number)
            .ok_or_else(|| E::custom(format!("{v} is not a number JSON can hold")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawYaml, E> {
        Ok(RawYaml::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<RawYaml, E> {
        Ok(RawYaml::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<RawYaml, E> {
        Ok(RawYaml::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<RawYaml, E> {
        Ok(RawYaml::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawYaml, D::Error> {
        RawYaml::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawYaml, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Raw>()? {
            items.push(item);
        }
        Ok(RawYaml::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawYaml, A::Error> {
        let mut pairs = Vec::new();
        while let Some((key, value)) = map.next_entry::<Raw, Raw>()? {
            pairs.push((key, value));
        }
        Ok(RawYaml::Map(pairs))
    }
}

/// Most YAML a front matter block may hold, in parser events: far more than
/// any prompt's settings, few enough that an alias bomb or a block of a
/// million scalars is refused at once rather than built.
const MAX_EVENTS: usize = 100_000;

/// Parses the YAML at `yaml` in `file` (its front matter block). A syntax
/// error is `invalid_front_matter` at its line in the file.
pub(crate) fn parse_yaml(file: &SourceFile, yaml: Span) -> Result<Node, Diagnostic> {
    let text = file.slice(yaml);
    let mut options = serde_saphyr::Options::default();
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = MAX_EVENTS;
    budget.max_aliases = MAX_EVENTS / 10;
    budget.max_anchors = MAX_EVENTS / 10;
    options.budget = Some(budget);
    // YAML 1.2's booleans only: `no`, `on` or `y` (a country, a key, a
    // letter) stay text instead of turning into true or false.
    options.strict_booleans = true;
    options.with_snippet = false;
    let places = Places { text, base: yaml };
    match serde_saphyr::from_str_with_options::<Raw>(text, options) {
        Ok(raw) => Ok(places.node(raw)),
        Err(error) => {
            let span = error.location().map(|at| places.span(&at)).unwrap_or(Span {
                start: yaml.start,
                end: yaml.start,
            });
            let options = serde_saphyr::render_options! {
                snippets: serde_saphyr::SnippetMode::Off,
            };
            let message = error.render_with_options(options);
            Err(Diagnostic::new(
                ErrorCode::InvalidFrontMatter,
                format!(
                    "front matter is not valid YAML: {}",
                    plain_message(&message)
                ),
            )
            .at(file.location(span)))
        }
    }
}

/// serde-saphyr's message without the place it appends: the diagnostic
/// shows the place itself, in the `.md` file's lines.
fn plain_message(message: &str) -> &str {
    let first = message.lines().next().unwrap_or(message);
    match first.rfind(" at line ") {
        Some(at) => first[..at].trim_end(),
        None => first.trim_end(),
    }
}

/// Turns places in the YAML text into spans of the file.
struct Places<'t> {
    text: &'t str,
    base: Span,
}

impl Places<'_> {
    fn node(&self, raw: Raw) -> Node {
        let span = self.span(&raw.at);
        let value = match raw.value {
            RawYaml::Null => Yaml::Null,
            RawYaml::Bool(b) => Yaml::Bool(b),
            RawYaml::Number(n) => Yaml::Number(n),
            RawYaml::String(s) => Yaml::String(s),
            RawYaml::Seq(items) => Yaml::Seq(items.into_iter().map(|i| self.node(i)).collect()),
            RawYaml::Map(pairs) => Yaml::Map(
                pairs
                    .into_iter()
                    .map(|(k, v)| (self.node(k), self.node(v)))
                    .collect(),
            ),
        };
        Node { value, span }
    }

    /// The file span of a serde-saphyr location: its byte offset when it
    /// has one, else its line and column counted in the YAML text.
    fn span(&self, at: &serde_saphyr::Location) -> Span {
        let in_yaml = match at.span().byte_offset() {
            Some(offset) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                let len = at
                    .span()
                    .byte_len()
                    .and_then(|l| usize::try_from(l).ok())
                    .unwrap_or(0);
                start..start.saturating_add(len)
            }
            None => {
                let start = self.offset_of(at.line(), at.column());
                start..start
            }
        };
        let start = self.base.start + in_yaml.start.min(self.text.len());
        let end = self.base.start + in_yaml.end.min(self.text.len());
        Span {
            start,
            end: end.max(start),
        }
    }

    fn offset_of(&self, line: u64, column: u64) -> usize {
        let line_start: usize = self
            .text
            .split_inclusive('\n')
            .take(usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX))
            .map(str::len)
            .sum();
        let rest = &self.text[line_start..];
        let skip = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
        line_start
            + rest
                .char_indices()
                .nth(skip)
                .map_or(rest.len(), |(at, _)| at)
    }
}
