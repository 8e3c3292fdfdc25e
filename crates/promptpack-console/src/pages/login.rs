//! `/login` and `/logout`: a token for a session cookie, and back (from
//! this browser, or with `everywhere` from every browser of the user).

use super::{Chrome, html};
use crate::auth::{PageUser, close_sessions, open_session, safe_next, session_cookie};
use crate::server::AppState;
use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use promptpack_catalog::token_hash;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    chrome: Option<Chrome>,
    next: String,
    error: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct Next {
    next: Option<String>,
}

pub(crate) async fn form(Query(Next { next }): Query<Next>) -> Response {
    html(&LoginPage {
        chrome: None,
        next: safe_next(next.as_deref()),
        error: None,
    })
}

#[derive(Deserialize)]
pub(crate) struct SignIn {
    token: String,
    next: Option<String>,
}

pub(crate) async fn sign_in(
    State(state): State<Arc<AppState>>,
    Form(form): Form<SignIn>,
) -> Response {
    let next = safe_next(form.next.as_deref());
    let hash = token_hash(form.token.trim());
    let refused = |error: String| {
        let mut page = html(&LoginPage {
            chrome: None,
            next: next.clone(),
            error: Some(error),
        });
        *page.status_mut() = axum::http::StatusCode::UNAUTHORIZED;
        page
    };
    match open_session(&state, hash).await {
        Ok(Some((id, _))) => (
            [(header::SET_COOKIE, session_cookie(&id))],
            Redirect::to(&next),
        )
            .into_response(),
        Ok(None) => refused("That token is not one of this catalog's users.".to_string()),
        Err(failure) => refused(failure.message),
    }
}

/// The sign-out form: its CSRF token, and `everywhere` to end every
/// session of the user (every browser, every console of the catalog).
#[derive(Deserialize)]
pub(crate) struct SignOut {
    csrf: String,
    #[serde(default)]
    everywhere: Option<String>,
}

pub(crate) async fn sign_out(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Form(form): Form<SignOut>,
) -> Response {
    let chrome = || Some(Chrome::of(&user));
    if let Err(failure) = user.check_csrf(&form.csrf) {
        return super::failure_page(failure, chrome());
    }
    let everywhere = form.everywhere.is_some();
    if let Err(failure) = close_sessions(&state, &user.session, &user.user.name, everywhere).await {
        return super::failure_page(failure, chrome());
    }
    (
        [(header::SET_COOKIE, session_cookie(""))],
        Redirect::to("/login"),
    )
        .into_response()
}
