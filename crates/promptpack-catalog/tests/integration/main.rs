//! The catalog's integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, and each of those linked the catalog, both
//! stores' clients and the dev-dependencies again.
//!
//! `tests/faults.rs` stays a binary of its own: it has its own `main` and
//! runs itself as the child process it kills.

// `#[macro_use]`: `every_store!` is in scope in every module below.
#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod access;
mod changes;
mod concurrency;
mod conformance;
mod files;
mod pooler;
mod properties;
mod stores;
mod timeouts;
mod verify;
