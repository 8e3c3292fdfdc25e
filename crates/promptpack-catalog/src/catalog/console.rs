//! What the web console keeps in the catalog besides prompts: its users,
//! each with a role and the SHA-256 of a bearer token.

use super::{Catalog, check_name, rows};
use crate::compile::check_record;
use crate::model::{Role, User};
use promptpack_core::{Error, ErrorCode};

impl Catalog {
    /// Adds console user `name` (a name as prompt ids are: letters, digits,
    /// `_` and `-`) with `role`, signing in with the token whose
    /// [`token_hash`](crate::token_hash) is `token_hash`; recorded as added
    /// by this catalog's [`author`](Catalog::author).
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

    /// Every console user, by name.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn users(&mut self) -> Result<Vec<User>, Error> {
        self.store.read(&mut |tx| rows::users(tx))
    }

    /// Removes console user `name`: the user's token signs in no more.
    ///
    /// # Errors
    /// `not_found` when the catalog has no such user.
    pub fn remove_user(&mut self, name: &str) -> Result<(), Error> {
        self.store.write(&mut |tx| {
            if rows::delete_user(tx, name)? {
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

/// A token hash as [`token_hash`](crate::token_hash) makes it: 64
/// lowercase hex digits.
fn check_token_hash(hash: &str) -> Result<(), Error> {
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if hash.len() == 64 && hash.bytes().all(hex) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidRequest,
        "a token hash is 64 lowercase hex digits (SHA-256, as `token_hash` makes it): store the hash, never the token",
    ))
}
