//! The request log and the log of refused sign-ins, through the `log`
//! crate (the program that runs the console picks the logger: the CLI's
//! writes to standard error).
//!
//! A line names the peer, the method, the path without its query (a
//! preview's query holds the values it was given), the status, the time
//! taken and the user when one was found; never a token, a cookie or a
//! header.

use axum::http::{Extensions, Method, StatusCode};
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The log target of every request's line.
pub(crate) const REQUESTS: &str = "promptpack_console::requests";

/// The log target of refused sign-ins, apart so that they can be kept
/// when requests are not.
pub(crate) const SIGN_INS: &str = "promptpack_console::sign_in";

/// Where a connection comes from, in every request's extensions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub(crate) SocketAddr);

/// Who made a request, once an extractor has found out: shared between
/// the request's extensions and the line logged after its answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestUser(Arc<OnceLock<String>>);

impl RequestUser {
    /// Records `name` as the user of the request whose extensions are
    /// `extensions`.
    pub(crate) fn record(extensions: &Extensions, name: &str) {
        if let Some(slot) = extensions.get::<RequestUser>() {
            let _ = slot.0.set(name.to_string());
        }
    }

    /// [`RequestUser::record`] of `user`'s name, giving `user` back.
    pub(crate) fn record_user(
        extensions: &Extensions,
        user: promptpack_catalog::User,
    ) -> promptpack_catalog::User {
        RequestUser::record(extensions, &user.name);
        user
    }

    fn name(&self) -> &str {
        self.0.get().map_or("-", String::as_str)
    }
}

/// The longest path logged: a path is the client's to choose.
const MAX_PATH: usize = 200;

/// Logs one request's answer.
pub(crate) fn request(
    peer: Option<Peer>,
    method: &Method,
    path: &str,
    status: StatusCode,
    took: Duration,
    user: &RequestUser,
) {
    let path = match path.char_indices().nth(MAX_PATH) {
        Some((end, _)) => format!("{}…", &path[..end]),
        None => path.to_string(),
    };
    log::info!(
        target: REQUESTS,
        "{} {method} {} {} {:.1}ms {}",
        shown_peer(peer),
        path.escape_debug(),
        status.as_u16(),
        took.as_secs_f64() * 1000.0,
        user.name(),
    );
}

/// Logs a refused sign-in: who tried, and why (never the token).
pub(crate) fn refused_sign_in(peer: Option<Peer>, why: &str) {
    log::warn!(target: SIGN_INS, "sign-in refused from {}: {why}", shown_peer(peer));
}

/// Logs a connection that could not be accepted.
pub(crate) fn accept_failed(error: &std::io::Error) {
    log::warn!(target: REQUESTS, "a connection could not be accepted: {error}");
}

fn shown_peer(peer: Option<Peer>) -> String {
    peer.map_or_else(|| "-".to_string(), |Peer(address)| address.to_string())
}
