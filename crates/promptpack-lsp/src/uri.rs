//! `file:` URIs and the paths they name.

use lsp_types::Uri;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// What a path keeps unescaped: letters, digits, `/` and the marks RFC 3986
/// allows in a path segment; the rest (spaces, `#`, `?`, `%`…) is escaped.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The file a `file:` URI names; `None` for another scheme.
pub(crate) fn to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host is a file here.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let decoded = percent_decode_str(path).decode_utf8().ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

/// The `file:` URI of an absolute path.
pub(crate) fn from_path(path: &Path) -> Option<Uri> {
    let text = path.to_str()?;
    let encoded = utf8_percent_encode(text, PATH).to_string();
    Uri::from_str(&format!("file://{encoded}")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        let path = Path::new("/tmp/my prompts/templates/a#b/system.md");
        let uri = from_path(path).expect("a URI");
        assert_eq!(
            uri.as_str(),
            "file:///tmp/my%20prompts/templates/a%23b/system.md"
        );
        assert_eq!(to_path(uri.as_str()).as_deref(), Some(path));
        assert_eq!(to_path("untitled:Untitled-1"), None);
        assert_eq!(
            to_path("file://localhost/x").as_deref(),
            Some(Path::new("/x"))
        );
    }
}
