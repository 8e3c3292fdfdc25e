//! YAML into a tree whose every node knows where it was written: what lets
//! each front matter problem point at its line in the `.md` file.
//!
//! granit-parser turns the text into events; this file builds the tree from
//! them under YAML 1.2's core schema. It is the one place that decides what a
//! plain scalar means, so the rules front matter promises are here to read:
//! only `true` and `false` are booleans (`yes`, `no`, `on`, `y` stay text), a
//! key set twice in a map is refused, and the work done is bounded whatever
//! the input (anchors and aliases included).

use crate::error::{Diagnostic, ErrorCode};
use crate::source_file::{SourceFile, Span};
use granit_parser::{Event, Parser, ScalarStyle, ScanError, Tag};
use std::collections::{HashMap, HashSet};

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

/// Most YAML nodes a front matter block may build, aliases counted at the
/// size of what they copy: far more than any prompt's settings, few enough
/// that an alias bomb or a block of a million scalars is refused at once
/// rather than built.
const MAX_NODES: usize = 100_000;

/// Parses the YAML at `yaml` in `file` (its front matter block). A syntax
/// error, a key set twice, a tag front matter does not know, or more YAML
/// than [`MAX_NODES`] is `invalid_front_matter` at its place in the file.
pub(crate) fn parse_yaml(file: &SourceFile, yaml: Span) -> Result<Node, Diagnostic> {
    let text = file.slice(yaml);
    let refuse = |span: Span, message: String| {
        Diagnostic::new(
            ErrorCode::InvalidFrontMatter,
            format!("front matter is not valid YAML: {message}"),
        )
        .at(file.location(span))
    };
    let mut builder = Builder {
        places: Places { text, base: yaml },
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        root: None,
        documents: 0,
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, at) = match next {
            Ok(event) => event,
            Err(error) => {
                let span = builder.places.error_span(&error);
                return Err(refuse(span, scan_message(&error)));
            }
        };
        let span = builder.places.span(at.start, at.end);
        builder
            .event(event, span)
            .map_err(|(span, message)| refuse(span, message))?;
    }
    Ok(builder.root.unwrap_or(Node {
        value: Yaml::Null,
        span: Span {
            start: yaml.start,
            end: yaml.start,
        },
    }))
}

/// The parser's message, without its own place: the diagnostic shows the
/// place itself, in the `.md` file's lines.
fn scan_message(error: &ScanError) -> String {
    let info = error.info();
    let first = info.lines().next().unwrap_or_default().trim();
    if first.is_empty() {
        "the YAML parser stopped here".to_string()
    } else {
        first.to_string()
    }
}

/// A collection being read, and what it has so far.
enum Open {
    Seq {
        items: Vec<Node>,
        start: Span,
        anchor: usize,
        size: usize,
    },
    Map {
        pairs: Vec<(Node, Node)>,
        key: Option<Node>,
        seen: HashSet<String>,
        start: Span,
        anchor: usize,
        size: usize,
    },
}

/// A problem and where it is.
type Refusal = (Span, String);

