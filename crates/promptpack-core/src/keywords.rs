//! Rust's keywords, written once: the generated vars struct's fields
//! (`field`) and the crate path generated code names the runtime by
//! (`promptpack-load`'s config) are both Rust names, and must refuse or
//! escape the same words.

/// Keywords an identifier may be only as a raw identifier (`r#type`): the
/// strict keywords, and those reserved for later, of every edition up to
/// 2024 (`gen`), since generated code may be compiled under any of them.
pub const RAW_ONLY: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];

/// Words no identifier may be, not even a raw one: the path keywords, and
/// `_`.
pub const NEVER: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Whether `name` is one of [`RAW_ONLY`] or [`NEVER`]: a word that is not
/// a plain identifier.
///
/// ```
/// use promptpack_core::keywords::is_keyword;
/// assert!(is_keyword("type") && is_keyword("Self") && is_keyword("gen"));
/// assert!(!is_keyword("kind") && !is_keyword("r#type"));
/// ```
pub fn is_keyword(name: &str) -> bool {
    RAW_ONLY.contains(&name) || NEVER.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two lists are apart (a word in both would be escaped one way by
    /// `field` and another way by a reader of the lists), and each word is
    /// written once.
    #[test]
    fn the_lists_are_apart_and_without_repeats() {
        let mut all: Vec<&str> = RAW_ONLY.iter().chain(NEVER).copied().collect();
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count, "a keyword is written twice");
    }
}
