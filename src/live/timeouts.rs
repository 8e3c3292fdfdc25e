//! How long a live handle waits for its catalog: promptpack's own type, so
//! that the public API names nothing of the catalog crate, which has no
//! semver of its own.

use std::time::Duration;

/// Bounds on a live handle's waits for its catalog's store: a server that
/// does not answer ends in `unavailable` (the handle keeps serving what it
/// served and tries again), not in a hang. On PostgreSQL, `connect` bounds
/// the whole connect (TCP, then the server's start-up answer) and `io`
/// every statement and the start and end of each transaction; SQLite waits
/// on no network, and these do not apply to it.
///
/// ```
/// use promptpack::live::Timeouts;
/// use std::time::Duration;
/// let timeouts = Timeouts::DEFAULT.with_io(Duration::from_secs(2));
/// assert_eq!(timeouts.io, Duration::from_secs(2));
/// assert_eq!(timeouts.connect, Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// How long connecting may take.
    pub connect: Duration,
    /// How long one statement, or the start or end of a transaction, may
    /// wait for the server's answer.
    pub io: Duration,
}

impl Timeouts {
    /// The default bounds: 10 s to connect, 10 s for each answer.
    pub const DEFAULT: Timeouts = Timeouts {
        connect: promptpack_catalog::Timeouts::DEFAULT.connect,
        io: promptpack_catalog::Timeouts::DEFAULT.io,
    };

    /// The same bounds, with `connect` to connect.
    #[must_use]
    pub fn with_connect(mut self, connect: Duration) -> Timeouts {
        self.connect = connect;
        self
    }

    /// The same bounds, with `io` for each answer.
    #[must_use]
    pub fn with_io(mut self, io: Duration) -> Timeouts {
        self.io = io;
        self
    }

    /// The catalog's bounds of the same lengths.
    pub(crate) fn of_catalog(self) -> promptpack_catalog::Timeouts {
        promptpack_catalog::Timeouts::DEFAULT
            .with_connect(self.connect)
            .with_io(self.io)
    }
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts::DEFAULT
    }
}
