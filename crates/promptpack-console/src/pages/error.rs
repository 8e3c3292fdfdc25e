//! The page of a failed request: what a page handler's failure
//! ([`PageFailure`]) and a request without a signed-in user
//! ([`NoPageUser`]: the login page, or this page when the catalog failed)
//! answer.

use super::diagnostics::DiagnosticView;
use super::prose::Prose;
use super::shared::{Chrome, PageFailure, html_with_status, query_escape};
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
    html_with_status(failure.status, &page)
}

impl IntoResponse for PageFailure {
    fn into_response(self) -> Response {
        let (failure, chrome) = *self.0;
        failure_page(failure, chrome)
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
