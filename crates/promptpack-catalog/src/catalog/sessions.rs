//! The console's browser sessions, kept in the catalog: any console of a
//! catalog serves any session, a restart signs no one out, and removing a
//! user ends every session of theirs in the same transaction. The catalog
//! keeps a session id's SHA-256 ([`token_hash`](crate::token_hash)), never
//! the id; each user keeps at most a cap of sessions, the oldest ending
//! first.

use super::console::check_token_hash;
use super::{Catalog, rows};
use crate::model::{ConsoleSession, Timestamp, User};
use crate::store::{Param, Tx};
use promptpack_core::{Error, ErrorCode};
use std::time::Duration;

impl Catalog {
    /// Signs in the console user whose token hashes to `token_hash`: a
    /// session whose id hashes to `id_hash`, lasting `lifetime`. Past
    /// `cap` sessions of that user the oldest end; every expired session
    /// (of anyone) is deleted; all in one transaction. The user, or `None`
    /// (nothing written) when the token is no user's.
    ///
    /// # Errors
    /// `invalid_request` for a hash that is not 64 lowercase hex digits or
    /// a cap of 0; `already_exists` for an id hash the catalog holds (an id
    /// made twice: make a new one); what the store says of a write.
    pub fn open_session(
        &mut self,
        token_hash: &str,
        id_hash: &str,
        lifetime: Duration,
        cap: u32,
    ) -> Result<Option<User>, Error> {
        check_token_hash(token_hash)?;
        check_token_hash(id_hash)?;
        if cap == 0 {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "a console user keeps at least one session: the cap is 1 or more",
            ));
        }
        let lifetime = i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX);
        self.store.write(&mut |tx| {
            // Locked (on PostgreSQL) so that two sign-ins of one user
            // at once cannot both keep the cap's last place.
            let sql = format!(
                "SELECT name, role, created_by, created_at FROM console_users \
                 WHERE token_hash = $1{}",
                tx.for_update()
            );
            let Some(user) = tx
                .query_opt(&sql, &[Param::Text(token_hash)])?
                .map(|row| rows::user_row(&row))
                .transpose()?
            else {
                return Ok(None);
            };
            let now = Timestamp::now();
            tx.execute(
                "DELETE FROM console_sessions WHERE expires_at <= $1",
                &[Param::Int(now.0)],
            )?;
            let added = tx.execute(
                "INSERT INTO console_sessions (id_hash, user_name, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (id_hash) DO NOTHING",
                &[
                    Param::Text(id_hash),
                    Param::Text(&user.name),
                    Param::Int(now.0),
                    Param::Int(now.0.saturating_add(lifetime)),
                ],
            )?;
            if added == 0 {
                return Err(Error::new(
                    ErrorCode::AlreadyExists,
                    "the catalog holds a session of this id already: make a new id",
                ));
            }
            evict_past_cap(tx, &user.name, cap)?;
            Ok(Some(user))
        })
    }

    /// The user of the live session whose id hashes to `id_hash`: `None`
    /// for an id the catalog does not hold, an expired session, or one
    /// ended (signed out, evicted, its user removed). What a console looks
    /// up for each request's session cookie.
    ///
    /// # Errors
    /// `invalid_request` for a hash that is not 64 lowercase hex digits;
    /// `unavailable` when the store cannot be read.
    pub fn session_user(&mut self, id_hash: &str) -> Result<Option<User>, Error> {
        check_token_hash(id_hash)?;
        let now = Timestamp::now();
        self.store.read(&mut |tx| {
            let sql = "SELECT u.name AS name, u.role AS role, u.created_by AS created_by, \
                       u.created_at AS created_at \
                       FROM console_sessions s JOIN console_users u ON u.name = s.user_name \
                       WHERE s.id_hash = $1 AND s.expires_at > $2";
            tx.query_opt(sql, &[Param::Text(id_hash), Param::Int(now.0)])?
                .map(|row| rows::user_row(&row))
                .transpose()
        })
    }

    /// Ends the session whose id hashes to `id_hash` (signing out);
    /// whether there was one.
    ///
    /// # Errors
    /// `invalid_request` for a hash that is not 64 lowercase hex digits;
    /// what the store says of a write.
    pub fn close_session(&mut self, id_hash: &str) -> Result<bool, Error> {
        check_token_hash(id_hash)?;
        self.store.write(&mut |tx| {
            let ended = tx.execute(
                "DELETE FROM console_sessions WHERE id_hash = $1",
                &[Param::Text(id_hash)],
            )?;
            Ok(ended > 0)
        })
    }

    /// Ends every session of console user `user` (signing out everywhere);
    /// how many there were.
    ///
    /// # Errors
    /// What the store says of a write.
    pub fn close_sessions(&mut self, user: &str) -> Result<u64, Error> {
        self.store.write(&mut |tx| delete_user_sessions(tx, user))
    }

    /// The live sessions of console user `user`, oldest first.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn sessions(&mut self, user: &str) -> Result<Vec<ConsoleSession>, Error> {
        let now = Timestamp::now();
        self.store.read(&mut |tx| {
            let sql = "SELECT user_name, created_at, expires_at FROM console_sessions \
                       WHERE user_name = $1 AND expires_at > $2 ORDER BY seq";
            tx.query(sql, &[Param::Text(user), Param::Int(now.0)])?
                .iter()
                .map(|row| {
                    Ok(ConsoleSession {
                        user: row.text("user_name")?,
                        created_at: Timestamp(row.int("created_at")?),
                        expires_at: Timestamp(row.int("expires_at")?),
                    })
                })
                .collect()
        })
    }
}

/// Ends the oldest sessions of `user` past the newest `cap`.
fn evict_past_cap(tx: &mut dyn Tx, user: &str, cap: u32) -> Result<(), Error> {
    // The newest session past the cap: it and every older one end.
    let first_past = tx.query_opt(
        "SELECT seq FROM console_sessions WHERE user_name = $1 \
         ORDER BY seq DESC LIMIT 1 OFFSET $2",
        &[Param::Text(user), Param::Int(cap.into())],
    )?;
    if let Some(row) = first_past {
        tx.execute(
            "DELETE FROM console_sessions WHERE user_name = $1 AND seq <= $2",
            &[Param::Text(user), Param::Int(row.int("seq")?)],
        )?;
    }
    Ok(())
}

/// Ends every session of `user`; how many there were.
pub(crate) fn delete_user_sessions(tx: &mut dyn Tx, user: &str) -> Result<u64, Error> {
    tx.execute(
        "DELETE FROM console_sessions WHERE user_name = $1",
        &[Param::Text(user)],
    )
}
