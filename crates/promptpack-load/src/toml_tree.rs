//! The text of `promptpack.toml` as a tree of tables and values, each with
//! the byte range it was written at, built from toml_parser's events.
//!
//! The toml crate's table layer (`DeTable`) did the same and was half of
//! the TOML cost in every `Library` app's build; a settings file of a few
//! keys needs only the tree and TOML's rules on defining a table or key
//! twice. Values the settings never take (numbers, dates) keep their kind
//! for the "found an integer" message, not their value.

use std::ops::Range;
use toml_parser::decoder::ScalarKind;
use toml_parser::parser::{Event, EventKind, RecursionGuard, ValidateWhitespace, parse_document};
use toml_parser::{Expected, ParseError, Source, Span};

/// How deep arrays and inline tables may nest: far more than a settings
/// file needs, and a bound on the recursion of building the tree.
const MAX_DEPTH: u32 = 32;

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// Bytes of the value (a table made by a header: the header).
    pub span: Range<usize>,
    /// The value.
    pub value: Value,
}

/// A TOML value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A string, its escapes decoded.
    String(String),
    /// An integer; `None` when it is outside `i64`.
    Integer(Option<i64>),
    /// A float (likewise).
    Float,
    /// `true` or `false`.
    Boolean(bool),
    /// A date, a time or both (likewise).
    Datetime,
    /// An array, or an array of tables (`[[name]]`).
    Array(Vec<Node>),
    /// A table.
    Table(Table),
}

impl Value {
    /// What it is, with its article, for "found …" messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float => "a float",
            Value::Boolean(_) => "a boolean",
            Value::Datetime => "a date",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }
}

/// A table's keys in the order written, each with the span of its name.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Table {
    entries: Vec<(String, Range<usize>, Node)>,
    origin: Origin,
}

/// How a table came to be, which decides what may add keys to it later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Origin {
    /// The document itself.
    #[default]
    Root,
    /// Named by a `[header]`.
    Header,
    /// A parent of a header's table (`a` of `[a.b]`), which a later `[a]`
    /// may still define.
    Implicit,
    /// A parent of a dotted key (`a` of `a.b = 1`).
    Dotted,
    /// `{ … }`: closed once written.
    Inline,
    /// An element of an array of tables (`[[name]]`).
    ArrayElement,
}

impl Table {
    fn new(origin: Origin) -> Table {
        Table {
            entries: Vec::new(),
            origin,
        }
    }

    /// Each key with the span of its name and its value.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, &Range<usize>, &Node)> {
        self.entries
            .iter()
            .map(|(name, span, node)| (name.as_str(), span, node))
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entries
            .iter()
            .find(|(name, _, _)| name == key)
            .map(|(_, _, node)| node)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries
            .iter_mut()
            .find(|(name, _, _)| name == key)
            .map(|(_, _, node)| node)
    }

    fn insert(&mut self, key: &Key, node: Node) {
        self.entries
            .push((key.name.clone(), key.span.clone(), node));
    }
}

/// Why the text is not a TOML document, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// What is wrong, with what was expected.
    pub message: String,
    /// The bytes it is about, when known.
    pub span: Option<Range<usize>>,
}

impl SyntaxError {
    fn at(span: Range<usize>, message: String) -> SyntaxError {
        SyntaxError {
            message,
            span: Some(span),
        }
    }

    fn of(error: &ParseError) -> SyntaxError {
        let mut message = error.description().to_string();
        if let Some(expected) = error.expected().filter(|e| !e.is_empty()) {
            message.push_str(", expected ");
            for (i, item) in expected.iter().enumerate() {
                if i > 0 {
                    message.push_str(", ");
                }
                match item {
                    Expected::Literal(text) => {
                        message.push('`');
                        message.push_str(&text.escape_debug().to_string());
                        message.push('`');
                    }
                    Expected::Description(text) => message.push_str(text),
                    _ => message.push_str("something else"),
                }
            }
        }
        SyntaxError {
            message,
            span: error
                .unexpected()
                .or(error.context())
                .map(|span| span.start()..span.end()),
        }
    }
}

