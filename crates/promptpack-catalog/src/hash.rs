//! The catalog's hashes, in one leaf that the model, the compiler and the
//! checks of what the store holds all read: SHA-256 as lowercase hex.

use sha2::{Digest, Sha256};

/// The content hash of a version: SHA-256, as lowercase hex, of its
/// resolved system text, followed, when it has a user part, by a NUL byte
/// and the resolved user text. Two versions have the same hash exactly when
/// they render the same text.
pub fn content_hash(resolved_system: &str, resolved_user: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(resolved_system.as_bytes());
    if let Some(user) = resolved_user {
        hasher.update([0u8]);
        hasher.update(user.as_bytes());
    }
    hex(&hasher.finalize())
}

/// The content hash of a version of either shape: [`content_hash`] of a
/// prompt of two files; for a conversation, SHA-256 of its resolved system
/// text, two NUL bytes and its resolved conversation (no text of a version
/// holds a NUL, so neither shape's bytes can be the other's).
pub(crate) fn version_hash(
    resolved_system: &str,
    resolved_user: Option<&str>,
    resolved_messages: Option<&str>,
) -> String {
    let Some(messages) = resolved_messages else {
        return content_hash(resolved_system, resolved_user);
    };
    let mut hasher = Sha256::new();
    hasher.update(resolved_system.as_bytes());
    hasher.update([0u8, 0u8]);
    hasher.update(messages.as_bytes());
    hex(&hasher.finalize())
}

/// SHA-256 of `text`, lowercase hex: a snippet revision's hash, a
/// contract's, a session token's.
pub(crate) fn text_hash(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_tells_a_user_part_from_none() {
        let sha_of_abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(content_hash("abc", None), sha_of_abc);
        assert_eq!(text_hash("abc"), sha_of_abc);
        assert_ne!(content_hash("abc", Some("")), sha_of_abc);
        assert_ne!(content_hash("ab", Some("c")), content_hash("abc", None));
    }

    #[test]
    fn the_hash_tells_a_conversation_from_a_user_part() {
        let cases = [
            (version_hash("s", None, None), content_hash("s", None)),
            (
                version_hash("s", Some("u"), None),
                content_hash("s", Some("u")),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want, "two files hash as they always did");
        }
        let conversation = version_hash("s", None, Some("m"));
        assert_ne!(conversation, content_hash("s", Some("m")));
        // ("s", "\0m") as two files would collide, but no text of a
        // version holds a NUL: the content rules refuse one.
        assert_ne!(conversation, version_hash("s", None, Some("n")));
    }
}