/// Builds the tree from the parser's events, without recursion: an open
/// collection is a frame on `stack`, so nesting costs heap, not stack.
struct Builder<'t> {
    places: Places<'t>,
    stack: Vec<Open>,
    /// Anchored nodes by the parser's anchor id, with their sizes in nodes.
    anchors: HashMap<usize, (Node, usize)>,
    /// Nodes built so far, each alias counted at the size of its copy.
    nodes: usize,
    root: Option<Node>,
    documents: usize,
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), Refusal> {
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Ok(()),
            Event::DocumentStart(..) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err((span, "front matter holds one YAML document".to_string()));
                }
                Ok(())
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.count(span, 1)?;
                let value = scalar(&text, style, tag.as_deref()).map_err(|m| (span, m))?;
                self.finish(Node { value, span }, anchor, 1)
            }
            Event::SequenceStart(_, anchor, tag) => {
                self.count(span, 1)?;
                collection_tag(tag.as_deref(), "seq").map_err(|m| (span, m))?;
                self.stack.push(Open::Seq {
                    items: Vec::new(),
                    start: span,
                    anchor,
                    size: 1,
                });
                Ok(())
            }
            Event::MappingStart(_, anchor, tag) => {
                self.count(span, 1)?;
                collection_tag(tag.as_deref(), "map").map_err(|m| (span, m))?;
                self.stack.push(Open::Map {
                    pairs: Vec::new(),
                    key: None,
                    seen: HashSet::new(),
                    start: span,
                    anchor,
                    size: 1,
                });
                Ok(())
            }
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Open::Seq {
                    items,
                    start,
                    anchor,
                    size,
                }) => self.finish(
                    Node {
                        value: Yaml::Seq(items),
                        span: start,
                    },
                    anchor,
                    size,
                ),
                Some(Open::Map {
                    pairs,
                    start,
                    anchor,
                    size,
                    ..
                }) => self.finish(
                    Node {
                        value: Yaml::Map(pairs),
                        span: start,
                    },
                    anchor,
                    size,
                ),
                None => Err((span, "a collection ends that never began".to_string())),
            },
            Event::Alias(anchor) => {
                let Some((node, size)) = self.anchors.get(&anchor) else {
                    return Err((span, "an alias names no anchor before it".to_string()));
                };
                let (mut node, size) = (node.clone(), *size);
                self.count(span, size)?;
                // The copy is shown where the alias is written.
                node.span = span;
                self.finish(node, 0, size)
            }
            // Anchor names, comments and unresolved aliases come only when
            // the parser's options ask for them, and none is asked for.
            _ => Ok(()),
        }
    }

    /// Counts `size` more nodes against [`MAX_NODES`].
    fn count(&mut self, span: Span, size: usize) -> Result<(), Refusal> {
        self.nodes = self.nodes.saturating_add(size);
        if self.nodes > MAX_NODES {
            return Err((
                span,
                format!(
                    "more than {MAX_NODES} values (aliases count as many as they copy); front matter is for a prompt's settings"
                ),
            ));
        }
        Ok(())
    }

    /// Puts a finished node where it belongs: in the collection open
    /// around it, or as the document's root.
    fn finish(&mut self, node: Node, anchor: usize, size: usize) -> Result<(), Refusal> {
        if anchor != 0 {
            self.count(node.span, size)?;
            self.anchors.insert(anchor, (node.clone(), size));
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Open::Seq {
                items, size: total, ..
            }) => {
                items.push(node);
                *total = total.saturating_add(size);
            }
            Some(Open::Map {
                pairs,
                key,
                seen,
                size: total,
                ..
            }) => {
                *total = total.saturating_add(size);
                match key.take() {
                    Some(key) => pairs.push((key, node)),
                    None => {
                        let text = node.value.key_text();
                        if !seen.insert(text.clone()) {
                            return Err((
                                node.span,
                                format!("the key `{text}` is set twice in this map"),
                            ));
                        }
                        *key = Some(node);
                    }
                }
            }
        }
        Ok(())
    }
}

/// What a scalar means under YAML 1.2's core schema: a tag says it, else a
/// plain scalar is resolved by its text and a quoted or block one is text.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Yaml, String> {
    let Some(tag) = tag else {
        return match style {
            ScalarStyle::Plain => plain(text),
            _ => Ok(Yaml::String(text.to_string())),
        };
    };
    let wanted = match tag.core_suffix() {
        Some(suffix) if tag.is_yaml_core_schema() => suffix,
        // `!` alone: "not a plain scalar", so text.
        _ if tag.handle() == "!" && tag.suffix().is_empty() => "str",
        _ => {
            return Err(format!(
                "front matter does not know the tag `{}`",
                tag_text(tag)
            ));
        }
    };
    if wanted == "str" {
        return Ok(Yaml::String(text.to_string()));
    }
    let value = plain(text)?;
    let found = match &value {
        Yaml::Null => "null",
        Yaml::Bool(_) => "bool",
        Yaml::Number(n) if n.is_f64() => "float",
        Yaml::Number(_) => "int",
        _ => "str",
    };
    let fits = found == wanted || (wanted == "float" && found == "int");
    if fits {
        Ok(value)
    } else {
        Err(format!("`{text}` is not what its tag `!!{wanted}` says"))
    }
}

