//! What the pages share: the header and rendering a page, a page
//! handler's failures, the prologue of a form that writes, and the small
//! text helpers every page would otherwise write again.

use crate::action::Action;
use crate::auth::PageUser;
use crate::failure::Failure;
use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

/// Who is signed in, for the header and the forms.
#[derive(Clone)]
pub(crate) struct Chrome {
    pub(crate) user: String,
    pub(crate) role: String,
    pub(crate) csrf: String,
}

impl Chrome {
    pub(crate) fn of(page_user: &PageUser) -> Chrome {
        Chrome {
            user: page_user.user.name.clone(),
            role: page_user.user.role.to_string(),
            csrf: page_user.csrf.clone(),
        }
    }
}

/// Renders `template` as a page.
pub(crate) fn html(template: &impl Template) -> Response {
    match template.render() {
        Ok(body) => Html(body).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the page could not be rendered: {e}"),
        )
            .into_response(),
    }
}

/// Renders `template` as a page answered with `status` (a refused write
/// shown with its draft kept, the error page).
pub(crate) fn html_with_status(status: StatusCode, template: &impl Template) -> Response {
    let mut response = html(template);
    *response.status_mut() = status;
    response
}

/// What a page handler returns: the page, or the page of its failure.
pub(crate) type PageResult = Result<Response, PageFailure>;

/// A failure on a page, shown with the header of the user who met it
/// (boxed: handlers return it through every `?`). Its response is the
/// error page (`error.rs`).
pub(crate) struct PageFailure(pub(crate) Box<(Failure, Option<Chrome>)>);

/// Attaches the page's header to a failure: `result.or_page(&chrome)?`.
pub(crate) trait OrPage<T> {
    fn or_page(self, chrome: &Chrome) -> Result<T, PageFailure>;
}

impl<T, E: Into<Failure>> OrPage<T> for Result<T, E> {
    fn or_page(self, chrome: &Chrome) -> Result<T, PageFailure> {
        self.map_err(|e| PageFailure(Box::new((e.into(), Some(chrome.clone())))))
    }
}

/// A form that writes: its CSRF token.
#[derive(serde::Deserialize)]
pub(crate) struct CsrfForm {
    #[serde(default)]
    pub(crate) csrf: String,
}

/// The prologue of a page that offers a write (an edit form, a move's
/// confirmation): the page's header, or the page of the refusal when the
/// user's role may not take `action`.
pub(crate) fn may(user: &PageUser, action: Action<'_>) -> Result<Chrome, PageFailure> {
    let chrome = Chrome::of(user);
    action.check(&user.user).or_page(&chrome)?;
    Ok(chrome)
}

/// The prologue of a form sent to write: the CSRF token it carries checked
/// first (a forged form learns nothing of roles), then the role, as
/// [`may`].
pub(crate) fn may_send(
    user: &PageUser,
    csrf: &str,
    action: Action<'_>,
) -> Result<Chrome, PageFailure> {
    user.check_csrf(csrf).or_page(&Chrome::of(user))?;
    may(user, action)
}

/// A textarea's text as the catalog keeps it: browsers send its line
/// breaks as CRLF, the files are LF.
pub(crate) fn form_text(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// A content hash as the history tables show it: its first 12 digits.
pub(crate) fn short_hash(hash: &str) -> String {
    hash.chars().take(12).collect()
}

/// `text` for a URL's query: everything but unreserved characters
/// percent-encoded.
pub(crate) fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
