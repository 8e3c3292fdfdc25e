//! Who is asking: API tokens, browser sessions and the CSRF token of every
//! form. What each user's role may do is [`crate::action`]'s table.
//!
//! A token is shown once, when it is made; the catalog keeps only its
//! SHA-256 ([`promptpack_catalog::token_hash`]). A session is a random id
//! in an `HttpOnly`, `SameSite=Strict` cookie, kept in the catalog by its
//! SHA-256 ([`promptpack_catalog::Catalog::open_session`]): any console of
//! the catalog serves it, a restart keeps it, and its user is looked up
//! again on every request, so a removed user is signed out at once.

use crate::failure::{ApiFailure, Failure};
use crate::request_log::RequestUser;
use crate::state::AppState;
use axum::extract::{FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use promptpack_catalog::{User, token_hash};
use std::sync::Arc;
use std::time::Duration;

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "promptpack_session";

/// How many browser sessions a user keeps unless the console is told
/// otherwise ([`Settings::max_sessions_per_user`](crate::Settings)): a
/// browser on each of a few machines, with room to spare.
pub const DEFAULT_MAX_SESSIONS: u32 = 20;

/// How long a session lasts without a new sign-in.
const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);

/// A new API token: `pp_` and 64 hex digits from the operating system's
/// random generator (256 bits). Give it to its user; store only
/// [`token_hash`] of it.
///
/// # Panics
/// When the operating system has no random generator to read.
pub fn new_token() -> String {
    format!("pp_{}", random_hex())
}

fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    // Without randomness no token, session or CSRF token is safe: there
    // is nothing sound to go on with.
    getrandom::fill(&mut bytes).expect("the operating system's random generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Signs in the user of token hash `hash`: the new session's id and the
/// user, or `None` when the token is no user's. Past `cap` sessions of
/// that user the oldest end.
pub(crate) async fn open_session(
    state: &AppState,
    hash: String,
) -> Result<Option<(String, User)>, Failure> {
    let id = random_hex();
    let id_hash = token_hash(&id);
    let cap = state.max_sessions_per_user;
    let opened = state
        .catalog
        .run("console", move |catalog| {
            catalog.open_session(&hash, &id_hash, SESSION_LIFETIME, cap)
        })
        .await?;
    Ok(opened.map(|user| (id, user)))
}

/// Ends session `id`, or with `everywhere` every session of `user`.
pub(crate) async fn close_sessions(
    state: &AppState,
    id: &str,
    user: &str,
    everywhere: bool,
) -> Result<(), Failure> {
    let (id_hash, user) = (token_hash(id), user.to_string());
    state
        .catalog
        .run("console", move |catalog| {
            if everywhere {
                catalog.close_sessions(&user).map(drop)
            } else {
                catalog.close_session(&id_hash).map(drop)
            }
        })
        .await?;
    Ok(())
}

/// The CSRF token of session `id`: derived from the id rather than kept,
/// so that every console of the catalog gives a session the same one; a
/// page shows it, and it tells nothing of the id (nor of the hash the
/// catalog keeps).
fn csrf_of(id: &str) -> String {
    token_hash(&format!("promptpack csrf\n{id}"))
}

/// The `Set-Cookie` value of session `id` (an empty id with no lifetime
/// removes it).
pub(crate) fn session_cookie(id: &str) -> String {
    let age = if id.is_empty() {
        0
    } else {
        SESSION_LIFETIME.as_secs()
    };
    format!("{SESSION_COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={age}")
}

/// The user of token hash `hash`, if any. The caller is not known yet, so
/// a failure says only that the catalog is unavailable.
pub(crate) async fn user_of(state: &AppState, hash: String) -> Result<Option<User>, Failure> {
    state
        .catalog
        .run("console", move |catalog| catalog.user_by_token_hash(&hash))
        .await
        .map_err(|error| Failure::to_stranger(&error))
}

/// A caller of the JSON API: a user by a bearer token.
pub(crate) struct ApiUser(pub(crate) User);

impl FromRequestParts<Arc<AppState>> for ApiUser {
    type Rejection = ApiFailure;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<ApiUser, ApiFailure> {
        let token = bearer(&parts.headers).ok_or_else(Failure::unauthenticated)?;
        match user_of(state, token_hash(token)).await? {
            Some(user) => {
                RequestUser::record(&parts.extensions, &user.name);
                Ok(ApiUser(user))
            }
            None => Err(Failure::new(
                axum::http::StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "the token is not one of this catalog's users",
            )
            .into()),
        }
    }
}

pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// A signed-in browser's user, with the CSRF token its forms must carry.
pub(crate) struct PageUser {
    pub(crate) user: User,
    pub(crate) csrf: String,
    pub(crate) session: String,
}

/// Why a request has no page user. This module only finds out; the pages
/// say it (`pages/error.rs`): the login page, or the error page.
pub(crate) enum NoPageUser {
    /// No session, or one that ended: signing in comes back to `here`
    /// (the path and query asked for).
    SignIn { here: String },
    /// The catalog failed while the session was looked up. The caller is
    /// not known yet: a stranger learns only that the catalog is
    /// unavailable ([`Failure::to_stranger`]).
    Unavailable(Failure),
}

impl FromRequestParts<Arc<AppState>> for PageUser {
    type Rejection = NoPageUser;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<PageUser, NoPageUser> {
        let here = parts
            .extensions
            .get::<OriginalUri>()
            .map(|uri| uri.0.to_string())
            .unwrap_or_else(|| parts.uri.to_string());
        let Some(id) = cookie(&parts.headers, SESSION_COOKIE) else {
            return Err(NoPageUser::SignIn { here });
        };
        let id_hash = token_hash(&id);
        let found = state
            .catalog
            .run("console", move |catalog| catalog.session_user(&id_hash))
            .await;
        match found {
            Ok(Some(user)) => Ok(PageUser {
                // Recorded for the request log.
                user: RequestUser::record_user(&parts.extensions, user),
                csrf: csrf_of(&id),
                session: id,
            }),
            Ok(None) => Err(NoPageUser::SignIn { here }),
            Err(error) => Err(NoPageUser::Unavailable(Failure::to_stranger(&error))),
        }
    }
}

/// The value of cookie `name`, from every `Cookie` header.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
}

impl PageUser {
    /// Refuses a form whose CSRF token is not this session's.
    pub(crate) fn check_csrf(&self, sent: &str) -> Result<(), Failure> {
        if constant_time_eq(sent.as_bytes(), self.csrf.as_bytes()) {
            Ok(())
        } else {
            Err(Failure::new(
                axum::http::StatusCode::FORBIDDEN,
                "csrf",
                "the form's CSRF token is missing or stale: reload the page and try again",
            ))
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
