//! A relay: one process that holds the catalog connection of a whole fleet
//! and serves what a live prompt handle needs over plain HTTP/1.1 (the
//! protocol is docs/relay.md; the JSON types
//! [`promptpack_catalog::relay`]).
//!
//! ```no_run
//! # fn main() -> Result<(), promptpack_catalog::Error> {
//! use promptpack_console::relay::{Relay, RelaySettings, Upstream};
//! let settings = RelaySettings::new(Upstream::Catalog("sqlite:.promptpack/catalog.db".into()));
//! let relay = Relay::bind(settings)?;
//! println!("relay listening on http://{}", relay.local_addr());
//! relay.run()
//! # }
//! ```
//!
//! Its parts: `state` is the memory every stream shares (the labels
//! followed, the versions read, the event log and the broadcast);
//! `catalog_feed` the one thread that holds the catalog's connection (and
//! on PostgreSQL the thread that listens); `routes` the HTTP side; and
//! `auth` the followers' tokens.
//!
//! The seam for following another relay: the state takes what an upstream
//! read through one interface (`RelayState::update` for a label's arms,
//! `RelayState::cache_version` for a version), and the routes ask the
//! upstream through one channel of commands (`catalog_feed::Command`:
//! follow a label, a version, earlier versions, a build registered or not,
//! a token's user). An upstream that is another relay is a second
//! implementation of those commands (its snapshot and stream for a label,
//! `GET /versions/…`, `POST /builds`, `GET /me`) feeding the same state;
//! [`Upstream::Relay`] is that second implementation (`relay_feed`).

mod auth;
mod catalog_feed;
mod relay_feed;
mod routes;
mod state;

use crate::guard::{self, GuardSettings};
use crate::listen::{self, ConnectionLimits};
use crate::server::{DEFAULT_HEADER_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, is_keyword_value};
use auth::AuthCache;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use catalog_feed::{Feed, FeedSettings, FeedThreads};
use promptpack_catalog::{Access, Catalog, Error, ErrorCode, Role, Timeouts};
use relay_feed::RelayFeedSettings;
use state::RelayState;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// What a relay follows.
#[derive(Clone)]
pub enum Upstream {
    /// A catalog: `sqlite:PATH` or `postgres://…`.
    Catalog(String),
    /// Another relay, `http://…`, with a token of a user of its catalog.
    /// Its stream of each label is read as a follower reads it, resumed
    /// by event id; a follower's token is checked by asking it. The
    /// upstream's heartbeat is taken to be this relay's own: a stream
    /// silent for three is stalled and read again.
    Relay {
        /// The relay's URL.
        url: String,
        /// The token its requests carry.
        token: String,
    },
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Neither a catalog's password nor a token is shown.
        match self {
            Upstream::Catalog(url) => f
                .debug_tuple("Catalog")
                .field(&promptpack_catalog::redact_url(url))
                .finish(),
            Upstream::Relay { url, .. } => f
                .debug_struct("Relay")
                .field("url", url)
                .finish_non_exhaustive(),
        }
    }
}

/// Where a relay listens unless told otherwise: loopback only.
pub const DEFAULT_RELAY_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 7879);

/// How often a stream says `: ping` unless set: 5 s.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);

/// How often the catalog's change marker is polled unless set: 1 s, the
/// safety net under `LISTEN`.
pub const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// How often the marker is polled with [`RelaySettings::poll_only`] unless
/// set: 250 ms, since the poll is then the only way changes are seen.
pub const DEFAULT_POLL_ONLY: Duration = Duration::from_millis(250);

/// How many connections a relay serves at once unless set: 20,000 (each
/// follower holds one; raise the process's open-file limit to match).
pub const DEFAULT_RELAY_MAX_CONNECTIONS: usize = 20_000;

/// How a relay runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RelaySettings {
    /// What it follows.
    pub upstream: Upstream,
    /// Where to listen; `127.0.0.1:7879` unless set. Beyond loopback only
    /// once the catalog has an admin.
    pub listen: SocketAddr,
    /// How often a stream says `: ping`: 5 s unless set.
    pub heartbeat: Duration,
    /// How often the catalog's change marker is polled; `None`: 1 s, or
    /// 250 ms with `poll_only` ([`RelaySettings::effective_poll`]).
    pub poll: Option<Duration>,
    /// No `LISTEN` (PostgreSQL behind pgbouncer in transaction mode, which
    /// cannot carry it): one connection, and changes seen by the poll
    /// alone.
    pub poll_only: bool,
    /// The bounds on every wait for the catalog.
    pub timeouts: Timeouts,
    /// How many connections are served at once: 20,000 unless set.
    pub max_connections: usize,
    /// How long a connection may take to send a request's headers, and
    /// stay idle between requests: 10 s unless set.
    pub header_timeout: Duration,
}

