//! A moment on a page: `2026-12-04 22:44 UTC`, with the full RFC 3339 time
//! (milliseconds and all) in its tooltip. (Not in a `datetime` too: the
//! list page has a hundred of them, and nothing reads it.)

use askama::filters::HtmlSafe;
use promptpack_catalog::Timestamp;
use std::fmt;

/// A catalog time as a page shows it.
pub(crate) struct When {
    full: String,
}

impl When {
    pub(crate) fn of(at: Timestamp) -> When {
        When {
            full: at.to_string(),
        }
    }

    /// The date and the minute: `2026-12-04 22:44 UTC`.
    fn short(&self) -> String {
        match (self.full.get(..10), self.full.get(11..16)) {
            (Some(day), Some(minute)) if self.full.get(10..11) == Some("T") => {
                format!("{day} {minute} UTC")
            }
            _ => self.full.clone(),
        }
    }
}

impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Digits, `-`, `:`, `.`, `T`, `Z` and a space: nothing to escape.
        write!(
            f,
            "<time title=\"{full}\">{short}</time>",
            full = self.full,
            short = self.short()
        )
    }
}

/// Its `Display` is HTML made of a timestamp's digits: nothing to escape.
impl HtmlSafe for When {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_reads_to_the_minute_with_the_full_time_on_hover() {
        // 2026-12-04T22:44:31.123Z
        let at = When::of(Timestamp(1_796_424_271_123));
        assert_eq!(
            at.to_string(),
            "<time title=\"2026-12-04T22:44:31.123Z\">2026-12-04 22:44 UTC</time>"
        );
    }
}
