//! Following a PostgreSQL catalog as it changes: `LISTEN` on the channel
//! every write announces itself on. A notification says which prompt
//! changed; the follower re-reads it, since notifications sent while it was
//! disconnected are never replayed (poll [`Catalog::change_marker`] as the
//! safety net).
//!
//! [`Catalog::change_marker`]: crate::Catalog::change_marker

use crate::catalog::rows::CHANGES_CHANNEL;
use crate::redact::redact_url;
use crate::store::postgres::{BoundedConnection, Failure, config};
use crate::timeouts::Timeouts;
use promptpack_core::Error;
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
///
/// Every wait on the server is bounded: connecting by
/// [`Timeouts::connect`] (or the URL's `connect_timeout`), `LISTEN` by
/// [`Timeouts::io`], a wait for a change by its own timeout. TCP keepalives
/// notice a server whose host is gone within about 30 s; a stalled server
/// only shows as silence here, which the follower's bounded polls of the
/// catalog catch. Dropping a listener returns at once.
pub struct Listener {
    connection: BoundedConnection,
    /// The URL without its password, for messages.
    shown: String,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("url", &self.shown)
            .finish_non_exhaustive()
    }
}

impl Listener {
    /// Connects to the PostgreSQL catalog at `url` and listens, with the
    /// default [`Timeouts`].
    ///
    /// # Errors
    /// `unavailable` when the server cannot be reached or does not answer
    /// in time; `invalid_request` for a URL that is not PostgreSQL's.
    pub fn connect(url: &str) -> Result<Listener, Error> {
        Listener::connect_with(url, &Timeouts::DEFAULT)
    }

    /// [`Listener::connect`], waiting for the server at most as `timeouts`
    /// say.
    ///
    /// # Errors
    /// As [`Listener::connect`].
    pub fn connect_with(url: &str, timeouts: &Timeouts) -> Result<Listener, Error> {
        let shown = redact_url(url);
        let context = format!("cannot listen for changes of catalog {shown}");
        let config = config(url, &shown)?;
        let fail = |failure: Failure| failure.into_error(&context);
        let mut connection = BoundedConnection::connect(&config, timeouts).map_err(fail)?;
        let listen = format!("LISTEN {CHANGES_CHANNEL}");
        connection
            .call(|client| client.batch_execute(&listen))
            .map_err(fail)?;
        Ok(Listener { connection, shown })
    }

    /// The next change, waiting at most `timeout`; `None` when none came.
    ///
    /// # Errors
    /// `unavailable` when the connection is lost: connect again, and
    /// re-read everything followed (what was sent meanwhile is gone).
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<Change>, Error> {
        let next = self
            .connection
            .next_notification(timeout)
            .map_err(|failure| {
                let shown = &self.shown;
                failure.into_error(&format!("lost the change notifications of catalog {shown}"))
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
