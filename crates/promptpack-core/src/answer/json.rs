//! One JSON value read into a tree that knows where each of its values is
//! in the model's text, so that what the schema refuses can be pointed at.
//!
//! serde_json's parser would give the value but not the places; this one
//! keeps a byte span per value (and per key), and says what was expected
//! where the text stops being JSON. Numbers are still read by serde_json
//! (from their slice) so that they are the same `Number`s a typed read
//! gets, to the last bit.

use super::Problem;
use crate::source_file::Span;
use serde_json::{Map, Number, Value};

/// The most nesting of objects and lists read: serde_json's own limit (its
/// recursion limit of 128 refuses the 128th level), so that a typed read
/// and this one refuse the same answers; and the recursion's stack stays
/// small.
pub(crate) const MAX_NESTING: usize = 127;

/// A JSON value and where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// The bytes of the value in the text: from its first character to
    /// one past its last (the quotes of a string, the brackets of a list).
    pub span: Span,
    /// What it is.
    pub value: NodeValue,
}

/// What a [`Node`] holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NodeValue {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Node>),
    /// The members in the order written, duplicates kept (the schema check
    /// refuses them, at the second).
    Object(Vec<Member>),
}

/// A member of an object: its key, where the key is, and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    pub key: String,
    /// The key with its quotes.
    pub key_span: Span,
    pub value: Node,
}

impl Node {
    /// The tree as a `serde_json::Value`, the members of an object in the
    /// order written (a duplicate key, which validation refuses, would keep
    /// the last value, as serde_json does).
    pub fn into_value(self) -> Value {
        match self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(b),
            NodeValue::Number(n) => Value::Number(n),
            NodeValue::String(s) => Value::String(s),
            NodeValue::Array(items) => {
                Value::Array(items.into_iter().map(Node::into_value).collect())
            }
            NodeValue::Object(members) => {
                let mut map = Map::with_capacity(members.len());
                for m in members {
                    map.insert(m.key, m.value.into_value());
                }
                Value::Object(map)
            }
        }
    }

    /// What the value is, as an error says it was found: `a string`,
    /// `null`, `1.5` (a number as written back by serde_json).
    pub fn found(&self) -> String {
        match &self.value {
            NodeValue::Null => "null".into(),
            NodeValue::Bool(b) => b.to_string(),
            NodeValue::Number(n) => n.to_string(),
            NodeValue::String(_) => "a string".into(),
            NodeValue::Array(_) => "a list".into(),
            NodeValue::Object(_) => "an object".into(),
        }
    }
}

/// Reads one JSON value from `text[start..end]`, spans in `text`. What
/// follows the value (up to `end` and past it) is not read: a caller that
/// refuses trailing text checks [`Parsed::next`].
pub(crate) fn parse(text: &str, start: usize, end: usize) -> Result<Parsed, Problem> {
    let mut parser = Parser {
        text,
        bytes: &text.as_bytes()[..end],
        at: start,
    };
    parser.skip_whitespace();
    let node = parser.value(0)?;
    Ok(Parsed {
        node,
        next: parser.at,
    })
}

/// A value read, and where the reading stopped.
pub(crate) struct Parsed {
    pub node: Node,
    /// The byte after the value.
    pub next: usize,
}

struct Parser<'t> {
    /// The whole text, for spans and messages.
    text: &'t str,
    /// The text up to where reading stops.
    bytes: &'t [u8],
    at: usize,
}

/// What an error says the text holds at a place.
enum Found {
    End,
    Char(char),
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// What is at the current place, and its span (one character, or an
    /// empty span at the end).
    fn here(&self) -> (Found, Span) {
        match self.text[self.at..self.bytes.len()].chars().next() {
            Some(c) => (
                Found::Char(c),
                Span {
                    start: self.at,
                    end: self.at + c.len_utf8(),
                },
            ),
            None => {
                // At the end: point just past the last thing written, not
                // at a line of trailing whitespace below it.
                let end = self.text[..self.bytes.len()]
                    .trim_end_matches([' ', '\t', '\n', '\r'])
                    .len();
                (Found::End, Span { start: end, end })
            }
        }
    }

