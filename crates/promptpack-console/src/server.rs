//! The server: its settings, the routes, and listening (loopback unless an
//! admin exists). What every request shares is [`crate::state`].

use crate::auth::DEFAULT_MAX_SESSIONS;
use crate::catalog_pool::CatalogPool;
use crate::listen::{self, ConnectionLimits};
use crate::state::{AppState, TokenCounter};
use crate::{api, guard, pages};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use promptpack_catalog::{Error, ErrorCode, Role, Timeouts};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How a console runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct Settings {
    /// The catalog: `sqlite:PATH` or `postgres://…`.
    pub db: String,
    /// Where to listen; `127.0.0.1:7878` unless set.
    pub listen: SocketAddr,
    /// Labels only admins may move: `production` unless set.
    pub protected_labels: Vec<String>,
    /// The bounds on every wait for the catalog.
    pub timeouts: Timeouts,
    /// The tokenizer of the preview's counts.
    pub token_counter: Option<TokenCounter>,
    /// The largest request body taken, in bytes (a publish's two files and
    /// their form encoding fit: 8 MiB unless set).
    pub max_body_bytes: usize,
    /// The most bytes one part of a prompt may render to in a preview, the
    /// API's `render`, an edit's preview and the examples of a diff: more
    /// is `too_large` (413), refused before it is allocated.
    /// [`promptpack::DEFAULT_MAX_RENDER_BYTES`] (16 MiB) unless set.
    pub max_render_bytes: usize,
    /// The most browser sessions one user keeps (20 unless set): signing
    /// in past it ends that user's oldest session.
    pub max_sessions_per_user: u32,
    /// How long a connection may take to send a request's headers, and may
    /// stay idle between requests: 10 s unless set.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive once its headers are
    /// in: 60 s unless set (past it the answer is 408). With the header
    /// timeout, it bounds how long a client may take to send a request;
    /// the work on it is bounded by the catalog's timeouts.
    pub request_timeout: Duration,
    /// How many connections are served at once: 256 unless set. Past it,
    /// new connections wait in the system's queue until one closes.
    pub max_connections: usize,
    /// How many connections to the catalog are kept and used at most: 16
    /// unless set. Past it, a request waits for a connection to be free
    /// (at most the catalog's connect timeout).
    pub pool_size: usize,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("db", &promptpack_catalog::redact_url(&self.db))
            .field("listen", &self.listen)
            .field("protected_labels", &self.protected_labels)
            .field("timeouts", &self.timeouts)
            .field("token_counter", &self.token_counter.is_some())
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_render_bytes", &self.max_render_bytes)
            .field("max_sessions_per_user", &self.max_sessions_per_user)
            .field("header_timeout", &self.header_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_connections", &self.max_connections)
            .field("pool_size", &self.pool_size)
            .finish()
    }
}

/// How long a request's headers may take unless set: 10 s.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request's body may take unless set: 60 s (an 8 MiB publish
/// over a slow link fits).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How many connections are served at once unless set: 256, well inside
/// the common limit of 1,024 open files.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// How many connections to the catalog are used at most unless set: 16.
pub const DEFAULT_POOL_SIZE: usize = 16;

/// The address a console listens on unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 7878);

impl Settings {
    /// The defaults for catalog `db`.
    pub fn new(db: impl Into<String>) -> Settings {
        Settings {
            db: db.into(),
            listen: DEFAULT_LISTEN,
            protected_labels: vec!["production".to_string()],
            timeouts: Timeouts::DEFAULT,
            token_counter: None,
            max_body_bytes: 8 << 20,
            max_render_bytes: promptpack::DEFAULT_MAX_RENDER_BYTES,
            max_sessions_per_user: DEFAULT_MAX_SESSIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            pool_size: DEFAULT_POOL_SIZE,
        }
    }

    /// Closes a connection that takes longer than `timeout` to send a
    /// request's headers, or stays idle that long between requests.
    pub fn header_timeout(mut self, timeout: Duration) -> Settings {
        self.header_timeout = timeout;
        self
    }

    /// Answers 408 to a request whose body has not arrived within
    /// `timeout` of its headers.
    pub fn request_timeout(mut self, timeout: Duration) -> Settings {
        self.request_timeout = timeout;
        self
    }

    /// Serves at most `count` connections at once (at least 1).
    pub fn max_connections(mut self, count: usize) -> Settings {
        self.max_connections = count;
        self
    }

    /// Uses at most `size` connections to the catalog at once (at least 1).
    pub fn pool_size(mut self, size: usize) -> Settings {
        self.pool_size = size;
        self
    }

    /// Listens on `addr`.
    pub fn listen(mut self, addr: SocketAddr) -> Settings {
        self.listen = addr;
        self
    }

