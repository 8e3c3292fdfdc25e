//! Where a browser goes after signing in: a path of this site, decided on
//! the URL as a browser reads it, never another site.
//!
//! A browser does not read `next` as it was written: it drops tabs and line
//! breaks anywhere, trims spaces and control characters at both ends, reads
//! `\` as `/`, and resolves dot segments, so `/\t/host`, `/\host` and
//! `/.//host` all lead to another host. Checking the text misses some form
//! or other; parsing it with the WHATWG URL parser (the browsers' own
//! algorithm, through the `url` crate) against a base of this site and
//! keeping only what stays on it does not.

use url::Url;

/// The origin that `next` is resolved against: any host would do, since
/// only whether the result stays on it matters.
const BASE: &str = "http://console.invalid/";

/// `next` as a path of this site (with its query and fragment, escaped as a
/// browser would send them), or `/` for anything that is not one: another
/// host or scheme, a relative reference, or text that does not parse.
pub(crate) fn safe_next(next: Option<&str>) -> String {
    next.and_then(same_site_path)
        .unwrap_or_else(|| "/".to_string())
}

fn same_site_path(next: &str) -> Option<String> {
    // Only a path is taken, and a path starts with a slash (a browser reads
    // `\` as one) once what it ignores is gone.
    let read: String = next
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let read = read.trim_matches(|c: char| c <= ' ');
    if !read.starts_with(['/', '\\']) {
        return None;
    }
    let base = Url::parse(BASE).ok()?;
    let resolved = base.join(read).ok()?;
    if resolved.origin() != base.origin() {
        return None;
    }
    let mut path = resolved.path().to_string();
    // `/.//host` resolves to the path `//host`, which as a `Location` is
    // another host again.
    if path.starts_with("//") {
        return None;
    }
    if let Some(query) = resolved.query() {
        path.push('?');
        path.push_str(query);
    }
    if let Some(fragment) = resolved.fragment() {
        path.push('#');
        path.push_str(fragment);
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn no_text_leaves_the_site() {
        // Any text: the result is a path that a browser reads as one of
        // this site, and a valid header value.
        for next in [
            "/\u{b}/x",
            "/\u{c}/x",
            "/\u{0}/x",
            "/\u{a0}/x",
            "/\u{2028}/x",
            "/ /x",
            "\\\t\\x",
            "/\\\\x",
            "/%09/x",
            "/?//x",
            "/#//x",
            "/;//x",
            "/x\r\nset-cookie: a=b",
        ] {
            let shown = safe_next(Some(next));
            assert!(
                shown.starts_with('/') && !shown.starts_with("//"),
                "{next:?} → {shown:?}"
            );
            assert!(!shown.starts_with("/\\"), "{next:?} → {shown:?}");
            assert!(
                axum::http::HeaderValue::from_str(&shown).is_ok(),
                "{next:?} → {shown:?}"
            );
            assert!(
                !shown.contains(['\r', '\n', '\t', ' ']),
                "{next:?} → {shown:?}"
            );
        }
        assert_eq!(safe_next(None), "/");
    }
}
