//! JSON values as the original JavaScript loader printed and tested them:
//! `String(v)` for strings, numbers and booleans, `JSON.stringify(v, null,
//! 2)` for null, arrays and objects, and JavaScript truthiness. Behind the
//! `json` feature: the dynamic API needs it, a build script does not.

use serde_json::Value;
use std::fmt::Write;

/// JavaScript truthiness of a JSON value.
pub fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Appends `value` as `String(value)` (strings, numbers, booleans) or
/// `JSON.stringify(value, null, 2)` (null, arrays, objects).
pub fn write_value(out: &mut impl Write, value: &Value) {
    match value {
        Value::String(s) => push(out, s),
        Value::Bool(b) => push(out, if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::Null | Value::Array(_) | Value::Object(_) => write_json(out, value, 0),
    }
}

/// The length in bytes of what [`write_value`] appends for `value`,
/// counted without writing it: a render checks its bound with it before it
/// allocates.
pub fn value_len(value: &Value) -> usize {
    let mut counted = ByteCount(0);
    write_value(&mut counted, value);
    counted.0
}

/// A sink that only counts the bytes written to it.
struct ByteCount(usize);

impl Write for ByteCount {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 = self.0.saturating_add(s.len());
        Ok(())
    }
}

/// Appends `text`. Writing to a `String` or a [`ByteCount`] cannot fail.
fn push(out: &mut impl Write, text: &str) {
    let _ = out.write_str(text);
}

/// Appends `c`.
fn push_char(out: &mut impl Write, c: char) {
    let _ = out.write_char(c);
}

/// Integers JavaScript holds exactly: beyond ±2^53 it rounds them to the
/// nearest double, and so must we to print what it printed.
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

fn write_number(out: &mut impl Write, n: &serde_json::Number) {
    if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= MAX_SAFE_INTEGER) {
        let _ = write!(out, "{i}");
    } else if let Some(f) = n.as_f64() {
        write_js_number(out, f);
    }
}

