//! The page of a failed request, and how a page handler's failures reach
//! it (`result.or_page(&chrome)?`); the answer to a request that has no
//! signed-in user (the login page, or the error page when the catalog
//! failed).

use super::prose::Prose;
use super::shared::query_escape;
use super::{Chrome, DiagnosticView, html};
use crate::auth::NoPageUser;
use crate::failure::Failure;
use askama::Template;
use axum::response::{IntoResponse, Redirect, Response};
use promptpack::Severity;

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    chrome: Option<Chrome>,
    status: String,
    code: String,
    message: Prose,
    diagnostics: Vec<DiagnosticView>,
}

/// The page of a failed request, with its status. Each thing is said once:
/// an error of one diagnostic with no place is the message (its code shown
/// apart, not repeated in it); diagnostics with places, or several, are
/// listed under a count.
pub(crate) fn failure_page(failure: Failure, chrome: Option<Chrome>) -> Response {
    let all = failure
        .error
        .as_ref()
        .map(|e| e.diagnostics())
        .unwrap_or_default();
    let (message, diagnostics) = match all {
        [only] if only.location.is_none() => {
            let message = match &only.help {
                Some(help) => format!("{} ({help})", only.message),
                None => only.message.clone(),
            };
            (message, Vec::new())
        }
        [] => (failure.message, Vec::new()),
        [_] => (
            "1 problem, at its place below:".to_string(),
            DiagnosticView::all(all, Severity::Error),
        ),
        _ => (
            format!("{} problems, each at its place below:", all.len()),
            DiagnosticView::all(all, Severity::Error),
        ),
    };
    let page = ErrorPage {
        chrome,
        status: failure.status.to_string(),
        code: failure.code,
        message: Prose::of(&message),
        diagnostics,
    };
    let mut response = html(&page);
    *response.status_mut() = failure.status;
    response
}

/// What a page handler returns: the page, or the page of its failure.
pub(crate) type PageResult = Result<Response, PageFailure>;

/// A failure on a page, shown with the header of the user who met it
/// (boxed: handlers return it through every `?`).
pub(crate) struct PageFailure(Box<(Failure, Option<Chrome>)>);

impl IntoResponse for PageFailure {
    fn into_response(self) -> Response {
        let (failure, chrome) = *self.0;
        failure_page(failure, chrome)
    }
}

/// Attaches the page's header to a failure: `result.or_page(&chrome)?`.
pub(crate) trait OrPage<T> {
    fn or_page(self, chrome: &Chrome) -> Result<T, PageFailure>;
}

impl<T, E: Into<Failure>> OrPage<T> for Result<T, E> {
    fn or_page(self, chrome: &Chrome) -> Result<T, PageFailure> {
        self.map_err(|e| {
            PageFailure(Box::new((
                e.into(),
                Some(Chrome {
                    user: chrome.user.clone(),
                    role: chrome.role.clone(),
                    csrf: chrome.csrf.clone(),
                }),
            )))
        })
    }
}

impl IntoResponse for NoPageUser {
    fn into_response(self) -> Response {
        match self {
            NoPageUser::SignIn { here } => {
                Redirect::to(&format!("/login?next={}", query_escape(&here))).into_response()
            }
            NoPageUser::Unavailable(failure) => failure_page(failure, None),
        }
    }
}
