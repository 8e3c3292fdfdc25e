//! How a prompt set is written, apart from where it lives: the delimiters
//! and the lint exemptions, as `promptpack.toml` sets them.

use crate::syntax::Delimiters;

/// The settings of a prompt set that the language and the lints use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// The token delimiters (`{{` `}}` by default).
    pub delimiters: Delimiters,
    /// Template ids exempt from the naming lints.
    pub naming_exempt: Vec<String>,
    /// A line holding only a block tag (`{{#if …}}`, `{{else}}`,
    /// `{{else if …}}`, `{{/if}}`) and whitespace disappears with its
    /// newline, as Mustache's standalone lines do. Off by default: the
    /// original loader kept such lines.
    pub standalone_tags: bool,
}
