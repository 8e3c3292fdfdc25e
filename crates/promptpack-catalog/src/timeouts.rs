//! How long the catalog waits for its store before it gives up: every wait
//! on the network is bounded, so that a stalled or black-holed server ends
//! in `unavailable` instead of a hang.

use std::time::Duration;

/// Bounds on the catalog's waits for its store. The defaults suit a
/// service and a command line alike: a server that does not answer is
/// reported within seconds, not never.
///
/// On PostgreSQL, [`Timeouts::connect`] bounds the whole connect (TCP,
/// then the server's start-up answer, over every address of the host), and
/// [`Timeouts::io`] every statement, `BEGIN`, `COMMIT` and `ROLLBACK`, and a
/// [`Listener`](crate::Listener)'s `LISTEN`. A wait past its bound is
/// `unavailable` ([`Error::is_retryable`](crate::Error::is_retryable)) and
/// drops the connection (the server rolls back what it had begun); the
/// next call connects again. A write whose `COMMIT` ran past its bound
/// may have been committed all the same: read before writing it again.
/// Only such timers catch a stalled server: the
/// kernel of a stopped or overloaded one still acknowledges TCP. TCP
/// keepalives (15 s idle, then 3 probes 5 s apart, unless the URL sets
/// `keepalives_idle`, `keepalives_interval` or `keepalives_retries`)
/// notice a server whose host vanished under an idle connection.
///
/// A PostgreSQL URL's own `connect_timeout` parameter, when given, wins
/// over [`Timeouts::connect`]. The `promptpack catalog` command sets both
/// bounds with `--db-timeout SECONDS` or `$PROMPTPACK_DB_TIMEOUT`. SQLite
/// waits on no network, and these bounds do not apply to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// How long connecting may take (PostgreSQL: TCP connect and start-up).
    pub connect: Duration,
    /// How long one statement, or the start or end of a transaction, may
    /// wait for the server's answer.
    pub io: Duration,
}

impl Timeouts {
    /// The default bounds: 10 s to connect, 10 s for each answer.
    pub const DEFAULT: Timeouts = Timeouts {
        connect: Duration::from_secs(10),
        io: Duration::from_secs(10),
    };

    /// The same bounds, with `connect` to connect.
    pub fn with_connect(mut self, connect: Duration) -> Timeouts {
        self.connect = connect;
        self
    }

    /// The same bounds, with `io` for each answer.
    pub fn with_io(mut self, io: Duration) -> Timeouts {
        self.io = io;
        self
    }
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts::DEFAULT
    }
}