/// A collection's tag: none, or the core schema's own for its kind.
fn collection_tag(tag: Option<&Tag>, kind: &str) -> Result<(), String> {
    match tag {
        None => Ok(()),
        Some(tag) if tag.is_yaml_core_schema_tag(kind) => Ok(()),
        Some(tag) if tag.handle() == "!" && tag.suffix().is_empty() => Ok(()),
        Some(tag) => Err(format!(
            "front matter does not know the tag `{}`",
            tag_text(tag)
        )),
    }
}

fn tag_text(tag: &Tag) -> String {
    format!("{}{}", tag.original_handle(), tag.suffix())
}

/// A plain scalar resolved as YAML 1.2's core schema says: null, a boolean
/// (`true`/`false` in three cases each, nothing else), an integer (decimal,
/// `0o` octal, `0x` hexadecimal), a float, or else text.
fn plain(text: &str) -> Result<Yaml, String> {
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Yaml::Null,
        "true" | "True" | "TRUE" => Yaml::Bool(true),
        "false" | "False" | "FALSE" => Yaml::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            return Err(format!("{text} is not a number JSON can hold"));
        }
        _ => match number(text) {
            Some(number) => Yaml::Number(number),
            None => Yaml::String(text.to_string()),
        },
    })
}

/// The number a plain scalar spells, if it spells one. An integer too large
/// for 64 bits becomes the nearest double, as JSON readers do.
fn number(text: &str) -> Option<serde_json::Number> {
    let radix = |digits: &str, radix: u32| {
        (!digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)))
            .then(|| u64::from_str_radix(digits, radix).ok())
            .flatten()
            .map(serde_json::Number::from)
    };
    if let Some(octal) = text.strip_prefix("0o") {
        return radix(octal, 8);
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return radix(hex, 16);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<i64>() {
            return Some(n.into());
        }
        if let Ok(n) = unsigned.parse::<u64>()
            && !text.starts_with('-')
        {
            return Some(n.into());
        }
        return text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64);
    }
    is_core_float(unsigned)
        .then(|| text.parse::<f64>().ok())
        .flatten()
        .and_then(serde_json::Number::from_f64)
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, the core schema's float
/// without its sign.
fn is_core_float(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty())
        }
        None => !mantissa.is_empty() && digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// Turns places in the YAML text into spans of the file.
struct Places<'t> {
    text: &'t str,
    base: Span,
}