/// A key's name, decoded, and the span it was written at.
#[derive(Debug, Clone)]
struct Key {
    name: String,
    span: Range<usize>,
}

/// Parses `text` as a TOML document.
pub(crate) fn parse(text: &str) -> Result<Table, SyntaxError> {
    let source = Source::new(text);
    let tokens = source.lex().into_vec();
    let mut events: Vec<Event> = Vec::with_capacity(tokens.len());
    let mut errors: Option<ParseError> = None;
    {
        let mut checked = ValidateWhitespace::new(&mut events, source);
        let mut guarded = RecursionGuard::new(&mut checked, MAX_DEPTH);
        parse_document(&tokens, &mut guarded, &mut errors);
    }
    if let Some(error) = errors {
        return Err(SyntaxError::of(&error));
    }
    let mut builder = Builder {
        source,
        events: &events,
        next: 0,
    };
    builder.document()
}

/// Walks the events of a document that parsed without an error.
struct Builder<'e, 'i> {
    source: Source<'i>,
    events: &'e [Event],
    next: usize,
}

/// Which table keys go to: the root's path from the last header, and
/// whether it is an array of tables' last element.
type TablePath = Vec<Key>;

impl Builder<'_, '_> {
    fn document(&mut self) -> Result<Table, SyntaxError> {
        let mut root = Table::new(Origin::Root);
        let mut current: TablePath = Vec::new();
        while let Some(event) = self.peek() {
            match event.kind() {
                EventKind::StdTableOpen | EventKind::ArrayTableOpen => {
                    let array = event.kind() == EventKind::ArrayTableOpen;
                    let start = event.span().start();
                    self.next += 1;
                    let path = self.key_path()?;
                    let end = self.expect_close(if array {
                        EventKind::ArrayTableClose
                    } else {
                        EventKind::StdTableClose
                    })?;
                    define_table(&mut root, &path, start..end, array)?;
                    current = path;
                }
                EventKind::SimpleKey => {
                    let table = table_at(&mut root, &current)?;
                    self.key_value(table)?;
                }
                _ => self.next += 1,
            }
        }
        Ok(root)
    }

    /// The next event that is not whitespace, a comment or a newline.
    fn peek(&mut self) -> Option<Event> {
        while let Some(event) = self.events.get(self.next) {
            match event.kind() {
                EventKind::Whitespace | EventKind::Comment | EventKind::Newline => self.next += 1,
                _ => return Some(*event),
            }
        }
        None
    }

    /// The next event, which the parser guarantees is there.
    fn take(&mut self) -> Result<Event, SyntaxError> {
        let event = self.peek().ok_or_else(|| SyntaxError {
            message: "the file ends early".to_string(),
            span: None,
        })?;
        self.next += 1;
        Ok(event)
    }

    fn expect_close(&mut self, kind: EventKind) -> Result<usize, SyntaxError> {
        let event = self.take()?;
        if event.kind() != kind {
            return Err(unexpected(&event, kind.description()));
        }
        Ok(event.span().end())
    }

    /// `a.b."c"`: the decoded names of a key and its dotted parts.
    fn key_path(&mut self) -> Result<Vec<Key>, SyntaxError> {
        let mut path = vec![self.simple_key()?];
        while self.peek().map(|e| e.kind()) == Some(EventKind::KeySep) {
            self.next += 1;
            path.push(self.simple_key()?);
        }
        Ok(path)
    }

    fn simple_key(&mut self) -> Result<Key, SyntaxError> {
        let event = self.take()?;
        if event.kind() != EventKind::SimpleKey {
            return Err(unexpected(&event, "a key"));
        }
        let raw = self.raw(&event)?;
        let mut name = String::new();
        let mut error: Option<ParseError> = None;
        raw.decode_key(&mut name, &mut error);
        match error {
            Some(error) => Err(SyntaxError::of(&error)),
            None => Ok(Key {
                name,
                span: event.span().start()..event.span().end(),
            }),
        }
    }

