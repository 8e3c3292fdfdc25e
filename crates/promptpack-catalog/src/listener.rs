//! Following a PostgreSQL catalog as it changes: `LISTEN` on the channel
//! every write announces itself on. A notification says which prompt
//! changed; the follower re-reads it, since notifications sent while it was
//! disconnected are never replayed (poll [`Catalog::change_marker`] as the
//! safety net).
//!
//! [`Catalog::change_marker`]: crate::Catalog::change_marker

use crate::catalog::rows::CHANGES_CHANNEL;
use crate::store::postgres::error_detail;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};
use promptpack_core::{Error, ErrorCode};
use std::time::Duration;

/// A change announced by a writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The prompt that changed.
    pub prompt_id: String,
    /// The version it concerns (a new one, or where a label points now);
    /// `None` for a change of the prompt itself (deleted, restored).
    pub version: Option<u32>,
}

/// A connection listening for the catalog's changes.
pub struct Listener {
    client: Client,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener").finish_non_exhaustive()
    }
}

impl Listener {
    /// Connects to the PostgreSQL catalog at `url` and listens.
    ///
    /// # Errors
    /// `unavailable` when the server cannot be reached.
    pub fn connect(url: &str) -> Result<Listener, Error> {
        let fail = |e: postgres::Error| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot listen for catalog changes: {}", error_detail(&e)),
            )
        };
        let mut client = Client::connect(url, NoTls).map_err(fail)?;
        client
            .batch_execute(&format!("LISTEN {CHANGES_CHANNEL}"))
            .map_err(fail)?;
        Ok(Listener { client })
    }

    /// The next change, waiting at most `timeout`; `None` when none came.
    ///
    /// # Errors
    /// `unavailable` when the connection is lost: connect again, and
    /// re-read everything followed (what was sent meanwhile is gone).
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<Change>, Error> {
        let mut notifications = self.client.notifications();
        let next = notifications.timeout_iter(timeout).next().map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "lost the catalog's change notifications: {}",
                    error_detail(&e)
                ),
            )
        })?;
        Ok(next.map(|notification| parse(notification.payload())))
    }
}

/// `"<id> <version>"`, version 0 for none.
fn parse(payload: &str) -> Change {
    let (id, version) = payload.rsplit_once(' ').unwrap_or((payload, "0"));
    Change {
        prompt_id: id.to_string(),
        version: version.parse().ok().filter(|v| *v > 0),
    }
}