impl RelaySettings {
    /// The defaults for `upstream`.
    pub fn new(upstream: Upstream) -> RelaySettings {
        RelaySettings {
            upstream,
            listen: DEFAULT_RELAY_LISTEN,
            heartbeat: DEFAULT_HEARTBEAT,
            poll: None,
            poll_only: false,
            timeouts: Timeouts::DEFAULT,
            max_connections: DEFAULT_RELAY_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
        }
    }

    /// Listens on `addr`.
    pub fn listen(mut self, addr: SocketAddr) -> RelaySettings {
        self.listen = addr;
        self
    }

    /// Says `: ping` on every stream every `every`.
    pub fn heartbeat(mut self, every: Duration) -> RelaySettings {
        self.heartbeat = every;
        self
    }

    /// Polls the catalog's change marker every `every`.
    pub fn poll(mut self, every: Duration) -> RelaySettings {
        self.poll = Some(every);
        self
    }

    /// With `true`, no `LISTEN`: the poll alone (250 ms unless set).
    pub fn poll_only(mut self, poll_only: bool) -> RelaySettings {
        self.poll_only = poll_only;
        self
    }

    /// Bounds every wait for the catalog by `timeouts`.
    pub fn timeouts(mut self, timeouts: Timeouts) -> RelaySettings {
        self.timeouts = timeouts;
        self
    }

    /// Serves at most `count` connections at once (at least 1).
    pub fn max_connections(mut self, count: usize) -> RelaySettings {
        self.max_connections = count;
        self
    }

    /// Closes a connection that takes longer than `timeout` to send a
    /// request's headers, or stays idle that long between requests.
    pub fn header_timeout(mut self, timeout: Duration) -> RelaySettings {
        self.header_timeout = timeout;
        self
    }

    /// The poll's period: [`RelaySettings::poll`] when set, else 1 s, or
    /// 250 ms with `poll_only`.
    pub fn effective_poll(&self) -> Duration {
        self.poll.unwrap_or(if self.poll_only {
            DEFAULT_POLL_ONLY
        } else {
            DEFAULT_POLL
        })
    }
}

/// The relay's one catalog connection, after the checks a catalog URL
/// gets: a URL (not a libpq `key=value` string), and an admin in the
/// catalog before listening beyond loopback.
fn connect_catalog(url: &str, settings: &RelaySettings) -> Result<Catalog, Error> {
    if is_keyword_value(url) {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "the catalog is given as a libpq `key=value` connection string, which the relay \
             does not read: give it as a URL, `postgres://USER:PASSWORD@HOST:PORT/DATABASE`",
        ));
    }
    let mut catalog = Catalog::connect_with(url, Access::Write, &settings.timeouts)?;
    if !settings.listen.ip().is_loopback()
        && !catalog.users()?.iter().any(|user| user.role == Role::Admin)
    {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "the relay listens beyond loopback ({}) only once the catalog has an admin: \
                 run `promptpack console user add NAME --role admin` first",
                settings.listen
            ),
        ));
    }
    Ok(catalog)
}

/// What every request of a relay shares.
pub(crate) struct RelayShared {
    state: Arc<RelayState>,
    feed: Feed,
    auth: Arc<AuthCache>,
    heartbeat: Duration,
    /// Turns `true` when the relay stops: every stream ends.
    stop: watch::Receiver<bool>,
}