    /// An error at the current place: `expected` there, or, at the end,
    /// `ends` (`the answer ends inside an object: expected `}``).
    fn expected(&self, expected: &str, inside: &str) -> Problem {
        let (found, span) = self.here();
        match found {
            Found::End => Problem::new(
                span,
                format!("the answer ends {inside}: expected {expected}"),
            )
            .with_help("the answer is cut short: the model stopped (or was stopped) before the JSON was complete"),
            Found::Char(c) => {
                let problem = Problem::new(span, format!("expected {expected}, found {}", shown(c)));
                match hint(c, &self.text[self.at..self.bytes.len()]) {
                    Some(help) => problem.with_help(help),
                    None => problem,
                }
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, Problem> {
        let start = self.at;
        let value = match self.peek() {
            Some(b'{') => return self.object(depth + 1),
            Some(b'[') => return self.array(depth + 1),
            Some(b'"') => NodeValue::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => NodeValue::Number(self.number()?),
            Some(b't') => self.literal("true", NodeValue::Bool(true))?,
            Some(b'f') => self.literal("false", NodeValue::Bool(false))?,
            Some(b'n') => self.literal("null", NodeValue::Null)?,
            _ => return Err(self.expected(VALUE, "where a value should be")),
        };
        Ok(Node {
            span: Span {
                start,
                end: self.at,
            },
            value,
        })
    }

    fn literal(&mut self, word: &str, value: NodeValue) -> Result<NodeValue, Problem> {
        let rest = &self.bytes[self.at..];
        if rest.starts_with(word.as_bytes()) {
            self.at += word.len();
            return Ok(value);
        }
        if word.as_bytes().starts_with(rest) {
            // `tru` and then the end.
            self.at += rest.len();
            return Err(self.expected(&format!("`{word}`"), "inside a literal"));
        }
        // The word written instead, up to the first character that cannot
        // belong to it.
        let len: usize = self.text[self.at..self.bytes.len()]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .map(char::len_utf8)
            .sum();
        let len = len.max(1);
        Err(Problem::new(
            Span {
                start: self.at,
                end: self.at + len,
            },
            format!(
                "expected `{word}`, found `{}`",
                &self.text[self.at..self.at + len]
            ),
        ))
    }

    /// The object or array that began at `start` and whose closing bracket
    /// is at `self.at`, past it.
    fn closed(&mut self, start: usize, value: NodeValue) -> Node {
        self.at += 1;
        Node {
            span: Span {
                start,
                end: self.at,
            },
            value,
        }
    }

    /// `{` … `}`, at `self.at`.
    fn object(&mut self, depth: usize) -> Result<Node, Problem> {
        let start = self.at;
        self.nesting(depth)?;
        self.at += 1;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            return Ok(self.closed(start, NodeValue::Object(members)));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(if members.is_empty() {
                    self.expected("a field name in double quotes or `}`", "inside an object")
                } else if self.peek() == Some(b'}') {
                    self.expected("a field name in double quotes after `,`", "")
                        .with_help(TRAILING_COMMA)
                } else {
                    self.expected(
                        "a field name in double quotes after `,`",
                        "inside an object",
                    )
                });
            }
            let key_start = self.at;
            let key = self.string()?;
            let key_span = Span {
                start: key_start,
                end: self.at,
            };
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(self.expected("`:` after the field name", "inside an object"));
            }
            self.at += 1;
            self.skip_whitespace();
            let value = self.value(depth)?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.skip_whitespace();
                }
                Some(b'}') => {
                    return Ok(self.closed(start, NodeValue::Object(members)));
                }
                _ => return Err(self.expected("`,` or `}` after a field", "inside an object")),
            }
        }
    }

    /// `[` … `]`, at `self.at`.
    fn array(&mut self, depth: usize) -> Result<Node, Problem> {
        let start = self.at;
        self.nesting(depth)?;
        self.at += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            return Ok(self.closed(start, NodeValue::Array(items)));
        }
        loop {
            if self.peek().is_none() {
                return Err(self.expected("an item or `]`", "inside a list"));
            }
            if self.peek() == Some(b']') && !items.is_empty() {
                return Err(self
                    .expected("an item after `,`", "")
                    .with_help(TRAILING_COMMA));
            }
            items.push(self.value(depth)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.skip_whitespace();
                }
                Some(b']') => {
                    return Ok(self.closed(start, NodeValue::Array(items)));
                }
                _ => return Err(self.expected("`,` or `]` after an item", "inside a list")),
            }
        }
    }

    fn nesting(&self, depth: usize) -> Result<(), Problem> {
        if depth > MAX_NESTING {
            return Err(Problem::new(
                Span {
                    start: self.at,
                    end: self.at + 1,
                },
                format!("the JSON nests deeper than {MAX_NESTING} objects and lists"),
            ));
        }
        Ok(())
    }

    /// A string at `self.at` (its opening quote), decoded.
    fn string(&mut self) -> Result<String, Problem> {
        let open = self.at;
        self.at += 1;
        let mut out = String::new();
        let mut plain_from = self.at;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.expected("`\"`", "inside a string").with_help(format!(
                    "the string opened at byte {open} is never closed: the answer is cut short"
                )));
            };
            match b {
                b'"' => {
                    out.push_str(&self.text[plain_from..self.at]);
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[plain_from..self.at]);
                    self.escape(&mut out)?;
                    plain_from = self.at;
                }
                0x00..=0x1f => {
                    let (_, span) = self.here();
                    return Err(Problem::new(
                        span,
                        format!(
                            "a control character ({}) inside a string",
                            shown(char::from(b))
                        ),
                    )
                    .with_help("JSON writes it escaped: `\\n` for a line break, `\\t` for a tab, `\\u0000` for others"));
                }
                _ => self.at += 1,
            }
        }
    }

    /// An escape at `self.at` (its backslash), pushed decoded onto `out`.
    fn escape(&mut self, out: &mut String) -> Result<(), Problem> {
        let start = self.at;
        self.at += 1;
        let Some(b) = self.peek() else {
            return Err(self.expected("an escape after `\\`", "inside a string"));
        };
        let simple = match b {
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'/' => Some('/'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            self.at += 1;
            return Ok(());
        }
        if b != b'u' {
            let (found, span) = self.here();
            let c = match found {
                Found::Char(c) => c,
                Found::End => '?',
            };
            return Err(Problem::new(
                Span {
                    start,
                    end: span.end,
                },
                format!("`\\{c}` is not a JSON escape"),
            )
            .with_help(
                "JSON's escapes are `\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t` and `\\u` with four hex digits",
            ));
        }
        self.at += 1;
        let first = self.hex4(start)?;
        let c = if (0xD800..0xDC00).contains(&first) {
            // A high surrogate: a low one must follow, as `\uDC00`–`\uDFFF`.
            let low_start = self.at;
            let second = if self.bytes[self.at..].starts_with(b"\\u") {
                self.at += 2;
                Some(self.hex4(low_start)?)
            } else {
                None
            };
            match second {
                Some(low @ 0xDC00..0xE000) => {
                    char::from_u32(0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00))
                }
                _ => None,
            }
        } else {
            char::from_u32(first)
        };
        match c {
            Some(c) => {
                out.push(c);
                Ok(())
            }
            None => Err(Problem::new(
                Span {
                    start,
                    end: self.at,
                },
                "an unpaired surrogate escape in a string",
            )
            .with_help("a `\\uD800`–`\\uDBFF` escape is followed by a `\\uDC00`–`\\uDFFF` one (a character past U+FFFF), and a `\\uDC00`–`\\uDFFF` escape is not alone")),
        }
    }

    /// Four hex digits at `self.at`, of the escape at `escape`.
    fn hex4(&mut self, escape: usize) -> Result<u32, Problem> {
        let mut value = 0;
        for _ in 0..4 {
            let digit = self.peek().and_then(|b| char::from(b).to_digit(16));
            let Some(digit) = digit else {
                return Err(match self.peek() {
                    None => self.expected("four hex digits after `\\u`", "inside a string"),
                    Some(_) => {
                        let (_, span) = self.here();
                        Problem::new(
                            Span {
                                start: escape,
                                end: span.end,
                            },
                            "expected four hex digits after `\\u`",
                        )
                    }
                });
            };
            value = value * 16 + digit;
            self.at += 1;
        }
        Ok(value)
    }

    /// A number at `self.at`: its grammar checked here, so that an error
    /// says where it stops being a number, then its slice read by
    /// serde_json.
    fn number(&mut self) -> Result<Number, Problem> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    let (_, span) = self.here();
                    return Err(Problem::new(
                        Span {
                            start,
                            end: span.end,
                        },
                        "a number with a leading zero",
                    )
                    .with_help("JSON writes no leading zeros: `7`, `0.7`"));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.expected("a digit after `-`", "inside a number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.expected("a digit after the decimal point", "inside a number"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.expected("a digit in the exponent", "inside a number"));
            }
            self.digits();
        }
        let slice = &self.text[start..self.at];
        serde_json::from_str::<Number>(slice).map_err(|e| {
            // The grammar is checked above: what is left is a number too
            // large for a double (`1e400`).
            Problem::new(
                Span {
                    start,
                    end: self.at,
                },
                format!("a number JSON readers cannot hold: {e}"),
            )
        })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }
}