impl Places<'_> {
    /// The file span between two parser markers.
    fn span(&self, start: granit_parser::Marker, end: granit_parser::Marker) -> Span {
        let start = self.offset(start);
        let end = self.offset(end).max(start);
        Span {
            start: self.base.start + start,
            end: self.base.start + end,
        }
    }

    fn error_span(&self, error: &ScanError) -> Span {
        let at = *error.marker();
        self.span(at, at)
    }

    fn offset(&self, at: granit_parser::Marker) -> usize {
        // A parser of a `&str` gives every marker its byte offset; the
        // character index is the marker's other measure of the same place.
        let offset = at.byte_offset().unwrap_or_else(|| {
            self.text
                .char_indices()
                .nth(at.index())
                .map_or(self.text.len(), |(byte, _)| byte)
        });
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<serde_json::Value, String> {
        let text = format!("---\n{yaml}---\n");
        let file = SourceFile::new("t/system.md", text.as_str());
        let span = Span {
            start: 4,
            end: 4 + yaml.len(),
        };
        parse_yaml(&file, span)
            .map(|node| node.value.to_json())
            .map_err(|d| d.message)
    }

    /// The core schema's plain scalars, and the YAML 1.1 spellings that
    /// stay text.
    #[test]
    fn plain_scalars_resolve_as_yaml_1_2_says() {
        let cases = [
            (
                "a: true\nb: False\nc: TRUE\n",
                r#"{"a":true,"b":false,"c":true}"#,
            ),
            (
                "a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\n",
                r#"{"a":"yes","b":"no","c":"on","d":"off","e":"y","f":"n"}"#,
            ),
            (
                "a: ~\nb: null\nc:\nd: NULL\n",
                r#"{"a":null,"b":null,"c":null,"d":null}"#,
            ),
            (
                "a: 12\nb: -3\nc: +4\nd: 0o17\ne: 0xff\nf: 012\n",
                r#"{"a":12,"b":-3,"c":4,"d":15,"e":255,"f":12}"#,
            ),
            (
                "a: 1.5\nb: .5\nc: 1e3\nd: -2.5E-1\ne: 1.\n",
                r#"{"a":1.5,"b":0.5,"c":1000.0,"d":-0.25,"e":1.0}"#,
            ),
            (
                "a: 18446744073709551615\nb: 18446744073709551616\n",
                r#"{"a":18446744073709551615,"b":1.8446744073709552e+19}"#,
            ),
            (
                "a: 1.2.3\nb: 0x\nc: 0o9\nd: e3\ne: '12'\nf: \"true\"\ng: !!str 5\n",
                r#"{"a":"1.2.3","b":"0x","c":"0o9","d":"e3","e":"12","f":"true","g":"5"}"#,
            ),
            ("a: !!float 3\nb: !!int 3\n", r#"{"a":3,"b":3}"#),
            ("1: one\ntrue: yes\n", r#"{"1":"one","true":"yes"}"#),
            ("a: &x [1, 2]\nb: *x\n", r#"{"a":[1,2],"b":[1,2]}"#),
            ("", "null"),
        ];
        for (yaml, json) in cases {
            assert_eq!(
                parse(yaml).map(|v| v.to_string()),
                Ok(json.to_string()),
                "{yaml:?}"
            );
        }
    }

    #[test]
    fn what_front_matter_refuses() {
        let cases = [
            ("a: 1\na: 2\n", "the key `a` is set twice"),
            ("1: a\n'1': b\n", "the key `1` is set twice"),
            ("a: .inf\n", "not a number JSON can hold"),
            ("a: .nan\n", "not a number JSON can hold"),
            ("a: !!int x\n", "is not what its tag `!!int` says"),
            ("a: !custom x\n", "does not know the tag `!custom`"),
            ("a: !!set {}\n", "does not know the tag"),
            ("a: [1\n", "front matter is not valid YAML"),
            ("a: *nowhere\n", "front matter is not valid YAML"),
            ("a: 1\n...\n--- \nb: 2\n", "one YAML document"),
        ];
        for (yaml, wanted) in cases {
            match parse(yaml) {
                Ok(value) => panic!("{yaml:?} was read as {value}"),
                Err(message) => assert!(message.contains(wanted), "{yaml:?}: {message}"),
            }
        }
    }

    /// A scalar's span covers what is written, quotes included; a
    /// collection's points at where it begins.
    #[test]
    fn nodes_know_where_they_are() {
        let text = "---\na: \"yes\"\nb: {c: 1}\n---\n";
        let file = SourceFile::new("t/system.md", text);
        let node = parse_yaml(&file, Span { start: 4, end: 22 }).expect("valid");
        let Yaml::Map(pairs) = node.value else {
            panic!("a map");
        };
        let at = |span: Span| &text[span.start..span.end];
        assert_eq!(at(pairs[0].0.span), "a");
        assert_eq!(at(pairs[0].1.span), "\"yes\"");
        assert_eq!(text[pairs[1].1.span.start..].chars().next(), Some('{'));
    }

    /// Deep nesting and wide aliasing are refused with a diagnostic, not a
    /// stack overflow or a tree built past the budget.
    #[test]
    fn hostile_shapes_are_refused() {
        let deep = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse(&deep).is_err());
        let wide = format!("a: [{}]\n", vec!["1"; MAX_NODES + 1].join(", "));
        assert!(parse(&wide).unwrap_err().contains("more than"));
    }
}
