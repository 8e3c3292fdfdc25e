//! A versioned catalog of [promptpack](https://docs.rs/promptpack) prompts,
//! for prompts that change without a rebuild and must stay reviewable,
//! reversible and traceable.
//!
//! - **Prompts** are addressed by id (the template folder name), with a
//!   name, a description and a soft-delete flag.
//! - **Versions** are append-only and numbered 1, 2, … per prompt with no
//!   gaps, however many writers publish at once. Each keeps `system.md` and
//!   `user.md` verbatim, its front matter, the snippet revisions it renders
//!   with (pinned), the resolved text it renders and that text's SHA-256,
//!   author, message and time. No statement rewrites one: the schema
//!   refuses `UPDATE` and `DELETE` on versions.
//! - **Snippets** have append-only revisions too; a new revision changes no
//!   published version until [`Catalog::upgrade`] mints one with new pins.
//! - **Labels**: `latest` follows each new version; any other (`production`,
//!   `staging`) moves by [`Catalog::set_label`], each move kept in the audit
//!   history. Rolling back is moving a label.
//! - **Publishing validates** inside the write transaction with the build's
//!   own pipeline, and, given the program's [`Contract`] (the JSON file the
//!   build writes), refuses a version the program could not render.
//!
//! Two stores, one behaviour: SQLite in one file (feature `sqlite`, the
//! default; `.promptpack/catalog.db`), and PostgreSQL for many instances
//! (feature `postgres`). Errors are promptpack's one [`Error`] type, with
//! the codes `not_found`, `already_exists`, `invalid_request`,
//! `not_configured`, `unavailable` (the only one a retry can help:
//! [`Error::is_retryable`]), `damaged` (the store holds what promptpack
//! never writes), `pins_current`, `contract_violation`, and every code of
//! the template language for a draft that does not compile. A store's own
//! error is kept as the cause ([`std::error::Error::source`]).
//!
//! One constructor, [`Catalog::connect_with`], connects for what a program
//! does ([`Access`]): `Create` makes a catalog or brings its schema up to
//! date (what `promptpack catalog init` runs, and [`Catalog::open`]),
//! `Write` writes to one that exists, `Read` reads, changing nothing (a
//! SQLite file is opened read-only and a reader never waits for a writer;
//! [`Catalog::connect`]), `Verify` reads to [`Catalog::verify`]. Every
//! wait on the network is bounded ([`Timeouts`]).
//!
//! ```
//! use promptpack_catalog::{Catalog, Draft, Selector};
//!
//! # fn main() -> Result<(), promptpack_catalog::Error> {
//! # let dir = tempfile::tempdir().map_err(|e| promptpack_catalog::Error::new(promptpack_catalog::ErrorCode::Io, e.to_string()))?;
//! # let url = format!("sqlite:{}", dir.path().join("catalog.db").display());
//! let mut catalog = Catalog::open(&url)?.with_author("ada");
//! catalog.publish_snippet("tone", "Be brief.", "first tone")?;
//! catalog.create("greeter", None, None)?;
//! let draft = Draft {
//!     system: "Hello {{name}}. {{snippet:tone}}".into(),
//!     user: None,
//!     message: "first version".into(),
//!     ..Draft::default()
//! };
//! let v1 = catalog.publish("greeter", &draft, None)?;
//! assert_eq!(v1.version, 1);
//! assert_eq!(v1.resolved_system, "Hello {{name}}. Be brief.");
//!
//! catalog.set_label("greeter", "production", 1)?;
//! let served = catalog.get("greeter", &Selector::Label("production".into()))?;
//! assert_eq!(served.content_hash, v1.content_hash);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod catalog;
mod compile;
mod diff;
mod file_identity;
mod files;
mod finding;
mod hash;
mod judge;
#[cfg(feature = "postgres")]
mod listener;
mod model;
mod redact;
pub mod relay;
#[cfg(feature = "relay-client")]
pub mod relay_client;
mod store;
mod timeouts;

pub use catalog::follow::{LabelledPrompt, MAX_EARLIER};
pub use catalog::rows::CHANGES_CHANNEL;
pub use catalog::verify::VerifyReport;
pub use catalog::{
    Access, Catalog, ChangeMarker, MAX_PAGE, Published, SnippetUse, VersionSources,
    check_process_name,
};
pub use compile::MAX_FILE_BYTES;
pub use file_identity::FileIdentity;
pub use finding::{Finding, FindingCode, Subject};
pub use hash::content_hash;
pub use judge::{CheckedPrompt, Verdict, judge, judge_fetched, refusal_line};
#[cfg(feature = "postgres")]
pub use listener::{Change, Listener};
pub use model::{
    Arm, AuditEntry, BuildRegistration, ConsoleSession, Draft, History, ImportReport, Imported,
    ListQuery, Listed, Page, Pin, PromptEntry, RegisteredBuild, Role, Selector, SnippetRevision,
    Syntax, Timestamp, User, UserAction, UserChange, Version, VersionSummary, contract_hash,
    token_hash,
};
pub use promptpack_core::contract::Contract;
pub use promptpack_core::{Error, ErrorCode, Settings};
pub use redact::redact_url;
pub use timeouts::Timeouts;

/// Where the embedded catalog lives, relative to the prompt root, when no
/// URL is given: `.promptpack/catalog.db`.
pub const DEFAULT_SQLITE_PATH: &str = ".promptpack/catalog.db";
