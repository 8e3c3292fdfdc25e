//! The build crate's integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, each linking the crate, the runtime with
//! hot reload and trybuild again.

mod support;

mod compile_fail;
mod contract_file;
mod crate_path;