/// What a value is, for the messages.
const VALUE: &str = "a value (an object, a list, a string, a number, `true`, `false` or `null`)";

/// The help for a comma before a closing bracket.
const TRAILING_COMMA: &str = "JSON allows no comma before a closing bracket";

/// A character as an error names it: quoted, or escaped when it would not
/// show.
fn shown(c: char) -> String {
    if c == '`' {
        "a backtick".into()
    } else if c.is_control() || c.is_whitespace() {
        format!("`{}`", c.escape_default())
    } else {
        format!("`{c}`")
    }
}

/// The help for the things models write that are not JSON, found at the
/// start of `rest`.
fn hint(c: char, rest: &str) -> Option<&'static str> {
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    match (c, word.as_str()) {
        ('\'', _) => Some("JSON strings and field names take double quotes: `\"text\"`"),
        ('`', _) if rest.starts_with("```") => Some("a code fence: the JSON goes bare here"),
        (_, "True" | "False") => Some("JSON writes `true` and `false` in lower case"),
        (_, "None" | "NULL" | "Null" | "undefined") => Some("JSON writes a missing value `null`"),
        (_, "NaN" | "Infinity") => Some("JSON has no `NaN` or `Infinity`"),
        ('/', _) if rest.starts_with("//") || rest.starts_with("/*") => {
            Some("JSON has no comments")
        }
        _ if c.is_alphabetic() || c == '_' => {
            Some("JSON field names take double quotes: `\"name\"`")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Value, String> {
        parse(text, 0, text.len())
            .map(|p| p.node.into_value())
            .map_err(|p| format!("{}..{}: {}", p.span.start, p.span.end, p.message))
    }

    /// What serde_json reads, this reads the same; what it refuses, this
    /// refuses too.
    #[test]
    fn agrees_with_serde_json() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let (deep_127, deep_128, deep_129) = (nested(127), nested(128), nested(129));
        let cases: [&str; _] = [
            "{}",
            "[]",
            "  {\"a\" : [1, -2.5e3, true, false, null, \"x\\n\\u00e9\\ud83d\\ude00\"], \"b\": {}}",
            "0",
            "-0",
            "1E+2",
            "123456789012345678901234567890",
            "0.1",
            &deep_127,
            &deep_128,
            &deep_129,
            "\"\\/\"",
            "{\"a\":1,}",
            "[1,]",
            "[1 2]",
            "01",
            "1.",
            "-",
            "1e",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\x\"",
            "\"a\u{1}\"",
            "tru",
            "nul",
            "True",
            "{'a': 1}",
            "{a: 1}",
            "1e400",
            "\"",
            "{\"a\"",
            "{\"a\":",
            "[",
        ];
        for case in cases {
            let serde = serde_json::Deserializer::from_str(case)
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok);
            assert_eq!(read(case).ok(), serde, "{case}");
        }
    }

    #[test]
    fn spans_and_messages() {
        assert_eq!(
            read("{\"a\": 1 \"b\": 2}").unwrap_err(),
            "8..9: expected `,` or `}` after a field, found `\"`"
        );
        assert_eq!(
            read("{\"a\": [1, 2\n\n").unwrap_err(),
            "11..11: the answer ends inside a list: expected `,` or `]` after an item"
        );
        assert_eq!(
            read("{\"a\": \"é").unwrap_err(),
            "9..9: the answer ends inside a string: expected `\"`"
        );
        let deep = "[".repeat(MAX_NESTING + 1);
        assert_eq!(
            read(&deep).unwrap_err(),
            "127..128: the JSON nests deeper than 127 objects and lists"
        );
        let nested = MAX_NESTING;
        assert!(read(&format!("{}{}", "[".repeat(nested), "]".repeat(nested))).is_ok());
        let parsed = parse(" x {\"k\": [true]} tail", 3, 21).expect("json");
        assert_eq!(parsed.next, 16);
        let NodeValue::Object(members) = &parsed.node.value else {
            panic!("an object");
        };
        assert_eq!(members[0].key_span, Span { start: 4, end: 7 });
        assert_eq!(members[0].value.span, Span { start: 9, end: 15 });
    }
}