/// A relay bound to its address, not yet serving.
pub struct Relay {
    runtime: tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    router: Router,
    local_addr: SocketAddr,
    limits: ConnectionLimits,
    stop: watch::Sender<bool>,
    threads: FeedThreads,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// Connects to the upstream and binds the address.
    ///
    /// # Errors
    /// `not_configured` for a path that holds no catalog, and for an
    /// upstream relay that refuses the token; `unavailable` when the
    /// catalog or the upstream relay cannot be reached; `invalid_request`
    /// for an upstream URL that is not `http://…`, for an address beyond
    /// loopback while the catalog has no admin, and for a libpq
    /// `key=value` connection string; `io` when the address cannot be
    /// bound.
    pub fn bind(settings: RelaySettings) -> Result<Relay, Error> {
        let state = Arc::new(RelayState::new());
        let auth = Arc::new(AuthCache::default());
        // The upstream first: a relay that cannot follow does not start.
        let threads = match &settings.upstream {
            Upstream::Catalog(url) => {
                let catalog = connect_catalog(url, &settings)?;
                let listen = catalog.store_kind() == "postgres" && !settings.poll_only;
                catalog_feed::start(
                    FeedSettings {
                        url: url.clone(),
                        timeouts: settings.timeouts,
                        poll: settings.effective_poll(),
                        listen,
                    },
                    catalog,
                    Arc::clone(&state),
                    Arc::clone(&auth),
                )?
            }
            Upstream::Relay { url, token } => relay_feed::start(
                RelayFeedSettings {
                    url: url.clone(),
                    token: token.clone(),
                    timeouts: settings.timeouts,
                    heartbeat: settings.heartbeat,
                },
                Arc::clone(&state),
                Arc::clone(&auth),
            )?,
        };
        let (runtime, listener, local_addr) = listen::bind(settings.listen, "promptpack-relay")?;
        let (stop, stopped) = watch::channel(false);
        let shared = Arc::new(RelayShared {
            state,
            feed: threads.feed(),
            auth,
            heartbeat: settings.heartbeat.max(Duration::from_millis(10)),
            stop: stopped,
        });
        let router = routes::routes()
            // A build registration is a few kilobytes; nothing else has a
            // body.
            .layer(DefaultBodyLimit::max(1 << 20))
            .with_state(shared)
            .layer(axum::middleware::from_fn_with_state(
                GuardSettings {
                    request_timeout: DEFAULT_REQUEST_TIMEOUT,
                    all_json: true,
                },
                guard::guard,
            ));
        Ok(Relay {
            runtime,
            listener,
            router,
            local_addr,
            limits: ConnectionLimits {
                max_connections: settings.max_connections,
                header_timeout: settings.header_timeout,
            },
            stop,
            threads,
        })
    }

    /// The address bound: the port the system chose for port 0.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until the process ends.
    ///
    /// # Errors
    /// None so far: a connection that cannot be accepted is logged and the
    /// next one taken.
    pub fn run(self) -> Result<(), Error> {
        let Relay {
            runtime,
            listener,
            router,
            limits,
            threads,
            stop,
            ..
        } = self;
        runtime.block_on(listen::serve(listener, router, limits));
        drop((stop, threads));
        Ok(())
    }

    /// Serves on the relay's own runtime threads until
    /// [`RunningRelay::stop`] (or its drop).
    ///
    /// # Errors
    /// None so far (the `Result` leaves room for a start that can fail).
    pub fn spawn(self) -> Result<RunningRelay, Error> {
        let Relay {
            runtime,
            listener,
            router,
            local_addr,
            limits,
            stop,
            threads,
        } = self;
        let mut stopped = stop.subscribe();
        let until = async move {
            // An error is the sender gone: stopping too.
            let _ = stopped.wait_for(|stop| *stop).await;
        };
        runtime.spawn(listen::serve_until(listener, router, limits, until));
        Ok(RunningRelay {
            runtime: Some(runtime),
            local_addr,
            stop,
            threads: Some(threads),
        })
    }
}

/// A relay serving on its own threads: [`RunningRelay::stop`] or dropping
/// it ends every stream, stops listening and frees the port.
pub struct RunningRelay {
    runtime: Option<tokio::runtime::Runtime>,
    local_addr: SocketAddr,
    stop: watch::Sender<bool>,
    threads: Option<FeedThreads>,
}

impl std::fmt::Debug for RunningRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningRelay")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl RunningRelay {
    /// The address it serves on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Ends every stream, stops listening and closes every connection
    /// (the port is free once this returns), then the catalog's
    /// connections.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        self.stop.send_replace(true);
        if let Some(runtime) = self.runtime.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Dropped inside an async context, where blocking on the
                // runtime's end is refused: it ends in the background.
                runtime.shutdown_background();
            } else {
                // Every task dropped: the listener, each connection.
                runtime.shutdown_timeout(Duration::from_secs(5));
            }
        }
        // Joins the catalog's threads.
        self.threads.take();
    }
}

impl Drop for RunningRelay {
    fn drop(&mut self) {
        self.shut_down();
    }
}
