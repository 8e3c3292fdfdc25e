//! `/login` and `/logout`: a token for a session cookie, and back (from
//! this browser, or with `everywhere` from every browser of the user).

use super::shared::{Chrome, html, html_with_status};
use crate::auth::{PageUser, close_sessions, open_session, session_cookie};
use crate::cross_site::is_cross_site;
use crate::next_path::safe_next;
use crate::request_log::{self, Peer};
use crate::state::AppState;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
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
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    Form(form): Form<SignIn>,
) -> Response {
    let peer = peer.map(|Extension(peer)| peer);
    let next = safe_next(form.next.as_deref());
    let hash = token_hash(form.token.trim());
    let refused = |status: StatusCode, error: &str| {
        html_with_status(
            status,
            &LoginPage {
                chrome: None,
                next: next.clone(),
                error: Some(error.to_string()),
            },
        )
    };
    if is_cross_site(&headers) {
        request_log::refused_sign_in(peer, "posted by another site");
        return refused(
            StatusCode::FORBIDDEN,
            "A sign-in posted from another site is refused: sign in on this page.",
        );
    }
    match open_session(&state, hash).await {
        Ok(Some((id, _))) => (
            [(header::SET_COOKIE, session_cookie(&id))],
            Redirect::to(&next),
        )
            .into_response(),
        Ok(None) => {
            request_log::refused_sign_in(peer, "the token is no user's");
            refused(
                StatusCode::UNAUTHORIZED,
                "That token is not one of this catalog's users.",
            )
        }
        // Nothing is known of the token yet: the catalog is down, and the
        // sign-in may be tried again.
        Err(failure) => refused(
            failure.status,
            "The catalog is unavailable, so no one can sign in now: try again shortly.",
        ),
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
        return super::error::failure_page(failure, chrome());
    }
    let everywhere = form.everywhere.is_some();
    if let Err(failure) = close_sessions(&state, &user.session, &user.user.name, everywhere).await {
        return super::error::failure_page(failure, chrome());
    }
    (
        [(header::SET_COOKIE, session_cookie(""))],
        Redirect::to("/login"),
    )
        .into_response()
}
