//! The headers every answer carries, so that a browser neither frames a
//! page (the move confirmation is one button), nor guesses a type, nor
//! tells other sites which page linked to them, nor keeps a signed-in page
//! in its cache.

use axum::http::{HeaderMap, HeaderValue, header};

/// What a page may load: its stylesheet and nothing else of anywhere else
/// (the pages use no script, image or inline style), forms that post only
/// here, and no frame of any site around it.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// Sets the protective headers on an answer's `headers`, over any the
/// handler set (none sets them), but for a `Cache-Control` the handler
/// chose (the console sets none; the relay's versions, which never change,
/// are `immutable`, and its snapshots revalidated by their `ETag`).
pub(crate) fn protect(headers: &mut HeaderMap) {
    let chosen_cache = headers.get(header::CACHE_CONTROL).cloned();
    let set = [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ),
        // For browsers that predate `frame-ancestors`.
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        // `same-origin`, not `no-referrer`: under `no-referrer` a browser
        // sends `Origin: null` with this site's own forms, which the
        // sign-in's cross-site check would refuse.
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ),
        // Every answer but the stylesheet depends on who asks; the
        // stylesheet is small, and one rule is simpler to hold.
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    for (name, value) in set {
        headers.insert(name, value);
    }
    if let Some(chosen) = chosen_cache {
        headers.insert(header::CACHE_CONTROL, chosen);
    }
}