/// Appends `f` as JavaScript's `Number.prototype.toString()` does:
/// shortest round-trip digits, plain notation for exponents from -7 to 20,
/// exponent notation (`1e+21`, `1.5e-7`) outside.
pub fn write_js_number(out: &mut impl Write, f: f64) {
    if f.is_nan() {
        push(out, "NaN");
        return;
    }
    if f.is_infinite() {
        push(out, if f > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if f == 0.0 {
        push_char(out, '0');
        return;
    }
    if f < 0.0 {
        push_char(out, '-');
    }
    let sci = js_digits(f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let k = digits.len() as i64;
    // In ECMAScript's terms the value is 0.d1d2…dk × 10^n.
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    if k <= n && n <= 21 {
        push(out, digits);
        for _ in k..n {
            push_char(out, '0');
        }
    } else if 0 < n && n <= 21 {
        push(out, &digits[..n as usize]);
        push_char(out, '.');
        push(out, &digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        push(out, "0.");
        for _ in n..0 {
            push_char(out, '0');
        }
        push(out, digits);
    } else {
        push(out, &digits[..1]);
        if k > 1 {
            push_char(out, '.');
            push(out, &digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e >= 0 { "+" } else { "-" }, e.abs());
    }
}

/// `f` (finite, positive) in exponent notation with the digits ECMAScript's
/// `Number::toString` picks: the fewest that read back as `f`, and among
/// those the closest to `f`, ties to an even last digit. Rust's `{:e}` gives
/// the fewest, but not always the closest (`972881281588322.25` gives `…322.3`
/// where JavaScript prints `…322.2`); `{:.N$e}` rounds exactly, ties to even,
/// so the exact rounding to as many digits is JavaScript's whenever it reads
/// back as `f` (it may not, next to a power of two, where the shortest
/// digits lie on the wider side).
fn js_digits(f: f64) -> String {
    // e.g. `5.625e2`.
    let shortest = format!("{f:e}");
    let places = shortest
        .split_once('e')
        .map_or(&shortest[..], |(mantissa, _)| mantissa)
        .bytes()
        .filter(u8::is_ascii_digit)
        .count()
        .saturating_sub(1);
    let closest = format!("{f:.places$e}");
    if closest.parse::<f64>() == Ok(f) {
        closest
    } else {
        shortest
    }
}

/// `JSON.stringify(value, null, 2)`, nested at `depth`.
fn write_json(out: &mut impl Write, value: &Value, depth: usize) {
    match value {
        Value::Null => push(out, "null"),
        Value::Bool(_) | Value::Number(_) => write_value(out, value),
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) if items.is_empty() => push(out, "[]"),
        Value::Object(map) if map.is_empty() => push(out, "{}"),
        Value::Array(items) => {
            push_char(out, '[');
            for (i, item) in items.iter().enumerate() {
                push(out, if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                write_json(out, item, depth + 1);
            }
            push_char(out, '\n');
            indent(out, depth);
            push_char(out, ']');
        }
        Value::Object(map) => {
            push_char(out, '{');
            for (i, (key, item)) in js_property_order(map).into_iter().enumerate() {
                push(out, if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                write_json_string(out, key);
                push(out, ": ");
                write_json(out, item, depth + 1);
            }
            push_char(out, '\n');
            indent(out, depth);
            push_char(out, '}');
        }
    }
}

/// JavaScript's own-property order: keys that are array indices (canonical
/// integers below 2^32 - 1) first, ascending, then the rest in insertion order.
fn js_property_order(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let index_of = |key: &str| -> Option<u32> {
        let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
        key.parse::<u32>()
            .ok()
            .filter(|&i| canonical && i < u32::MAX && key.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut indexed: Vec<(u32, (&String, &Value))> = map
        .iter()
        .filter_map(|(k, v)| index_of(k).map(|i| (i, (k, v))))
        .collect();
    indexed.sort_by_key(|(i, _)| *i);
    let named = map.iter().filter(|(k, _)| index_of(k).is_none());
    indexed.into_iter().map(|(_, kv)| kv).chain(named).collect()
}

fn indent(out: &mut impl Write, depth: usize) {
    const SPACES: &str = "                                                                ";
    let mut left = depth * 2;
    while left > 0 {
        let n = left.min(SPACES.len());
        push(out, &SPACES[..n]);
        left -= n;
    }
}

/// A JSON string literal with JavaScript's escapes: `"`, `\`, the named
/// control escapes, `\u00XX` for other control characters; nothing else.
fn write_json_string(out: &mut impl Write, s: &str) {
    push_char(out, '"');
    for c in s.chars() {
        match c {
            '"' => push(out, "\\\""),
            '\\' => push(out, "\\\\"),
            '\n' => push(out, "\\n"),
            '\r' => push(out, "\\r"),
            '\t' => push(out, "\\t"),
            '\u{8}' => push(out, "\\b"),
            '\u{c}' => push(out, "\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => push_char(out, c),
        }
    }
    push_char(out, '"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::ValueRef;
    use serde_json::json;

    fn js(f: f64) -> String {
        let mut s = String::new();
        write_js_number(&mut s, f);
        s
    }

    #[test]
    fn numbers_print_as_javascript() {
        let cases = [
            (1000.0, "1000"),
            (562.5, "562.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (-7.0, "-7"),
            (0.1, "0.1"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (123456789.125, "123456789.125"),
            (-0.0, "0"),
            (2.5e25, "2.5e+25"),
            // Exactly …322.25: two 16-digit strings read back as it, …322.2
            // and …322.3, equally near: JavaScript takes the even one.
            (972881281588322.0 + 0.25, "972881281588322.2"),
            // Next to a power of two the nearest digits do not read back.
            (9007199254740992.0, "9007199254740992"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (f, want) in cases {
            assert_eq!(js(f), want, "{f:?}");
        }
    }

    #[test]
    fn json_matches_stringify_with_two_spaces() {
        let mut out = String::new();
        write_value(
            &mut out,
            &json!({"zeta": 1, "alpha": [1, "x\u{1}"], "e": {}, "f": [], "g": 2.0}),
        );
        assert_eq!(
            out,
            "{\n  \"zeta\": 1,\n  \"alpha\": [\n    1,\n    \"x\\u0001\"\n  ],\n  \"e\": {},\n  \"f\": [],\n  \"g\": 2\n}"
        );
    }

    #[test]
    fn integers_beyond_two_to_the_53_round_like_doubles() {
        let mut out = String::new();
        write_value(
            &mut out,
            &json!([
                9007199254740993u64,
                18446744073709551615u64,
                -9007199254740991i64
            ]),
        );
        assert_eq!(
            out,
            "[\n  9007199254740992,\n  18446744073709552000,\n  -9007199254740991\n]"
        );
    }

    #[test]
    fn index_keys_come_first_as_in_javascript() {
        let mut out = String::new();
        write_value(&mut out, &json!({"b": 1, "10": 2, "2": 3, "01": 4}));
        assert_eq!(
            out,
            "{\n  \"2\": 3,\n  \"10\": 2,\n  \"b\": 1,\n  \"01\": 4\n}"
        );
    }

    #[test]
    fn length_hints_are_exact_for_text_flags_and_integers() {
        let values = [
            json!("héllo"),
            json!(true),
            json!(false),
            json!(null),
            json!(0),
            json!(7),
            json!(-10),
            json!(1000),
            json!(-9007199254740991i64),
            json!([]),
            json!({}),
        ];
        for v in &values {
            let mut out = String::new();
            write_value(&mut out, v);
            assert_eq!(ValueRef::Json(v).len_hint(), out.len(), "{v}");
        }
        assert_eq!(ValueRef::Str("abc").len_hint(), 3);
        assert_eq!(ValueRef::Bool(false).len_hint(), 5);
        // Not exact, but never far below what a double prints.
        for f in [562.5, 1e21, -1.5e-7, 0.1 + 0.2, f64::MIN_POSITIVE] {
            let v = json!(f);
            let mut out = String::new();
            write_value(&mut out, &v);
            assert!(ValueRef::Json(&v).len_hint() >= out.len(), "{v}");
        }
    }

    #[test]
    fn truthiness_is_javascripts() {
        for v in [json!(false), json!(0), json!(0.0), json!(""), json!(null)] {
            assert!(!is_truthy(&v), "{v}");
        }
        for v in [
            json!("0"),
            json!("false"),
            json!([]),
            json!({}),
            json!(-1),
            json!(true),
        ] {
            assert!(is_truthy(&v), "{v}");
        }
    }
}
