//! The Rust field a template variable becomes in its generated vars struct:
//! known here, and not only in the code generator, so that a diagnostic of
//! the runtime (a contract check) names fields as the user's code writes
//! them. The case conversion is heck's, the one the generator always used.

use crate::keywords::{NEVER, RAW_ONLY};
use heck::ToSnakeCase;

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
    let snake = name.to_snake_case();
    // snake_case drops leading underscores (`_1a` becomes `1a`): what is
    // left must still start like an identifier.
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if NEVER.contains(&snake.as_str()) {
        return Some(format!("{snake}_"));
    }
    if RAW_ONLY.contains(&snake.as_str()) {
        return Some(format!("r#{snake}"));
    }
    Some(snake)
}

/// The field [`field_ident`] makes of `name`, or `name` itself when it
/// makes none (such a prompt never compiles, so there is no field to name).
pub fn field_name(name: &str) -> String {
    field_ident(name).unwrap_or_else(|| name.to_string())
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

    /// Every keyword becomes a field the compiler takes: raw, or suffixed
    /// with `_` when not even a raw identifier may be it (`_` itself makes
    /// none: snake_case leaves nothing of it).
    #[test]
    fn every_keyword_is_escaped() {
        for keyword in RAW_ONLY {
            assert_eq!(field_ident(keyword), Some(format!("r#{keyword}")));
        }
        for keyword in NEVER.iter().filter(|k| **k != "_") {
            let snake = keyword.to_snake_case();
            assert_eq!(field_ident(keyword), Some(format!("{snake}_")), "{keyword}");
        }
        assert_eq!(field_ident("_"), None);
    }
}
