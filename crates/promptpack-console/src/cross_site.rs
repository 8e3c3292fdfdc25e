//! Whether a form was posted by another site: the sign-in form has no
//! session yet, hence no CSRF token, so a page elsewhere could sign a
//! visitor in as the attacker's user. A browser says where a post comes
//! from (`Sec-Fetch-Site`, and `Origin` on every cross-origin post); a
//! client that is no browser (curl, a script) sends neither and is let
//! through, since it can only sign itself in.

use axum::http::{HeaderMap, header};

/// Whether the request comes from a page of another origin: another host,
/// or another port of this one (`SameSite` cookies go by site, ports
/// apart).
pub(crate) fn is_cross_site(headers: &HeaderMap) -> bool {
    // The browser's own word first: it is computed against the page that
    // posted, whatever a proxy in front did to `Host`. `none` is the
    // person's own doing (a bookmark, the address bar).
    if let Some(site) = headers.get("sec-fetch-site") {
        return !matches!(site.as_bytes(), b"same-origin" | b"none");
    }
    // A browser without `Sec-Fetch-Site` sends `Origin` on a cross-origin
    // post: it must name the host the request was sent to.
    match headers.get(header::ORIGIN) {
        None => false,
        Some(origin) => {
            let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
            let origin_host = origin
                .to_str()
                .ok()
                .and_then(|o| o.split_once("://"))
                .map(|(_, authority)| authority);
            // `Origin: null` (a sandboxed frame, a `data:` page) has no
            // host and is refused with every other mismatch.
            match (origin_host, host) {
                (Some(from), Some(to)) => !from.eq_ignore_ascii_case(to),
                _ => true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_cross_site;
    use axum::http::HeaderMap;

    #[test]
    fn posts_are_placed_by_their_headers() {
        // (headers, cross-site)
        let cases: &[(&[(&str, &str)], bool)] = &[
            (&[], false),
            (&[("host", "127.0.0.1:7878")], false),
            (&[("host", "c:1"), ("origin", "http://c:1")], false),
            (&[("host", "C:1"), ("origin", "https://c:1")], false),
            (&[("host", "c:1"), ("sec-fetch-site", "same-origin")], false),
            (&[("host", "c:1"), ("sec-fetch-site", "none")], false),
            (&[("host", "c:1"), ("origin", "http://c:2")], true),
            (&[("host", "c:1"), ("origin", "http://evil")], true),
            (&[("host", "c:1"), ("origin", "null")], true),
            (&[("origin", "http://c:1")], true),
            (&[("host", "c:1"), ("sec-fetch-site", "same-site")], true),
            (&[("host", "c:1"), ("sec-fetch-site", "cross-site")], true),
            (&[("host", "c:1"), ("sec-fetch-site", "")], true),
            (
                &[
                    ("host", "c:1"),
                    ("origin", "http://c:1"),
                    ("sec-fetch-site", "cross-site"),
                ],
                true,
            ),
            // Behind a proxy that sends its own `Host`, the browser's word
            // decides.
            (
                &[
                    ("host", "127.0.0.1:7878"),
                    ("origin", "https://console.example"),
                    ("sec-fetch-site", "same-origin"),
                ],
                false,
            ),
        ];
        for (given, cross) in cases {
            let mut headers = HeaderMap::new();
            for (name, value) in *given {
                headers.insert(*name, value.parse().expect("a header value"));
            }
            assert_eq!(is_cross_site(&headers), *cross, "{given:?}");
        }
    }
}
