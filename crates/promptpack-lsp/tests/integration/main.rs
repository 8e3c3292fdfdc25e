//! The language server's integration tests in one binary: each module was
//! a `tests/<name>.rs` of its own, each linking the server again.

mod support;

mod conversations;
mod edits;
mod exchange;
mod features;