    /// `key = value` into `table`, the parents of a dotted key made there.
    fn key_value(&mut self, table: &mut Table) -> Result<(), SyntaxError> {
        let path = self.key_path()?;
        let separator = self.take()?;
        if separator.kind() != EventKind::KeyValSep {
            return Err(unexpected(&separator, "`=`"));
        }
        let value = self.value()?;
        let (last, parents) = path.split_last().ok_or_else(|| SyntaxError {
            message: "a key-value pair without a key".to_string(),
            span: Some(value.span.clone()),
        })?;
        let mut table = table;
        for key in parents {
            let made = table.get(&key.name).is_none();
            if made {
                let node = Node {
                    span: key.span.clone(),
                    value: Value::Table(Table::new(Origin::Dotted)),
                };
                table.insert(key, node);
            }
            table = match table.get_mut(&key.name).map(|node| &mut node.value) {
                Some(Value::Table(inner)) if made || inner.origin == Origin::Dotted => inner,
                _ => return Err(defined_twice(key)),
            };
        }
        if table.get(&last.name).is_some() {
            return Err(defined_twice(last));
        }
        table.insert(last, value);
        Ok(())
    }

    fn value(&mut self) -> Result<Node, SyntaxError> {
        let event = self.take()?;
        let start = event.span().start();
        match event.kind() {
            EventKind::Scalar => Ok(Node {
                span: start..event.span().end(),
                value: self.scalar(&event)?,
            }),
            EventKind::ArrayOpen => {
                let mut items = Vec::new();
                loop {
                    match self.peek().map(|e| e.kind()) {
                        Some(EventKind::ArrayClose) => break,
                        Some(EventKind::ValueSep) => self.next += 1,
                        _ => items.push(self.value()?),
                    }
                }
                let end = self.expect_close(EventKind::ArrayClose)?;
                Ok(Node {
                    span: start..end,
                    value: Value::Array(items),
                })
            }
            EventKind::InlineTableOpen => {
                let mut table = Table::new(Origin::Inline);
                loop {
                    match self.peek().map(|e| e.kind()) {
                        Some(EventKind::InlineTableClose) => break,
                        Some(EventKind::ValueSep) => self.next += 1,
                        _ => self.key_value(&mut table)?,
                    }
                }
                let end = self.expect_close(EventKind::InlineTableClose)?;
                Ok(Node {
                    span: start..end,
                    value: Value::Table(table),
                })
            }
            _ => Err(unexpected(&event, "a value")),
        }
    }

    fn scalar(&self, event: &Event) -> Result<Value, SyntaxError> {
        let raw = self.raw(event)?;
        let mut text = String::new();
        let mut error: Option<ParseError> = None;
        let kind = raw.decode_scalar(&mut text, &mut error);
        if let Some(error) = error {
            return Err(SyntaxError::of(&error));
        }
        Ok(match kind {
            ScalarKind::String => Value::String(text),
            ScalarKind::Boolean(value) => Value::Boolean(value),
            ScalarKind::Integer(radix) => {
                Value::Integer(i64::from_str_radix(&text, radix.value()).ok())
            }
            ScalarKind::Float => Value::Float,
            ScalarKind::DateTime => Value::Datetime,
        })
    }

    fn raw(&self, event: &Event) -> Result<toml_parser::Raw<'_>, SyntaxError> {
        let span = event.span();
        self.source.get(event).ok_or_else(|| {
            SyntaxError::at(span.start()..span.end(), "bytes outside the file".into())
        })
    }
}

