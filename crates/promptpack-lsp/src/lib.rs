//! A language server for promptpack prompt folders, over stdio: the build's
//! checks on unsaved text as you type, hover, go to definition, find
//! references, completion, rename and quick fixes.
//!
//! `promptpack lsp` runs it. It reads the prompt root once, overlays every
//! buffer the editor has open on what it read, and runs the same pipeline,
//! lints and code generator as `promptpack check`
//! (`promptpack_build::house::check_sources`), so a buffer shows exactly what the
//! build would say of it, at the same places with the same codes.
//!
//! ```no_run
//! use promptpack_lsp::{BuildChecker, Options};
//! // What `promptpack lsp` does, without the token budgets of its checker.
//! promptpack_lsp::run_stdio(Options::default(), &BuildChecker).expect("the editor hung up");
//! ```
//!
//! Messages are handled one at a time, in the order they came: an edit is
//! never checked after the next one. Nothing an editor sends makes the
//! server panic: a message that is not JSON-RPC gets an error answer, an
//! edit past the end of a buffer is clamped to it, a buffer over
//! [`MAX_DOCUMENT_BYTES`] is refused with a diagnostic.

#![warn(missing_docs)]

mod analysis;
mod checker;
mod declarations;
mod diagnostics;
mod documents;
mod features;
mod incremental;
mod position;
mod server;
mod transport;
mod uri;
mod workspace;

pub use checker::{BuildChecker, Checker, Findings};
pub use server::{DIAGNOSTICS_METHOD, Options, run, run_stdio};

/// The largest buffer the server checks, in bytes (16 MiB): a larger one
/// gets a `too_large` diagnostic and is left out of the check (the version
/// on disk is checked in its place).
pub const MAX_DOCUMENT_BYTES: usize = 16 << 20;

/// The largest JSON-RPC message read, in bytes (64 MiB): a larger one is
/// skipped and answered with an error, not read into memory.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