    /// Protects `label` too: only admins move it.
    pub fn protect(mut self, label: impl Into<String>) -> Settings {
        self.protected_labels.push(label.into());
        self
    }

    /// Counts the preview's tokens with `counter`.
    pub fn token_counter(mut self, counter: TokenCounter) -> Settings {
        self.token_counter = Some(counter);
        self
    }

    /// Takes request bodies of at most `bytes`.
    pub fn max_body_bytes(mut self, bytes: usize) -> Settings {
        self.max_body_bytes = bytes;
        self
    }

    /// Refuses a render whose system or user text would be longer than
    /// `bytes` ([`Settings::max_render_bytes`]).
    pub fn max_render_bytes(mut self, bytes: usize) -> Settings {
        self.max_render_bytes = bytes;
        self
    }

    /// Keeps at most `sessions` browser sessions per user (1 or more):
    /// signing in past them ends that user's oldest.
    pub fn max_sessions_per_user(mut self, sessions: u32) -> Settings {
        self.max_sessions_per_user = sessions;
        self
    }

    /// Bounds every wait for the catalog by `timeouts`.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Settings {
        self.timeouts = timeouts;
        self
    }
}

/// A console bound to its address, not yet serving.
pub struct Server {
    runtime: tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    router: Router,
    local_addr: SocketAddr,
    limits: ConnectionLimits,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Connects to the catalog and binds the address.
    ///
    /// # Errors
    /// The catalog's (`not_configured` for a path that holds none:
    /// `promptpack catalog init` makes one; `unavailable`);
    /// `invalid_request` for an address beyond loopback while the catalog
    /// has no admin (`promptpack console user add NAME --role admin`), for a
    /// session cap of 0, and for a libpq `key=value` connection string
    /// (give a `postgres://` URL); `io` when the address cannot be bound.
    pub fn bind(settings: Settings) -> Result<Server, Error> {
        if settings.max_sessions_per_user == 0 {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "a user keeps at least one session: give a session cap of 1 or more",
            ));
        }
        if is_keyword_value(&settings.db) {
            // Not echoed: such a string holds its password in the clear,
            // and taken for a SQLite path it was shown in the error.
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "the catalog is given as a libpq `key=value` connection string, which the console \
                 does not read: give it as a URL, `postgres://USER:PASSWORD@HOST:PORT/DATABASE`",
            ));
        }
        let catalog = Arc::new(CatalogPool::connect(
            &settings.db,
            settings.timeouts,
            settings.pool_size,
        )?);
        if !settings.listen.ip().is_loopback() {
            let users = catalog.run_blocking("console", |catalog| catalog.users())?;
            if !users.iter().any(|user| user.role == Role::Admin) {
                return Err(Error::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "the console listens beyond loopback ({}) only once the catalog has an admin: \
                         run `promptpack console user add NAME --role admin` first",
                        settings.listen
                    ),
                ));
            }
        }
        let (runtime, listener, local_addr) = listen::bind(settings.listen, "promptpack-console")?;
        let state = Arc::new(AppState {
            catalog,
            verdicts: Arc::default(),
            max_sessions_per_user: settings.max_sessions_per_user,
            protected_labels: settings.protected_labels,
            token_counter: settings.token_counter,
            max_render_bytes: settings.max_render_bytes,
        });
        let router = Router::new()
            .merge(pages::routes())
            .nest("/api/v1", api::routes())
            .fallback(pages::not_found)
            .layer(DefaultBodyLimit::max(settings.max_body_bytes))
            .with_state(state)
            .layer(axum::middleware::from_fn_with_state(
                guard::GuardSettings {
                    request_timeout: settings.request_timeout,
                    all_json: false,
                },
                guard::guard,
            ));
        Ok(Server {
            runtime,
            listener,
            router,
            local_addr,
            limits: ConnectionLimits {
                max_connections: settings.max_connections,
                header_timeout: settings.header_timeout,
            },
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
    /// next one taken (the `Result` leaves room for a graceful end).
    pub fn run(self) -> Result<(), Error> {
        let Server {
            runtime,
            listener,
            router,
            limits,
            ..
        } = self;
        runtime.block_on(listen::serve(listener, router, limits));
        Ok(())
    }
}

/// Whether `db` reads as a libpq `key=value` connection string
/// (`host=… password=…`): a key and `=` first, with no scheme before.
pub(crate) fn is_keyword_value(db: &str) -> bool {
    if db.starts_with("sqlite:") || db.contains("://") {
        return false;
    }
    let text = db.trim_start();
    let key_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    key_end > 0 && text[key_end..].trim_start().starts_with('=')
}

pub(crate) fn io_error(what: &str, error: &std::io::Error) -> Error {
    Error::new(ErrorCode::Io, format!("{what}: {error}"))
}