/// Defines the table `[path]` (or a new element of `[[path]]`) under
/// `root`, making the parents it names, refusing a second definition.
fn define_table(
    root: &mut Table,
    path: &[Key],
    header: Range<usize>,
    array: bool,
) -> Result<(), SyntaxError> {
    let Some((last, parents)) = path.split_last() else {
        return Err(SyntaxError::at(
            header,
            "a table header without a name".into(),
        ));
    };
    let mut table = root;
    for key in parents {
        table = descend(table, key, &header)?;
    }
    let element = || Node {
        span: header.clone(),
        value: Value::Table(Table::new(if array {
            Origin::ArrayElement
        } else {
            Origin::Header
        })),
    };
    match table.get_mut(&last.name) {
        None if array => {
            let tables = Node {
                span: header.clone(),
                value: Value::Array(vec![element()]),
            };
            table.insert(last, tables);
        }
        None => {
            table.insert(last, element());
        }
        Some(Node {
            value: Value::Array(items),
            ..
        }) if array && is_array_of_tables(items) => items.push(element()),
        Some(Node {
            span,
            value: Value::Table(existing),
        }) if !array && existing.origin == Origin::Implicit => {
            existing.origin = Origin::Header;
            *span = header;
        }
        Some(_) => return Err(defined_twice(last)),
    }
    Ok(())
}

/// The table `key` of `table` on a header's path: made when missing, the
/// last element of an array of tables.
fn descend<'t>(
    table: &'t mut Table,
    key: &Key,
    header: &Range<usize>,
) -> Result<&'t mut Table, SyntaxError> {
    if table.get(&key.name).is_none() {
        let made = Node {
            span: header.clone(),
            value: Value::Table(Table::new(Origin::Implicit)),
        };
        table.insert(key, made);
    }
    match table.get_mut(&key.name).map(|node| &mut node.value) {
        Some(Value::Table(inner)) if inner.origin != Origin::Inline => Ok(inner),
        Some(Value::Array(items)) if is_array_of_tables(items) => match items.last_mut() {
            Some(Node {
                value: Value::Table(inner),
                ..
            }) => Ok(inner),
            _ => Err(defined_twice(key)),
        },
        _ => Err(defined_twice(key)),
    }
}

/// The table that key-value pairs after the header `path` go to.
fn table_at<'t>(root: &'t mut Table, path: &[Key]) -> Result<&'t mut Table, SyntaxError> {
    let mut table = root;
    for key in path {
        table = descend(table, key, &key.span)?;
    }
    Ok(table)
}

/// An array made by `[[name]]` headers (never empty), not a static
/// array, which headers may not extend.
fn is_array_of_tables(items: &[Node]) -> bool {
    !items.is_empty()
        && items.iter().all(|item| {
        matches!(&item.value, Value::Table(table) if table.origin == Origin::ArrayElement)
    })
}

fn defined_twice(key: &Key) -> SyntaxError {
    SyntaxError::at(key.span.clone(), format!("`{}` is defined twice", key.name))
}

