//! The Rust field a template variable becomes in its generated vars struct:
//! known here, and not only in the code generator, so that a diagnostic of
//! the runtime (a contract check) names fields as the user's code writes
//! them, without the runtime depending on a case-conversion crate.

/// Keywords a field may only be as a raw identifier (`r#type`).
const STRICT_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];

/// Keywords that cannot even be raw identifiers.
const UNRAWABLE_KEYWORDS: &[&str] = &["self", "Self", "super", "crate", "_"];

/// The Rust field for template variable `name`: snake_case, raw when a
/// keyword, suffixed with `_` when not even a raw identifier may be used;
/// `None` when no field can be made of it (the build reports that).
///
/// ```
/// use promptpack_core::field::field_ident;
/// assert_eq!(field_ident("agentName").as_deref(), Some("agent_name"));
/// assert_eq!(field_ident("type").as_deref(), Some("r#type"));
/// assert_eq!(field_ident("self").as_deref(), Some("self_"));
/// assert_eq!(field_ident("_1a"), None);
/// ```
pub fn field_ident(name: &str) -> Option<String> {
    // Parsed templates only hold such names; a hand-made program may not.
    if !crate::syntax::is_var_name(name) {
        return None;
    }
    let snake = snake_case(name);
    // snake_case drops leading underscores (`_1a` becomes `1a`): what is
    // left must still start like an identifier.
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if UNRAWABLE_KEYWORDS.contains(&snake.as_str()) {
        return Some(format!("{snake}_"));
    }
    if STRICT_KEYWORDS.contains(&snake.as_str()) {
        return Some(format!("r#{snake}"));
    }
    Some(snake)
}

/// The field [`field_ident`] makes of `name`, or `name` itself when it
/// makes none (such a prompt never compiles, so there is no field to name).
pub fn field_name(name: &str) -> String {
    field_ident(name).unwrap_or_else(|| name.to_string())
}

/// `name` in snake_case, word for word as heck 0.5's `to_snake_case` (the
/// conversion fields were always made with, so generated names stay as they
/// were; a test compares the two): words split at characters other than
/// letters and digits, before an upper-case letter that follows a
/// lower-case one (`agentName`), and before the last of a run of upper-case
/// letters followed by a lower-case one (`HTTPServer`); joined with `_`,
/// lower-cased.
pub fn snake_case(name: &str) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum Mode {
        /// No cased character since the word began.
        Boundary,
        Lower,
        Upper,
    }
    let mut out = String::with_capacity(name.len() + 4);
    let mut first_word = true;
    let mut push_word = |word: &str, out: &mut String| {
        if !first_word {
            out.push('_');
        }
        first_word = false;
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            // As heck: a final capital sigma is the final form.
            if c == 'Σ' && chars.peek().is_none() {
                out.push('ς');
            } else {
                out.extend(c.to_lowercase());
            }
        }
    };
    for word in name.split(|c: char| !c.is_alphanumeric()) {
        let mut chars = word.char_indices().peekable();
        let mut start = 0;
        let mut mode = Mode::Boundary;
        while let Some((i, c)) = chars.next() {
            let Some(&(next_i, next)) = chars.peek() else {
                push_word(&word[start..], &mut out);
                break;
            };
            let next_mode = if c.is_lowercase() {
                Mode::Lower
            } else if c.is_uppercase() {
                Mode::Upper
            } else {
                mode
            };
            if next_mode == Mode::Lower && next.is_uppercase() {
                push_word(&word[start..next_i], &mut out);
                start = next_i;
                mode = Mode::Boundary;
            } else if mode == Mode::Upper && c.is_uppercase() && next.is_lowercase() {
                push_word(&word[start..i], &mut out);
                start = i;
                mode = Mode::Boundary;
            } else {
                mode = next_mode;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_names() {
        for (name, field) in [
            ("agentName", Some("agent_name")),
            ("agent_name", Some("agent_name")),
            ("HTTPServer", Some("http_server")),
            ("userID", Some("user_id")),
            ("tool2Name", Some("tool2_name")),
            ("a__b", Some("a_b")),
            ("_private", Some("private")),
            ("type", Some("r#type")),
            ("Self", Some("self_")),
            ("crate", Some("crate_")),
            ("_1a", None),
            ("9lives", None),
            ("has space", None),
        ] {
            assert_eq!(field_ident(name).as_deref(), field, "{name}");
        }
        assert_eq!(field_name("_1a"), "_1a");
    }

    /// The generated code's fields were made with heck; any name on which
    /// the two conversions differ would rename a user's field.
    #[cfg(feature = "lint")]
    mod against_heck {
        use super::super::snake_case;
        use heck::ToSnakeCase;
        use proptest::prelude::*;

        #[test]
        fn agrees_on_listed_names() {
            for name in [
                "",
                "_",
                "__",
                "a",
                "A",
                "aB",
                "AB",
                "ABc",
                "AbC",
                "abcDEF",
                "ABCdef",
                "a1B",
                "A1b",
                "1aB",
                "a_B_c",
                "_A",
                "A_",
                "XMLHttpRequest",
                "iOS",
                "ID",
                "Id",
                "myURLIs",
                "x9Y9z",
                "ΣΑΣ",
                "aΣ",
            ] {
                assert_eq!(snake_case(name), name.to_snake_case(), "{name:?}");
            }
        }

        proptest! {
            #[test]
            fn agrees_on_names(name in "[A-Za-z0-9_]{0,12}") {
                prop_assert_eq!(snake_case(&name), name.to_snake_case());
            }

            #[test]
            fn agrees_on_mixed_case_runs(name in "([A-Z]{1,3}[a-z]{0,3}[0-9]?_?){1,4}") {
                prop_assert_eq!(snake_case(&name), name.to_snake_case());
            }
        }
    }
}
