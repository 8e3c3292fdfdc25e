//! The promptpack catalog console: a web face and a JSON API over a prompt
//! catalog (SQLite or PostgreSQL), for the people who change prompts
//! without a rebuild.
//!
//! `promptpack console` runs it; this crate is what it runs, apart so that
//! the `promptpack` library's users never compile a web server. Pages are
//! server-side HTML (askama templates, every value escaped), readable
//! without JavaScript; the JSON API under `/api/v1` does the same for
//! services in any language and is described by the OpenAPI document at
//! `/api/v1/openapi.json` ([`OPENAPI`]).
//!
//! Every read and write needs a user ([`promptpack_catalog::User`]): the
//! API takes `Authorization: Bearer TOKEN`, the browser signs in with the
//! same token at `/login` and gets a session cookie. Viewers read; editors
//! publish and move labels; admins also move protected labels and delete.
//! Every write is recorded in the catalog with the user as its author.
//!
//! ```no_run
//! # fn main() -> Result<(), promptpack_catalog::Error> {
//! let settings = promptpack_console::Settings::new("sqlite:.promptpack/catalog.db");
//! let server = promptpack_console::Server::bind(settings)?;
//! println!("listening on http://{}", server.local_addr());
//! server.run()
//! # }
//! ```

mod action;
mod api;
mod auth;
mod body_deadline;
mod builds;
mod cancel;
mod catalog_pool;
mod coverage;
mod cross_site;
mod failure;
mod guard;
mod listen;
mod next_path;
mod pages;
mod preview;
mod protective_headers;
mod reads;
pub mod relay;
mod request_log;
mod server;
mod snippet_check;
mod state;
mod stderr_log;
mod verdicts;
mod word_diff;

pub use auth::{DEFAULT_MAX_SESSIONS, new_token};
pub use log::LevelFilter;
pub use server::{
    DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_POOL_SIZE, DEFAULT_REQUEST_TIMEOUT,
    Server, Settings,
};
pub use state::TokenCounter;
pub use stderr_log::log_to_stderr;

/// The OpenAPI 3.1 document of the JSON API, as served at
/// `/api/v1/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");
