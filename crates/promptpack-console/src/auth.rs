//! Who is asking, and what they may do: API tokens, browser sessions, the
//! CSRF token of every form, roles and protected labels.
//!
//! A token is shown once, when it is made; the catalog keeps only its
//! SHA-256 ([`promptpack_catalog::token_hash`]). A session is the token's
//! hash behind a random id in an `HttpOnly`, `SameSite=Strict` cookie, so
//! the user is looked up again on every request: a removed user is signed
//! out at once.

use crate::failure::{ApiFailure, Failure};
use crate::server::AppState;
use axum::extract::{FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Redirect, Response};
use promptpack_catalog::{Role, User, token_hash};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "promptpack_session";

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

/// A signed-in browser: the hash of the token it signed in with, and the
/// CSRF token its forms carry.
#[derive(Clone)]
struct Session {
    token_hash: String,
    csrf: String,
    expires: Instant,
}

/// The live sessions of this server (a restart signs everyone out).
#[derive(Default)]
pub(crate) struct Sessions {
    by_id: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// A new session for the token whose hash is `token_hash`: its id.
    pub(crate) fn open(&self, token_hash: String) -> String {
        let id = random_hex();
        let session = Session {
            token_hash,
            csrf: random_hex(),
            expires: Instant::now() + SESSION_LIFETIME,
        };
        if let Ok(mut sessions) = self.by_id.lock() {
            let now = Instant::now();
            sessions.retain(|_, s| s.expires > now);
            sessions.insert(id.clone(), session);
        }
        id
    }

    fn get(&self, id: &str) -> Option<Session> {
        let sessions = self.by_id.lock().ok()?;
        sessions
            .get(id)
            .filter(|s| s.expires > Instant::now())
            .cloned()
    }

    pub(crate) fn close(&self, id: &str) {
        if let Ok(mut sessions) = self.by_id.lock() {
            sessions.remove(id);
        }
    }
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

/// The user of token hash `hash`, if any.
pub(crate) async fn user_of(state: &AppState, hash: String) -> Result<Option<User>, Failure> {
    Ok(state
        .catalog
        .run("console", move |catalog| catalog.user_by_token_hash(&hash))
        .await?)
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
            Some(user) => Ok(ApiUser(user)),
            None => Err(Failure::new(
                axum::http::StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "the token is not one of this catalog's users",
            )
            .into()),
        }
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
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

/// Where a request without a session goes: the login page, back here after.
pub(crate) struct ToLogin(String);

impl IntoResponse for ToLogin {
    fn into_response(self) -> Response {
        Redirect::to(&format!("/login?next={}", query_escape(&self.0))).into_response()
    }
}

impl FromRequestParts<Arc<AppState>> for PageUser {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<PageUser, Response> {
        let here = parts
            .extensions
            .get::<OriginalUri>()
            .map(|uri| uri.0.to_string())
            .unwrap_or_else(|| parts.uri.to_string());
        let to_login = || ToLogin(here.clone()).into_response();
        let Some(id) = cookie(&parts.headers, SESSION_COOKIE) else {
            return Err(to_login());
        };
        let Some(session) = state.sessions.get(&id) else {
            return Err(to_login());
        };
        match user_of(state, session.token_hash).await {
            Ok(Some(user)) => Ok(PageUser {
                user,
                csrf: session.csrf,
                session: id,
            }),
            Ok(None) => {
                state.sessions.close(&id);
                Err(to_login())
            }
            Err(failure) => Err(crate::pages::failure_page(failure, None)),
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

/// Refuses `user` unless their role is at least `role`; `what` is the
/// action, for the message.
pub(crate) fn require(user: &User, role: Role, what: &str) -> Result<(), Failure> {
    if user.role >= role {
        Ok(())
    } else {
        Err(Failure::forbidden(format!(
            // "has the … role", not "is a …": no article to get wrong.
            "{what} needs the {role} role; `{}` has the {} role",
            user.name, user.role
        )))
    }
}

/// Refuses `user` moving, splitting or removing `label` unless an editor,
/// and an admin for a protected label.
pub(crate) fn may_change_label(state: &AppState, user: &User, label: &str) -> Result<(), Failure> {
    if state.is_protected(label) {
        require(
            user,
            Role::Admin,
            &format!("changing protected label `{label}`"),
        )
    } else {
        require(user, Role::Editor, &format!("changing label `{label}`"))
    }
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

/// Where to go after signing in: a path of this site, never another site
/// (`//host` or `http://…`).
pub(crate) fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path) if path.starts_with('/') && !path.starts_with("//") && !path.contains('\\') => {
            path.to_string()
        }
        _ => "/".to_string(),
    }
}