fn unexpected(event: &Event, expected: &str) -> SyntaxError {
    let span: Span = event.span();
    SyntaxError::at(
        span.start()..span.end(),
        format!("expected {expected}, found {}", event.kind().description()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(table: &Table) -> Vec<&str> {
        table.entries().map(|(name, _, _)| name).collect()
    }

    fn table<'t>(table: &'t Table, key: &str) -> &'t Table {
        match table.get(key).map(|node| &node.value) {
            Some(Value::Table(inner)) => inner,
            other => panic!("{key}: {other:?}"),
        }
    }

    #[test]
    fn tables_dotted_keys_inline_tables_and_arrays() {
        let text = "top = 'a'\n[x]\nb.c = \"\\u00e9\"\nd = { e = true, f.g = 1 }\n\
                    [x.h]\ni = [1, 2.5, 1979-05-27, [\"j\"]]\n[[k]]\n[[k]]\nl = false\n";
        let root = parse(text).expect("valid");
        assert_eq!(keys(&root), ["top", "x", "k"]);
        let x = table(&root, "x");
        assert_eq!(keys(x), ["b", "d", "h"]);
        assert_eq!(
            table(x, "b").get("c").map(|n| &n.value),
            Some(&Value::String("é".into()))
        );
        let d = table(x, "d");
        assert_eq!(d.get("e").map(|n| &n.value), Some(&Value::Boolean(true)));
        assert_eq!(
            table(d, "f").get("g").map(|n| &n.value),
            Some(&Value::Integer(Some(1)))
        );
        let Some(Value::Array(items)) = table(x, "h").get("i").map(|n| &n.value) else {
            panic!("i is an array");
        };
        let kinds: Vec<_> = items.iter().map(|n| n.value.kind()).collect();
        assert_eq!(kinds, ["an integer", "a float", "a date", "an array"]);
        let Some(Value::Array(k)) = root.get("k").map(|n| &n.value) else {
            panic!("k is an array of tables");
        };
        assert_eq!(k.len(), 2);
        // Spans: a value's bytes, a header table's header.
        let top = root.get("top").map(|n| &text[n.span.clone()]);
        assert_eq!(top, Some("'a'"));
        assert_eq!(root.get("x").map(|n| &text[n.span.clone()]), Some("[x]"));
        assert_eq!(
            x.get("d").map(|n| &text[n.span.clone()]),
            Some("{ e = true, f.g = 1 }")
        );
    }

    #[test]
    fn a_parent_named_by_a_header_later_is_defined_then() {
        let root = parse("[a.b]\nc = 1\n[a]\nd = 2\n").expect("valid");
        assert_eq!(keys(table(&root, "a")), ["b", "d"]);
    }

    /// TOML's rules on defining a key or a table twice, and its syntax
    /// errors, each at its place.
    #[test]
    fn what_toml_refuses_is_refused_where_it_is() {
        let cases = [
            ("a = 1\na = 2\n", 6, "`a` is defined twice"),
            ("[t]\n[t]\n", 5, "`t` is defined twice"),
            ("t = 1\n[t]\n", 7, "`t` is defined twice"),
            ("[t]\nx = 1\n[t.x]\n", 13, "`x` is defined twice"),
            ("a.b = 1\n[a]\n", 9, "`a` is defined twice"),
            ("a = { b = 1 }\n[a.c]\n", 15, "`a` is defined twice"),
            ("a = { b = 1 }\na.c = 2\n", 14, "`a` is defined twice"),
            ("a = [1]\n[[a]]\n", 10, "`a` is defined twice"),
            ("[[a]]\n[a]\n", 7, "`a` is defined twice"),
            ("[t\n", 2, "unclosed table"),
            ("a = \"\\q\"\n", 6, "escape"),
            ("a = 1 2\n", 4, "must be quoted"),
            ("a = \n", 4, "expected"),
        ];
        for (text, at, message) in cases {
            let error = parse(text).expect_err(text);
            let start = error.span.clone().map(|span| span.start);
            assert_eq!(start, Some(at), "{text:?}: {}", error.message);
            assert!(
                error.message.contains(message),
                "{text:?}: {}",
                error.message
            );
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("a = {}1{}\n", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).is_err());
        let fine = format!("a = {}1{}\n", "[".repeat(8), "]".repeat(8));
        assert!(parse(&fine).is_ok());
    }

    /// The shape of a tree: each key with its value's kind, tables and
    /// arrays opened, keys sorted (the toml crate's tables are).
    fn shape(table: &Table) -> String {
        let mut keys: Vec<_> = table
            .entries()
            .map(|(name, _, node)| format!("{name}:{}", node_shape(&node.value)))
            .collect();
        keys.sort();
        format!("{{{}}}", keys.concat())
    }

    fn node_shape(value: &Value) -> String {
        match value {
            Value::Table(inner) => shape(inner),
            Value::Array(items) => {
                let items: Vec<_> = items.iter().map(|n| node_shape(&n.value)).collect();
                format!("[{}]", items.join(","))
            }
            Value::String(text) => format!("{text:?},"),
            Value::Boolean(b) => format!("{b},"),
            other => format!("{},", other.kind()),
        }
    }

    fn toml_shape(table: &toml::de::DeTable<'_>) -> String {
        let mut keys: Vec<_> = table
            .iter()
            .map(|(key, value)| format!("{}:{}", key.get_ref(), toml_node(value.get_ref())))
            .collect();
        keys.sort();
        format!("{{{}}}", keys.concat())
    }

    fn toml_node(value: &toml::de::DeValue<'_>) -> String {
        use toml::de::DeValue;
        match value {
            DeValue::Table(inner) => toml_shape(inner),
            DeValue::Array(items) => {
                let items: Vec<_> = items.iter().map(|n| toml_node(n.get_ref())).collect();
                format!("[{}]", items.join(","))
            }
            DeValue::String(text) => format!("{:?},", text.as_ref()),
            DeValue::Boolean(b) => format!("{b},"),
            DeValue::Integer(_) => "an integer,".to_string(),
            DeValue::Float(_) => "a float,".to_string(),
            DeValue::Datetime(_) => "a date,".to_string(),
        }
    }

    /// The toml crate's table layer, which this file replaces, accepts and
    /// refuses the same documents and builds the same tree of them.
    #[test]
    fn agrees_with_the_toml_crate() {
        let documents = [
            "",
            "# only a comment\n",
            "a = 1\nb = 'two'\nc = \"\"\"\nthree\"\"\"\nd = '''four'''\n",
            "a = true\nb = false\nc = 1.5\nd = 1979-05-27T07:32:00Z\ne = 07:32:00\nf = 0x1f\n",
            "a = [1, [2, 3], { b = 4 }, ]\n",
            "a = [\n  1, # one\n  2,\n]\n",
            "[a]\nb = 1\n[a.c]\nd = 2\n[e]\n",
            "[a.b]\nc = 1\n[a]\nd = 2\n",
            "[a.b]\n[a.b]\n",
            "a.b.c = 1\na.b.d = 2\na.e = 3\n",
            "a.b = 1\n[a]\n",
            "a.b = 1\n[a.c]\nd = 2\n",
            "[x]\na.b = 1\n[x.a.c]\n",
            "[x]\na.b = 1\n[x.a]\n",
            "[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n",
            "a = { b = 1, c.d = 2 }\n",
            "a = { b = 1 }\n[a.c]\n",
            "a = { b = 1 }\na.c = 1\n",
            "a = { b = 1, b = 2 }\n",
            "[[a]]\nb = 1\n[[a]]\nb = 2\n[a.c]\nd = 3\n",
            "[[a]]\n[[a.b]]\n[[a.b]]\n[[a]]\n",
            "a = []\n[[a]]\n",
            "[a]\n[[a]]\n",
            "[[a]]\n[a]\n",
            "\"quoted key\" = 1\n'literal' = 2\n\"a.b\" = 3\n",
            "\"\\u00e9\" = \"\\u00e9\\t\"\n",
            "a = 1\na = 1\n",
            "a = \"\\x\"\n",
            "[a\n",
            "a = \n",
            "= 1\n",
            "a = 1 b = 2\n",
            "a = [1 2]\n",
            "a = { b = 1\n",
            "a = \"no end\n",
            "a = 1\n\u{7f} = 2\n",
            "a = \"x\" # tab\tand \u{1} control\n",
            "[ a . b ]\n",
            "a.\"b\".c = 1\n",
            "[\"\"]\n\"\" = 1\n",
            "a = +inf\nb = nan\nc = 1e10\n",
            "a = 1979-05-27\nb = 1979-05-27 07:32:00\n",
            "a = 9223372036854775808\n",
            "a = 01\n",
            "a = 1__0\n",
            "a = truee\n",
        ];
        for text in documents {
            let ours = parse(text);
            let theirs = toml::de::DeTable::parse(text);
            match (&ours, &theirs) {
                (Ok(ours), Ok(theirs)) => {
                    assert_eq!(shape(ours), toml_shape(theirs.get_ref()), "{text:?}");
                }
                (Err(_), Err(_)) => {}
                _ => panic!(
                    "{text:?}: ours {:?}, toml's {:?}",
                    ours.as_ref().map(shape),
                    theirs.as_ref().map(|t| toml_shape(t.get_ref()))
                ),
            }
        }
    }
}
