//! What the web console keeps in the catalog besides prompts: its users,
//! each with a role and the SHA-256 of a bearer token (their sessions are
//! in `sessions.rs`); and the builds that
//! live handles register (which binary follows which label, with what
//! contract).

use super::{Catalog, check_name, rows};
use crate::compile::check_record;
use crate::hash::text_hash;
use crate::model::{
    BuildRegistration, RegisteredBuild, Role, Timestamp, User, UserChange, canonical_contract,
};
use promptpack_core::{Error, ErrorCode};
use std::time::Duration;

/// How long a registration lives without being refreshed: a process that
/// stopped a day ago is gone from [`Catalog::builds`] for good.
const BUILD_EXPIRY: Duration = Duration::from_secs(24 * 60 * 60);

/// The most bytes of a registered process name.
const MAX_PROCESS: usize = 200;

impl Catalog {
    /// Adds console user `name` (a name as prompt ids are: letters, digits,
    /// `_` and `-`) with `role`, signing in with the token whose
    /// [`token_hash`](crate::token_hash) is `token_hash`; recorded as added
    /// by this catalog's [`author`](Catalog::author), in the user audit
    /// ([`Catalog::user_history`]) too.
    ///
    /// # Errors
    /// `invalid_request` for a name that is not one or a hash that is not
    /// 64 lowercase hex digits (a token passed unhashed, say);
    /// `already_exists` when the name is taken, or another user has the
    /// same token. Nothing is written then.
    pub fn add_user(&mut self, name: &str, role: Role, token_hash: &str) -> Result<User, Error> {
        check_name("user name", name)?;
        check_token_hash(token_hash)?;
        check_record(&self.author, "")?;
        let author = self.author.clone();
        self.store.write(&mut |tx| {
            if let Some(user) = rows::insert_user(tx, name, role, token_hash, &author)? {
                return Ok(user);
            }
            let why = if rows::user(tx, name)?.is_some() {
                format!("the catalog has a console user `{name}` already")
            } else {
                // Not naming who: that would tell the caller whose token
                // they hold.
                "another console user has this token: make a new one".to_string()
            };
            Err(Error::new(ErrorCode::AlreadyExists, why))
        })
    }

    /// The console user whose token hashes to `token_hash`, if any: what a
    /// console looks up for each request's bearer token.
    ///
    /// # Errors
    /// `invalid_request` for a hash that is not 64 lowercase hex digits.
    pub fn user_by_token_hash(&mut self, token_hash: &str) -> Result<Option<User>, Error> {
        check_token_hash(token_hash)?;
        self.store
            .read(&mut |tx| rows::user_by_token_hash(tx, token_hash))
    }

    /// Every change of the console's users (added, removed), oldest
    /// first: who made it and when. Append-only, as a prompt's audit is.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn user_history(&mut self) -> Result<Vec<UserChange>, Error> {
        self.store.read(&mut |tx| rows::user_history(tx))
    }

    /// Every console user, by name.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn users(&mut self) -> Result<Vec<User>, Error> {
        self.store.read(&mut |tx| rows::users(tx))
    }

    /// Removes console user `name`: the user's token signs in no more, and
    /// every session of theirs ends in the same transaction.
    /// Recorded in the user audit ([`Catalog::user_history`]) as removed
    /// by this catalog's [`author`](Catalog::author), in the same
    /// transaction.
    ///
    /// # Errors
    /// `not_found` when the catalog has no such user.
    pub fn remove_user(&mut self, name: &str) -> Result<(), Error> {
        check_record(&self.author, "")?;
        let author = self.author.clone();
        self.store.write(&mut |tx| {
            if rows::delete_user(tx, name, &author)? {
                Ok(())
            } else {
                Err(Error::new(
                    ErrorCode::NotFound,
                    format!(
                        "the catalog has no console user `{}`",
                        promptpack_core::diagnostics::escape_controls(name)
                    ),
                ))
            }
        })
    }
}

impl Catalog {
    /// Registers `build` (a live handle does, when it connects and then
    /// about every minute): inserted, or its `last_seen` refreshed when
    /// the catalog has its process and label already (its contract and
    /// `first_seen` renewed when the contract changed). Registrations not
    /// seen for 24 hours are deleted in the same transaction.
    ///
    /// # Errors
    /// `invalid_request` for an empty process name, one past 200 bytes or
    /// with control characters, or a label that is not a name; what the
    /// store says of a write (a read-only connection or file is refused).
    pub fn register_build(&mut self, build: &BuildRegistration) -> Result<(), Error> {
        check_build(build)?;
        let contract = canonical_contract(&build.contract);
        let hash = text_hash(&contract);
        self.store.write(&mut |tx| {
            let now = Timestamp::now();
            rows::upsert_build(tx, &build.process, &build.label, &hash, &contract, now)?;
            rows::expire_builds(tx, before(now, BUILD_EXPIRY))?;
            Ok(())
        })
    }

    /// Takes `build`'s registration away, as a live handle does when it
    /// stops: a console no longer counts its process among those that serve
    /// its label. `false` when the catalog had none.
    ///
    /// # Errors
    /// `invalid_request` for a process name or label that is not one (as
    /// [`Catalog::register_build`]); what the store says of a write.
    pub fn unregister_build(&mut self, build: &BuildRegistration) -> Result<bool, Error> {
        check_build(build)?;
        self.store
            .write(&mut |tx| Ok(rows::delete_build(tx, &build.process, &build.label)? > 0))
    }

    /// The builds registered and seen within `seen_within` of now, by
    /// process and label.
    ///
    /// # Errors
    /// `damaged` for a registration whose contract is not what its hash
    /// names; `unavailable` when the store cannot be read. A registration
    /// whose contract is of a format this promptpack does not read (a
    /// newer one's) is left out.
    pub fn builds(&mut self, seen_within: Duration) -> Result<Vec<RegisteredBuild>, Error> {
        let since = before(Timestamp::now(), seen_within);
        self.store.read(&mut |tx| rows::builds(tx, since))
    }
}

/// The moment `span` before `now`; the epoch's start for a span past it.
fn before(now: Timestamp, span: Duration) -> Timestamp {
    let span = i64::try_from(span.as_millis()).unwrap_or(i64::MAX);
    Timestamp(now.0.saturating_sub(span))
}

/// A registration's process name and label, as the catalog keeps them.
fn check_build(build: &BuildRegistration) -> Result<(), Error> {
    check_name("label", &build.label)?;
    check_process_name(&build.process)
}

/// Checks a process name as [`Catalog::register_build`] does: 1 to 200
/// bytes, no control characters. For a live handle's builder, which
/// refuses a bad name at its start rather than registering nothing.
///
/// # Errors
/// `invalid_request` for a name that is not one.
pub fn check_process_name(process: &str) -> Result<(), Error> {
    if process.is_empty() || process.len() > MAX_PROCESS || process.chars().any(char::is_control) {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "`{}` is not a valid process name: use 1 to {MAX_PROCESS} bytes without control characters",
                promptpack_core::diagnostics::escape_controls(process)
            ),
        ));
    }
    Ok(())
}

/// A token hash as [`token_hash`](crate::token_hash) makes it: 64
/// lowercase hex digits.
pub(crate) fn check_token_hash(hash: &str) -> Result<(), Error> {
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if hash.len() == 64 && hash.bytes().all(hex) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidRequest,
        "a token hash is 64 lowercase hex digits (SHA-256, as `token_hash` makes it): store the hash, never the token",
    ))
}
