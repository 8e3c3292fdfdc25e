//! Who follows a relay: a catalog user of any role, by bearer token. The
//! token is checked through the catalog's thread and the answer kept a
//! minute (an unknown token a few seconds), so that ten thousand
//! followers reconnecting after a restart cost one query per token, not
//! one per follower.

use super::RelayShared;
use super::catalog_feed::Command;
use crate::auth::bearer;
use crate::failure::{ApiFailure, Failure};
use crate::request_log::RequestUser;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use promptpack_catalog::{User, token_hash};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a token's user is remembered.
const KNOWN_FOR: Duration = Duration::from_secs(60);
/// How long a token that is no user's is remembered: a user added a
/// moment ago is let in soon.
const UNKNOWN_FOR: Duration = Duration::from_secs(5);
/// The most answers kept: a client sending random tokens must not grow
/// the relay's memory without bound.
const MAX_ENTRIES: usize = 100_000;

/// The answers kept, by token hash.
#[derive(Default)]
pub(crate) struct AuthCache {
    entries: Mutex<HashMap<String, (Option<User>, Instant)>>,
}

impl AuthCache {
    /// The answer kept for `hash` while it is fresh: `Some(None)` for a
    /// token known to be no user's.
    pub(crate) fn get(&self, hash: &str) -> Option<Option<User>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (user, at) = entries.get(hash)?;
        let fresh_for = if user.is_some() {
            KNOWN_FOR
        } else {
            UNKNOWN_FOR
        };
        (at.elapsed() < fresh_for).then(|| user.clone())
    }

    /// Keeps `user` as the answer for `hash`.
    pub(crate) fn put(&self, hash: &str, user: Option<User>) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, (user, at)| {
                at.elapsed()
                    < if user.is_some() {
                        KNOWN_FOR
                    } else {
                        UNKNOWN_FOR
                    }
            });
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(hash.to_string(), (user, Instant::now()));
    }
}

/// A follower: the user its bearer token names.
pub(crate) struct RelayUser(pub(crate) User);

impl FromRequestParts<Arc<RelayShared>> for RelayUser {
    type Rejection = ApiFailure;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<RelayShared>,
    ) -> Result<RelayUser, ApiFailure> {
        let token = bearer(&parts.headers).ok_or_else(Failure::unauthenticated)?;
        let hash = token_hash(token);
        let user = match shared.auth.get(&hash) {
            Some(user) => user,
            None => shared
                .feed
                .ask(|reply| Command::Authenticate { hash, reply })
                .await
                .map_err(|error| Failure::to_stranger(&error))?,
        };
        match user {
            Some(user) => Ok(RelayUser(RequestUser::record_user(&parts.extensions, user))),
            None => Err(Failure::new(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "the token is not one of this catalog's users",
            )
            .into()),
        }
    }
}
