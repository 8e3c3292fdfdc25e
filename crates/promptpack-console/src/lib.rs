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

mod api;
mod auth;
mod builds;
mod cancel;
mod catalog_pool;
mod coverage;
mod failure;
mod pages;
mod preview;
mod server;
mod snippet_check;
mod word_diff;

pub use auth::new_token;
pub use server::{Server, Settings, TokenCounter};

/// The OpenAPI 3.1 document of the JSON API, as served at
/// `/api/v1/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");
