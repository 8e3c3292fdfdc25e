//! The CLI's integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, and each of those linked the whole tool
//! again. A module that needs features says so with `cfg`, so `cargo test`
//! with fewer features runs the rest; CI runs them all (--all-features).

// Without `catalog`, only the binary's path is used.
#[cfg_attr(not(feature = "catalog"), allow(dead_code))]
mod support;

#[cfg(feature = "tokens")]
mod bad_inputs;
#[cfg(feature = "catalog")]
mod catalog;
#[cfg(feature = "catalog")]
mod catalog_access;
#[cfg(feature = "catalog")]
mod catalog_files;
#[cfg(feature = "catalog")]
mod catalog_timeouts;
#[cfg(feature = "catalog")]
mod catalog_verify;
#[cfg(feature = "tokens")]
mod cli;
#[cfg(feature = "console")]
mod console;
#[cfg(feature = "lsp")]
mod lsp;
