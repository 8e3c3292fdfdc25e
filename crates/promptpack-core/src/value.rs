//! Values as the original JavaScript loader printed and tested them:
//! `String(v)` for strings, numbers and booleans, `JSON.stringify(v, null, 2)`
//! for null, arrays and objects, and JavaScript truthiness for conditions.

use crate::message::Message;
#[cfg(feature = "json")]
use serde_json::Value;

/// A value handed to the renderer: borrowed, so rendering copies each value
/// once, into the output.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum ValueRef<'a> {
    /// Text, rendered as it is.
    Str(&'a str),
    /// A flag, rendered `true` or `false`.
    Bool(bool),
    /// Any JSON value, rendered as JavaScript would (feature `json`).
    #[cfg(feature = "json")]
    Json(&'a Value),
    /// A conversation's history: messages sent as they are, between the
    /// messages of `messages.md`. Never written into a message's text (the
    /// resolver refuses a history used so); true when there are any.
    Messages(&'a [Message]),
}

impl ValueRef<'_> {
    /// JavaScript truthiness: `false`, `0`, `""` and `null` are false;
    /// everything else, `"0"`, `"false"`, `[]` and `{}` included, is true.
    pub fn is_truthy(&self) -> bool {
        match *self {
            ValueRef::Str(s) => !s.is_empty(),
            ValueRef::Bool(b) => b,
            ValueRef::Messages(messages) => !messages.is_empty(),
            #[cfg(feature = "json")]
            ValueRef::Json(v) => crate::json::is_truthy(v),
        }
    }

    /// How many bytes [`ValueRef::write_to`] appends: exact for text, flags,
    /// null, integers and JSON strings; an estimate for other numbers,
    /// arrays and objects (the output grows as needed then).
    pub fn len_hint(&self) -> usize {
        match *self {
            ValueRef::Str(s) => s.len(),
            ValueRef::Bool(b) => bool_len(b),
            ValueRef::Messages(_) => 0,
            #[cfg(feature = "json")]
            ValueRef::Json(v) => match v {
                Value::String(s) => s.len(),
                Value::Bool(b) => bool_len(*b),
                Value::Null => 4,
                Value::Number(n) => match n.as_i64() {
                    Some(i) if i.unsigned_abs() <= crate::json::MAX_SAFE_INTEGER => {
                        usize::from(i < 0) + decimal_digits(i.unsigned_abs())
                    }
                    // The longest shortest-round-trip double, `-1.2345678901234567e-308`.
                    _ => 24,
                },
                Value::Array(items) if items.is_empty() => 2,
                Value::Object(map) if map.is_empty() => 2,
                Value::Array(_) | Value::Object(_) => 64,
            },
        }
    }

    /// How many bytes [`ValueRef::write_to`] appends, exactly: what
    /// [`ValueRef::len_hint`] says where that is exact, counted without
    /// writing for other numbers, arrays and objects. A render checks its
    /// output bound with it before it allocates.
    pub fn rendered_len(&self) -> usize {
        match *self {
            #[cfg(feature = "json")]
            ValueRef::Json(v @ (Value::Number(_) | Value::Array(_) | Value::Object(_))) => {
                crate::json::value_len(v)
            }
            _ => self.len_hint(),
        }
    }

    /// Whether the value renders as exactly `text`: what
    /// `{{#if name == "text"}}` tests.
    pub fn renders_as(&self, text: &str) -> bool {
        match *self {
            ValueRef::Str(s) => s == text,
            ValueRef::Bool(b) => text == if b { "true" } else { "false" },
            ValueRef::Messages(_) => false,
            #[cfg(feature = "json")]
            ValueRef::Json(Value::String(s)) => s == text,
            #[cfg(feature = "json")]
            ValueRef::Json(_) => {
                let mut rendered = String::with_capacity(text.len());
                self.write_to(&mut rendered);
                rendered == text
            }
        }
    }

    /// Appends the value as the original loader rendered it.
    pub fn write_to(&self, out: &mut String) {
        match *self {
            ValueRef::Str(s) => out.push_str(s),
            ValueRef::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            ValueRef::Messages(_) => {}
            #[cfg(feature = "json")]
            ValueRef::Json(v) => crate::json::write_value(out, v),
        }
    }
}

fn bool_len(b: bool) -> usize {
    if b { 4 } else { 5 }
}

#[cfg(feature = "json")]
fn decimal_digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

#[cfg(feature = "json")]
pub use crate::json::{is_truthy, write_js_number, write_value};
